#include "engine/bench/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

#include "engine/kernels/registry.h"

namespace ks {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Ranks of the pooled samples (1-based, tied values share their mean rank),
// and the sum of t^3 - t over groups of t tied values.
struct Ranking {
  double rank_sum_a = 0;
  double tie_term = 0;
  bool ties = false;
};

Ranking rankPooled(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<std::pair<double, bool>> pooled;  // (value, from a)
  pooled.reserve(a.size() + b.size());
  for (double x : a) pooled.emplace_back(x, true);
  for (double x : b) pooled.emplace_back(x, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  Ranking r;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = double(j - i);
    const double mean_rank = 0.5 * double(i + 1 + j);  // mean of ranks i+1 .. j
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second) r.rank_sum_a += mean_rank;
    if (t > 1) r.ties = true, r.tie_term += t * t * t - t;
    i = j;
  }
  return r;
}

// P(U <= u) and P(U >= u) under the null for samples of sizes m and n without
// ties. count[j][v] = orderings of i values of `a` and j values of `b` with
// U = v, built up one value of `a` at a time: the largest of all values is
// either from `a` (then it beats all j of `b`: U grows by j) or from `b`.
std::pair<double, double> exactTails(size_t m, size_t n, long u) {
  const size_t most = m * n;
  std::vector<std::vector<double>> prev(n + 1, std::vector<double>(most + 1, 0.0)), cur = prev;
  for (size_t j = 0; j <= n; ++j) prev[j][0] = 1;  // i = 0: U is 0
  for (size_t i = 1; i <= m; ++i) {
    for (size_t j = 0; j <= n; ++j) {
      std::fill(cur[j].begin(), cur[j].end(), 0.0);
      for (size_t v = 0; v <= most; ++v) {
        if (v >= j) cur[j][v] += prev[j][v - j];
        if (j > 0) cur[j][v] += cur[j - 1][v];
      }
    }
    std::swap(prev, cur);
  }
  // Counts are below C(50, 25) < 2^53: exact in double.
  const std::vector<double>& count = prev[n];
  const double total = std::accumulate(count.begin(), count.end(), 0.0);
  double lower = 0, upper = 0;
  for (size_t v = 0; v <= most; ++v) {
    if (long(v) <= u) lower += count[v];
    if (long(v) >= u) upper += count[v];
  }
  return {lower / total, upper / total};
}

std::string paramsText(const PlanItem& item) {
  const KernelInfo* k = Registry::instance().find(item.kernel);
  return item.params.str(!k || k->uses_workgroup);
}

// What identifies a point across sessions. The workgroup shape only counts
// for kernels that have one (CPU kernels ignore it).
using PointKey = std::tuple<std::string, WorkgroupShape, std::map<std::string, int>, uint64_t, uint64_t, uint64_t>;

PointKey keyOf(const PlanItem& item) {
  const KernelInfo* k = Registry::instance().find(item.kernel);
  const WorkgroupShape wg = !k || k->uses_workgroup ? item.params.wg : WorkgroupShape{};
  return {item.kernel, wg, item.params.values, item.size.m, item.size.n, item.size.k};
}

std::string describe(const PlanItem& item) {
  const std::string params = paramsText(item);
  return item.kernel + (params == "-" ? "" : " " + params) + " " + item.size.str();
}

std::string statusText(const Measurement& m) {
  if (m.trustworthy()) return "ok";
  if (m.timed()) return "ok, unverified (custom workload)";
  if (m.status == PointStatus::Ok) return "verification " + verifyStatusName(m.verification.status);
  const std::string status = pointStatusName(m.status);
  return m.error.empty() ? status : status + ": " + m.error;
}

void warnIfDifferent(std::vector<std::string>& warnings, const std::string& what, const std::string& baseline,
                     const std::string& current) {
  if (baseline != current)
    warnings.push_back(what + " differs: baseline '" + baseline + "', current '" + current + "'");
}

std::vector<std::string> differences(const Session& b, const Session& c) {
  std::vector<std::string> w;
  if (b.device && c.device) {
    warnIfDifferent(w, "device", b.device->name, c.device->name);
    warnIfDifferent(w, "device driver", b.device->driver_name, c.device->driver_name);
    warnIfDifferent(w, "device driver version", b.device->driver_version, c.device->driver_version);
    warnIfDifferent(w, "Vulkan API version", b.device->api_version, c.device->api_version);
  } else if (b.device || c.device) {
    const auto& [with, without] = b.device ? std::pair{"baseline", "current"} : std::pair{"current", "baseline"};
    w.push_back(std::string("device: the ") + with + " session ran on '" + (b.device ? b.device : c.device)->name +
                "', the " + without + " session had no Vulkan device");
  }
  warnIfDifferent(w, "kernelscope version", b.app_version, c.app_version);
  warnIfDifferent(w, "kernelscope commit", b.app_commit, c.app_commit);
  warnIfDifferent(w, "glslang version", b.glslang_version, c.glslang_version);
  warnIfDifferent(w, "CPU", b.host.cpu_model, c.host.cpu_model);
  warnIfDifferent(w, "OpenBLAS core", b.host.openblas_core, c.host.openblas_core);
  warnIfDifferent(w, "OpenBLAS threads", std::to_string(b.host.openblas_threads),
                  std::to_string(c.host.openblas_threads));
  // How the points were measured: input rotation decides whether small
  // bandwidth points read memory or the cache.
  auto rotation = [](const Plan& p) {
    return p.rotate_inputs ? "on (" + std::to_string(p.cache_bytes >> 20) + " MiB)" : std::string("off");
  };
  warnIfDifferent(w, "input rotation", rotation(b.plan), rotation(c.plan));
  for (const auto& [side, s] : {std::pair{"baseline", &b}, std::pair{"current", &c}})
    if (s->drift && s->drift->unstable)
      w.push_back(std::string("the ") + side + " session is unstable: its drift check says " + s->drift->summary());
  // Variables that change what OpenBLAS, Mesa or the Vulkan loader do.
  std::map<std::string, std::pair<std::string, std::string>> env;
  for (const auto& [k, v] : b.environment) env[k].first = v;
  for (const auto& [k, v] : c.environment) env[k].second = v;
  for (const auto& [name, values] : env) {
    const bool in_b = b.environment.count(name) > 0, in_c = c.environment.count(name) > 0;
    if (in_b != in_c || values.first != values.second)
      w.push_back("environment " + name + " differs: baseline " + (in_b ? "'" + values.first + "'" : "unset") +
                  ", current " + (in_c ? "'" + values.second + "'" : "unset"));
  }
  return w;
}

}  // namespace

MannWhitney mannWhitneyU(const std::vector<double>& a, const std::vector<double>& b, MannWhitneyMethod method) {
  MannWhitney r;
  if (a.empty() || b.empty()) return r;
  const double n1 = double(a.size()), n2 = double(b.size()), n = n1 + n2;
  const Ranking ranking = rankPooled(a, b);
  r.u = ranking.rank_sum_a - n1 * (n1 + 1) / 2;
  const double mean = n1 * n2 / 2;
  const double variance = n1 * n2 / 12 * ((n + 1) - ranking.tie_term / (n * (n - 1)));
  if (variance > 0) {
    // Continuity correction: U moves in steps of 1/2 or 1; never past the mean.
    const double distance = std::max(0.0, std::fabs(r.u - mean) - 0.5);
    r.z = std::copysign(distance / std::sqrt(variance), r.u - mean);
    r.p = std::min(1.0, std::erfc(std::fabs(r.z) / std::sqrt(2.0)));
  }  // else every value is the same: no evidence either way (z = 0, p = 1)
  if (method == MannWhitneyMethod::Automatic && !ranking.ties && a.size() <= kMannWhitneyExactLimit &&
      b.size() <= kMannWhitneyExactLimit) {
    const auto [lower, upper] = exactTails(a.size(), b.size(), std::lround(r.u));
    r.p = std::min(1.0, 2 * std::min(lower, upper));
    r.exact = true;
  }
  return r;
}

std::string significanceMark(double p) {
  if (p < 0.001) return "***";
  if (p < 0.01) return "**";
  if (p < 0.05) return "*";
  return "";
}

Comparison compareSessions(const Session& baseline, const Session& current) {
  Comparison out;
  out.warnings = differences(baseline, current);

  // Baseline points by key, in order; each match takes the first one left.
  std::map<PointKey, std::vector<size_t>> unmatched;
  for (size_t i = 0; i < baseline.points.size(); ++i) unmatched[keyOf(baseline.points[i].item)].push_back(i);
  std::vector<bool> matched(baseline.points.size(), false);

  double log_sum = 0;
  for (const auto& cur : current.points) {
    auto it = unmatched.find(keyOf(cur.item));
    if (it == unmatched.end() || it->second.empty()) {
      out.only_in_current.push_back(describe(cur.item));
      continue;
    }
    const size_t bi = it->second.front();
    it->second.erase(it->second.begin());
    matched[bi] = true;
    const Measurement& base = baseline.points[bi];

    CompareRow row;
    row.kernel = cur.item.kernel;
    row.params = paramsText(cur.item);
    row.size = cur.item.size;
    row.baseline_ok = base.timed() && base.stats.median > 0;
    row.current_ok = cur.timed() && cur.stats.median > 0;
    row.baseline_status = statusText(base);
    row.current_status = statusText(cur);
    row.baseline_samples = base.samples_ns.size();
    row.current_samples = cur.samples_ns.size();
    row.ratio = row.speedup = kNaN;
    if (row.baseline_ok) row.baseline_median_ns = base.stats.median;
    if (row.current_ok) row.current_median_ns = cur.stats.median;
    if (row.comparable()) {
      row.ratio = row.current_median_ns / row.baseline_median_ns;
      row.speedup = 1 / row.ratio;
      row.test = mannWhitneyU(cur.samples_ns, base.samples_ns);
      ++out.compared;
      log_sum += std::log(row.ratio);
      if (row.significant() && row.ratio < 1) ++out.significantly_faster;
      if (row.significant() && row.ratio > 1) ++out.significantly_slower;
    }
    out.rows.push_back(std::move(row));
  }
  for (size_t i = 0; i < baseline.points.size(); ++i)
    if (!matched[i]) out.only_in_baseline.push_back(describe(baseline.points[i].item));
  out.geomean_ratio = out.compared ? std::exp(log_sum / double(out.compared)) : kNaN;
  return out;
}

}  // namespace ks
