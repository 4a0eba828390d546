// The autotuner: strategies on synthetic landscapes (no device), pruning, the
// result cache and the final verdict on lavapipe, the tune in the session file,
// tuned defaults.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "engine/bench/compare.h"
#include "engine/kernels/kernel_file.h"
#include "engine/session/session.h"
#include "engine/tune/search.h"
#include "engine/tune/space.h"
#include "engine/tune/tune_cache.h"
#include "engine/tune/tuned_defaults.h"
#include "engine/tune/tuner.h"
#include "lavapipe.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

fs::path tempDir() {
  static const fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "ks_test_tune_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    return fs::path(tmpl);
  }();
  return dir;
}

// ---------------------------------------------------------------- strategies

// A smooth landscape over 8 x 8 x 6 with one optimum at (5, 2, 3); a quarter of
// the configurations is invalid (pruned), never the optimum.
struct Landscape {
  SearchSpace space;
  TuneConfig optimum;
  Landscape() {
    space.dim_sizes = {8, 8, 6};
    for (uint32_t a = 0; a < 8; ++a)
      for (uint32_t b = 0; b < 8; ++b)
        for (uint32_t c = 0; c < 6; ++c)
          if ((a * 7 + b * 3 + c) % 4 != 1 || TuneConfig{a, b, c} == TuneConfig{5, 2, 3})
            space.valid.push_back({a, b, c});
    optimum = *std::max_element(space.valid.begin(), space.valid.end(),
                                [](const TuneConfig& x, const TuneConfig& y) { return score(x) < score(y); });
  }
  static double score(const TuneConfig& c) {
    const double da = double(c[0]) - 5, db = double(c[1]) - 2, dc = double(c[2]) - 3;
    // A ripple makes it not quite convex: local searches must still get there.
    return 1000 - 9 * da * da - 14 * db * db - 11 * dc * dc + 2 * std::sin(3.0 * c[0] + c[1]);
  }
};

struct SearchLog {
  std::vector<size_t> probed;
  double best = -1e300;
  TuneConfig best_config;
};

SearchLog runSearch(SearchStrategy s, const Landscape& l, uint64_t seed, size_t budget) {
  SearchLog log;
  searchSpace(s, l.space, seed, budget, [&](size_t i) {
    log.probed.push_back(i);
    const double v = Landscape::score(l.space.valid[i]);
    if (v > log.best) {
      log.best = v;
      log.best_config = l.space.valid[i];
    }
    return Probe{false, v};
  });
  return log;
}

TEST(TuneSearch, EveryStrategyProbesValidConfigurationsOnceWithinTheBudget) {
  Landscape l;
  for (auto s : {SearchStrategy::Grid, SearchStrategy::Random, SearchStrategy::Anneal, SearchStrategy::Genetic}) {
    SCOPED_TRACE(strategyName(s));
    const auto log = runSearch(s, l, 7, 60);
    EXPECT_EQ(log.probed.size(), 60u);
    std::set<size_t> distinct(log.probed.begin(), log.probed.end());
    EXPECT_EQ(distinct.size(), log.probed.size()) << "a configuration was evaluated twice";
    for (size_t i : log.probed) EXPECT_LT(i, l.space.valid.size());
  }
}

TEST(TuneSearch, GridAndRandomWithTheWholeBudgetVisitEverything) {
  Landscape l;
  for (auto s : {SearchStrategy::Grid, SearchStrategy::Random}) {
    const auto log = runSearch(s, l, 3, 100000);
    EXPECT_EQ(log.probed.size(), l.space.valid.size()) << strategyName(s);
    EXPECT_EQ(log.best_config, l.optimum) << strategyName(s);
  }
  // Grid goes in order.
  const auto grid = runSearch(SearchStrategy::Grid, l, 3, 10);
  for (size_t i = 0; i < grid.probed.size(); ++i) EXPECT_EQ(grid.probed[i], i);
}

TEST(TuneSearch, SameSeedSameSearchOtherSeedOtherSearch) {
  Landscape l;
  for (auto s : {SearchStrategy::Random, SearchStrategy::Anneal, SearchStrategy::Genetic}) {
    SCOPED_TRACE(strategyName(s));
    const auto a = runSearch(s, l, 11, 50), b = runSearch(s, l, 11, 50), c = runSearch(s, l, 12, 50);
    EXPECT_EQ(a.probed, b.probed);
    EXPECT_NE(a.probed, c.probed);
  }
}

// Anneal and genetic find the optimum of the smooth landscape within a quarter
// of its configurations, for every one of ten seeds; random sampling gets close.
TEST(TuneSearch, AnnealAndGeneticFindTheKnownOptimumWithinAQuarterOfTheSpace) {
  Landscape l;
  const size_t budget = l.space.valid.size() / 4;
  for (auto s : {SearchStrategy::Anneal, SearchStrategy::Genetic})
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      const auto log = runSearch(s, l, seed, budget);
      EXPECT_EQ(log.best_config, l.optimum) << strategyName(s) << " seed " << seed << " best " << log.best;
    }
  double worst_random = 1e300;
  for (uint64_t seed = 1; seed <= 10; ++seed)
    worst_random = std::min(worst_random, runSearch(SearchStrategy::Random, l, seed, budget).best);
  EXPECT_GT(worst_random, 0.95 * Landscape::score(l.optimum));
}

TEST(TuneSearch, FailedConfigurationsAreNeverTheBestAndStopEndsTheSearch) {
  Landscape l;
  size_t probes = 0;
  ASSERT_EQ(l.optimum, (TuneConfig{5, 2, 3}));
  TuneConfig best;
  double best_score = -1;
  searchSpace(SearchStrategy::Anneal, l.space, 5, 1000, [&](size_t i) -> Probe {
    if (++probes > 30) return {true, {}};
    if (l.space.valid[i] == l.optimum) return {false, std::nullopt};  // the optimum "fails verification"
    const double v = Landscape::score(l.space.valid[i]);
    if (v > best_score) best_score = v, best = l.space.valid[i];
    return {false, v};
  });
  EXPECT_EQ(probes, 31u) << "the search went on after stop";
  EXPECT_NE(best, l.optimum);
}

// ---------------------------------------------------------------- space and pruning

TEST(TuneSpace, DimensionsFollowTheKernelAndRefuseWhatItCannotTake) {
  const KernelInfo* bt = Registry::instance().find("gemm.block_tiling");
  ASSERT_TRUE(bt);
  auto dims = tuneDimensions(*bt, {{"BK", {8, 2, 2}}}, {});
  ASSERT_TRUE(dims) << dims.error().message;
  ASSERT_EQ(dims->size(), 3u);
  EXPECT_EQ((*dims)[0].name, "BK");
  EXPECT_EQ((*dims)[0].values, (std::vector<int>{2, 8}));  // sorted, deduplicated
  EXPECT_EQ((*dims)[1].values, (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ((*dims)[2].name, "wg");
  EXPECT_EQ((*dims)[2].shapes, workgroupPresets(*bt));

  auto bad = tuneDimensions(*bt, {{"BK", {3}}}, {});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("BK=3 is not a legal value"), std::string::npos) << bad.error().message;
  bad = tuneDimensions(*bt, {{"TILE", {3}}}, {});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("no tunable TILE (its tunables: BK, BN)"), std::string::npos);
  const KernelInfo* cpu = Registry::instance().find("cpu.gemm.openblas");
  ASSERT_TRUE(cpu);
  bad = tuneDimensions(*cpu, {}, {});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("nothing to tune"), std::string::npos) << bad.error().message;
  const KernelInfo* tile2d = Registry::instance().find("gemm.tile2d");
  bad = tuneDimensions(*tile2d, {}, {{16, 16, 1}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("no workgroup shape to tune"), std::string::npos);
}

// Every configuration the tuner may run passes checkPoint on the device; every
// pruned one fails it with the recorded reason.
TEST(TuneSpace, PruningKeepsExactlyWhatCanRun) {
  const vk::DeviceInfo& d = testing::device().info();
  const KernelInfo* k = Registry::instance().find("gemm.warptile");
  ASSERT_TRUE(k);
  const ProblemSize size{128, 128, 128, 3};
  auto dims = tuneDimensions(*k, {}, {});
  ASSERT_TRUE(dims);
  const PrunedSpace space = pruneSpace(*dims, *k, size, &d);
  size_t pruned = 0;
  for (const auto& p : space.pruned) {
    pruned += p.configs.size();
    for (const auto& c : p.configs) {
      auto why = checkPoint(*k, size, configParams(*dims, c, k->defaultParams()), &d);
      ASSERT_TRUE(why);
      if (p.reason.rfind("e.g. ", 0) == 0)
        EXPECT_EQ(why->substr(0, why->find_first_of("0123456789")),
                  p.reason.substr(5, p.reason.find_first_of("0123456789") - 5));
      else
        EXPECT_EQ(*why, p.reason);
    }
  }
  EXPECT_EQ(space.total, 5832u);  // 3^6 x 2^3 (TM, TN, VECA)
  EXPECT_EQ(pruned + space.search.valid.size(), space.total);
  EXPECT_GT(pruned, space.total / 2) << "gemm.warptile at 128 should rule out most of its space";
  EXPECT_FALSE(space.search.valid.empty());
  for (const auto& c : space.search.valid)
    EXPECT_FALSE(checkPoint(*k, size, configParams(*dims, c, k->defaultParams()), &d));
}

// ---------------------------------------------------------------- tunes on lavapipe

Plan quickPlan() {
  Plan p;
  p.reps = 3;
  p.warmup = 1;
  p.warmup_ms = 0;
  p.drift_check = false;
  return p;
}

TuneRequest blockTilingRequest() {
  TuneRequest r;
  r.kernel = "gemm.block_tiling";
  r.size = {64, 64, 64, 3};
  r.shapes = {{8, 8, 1}};
  r.only = {{"BK", {2, 4, 8}}, {"BN", {1, 2, 4}}};
  r.plan = quickPlan();
  r.final_top = 0;
  return r;
}

TEST(TuneRun, NoPrunedConfigurationReachesTheDevice) {
  // gemm.tile2d at 128: BM or BN of 256 do not divide the size, TM/TN must
  // divide the tiles, and vec4 loads must split evenly: most of the space is pruned.
  TuneRequest r;
  r.kernel = "gemm.tile2d";
  r.size = {128, 128, 128, 3};
  r.only = {{"BM", {32, 64, 256}}, {"BN", {32, 256}}, {"BK", {8}}, {"TM", {4, 16}}, {"TN", {4}}};
  r.strategy = SearchStrategy::Random;
  r.budget = 100;
  r.plan = quickPlan();
  r.final_top = 0;
  Runner runner(&testing::device());
  std::atomic<bool> cancel{false};
  auto out = runTune(runner, &testing::device().info(), r, {}, cancel);
  ASSERT_TRUE(out) << out.error().message;
  const auto& rec = out->record;
  EXPECT_EQ(rec.space_size, 12u);
  EXPECT_LT(rec.valid, rec.space_size);
  EXPECT_EQ(rec.evaluations.size(), rec.valid) << "budget over the space: every valid configuration once";
  EXPECT_EQ(rec.stop_reason, "space_exhausted");
  for (const auto& m : out->points) {
    EXPECT_EQ(m.status, PointStatus::Ok) << m.item.params.str(false) << ": " << m.error;
    EXPECT_EQ(m.item.params.get("BM", 0) % 256 == 0 || m.item.params.get("BN", 0) == 256, false);
  }
  for (const auto& p : rec.pruned)
    for (const auto& c : p.configs)
      for (const auto& m : out->points) EXPECT_NE(m.item.params, rec.params(c, m.item.params));
}

TEST(TuneRun, TheCacheResumesAnInterruptedTuneAndARepeatMeasuresNothing) {
  const std::string cache = (tempDir() / "resume.jsonl").string();
  TuneRequest r = blockTilingRequest();
  r.cache_path = cache;
  Runner runner(&testing::device());
  const vk::DeviceInfo& d = testing::device().info();

  // Interrupted after 4 evaluations (Stop during the fifth).
  std::atomic<bool> cancel{false};
  TuneCallbacks cb;
  size_t seen = 0;
  cb.evaluation = [&](const TuneRecord&, const Measurement&, const TuneEvaluation&) {
    if (++seen == 4) cancel.store(true);
  };
  auto first = runTune(runner, &d, r, cb, cancel);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->record.stop_reason, "cancelled");
  ASSERT_EQ(first->record.evaluations.size(), 4u);

  // Resumed: the same search, the first four from the cache, the rest measured.
  cancel.store(false);
  auto second = runTune(runner, &d, r, {}, cancel);
  ASSERT_TRUE(second) << second.error().message;
  const auto& ev = second->record.evaluations;
  ASSERT_EQ(ev.size(), 9u);
  for (size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(ev[i].cached, i < 4) << i;
    EXPECT_EQ(ev[i].config, i < 4 ? first->record.evaluations[i].config : ev[i].config);
  }
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(second->points[i].samples_ns, first->points[i].samples_ns);

  // Repeated: nothing measured again, the same scores.
  auto third = runTune(runner, &d, r, {}, cancel);
  ASSERT_TRUE(third);
  for (size_t i = 0; i < 9; ++i) {
    EXPECT_TRUE(third->record.evaluations[i].cached) << i;
    EXPECT_EQ(third->record.evaluations[i].score, ev[i].score);
  }

  // Another way of measuring is another cache: a file written with 3 repetitions refuses 4.
  TuneRequest other = r;
  other.plan.reps = 4;
  auto refused = runTune(runner, &d, other, {}, cancel);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->cache_error.find("another device, driver or way of measuring"), std::string::npos)
      << refused->cache_error;
  for (const auto& e : refused->record.evaluations) EXPECT_FALSE(e.cached);
  // The default file name tells them apart.
  EXPECT_NE(tuneCachePath("/c", d, r.kernel, r.size, r.plan), tuneCachePath("/c", d, r.kernel, r.size, other.plan));
}

std::string kernelFileWithDummyTunable(const std::string& id, const std::string& extra_comment) {
  auto text = kernelTemplate("gemm");
  EXPECT_TRUE(text);
  std::string s = *text;
  const std::string id_line = "id:          user.my_gemm";
  const size_t at = s.find(id_line);
  EXPECT_NE(at, std::string::npos);
  s.replace(at, id_line.size(),
            "id:          " + id + "\ntunable:     DUMMY = 1 in 1, 2 ; changes nothing in the code\n");
  return s + "\n// " + extra_comment + "\n";
}

TEST(TuneRun, ACachedPointIsUsedOnlyWhileTheKernelCompilesToTheSameCode) {
  const std::string cache = (tempDir() / "edit.jsonl").string();
  const fs::path file = tempDir() / "edited.comp";
  auto write = [&](const std::string& comment) {
    std::ofstream(file) << kernelFileWithDummyTunable("user.tune_edit", comment);
    auto k = registerKernelFile(file.string());
    ASSERT_TRUE(k) << k.error().message;
  };
  write("version 1");
  TuneRequest r;
  r.kernel = "user.tune_edit";
  r.size = {32, 32, 32, 3};
  r.shapes = {{8, 8, 1}};
  r.plan = quickPlan();
  r.final_top = 0;
  r.cache_path = cache;
  Runner runner(&testing::device());
  std::atomic<bool> cancel{false};
  auto first = runTune(runner, &testing::device().info(), r, {}, cancel);
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_EQ(first->record.evaluations.size(), 2u);
  auto again = runTune(runner, &testing::device().info(), r, {}, cancel);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->record.evaluations[0].cached && again->record.evaluations[1].cached);
  write("version 2");  // the same code with another comment: another source, another hash
  auto edited = runTune(runner, &testing::device().info(), r, {}, cancel);
  ASSERT_TRUE(edited);
  EXPECT_FALSE(edited->record.evaluations[0].cached || edited->record.evaluations[1].cached);
}

// Two configurations that compile to the same code: the final round, interleaved,
// must call it a tie rather than crown one of them.
TEST(TuneRun, TwoEqualConfigurationsTie) {
  const fs::path file = tempDir() / "equal.comp";
  std::ofstream(file) << kernelFileWithDummyTunable("user.tune_equal", "equal");
  ASSERT_TRUE(registerKernelFile(file.string()));
  TuneRequest r;
  r.kernel = "user.tune_equal";
  r.size = {128, 128, 128, 3};
  r.shapes = {{16, 16, 1}};
  r.plan = quickPlan();
  r.plan.reps = 10;
  r.final_top = 2;
  r.final_rounds = 6;
  // The margin is the device's reproducibility floor: on lavapipe, shared with
  // other tests on two cores, the same code compiled twice once ran 6% apart in
  // all six rounds (JIT code placement, neighbours), significant by rank.
  r.tie_margin = 0.15;
  Runner runner(&testing::device());
  std::atomic<bool> cancel{false};
  auto out = runTune(runner, &testing::device().info(), r, {}, cancel);
  ASSERT_TRUE(out) << out.error().message;
  const auto& rec = out->record;
  ASSERT_EQ(rec.final.size(), 2u);
  EXPECT_EQ(rec.final[0].samples_ns.size(), 60u);
  EXPECT_EQ(rec.final[0].round_medians_ns.size(), 6u);
  EXPECT_FALSE(rec.decided) << rec.verdict;
  EXPECT_EQ(rec.verdict.rfind("tie: ", 0), 0u) << rec.verdict;
  ASSERT_TRUE(rec.winner);
}

TEST(TuneRun, ATimeBudgetStopsTheSearchButNotTheFinalRound) {
  TuneRequest r = blockTilingRequest();
  r.time_budget_s = 0.001;  // spent by the first evaluation
  r.final_top = 2;
  r.final_rounds = 2;
  Runner runner(&testing::device());
  std::atomic<bool> cancel{false};
  auto out = runTune(runner, &testing::device().info(), r, {}, cancel);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->record.budget, 9u) << "a time budget alone lets the whole space be evaluated";
  EXPECT_EQ(out->record.evaluations.size(), 1u);
  EXPECT_EQ(out->record.stop_reason, "time_budget");
  ASSERT_EQ(out->record.final.size(), 1u);
  EXPECT_EQ(out->record.final[0].round_medians_ns.size(), 2u);
  EXPECT_TRUE(out->record.decided) << out->record.verdict;  // the only one: nothing to tie with
}

// Stop in the final round: the search's evaluations stay, the winner is the best
// of the search (not confirmed, and the verdict says so).
TEST(TuneRun, StopInTheFinalRoundKeepsTheSearch) {
  TuneRequest r = blockTilingRequest();
  r.final_top = 3;
  r.final_rounds = 4;
  Runner runner(&testing::device());
  std::atomic<bool> cancel{false};
  TuneCallbacks cb;
  size_t final_points = 0;
  cb.progress = [&](const TuneProgress& p) {
    if (p.phase == "final" && p.done >= 2) cancel.store(true);
    if (p.phase == "final") final_points = p.done;
  };
  auto out = runTune(runner, &testing::device().info(), r, cb, cancel);
  ASSERT_TRUE(out) << out.error().message;
  const auto& rec = out->record;
  EXPECT_EQ(final_points, 2u) << "the final round went on after Stop";
  EXPECT_EQ(rec.stop_reason, "cancelled");
  EXPECT_EQ(rec.evaluations.size(), 9u);
  EXPECT_EQ(out->points.size(), 9u);
  EXPECT_TRUE(rec.final.empty());
  EXPECT_FALSE(rec.decided);
  ASSERT_TRUE(rec.winner);
  EXPECT_EQ(*rec.winner, rec.evaluations[*rec.bestEvaluation()].config);
  EXPECT_NE(rec.verdict.find("cancelled in the final round"), std::string::npos) << rec.verdict;
}

// ---------------------------------------------------------------- the verdict

TuneRecord recordWithFinalists(const std::vector<std::vector<double>>& samples) {
  TuneRecord rec;
  rec.dimensions = {{"X", {1, 2, 3}, {}}};
  rec.objective = TuneObjective::Time;
  // Rounds of 5 samples each.
  rec.final_rounds = 100;
  for (size_t i = 0; i < samples.size(); ++i) {
    TuneFinalist f{{uint32_t(i)}, samples[i], {}, {}, {}, 0, 1};
    for (size_t r = 0; r + 5 <= samples[i].size(); r += 5)
      f.round_medians_ns.push_back(computeStats({samples[i].begin() + r, samples[i].begin() + r + 5}).median);
    rec.final.push_back(f);
  }
  rankFinalists(rec, [](const TuneConfig&, double median) { return 1e9 / median; });
  return rec;
}

std::vector<double> noisy(double center, double spread, uint64_t seed, size_t n = 40) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(center, spread);
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) out.push_back(dist(rng));
  return out;
}

TEST(TuneVerdict, RanksByScoreAndSaysWhetherTheWinnerReallyWins) {
  // X=1 is 10% slower, X=2 fastest, X=3 tied with X=2.
  auto rec = recordWithFinalists({noisy(1100, 10, 1), noisy(1000, 10, 2), noisy(1000, 10, 3)});
  ASSERT_EQ(rec.final.size(), 3u);
  EXPECT_GT(rec.final[0].score, rec.final[1].score);
  EXPECT_EQ(rec.final[2].config, TuneConfig{0});
  EXPECT_FALSE(rec.decided) << rec.verdict;  // #1 and #2 are X=2 and X=3
  EXPECT_NE(rec.verdict.find("cannot be told apart"), std::string::npos) << rec.verdict;
  EXPECT_LT(rec.final[1].p_vs_next, 0.001);  // X=3 vs X=1

  rec = recordWithFinalists({noisy(1100, 10, 1), noisy(1000, 10, 2)});
  EXPECT_TRUE(rec.decided) << rec.verdict;
  EXPECT_EQ(rec.winner, TuneConfig{1});
  EXPECT_NE(rec.verdict.find("beats #2 (X=1) by 10."), std::string::npos) << rec.verdict;
  EXPECT_NE(rec.verdict.find("(Mann-Whitney p = 0.0002, 8 + 8 rounds)"), std::string::npos) << rec.verdict;

  // Significant but smaller than the margin: a tie that says so.
  rec = recordWithFinalists({noisy(1005, 1, 1, 100), noisy(1000, 1, 2, 100)});
  EXPECT_FALSE(rec.decided);
  EXPECT_NE(rec.verdict.find("under the 1.0% margin"), std::string::npos) << rec.verdict;

  // A finalist that failed its re-measurement ranks last and never wins.
  TuneRecord failed;
  failed.dimensions = {{"X", {1, 2}, {}}};
  failed.final = {{{0}, {}, {}, "verification failed", {}, 0, 1}, {{1}, noisy(1000, 10, 4), {1000}, "", {}, 0, 1}};
  rankFinalists(failed, [](const TuneConfig&, double m) { return 1e9 / m; });
  EXPECT_EQ(failed.winner, TuneConfig{1});
  EXPECT_EQ(failed.final[1].error, "verification failed");
}

// ---------------------------------------------------------------- sessions and tuned defaults

TEST(TuneSession, ATuneRoundTripsAndACorruptOneIsRefused) {
  TuneRequest r = blockTilingRequest();
  r.final_top = 2;
  r.final_rounds = 2;
  r.strategy = SearchStrategy::Genetic;
  r.budget = 5;
  Runner runner(&testing::device());
  std::atomic<bool> cancel{false};
  auto out = runTune(runner, &testing::device().info(), r, {}, cancel);
  ASSERT_TRUE(out) << out.error().message;
  Session s = newSession();
  s.device = testing::device().info();
  s.plan = r.plan;
  for (const auto& m : out->points) s.plan.items.push_back(m.item);
  s.points = out->points;
  s.tune = out->record;
  const std::string text = sessionToJson(s);
  auto back = sessionFromJson(text);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->tune);
  EXPECT_EQ(back->tune->evaluations, s.tune->evaluations);
  EXPECT_EQ(back->tune->final, s.tune->final);
  EXPECT_EQ(back->tune->pruned, s.tune->pruned);
  EXPECT_EQ(back->tune->dimensions, s.tune->dimensions);
  EXPECT_EQ(back->tune->verdict, s.tune->verdict);
  EXPECT_EQ(back->tune->winner, s.tune->winner);

  auto corrupt = [&](const std::function<void(nlohmann::json&)>& change, const std::string& expect) {
    auto j = nlohmann::json::parse(text);
    change(j);
    auto loaded = sessionFromJson(j.dump());
    ASSERT_FALSE(loaded) << expect;
    EXPECT_NE(loaded.error().message.find(expect), std::string::npos) << loaded.error().message;
  };
  corrupt([](auto& j) { j["tune"]["evaluations"][0]["score"] = 1e6; }, "does not match the point's median");
  corrupt([](auto& j) { j["tune"]["evaluations"][0]["point"] = 99; }, "is not a point of this session");
  corrupt([](auto& j) { j["tune"]["evaluations"][0]["config"] = {0, 0, 7}; }, "not an index into dimension wg");
  corrupt([](auto& j) { j["tune"]["evaluations"][1]["config"] = j["tune"]["evaluations"][0]["config"]; },
          "is not point 1's");
  corrupt([](auto& j) { j["tune"]["strategy"] = "exhaustive"; }, "unknown strategy");
  // (A changed sample need not move the median: the score is what is checked against it.)
  corrupt([](auto& j) { j["tune"]["final"][0]["score"] = 2 * j["tune"]["final"][0]["score"].template get<double>(); },
          "does not match its samples' median");
  corrupt([](auto& j) { j["tune"]["final"][0]["round_medians_ns"][0] = 1e12; }, "outside the samples");
  corrupt([](auto& j) { j["tune"]["final"][0]["round_medians_ns"] = nlohmann::json::array(); }, "0 rounds");
}

TEST(TunedDefaults, SaveReplaceFindAndApply) {
  const std::string path = (tempDir() / "cfg" / "tuned.json").string();
  auto empty = loadTunedDefaults(path);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  const vk::DeviceInfo& d = testing::device().info();
  TunedDefault t;
  t.kernel = "gemm.block_tiling";
  t.device = d.name;
  t.size = {256, 256, 256, 3};
  t.size_class = sizeClass(t.size);
  t.params.wg = {8, 8, 1};
  t.params.values = {{"BK", 2}, {"BN", 8}};
  ASSERT_TRUE(saveTunedDefault(path, t));
  t.params.values["BN"] = 16;  // the same key again: replaced
  ASSERT_TRUE(saveTunedDefault(path, t));
  TunedDefault big = t;
  big.size = {2048, 2048, 2048, 3};
  big.size_class = sizeClass(big.size);
  big.params.values["BK"] = 8;
  ASSERT_TRUE(saveTunedDefault(path, big));
  auto list = loadTunedDefaults(path);
  ASSERT_TRUE(list) << list.error().message;
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(sizeClass({300, 300, 300, 3}), 256u);
  EXPECT_EQ(sizeClass({1024, 4096, 1, 2}), 2048u);
  EXPECT_EQ(findTunedDefault(*list, t.kernel, d.name, {200, 200, 200, 3})->params.values.at("BN"), 16);
  EXPECT_EQ(findTunedDefault(*list, t.kernel, d.name, {1500, 1500, 1500, 3})->params.values.at("BK"), 8);
  EXPECT_FALSE(findTunedDefault(*list, t.kernel, "another GPU", {256, 256, 256, 3}));

  const KernelInfo* k = Registry::instance().find(t.kernel);
  std::vector<PlanItem> items = {
      {t.kernel, k->defaultParams(), {256, 256, 256, 3}},
      {"gemm.tiled_shared", Registry::instance().find("gemm.tiled_shared")->defaultParams(), {256, 256, 256, 3}}};
  items[0].params.values["BK"] = 4;  // as typed by the user
  auto lines = applyTunedDefaults(items, *list, d, {"BK"});
  EXPECT_EQ(items[0].params.values.at("BK"), 4) << "a tunable the user set stays";
  EXPECT_EQ(items[0].params.values.at("BN"), 16);
  EXPECT_EQ(items[0].params.wg, (WorkgroupShape{8, 8, 1}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("not tuned on"), std::string::npos) << lines[1];

  std::ofstream(path) << "{\"format\": \"kernelscope-tuned\", \"entries\": [{\"kernel\": 3}]}";
  auto corrupt = loadTunedDefaults(path);
  ASSERT_FALSE(corrupt);
  EXPECT_NE(corrupt.error().message.find("entries[0]"), std::string::npos) << corrupt.error().message;
}

}  // namespace
}  // namespace ks
