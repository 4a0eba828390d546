#include "engine/tune/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "engine/bench/compare.h"
#include "engine/session/session.h"
#include "engine/tune/search.h"
#include "engine/tune/space.h"

namespace ks {

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

std::string percentText(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

std::string pText(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, p < 0.0001 ? "%.1e" : "%.4f", p);
  return buf;
}

}  // namespace

size_t tuneBudget(const TuneRequest& request, size_t valid) {
  if (request.budget) return std::min(request.budget, valid);
  if (request.strategy == SearchStrategy::Grid || request.time_budget_s > 0) return valid;
  return std::max<size_t>(std::min<size_t>(valid, 4), (valid + 3) / 4);
}

void rankFinalists(TuneRecord& record, const std::function<double(const TuneConfig&, double median_ns)>& score) {
  auto& f = record.final;
  for (auto& x : f) {
    x.stats = computeStats(x.samples_ns);
    x.score = x.error.empty() && x.stats.median > 0 ? score(x.config, x.stats.median) : 0;
  }
  // Failed re-measurements rank last, in their order.
  std::stable_sort(f.begin(), f.end(), [](const TuneFinalist& a, const TuneFinalist& b) {
    if (a.error.empty() != b.error.empty()) return a.error.empty();
    return a.error.empty() && a.score > b.score;
  });
  for (size_t i = 0; i < f.size(); ++i) {
    f[i].p_vs_next = 1;
    if (i + 1 < f.size() && f[i].error.empty() && f[i + 1].error.empty())
      f[i].p_vs_next = mannWhitneyU(f[i].round_medians_ns, f[i + 1].round_medians_ns).p;
  }
  record.decided = false;
  if (f.empty() || !f[0].error.empty()) {
    record.verdict =
        f.empty() ? "no configuration was re-measured" : "no configuration could be re-measured: " + f[0].error;
    return;
  }
  record.winner = f[0].config;
  const std::string first = "#1 (" + record.configText(f[0].config) + ")";
  if (f.size() < 2 || !f[1].error.empty()) {
    record.decided = true;
    record.verdict = first + " is the only configuration that ran in the final round";
    return;
  }
  const std::string second = "#2 (" + record.configText(f[1].config) + ")";
  const double diff = f[1].score > 0 ? f[0].score / f[1].score - 1 : 0;
  const double p = f[0].p_vs_next;
  const std::string n =
      std::to_string(f[0].round_medians_ns.size()) + " + " + std::to_string(f[1].round_medians_ns.size()) + " rounds";
  if (p < kSignificanceLevel && diff >= record.tie_margin) {
    record.decided = true;
    record.verdict =
        first + " beats " + second + " by " + percentText(diff) + " (Mann-Whitney p = " + pText(p) + ", " + n + ")";
  } else if (p < kSignificanceLevel) {
    record.verdict = "tie: " + first + " and " + second + " differ by " + percentText(diff) +
                     ", significant (p = " + pText(p) + ") but under the " + percentText(record.tie_margin) + " margin";
  } else {
    record.verdict = "tie: " + first + " and " + second + " cannot be told apart (p = " + pText(p) + ", " + n +
                     "; medians " + percentText(diff) + " apart)";
  }
}

Result<TuneOutcome> runTune(Runner& runner, const vk::DeviceInfo* device, const TuneRequest& request,
                            const TuneCallbacks& cb, const std::atomic<bool>& cancel) {
  const KernelInfo* kernel = Registry::instance().find(request.kernel);
  if (!kernel) return makeError("unknown kernel '" + request.kernel + "'");
  if (auto why = unsupportedReason(*kernel, device)) return makeError(kernel->id + ": " + *why);
  ProblemSize size = request.size;
  size.rank = kernel->size_rank;
  auto dims = tuneDimensions(*kernel, request.only, request.shapes);
  if (!dims) return dims.error();
  PrunedSpace space = pruneSpace(*dims, *kernel, size, device);
  auto note = [&](const std::string& text) {
    if (cb.note) cb.note(text);
  };

  TuneOutcome out;
  TuneRecord& rec = out.record;
  rec.kernel = kernel->id;
  rec.size = size;
  rec.strategy = request.strategy;
  rec.objective = request.objective;
  rec.seed = request.seed;
  rec.time_budget_s = request.time_budget_s;
  rec.dimensions = *dims;
  rec.space_size = space.total;
  rec.valid = space.search.valid.size();
  rec.pruned = space.pruned;
  rec.final_rounds = request.final_rounds;
  rec.tie_margin = request.tie_margin;
  rec.budget = tuneBudget(request, rec.valid);
  if (space.search.valid.empty()) {
    std::string reasons;
    for (size_t i = 0; i < space.pruned.size() && i < 3; ++i) reasons += "\n  " + space.pruned[i].reason;
    return makeError("none of the " + std::to_string(space.total) + " configurations of " + kernel->id +
                     " can run at size " + size.str() + (device ? " on " + device->name : "") + ":" + reasons);
  }
  note(std::to_string(space.total) + " configurations, " + std::to_string(rec.valid) + " valid after pruning; " +
       strategyName(rec.strategy) + " search, " + std::to_string(rec.budget) + " evaluations" +
       (rec.time_budget_s > 0 ? " or " + std::to_string(int(rec.time_budget_s)) + " s" : ""));
  for (size_t i = 0; i < space.pruned.size() && i < 5; ++i)
    note("pruned " + std::to_string(space.pruned[i].configs.size()) + ": " + space.pruned[i].reason);

  std::optional<TuneCache> cache;
  if (!request.cache_path.empty() && device) {
    Session header = newSession();
    header.device = *device;
    header.plan = request.plan;
    header.plan.items.clear();
    auto opened = TuneCache::open(request.cache_path, header);
    if (opened) {
      cache.emplace(std::move(*opened));
      note("result cache " + cache->path() + " (" + std::to_string(cache->size()) + " points)");
    } else {
      out.cache_error = opened.error().message;
      note("the result cache is not used: " + out.cache_error);
    }
  }

  Plan plan = request.plan;
  plan.items.clear();
  plan.drift_check = false;  // the final round, interleaved, answers for drift
  const Params base = kernel->defaultParams(device);
  const auto start = Clock::now();
  const size_t final_points = std::min(request.final_top, rec.budget) * request.final_rounds;
  double measured_s = 0;
  size_t measured = 0;
  bool time_up = false;
  auto scoreOf = [&](const Measurement& m) -> std::optional<double> {
    if (!m.timed()) return std::nullopt;
    return tuneScore(rec.objective, m.stats.median, kernel->flops(size), kernel->bytes(size, m.item.params));
  };
  auto report = [&](const char* phase, size_t done, size_t total, size_t left_points) {
    if (!cb.progress) return;
    TuneProgress p;
    p.phase = phase;
    p.done = done;
    p.total = total;
    p.elapsed_s = seconds(start);
    if (measured) p.eta_s = measured_s / double(measured) * double(left_points);
    const auto best = rec.bestSoFar();
    p.best = best.empty() || std::isnan(best.back()) ? 0 : best.back();
    cb.progress(p);
  };
  report("search", 0, rec.budget, rec.budget + final_points);

  auto cacheAdd = [&](const Measurement& m) {
    if (!cache) return;
    if (auto st = cache->add(m); !st) {
      out.cache_error = st.error().message;
      note("the result cache is not written any more: " + out.cache_error);
      cache.reset();
    }
  };

  const ProbeFn probe = [&](size_t i) -> Probe {
    if (cancel.load()) return {true, {}};
    // At least one evaluation, however short the time budget.
    if (rec.time_budget_s > 0 && !rec.evaluations.empty() && seconds(start) >= rec.time_budget_s) {
      time_up = true;
      return {true, {}};
    }
    PlanItem item{kernel->id, configParams(*dims, space.search.valid[i], base), size};
    std::optional<Measurement> m;
    if (cache) m = cache->find(item, device ? pointShaderHash(*kernel, size, item.params, *device) : "");
    const bool cached = m.has_value();
    if (!cached) {
      const auto t0 = Clock::now();
      m = runner.runPoint(item, plan, cancel);
      if (m->status == PointStatus::Cancelled) return {true, {}};
      runner.recoverDevice(*m);
      measured_s += seconds(t0);
      ++measured;
      cacheAdd(*m);
    }
    TuneEvaluation e;
    e.point = out.points.size();
    e.config = space.search.valid[i];
    e.cached = cached;
    e.score = scoreOf(*m);
    e.elapsed_s = seconds(start);
    out.points.push_back(*m);
    rec.evaluations.push_back(e);
    if (cb.evaluation) cb.evaluation(rec, *m, e);
    report("search", rec.evaluations.size(), rec.budget, rec.budget - rec.evaluations.size() + final_points);
    return {false, e.score};
  };
  searchSpace(rec.strategy, space.search, rec.seed, rec.budget, probe);

  if (cancel.load())
    rec.stop_reason = "cancelled";
  else if (time_up)
    rec.stop_reason = "time_budget";
  else if (rec.evaluations.size() >= rec.valid)
    rec.stop_reason = "space_exhausted";
  else
    rec.stop_reason = "budget";

  // The final round: the best few again, interleaved, each round in another order.
  std::vector<size_t> top;  // indices into evaluations
  for (size_t i = 0; i < rec.evaluations.size(); ++i)
    if (rec.evaluations[i].score) top.push_back(i);
  std::stable_sort(top.begin(), top.end(),
                   [&](size_t a, size_t b) { return *rec.evaluations[a].score > *rec.evaluations[b].score; });
  top.resize(std::min(top.size(), request.final_top));
  if (cancel.load() || top.empty() || request.final_rounds == 0) {
    if (auto best = rec.bestEvaluation()) rec.winner = rec.evaluations[*best].config;
    rec.verdict = cancel.load()           ? "cancelled before the final round: the best so far was not measured again"
                  : !rec.bestEvaluation() ? "no configuration ran successfully"
                                          : "no final round: the best so far was not measured again";
    return out;
  }
  for (size_t i : top) rec.final.push_back({rec.evaluations[i].config, {}, {}, {}, {}, 0, 1});
  const size_t final_total = top.size() * request.final_rounds;
  size_t final_done = 0;
  report("final", 0, final_total, final_total);
  for (uint32_t round = 0; round < request.final_rounds && !cancel.load(); ++round) {
    for (size_t j = 0; j < top.size() && !cancel.load(); ++j) {
      // Rotate the order each round so no configuration always runs first or after the same one.
      TuneFinalist& f = rec.final[(j + round) % top.size()];
      if (!f.error.empty()) continue;
      const auto t0 = Clock::now();
      Measurement m = runner.runPoint({kernel->id, configParams(*dims, f.config, base), size}, plan, cancel);
      if (m.status == PointStatus::Cancelled) break;
      runner.recoverDevice(m);
      measured_s += seconds(t0);
      ++measured;
      if (m.timed()) {
        f.samples_ns.insert(f.samples_ns.end(), m.samples_ns.begin(), m.samples_ns.end());
        f.round_medians_ns.push_back(m.stats.median);
      } else
        f.error = m.error.empty() ? "verification " + verifyStatusName(m.verification.status) : m.error;
      ++final_done;
      report("final", final_done, final_total, final_total - final_done);
    }
  }
  if (cancel.load()) {
    rec.stop_reason = "cancelled";
    rec.final.clear();
    if (auto best = rec.bestEvaluation()) rec.winner = rec.evaluations[*best].config;
    rec.verdict = "cancelled in the final round: the best so far was not confirmed";
    return out;
  }
  rankFinalists(rec, [&](const TuneConfig& c, double median_ns) {
    return tuneScore(rec.objective, median_ns, kernel->flops(size), kernel->bytes(size, configParams(*dims, c, base)));
  });
  return out;
}

}  // namespace ks
