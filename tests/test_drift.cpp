// Drift detection: the verdict on synthetic checks (fires on a slowdown, stays
// quiet on noise, the threshold is exact), and the reference running for real
// inside a sweep on lavapipe and on the host.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/bench/drift.h"
#include "engine/bench/runner.h"
#include "engine/bench/statistics.h"
#include "engine/session/session.h"
#include "tests/lavapipe.h"

using namespace ks;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

DriftCheck checkOf(const std::string& when, size_t after_points, std::vector<double> samples) {
  DriftCheck c;
  c.when = when;
  c.after_points = after_points;
  c.samples_ns = std::move(samples);
  c.stats = computeStats(c.samples_ns);
  return c;
}

// 15 timed runs of a reference that takes `center_ns`, each off by lognormal
// noise of `sigma` (0.01 is about 1%), as a quiet machine gives them.
std::vector<double> noisySamples(std::mt19937_64& rng, double center_ns, double sigma, size_t n = 15) {
  std::normal_distribution<double> noise(0, sigma);
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) out.push_back(center_ns * std::exp(noise(rng)));
  return out;
}

// A sweep's checks: start, `between` checks, end; check i times the reference
// at center_ns * factors[i].
std::vector<DriftCheck> noisyChecks(std::mt19937_64& rng, const std::vector<double>& factors, double sigma) {
  std::vector<DriftCheck> checks;
  for (size_t i = 0; i < factors.size(); ++i) {
    const std::string when = i == 0 ? "start" : i + 1 == factors.size() ? "end" : "between";
    checks.push_back(checkOf(when, 4 * i, noisySamples(rng, 500e3 * factors[i], sigma)));
  }
  return checks;
}

// ---------------------------------------------------------------- the verdict

TEST(DriftEvaluate, FiresOnASyntheticFivePercentSlowdown) {
  // The machine slows down by 5% halfway (clocks dropped, another job started).
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const auto report = evaluateDrift("synthetic", noisyChecks(rng, {1, 1, 1, 1.05, 1.05, 1.05}, 0.01), 0.03);
    ASSERT_TRUE(report.unstable) << report.summary();
    EXPECT_GE(report.worst_check, 3u);
    EXPECT_NEAR(report.max_change, 0.05, 0.015);
    EXPECT_GT(report.changeOf(report.worst_check), 0) << "a slowdown is a positive change";
  }
}

TEST(DriftEvaluate, FiresOnAGradualSlowdownAndOnASpeedUp) {
  std::mt19937_64 rng(42);
  const auto thermal = evaluateDrift("synthetic", noisyChecks(rng, {1, 1.01, 1.02, 1.035, 1.05}, 0.01), 0.03);
  EXPECT_TRUE(thermal.unstable) << thermal.summary();
  EXPECT_GE(thermal.worst_check, 3u);
  // Clocks that were low at the start and ramped up: the change is negative.
  const auto ramp = evaluateDrift("synthetic", noisyChecks(rng, {1, 0.95, 0.95, 0.95}, 0.01), 0.03);
  EXPECT_TRUE(ramp.unstable) << ramp.summary();
  EXPECT_LT(ramp.changeOf(ramp.worst_check), -0.03);
  EXPECT_TRUE(contains(ramp.summary(), "moved -")) << ramp.summary();
}

TEST(DriftEvaluate, StaysQuietOnNoise) {
  // 1% lognormal noise, 15 runs per check, 8 checks a sweep, 2000 sweeps: the
  // medians scatter by about 0.3%, and not one sweep may be called unstable.
  size_t false_alarms = 0;
  double largest = 0;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    std::mt19937_64 rng(seed);
    const auto report = evaluateDrift("synthetic", noisyChecks(rng, std::vector<double>(8, 1.0), 0.01), 0.03);
    false_alarms += report.unstable;
    largest = std::max(largest, report.max_change);
  }
  EXPECT_EQ(false_alarms, 0u);
  EXPECT_LT(largest, 0.03);
  EXPECT_GT(largest, 0.002) << "the noise should have moved the medians a little";
}

TEST(DriftEvaluate, StaysQuietOnNoiseWithOutliers) {
  // A few runs of each check hit by an interruption (+50%): the median ignores them.
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    auto checks = noisyChecks(rng, std::vector<double>(5, 1.0), 0.01);
    for (auto& c : checks) {
      c.samples_ns[seed % 15] *= 1.5;
      c.samples_ns[(seed + 7) % 15] *= 1.5;
      c.stats = computeStats(c.samples_ns);
    }
    const auto report = evaluateDrift("synthetic", checks, 0.03);
    EXPECT_FALSE(report.unstable) << "seed " << seed << ": " << report.summary();
  }
}

TEST(DriftEvaluate, AMoveInsideTheChecksNoiseIsNotDrift) {
  // A noisy machine (10% scatter per run, a shared VM or lavapipe's threads):
  // the medians of two checks differ by more than 3% by chance, but their 95%
  // confidence intervals overlap, so nothing says the machine changed.
  size_t moved_past_threshold = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    std::mt19937_64 rng(seed);
    const auto checks = noisyChecks(rng, std::vector<double>(6, 1.0), 0.10);
    const auto report = evaluateDrift("synthetic", checks, 0.03);
    moved_past_threshold += report.max_change > 0.03;
    // The old rule fires on the same checks whenever a median moved past 3%.
    const auto old = evaluateDrift("synthetic", checks, 0.03, DriftRule::ThresholdOnly);
    EXPECT_EQ(old.unstable, old.max_change > 0.03);
    if (report.unstable) {
      // Only when the intervals really are disjoint (rare by chance).
      const auto& first = report.checks[0].stats;
      const auto& worst = report.checks[report.worst_check].stats;
      EXPECT_TRUE(worst.ci_low > first.ci_high || worst.ci_high < first.ci_low) << report.summary();
    }
  }
  EXPECT_GT(moved_past_threshold, 250u) << "the noise should often move a median past 3%";
  std::mt19937_64 rng(7);
  const auto quiet = evaluateDrift("synthetic", noisyChecks(rng, {1, 1.04}, 0.10), 0.03);
  if (!quiet.unstable && quiet.max_change > 0.03)
    EXPECT_TRUE(contains(quiet.summary(), "within the checks' noise")) << quiet.summary();
}

TEST(DriftEvaluate, ARealSlowdownOnANoisyMachineIsStillFlagged) {
  // Both cores taken halfway: the reference doubles, far outside any noise.
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const auto report = evaluateDrift("synthetic", noisyChecks(rng, {1, 1, 1, 2, 2}, 0.10), 0.03);
    ASSERT_TRUE(report.unstable) << "seed " << seed << ": " << report.summary();
    EXPECT_GE(report.worst_check, 3u);
  }
}

TEST(DriftEvaluate, TheNoiseFloorHidesSmallMovesButNotALoad) {
  // A shared CPU's speed moves a CPU device's reference by up to ~24% between
  // checks, with tight intervals each time: under a 25% floor, not drift; a
  // doubling (both cores taken) still is.
  std::mt19937_64 rng(3);
  const auto shift =
      evaluateDrift("r", noisyChecks(rng, {1, 1.22, 0.85, 1.08}, 0.005), 0.03, DriftRule::ThresholdAndCi, 0.25);
  EXPECT_FALSE(shift.unstable) << shift.summary();
  EXPECT_TRUE(contains(shift.summary(), "noise floor on this device (25%)")) << shift.summary();
  EXPECT_TRUE(contains(shift.summary(), "(threshold 3%, noise floor 25%)")) << shift.summary();
  EXPECT_TRUE(evaluateDrift("r", shift.checks, 0.03).unstable) << "without the floor the same checks are drift";
  const auto load = evaluateDrift("r", noisyChecks(rng, {1, 1, 2, 2}, 0.005), 0.03, DriftRule::ThresholdAndCi, 0.25);
  EXPECT_TRUE(load.unstable) << load.summary();
}

TEST(DriftEvaluate, TheRuleRoundTripsByName) {
  for (DriftRule r : {DriftRule::ThresholdAndCi, DriftRule::ThresholdOnly})
    EXPECT_EQ(parseDriftRule(driftRuleName(r)).value(), r);
  EXPECT_FALSE(parseDriftRule("vibes").ok());
}

TEST(DriftEvaluate, TheThresholdIsExactAtTheBoundary) {
  // A change of exactly the threshold is not more than it, though 103 / 100 - 1
  // computes as 0.030000000000000027.
  auto at = evaluateDrift("r", {checkOf("start", 0, {100}), checkOf("end", 2, {103})}, 0.03);
  EXPECT_FALSE(at.unstable) << at.summary();
  EXPECT_NEAR(at.max_change, 0.03, 1e-12);
  auto over = evaluateDrift("r", {checkOf("start", 0, {100}), checkOf("end", 2, {103.01})}, 0.03);
  EXPECT_TRUE(over.unstable) << over.summary();
  auto under = evaluateDrift("r", {checkOf("start", 0, {100}), checkOf("end", 2, {96.99})}, 0.03);
  EXPECT_TRUE(under.unstable) << "a 3.01% speed-up is a change too: " << under.summary();
  // Binary-exact values: 1250 / 1000 - 1 is 0.25 exactly.
  EXPECT_FALSE(evaluateDrift("r", {checkOf("start", 0, {1000}), checkOf("end", 1, {1250})}, 0.25).unstable);
  EXPECT_TRUE(evaluateDrift("r", {checkOf("start", 0, {1000}), checkOf("end", 1, {1250.001})}, 0.25).unstable);
  // The same checks against a higher threshold are stable.
  EXPECT_FALSE(evaluateDrift("r", over.checks, 0.05).unstable);
}

TEST(DriftEvaluate, FewerThanTwoChecksAreNeverUnstable) {
  const auto none = evaluateDrift("r", {}, 0.03);
  EXPECT_FALSE(none.unstable);
  EXPECT_EQ(none.max_change, 0);
  EXPECT_EQ(none.summary(), "not checked: the reference did not run");
  const auto one = evaluateDrift("r", {checkOf("start", 0, {100, 200, 300})}, 1e-9);
  EXPECT_FALSE(one.unstable);
  EXPECT_EQ(one.max_change, 0);
  EXPECT_TRUE(contains(one.summary(), "too few checks")) << one.summary();
}

TEST(DriftEvaluate, ChangeIsRelativeToTheFirstCheck) {
  // 100 -> 104 -> 98: the largest change against the first check is +4%, not
  // the 5.8% step between the last two.
  const auto r =
      evaluateDrift("r", {checkOf("start", 0, {100}), checkOf("between", 3, {104}), checkOf("end", 6, {98})}, 0.05);
  EXPECT_NEAR(r.max_change, 0.04, 1e-12);
  EXPECT_EQ(r.worst_check, 1u);
  EXPECT_FALSE(r.unstable);
  EXPECT_NEAR(r.changeOf(2), -0.02, 1e-12);
}

TEST(DriftEvaluate, SummaryNamesTheCheckAndTheChange) {
  const auto unstable = evaluateDrift("peak_fma.comp fp32, 16 workgroups x 23 iterations",
                                      {checkOf("start", 0, {1000}), checkOf("between", 4, {1010}),
                                       checkOf("between", 12, {1042}), checkOf("end", 16, {1030})},
                                      0.03);
  EXPECT_EQ(unstable.summary(),
            "UNSTABLE: reference time moved +4.2% by check 3 (after 12 points, between kernels); threshold 3%");
  const auto at_end = evaluateDrift("r", {checkOf("start", 0, {1000}), checkOf("end", 1, {900})}, 0.025);
  EXPECT_EQ(at_end.summary(),
            "UNSTABLE: reference time moved -10.0% by check 2 (after 1 point, at the end); threshold 2.5%");
  const auto stable =
      evaluateDrift("r",
                    {checkOf("start", 0, {1000}), checkOf("between", 2, {1008}), checkOf("between", 5, {995}),
                     checkOf("between", 9, {1001}), checkOf("end", 12, {1004})},
                    0.03);
  EXPECT_EQ(stable.summary(), "stable: reference time within +-0.8% over 5 checks (threshold 3%)");
  // Tiny changes and thresholds keep their digits instead of reading 0.0%.
  const auto tiny = evaluateDrift("r", {checkOf("start", 0, {1e6}), checkOf("end", 1, {1e6 + 40})}, 1e-6);
  EXPECT_EQ(tiny.summary(),
            "UNSTABLE: reference time moved +0.004% by check 2 (after 1 point, at the end); threshold 0.0001%");
}

TEST(DriftEvaluate, SummaryKeepsAReferenceFailure) {
  auto r = evaluateDrift("r", {checkOf("start", 0, {1000}), checkOf("between", 1, {1001})}, 0.03);
  r.error = "check 3 (between, after 2 points): vkQueueSubmit: VK_ERROR_DEVICE_LOST\nmore detail";
  EXPECT_EQ(r.summary(),
            "stable: reference time within +-0.1% over 2 checks (threshold 3%); then the reference failed: check 3 "
            "(between, after 2 points): vkQueueSubmit: VK_ERROR_DEVICE_LOST ...");
  auto none = evaluateDrift("r", {}, 0.03);
  none.error = "check 1 (start, after 0 points): shader peak_fma.comp is not embedded in this build";
  EXPECT_EQ(none.summary(),
            "not checked: check 1 (start, after 0 points): shader peak_fma.comp is not embedded in this build");
}

// ---------------------------------------------------------------- the reference in a sweep

Plan planOf(const std::vector<std::string>& kernels, const std::vector<uint64_t>& sizes) {
  SweepSpec spec;
  for (const auto& id : kernels) spec.kernels.push_back(Registry::instance().find(id));
  for (uint64_t n : sizes) spec.sizes.push_back({n});
  Plan plan;
  plan.items = buildPlan(spec).value();
  plan.reps = 3;
  plan.warmup = 1;
  plan.warmup_ms = 20;
  plan.drift_interval_ms = 0;  // a check at every kernel change the rules allow
  return plan;
}

void expectRealCheck(const DriftCheck& c, const std::string& when, size_t after_points) {
  SCOPED_TRACE(when + " after " + std::to_string(after_points));
  EXPECT_EQ(c.when, when);
  EXPECT_EQ(c.after_points, after_points);
  EXPECT_EQ(c.samples_ns.size(), 15u);
  EXPECT_EQ(c.stats.count, 15u);
  EXPECT_GT(c.stats.median, 0);
  EXPECT_GT(c.stats.min, 0);
}

TEST(DriftSweep, LavapipeSweepChecksAtStartBetweenKernelsAndEnd) {
  // Sizes outermost: dot.two_pass_shared 4096, cpu.dot.naive 4096, dot 65536, cpu 65536.
  Plan plan = planOf({"dot.two_pass_shared", "cpu.dot.naive"}, {4096, 65536});
  ASSERT_EQ(plan.items.size(), 4u);
  Runner runner(&ks::testing::device());
  std::vector<size_t> seen;  // the number of checks at each callback
  RunCallbacks cb;
  cb.drift = [&](const DriftReport& r) { seen.push_back(r.checks.size()); };
  std::atomic<bool> cancel{false};
  const auto t0 = std::chrono::steady_clock::now();
  const auto points = runner.run(plan, cb, cancel);
  const double sweep_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(points.size(), 4u);
  for (const auto& m : points) EXPECT_EQ(m.status, PointStatus::Ok) << m.item.kernel << ": " << m.error;

  const DriftReport& drift = runner.drift();
  EXPECT_EQ(drift.error, "");
  EXPECT_EQ(drift.clock, "gpu_timestamp");
  EXPECT_TRUE(contains(drift.reference, "peak_fma.comp fp32, 1 workgroup x ")) << drift.reference;
  EXPECT_DOUBLE_EQ(drift.noise_floor, 0.25) << "a CPU device's reference has a noise floor";
  EXPECT_FALSE(contains(drift.reference, "not calibrated")) << drift.reference;
  EXPECT_DOUBLE_EQ(drift.threshold, 0.03);
  // A check between kernels only follows a GPU point: after the CPU point the
  // device idled, and timing its ramp-up would be a false alarm.
  ASSERT_EQ(drift.checks.size(), 4u) << drift.summary();
  expectRealCheck(drift.checks[0], "start", 0);
  expectRealCheck(drift.checks[1], "between", 1);
  expectRealCheck(drift.checks[2], "between", 3);
  expectRealCheck(drift.checks[3], "end", 4);
  EXPECT_EQ(seen, (std::vector<size_t>{1, 2, 3, 4}));
  // The verdict is the pure function's on the same checks.
  const auto again = evaluateDrift(drift.reference, drift.checks, drift.threshold, drift.rule, drift.noise_floor);
  EXPECT_EQ(again.unstable, drift.unstable);
  EXPECT_EQ(again.max_change, drift.max_change);
  // Calibrated to a fraction of a millisecond (GPUs) to about 10 ms (CPU devices) per run.
  EXPECT_GT(drift.checks[0].stats.median, 0.05e6);
  EXPECT_LT(drift.checks[0].stats.median, 30e6);
  std::printf("[ info     ] reference %s: median %.3f ms per run; sweep %.0f ms; %s\n", drift.reference.c_str(),
              drift.checks[0].stats.median / 1e6, sweep_ms, drift.summary().c_str());

  // Into a session and back through JSON: the same checks and the same verdict.
  Session s = newSession();
  s.device = ks::testing::device().info();
  s.plan = plan;
  s.points = points;
  s.drift = drift;
  const std::string text = sessionToJson(s);
  auto back = sessionFromJson(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->drift.has_value());
  EXPECT_TRUE(back->plan.drift_check);
  EXPECT_EQ(back->plan.drift_threshold, plan.drift_threshold);
  EXPECT_EQ(back->plan.drift_interval_ms, 0u);
  EXPECT_EQ(back->drift->reference, drift.reference);
  EXPECT_EQ(back->drift->clock, drift.clock);
  EXPECT_EQ(back->drift->unstable, drift.unstable);
  EXPECT_EQ(back->drift->max_change, drift.max_change);
  EXPECT_EQ(back->drift->worst_check, drift.worst_check);
  EXPECT_EQ(back->drift->summary(), drift.summary());
  ASSERT_EQ(back->drift->checks.size(), drift.checks.size());
  for (size_t i = 0; i < drift.checks.size(); ++i) {
    EXPECT_EQ(back->drift->checks[i].when, drift.checks[i].when);
    EXPECT_EQ(back->drift->checks[i].after_points, drift.checks[i].after_points);
    EXPECT_EQ(back->drift->checks[i].samples_ns, drift.checks[i].samples_ns);
    EXPECT_EQ(back->drift->checks[i].stats.median, drift.checks[i].stats.median);
  }
  EXPECT_EQ(sessionToJson(*back), text);
}

// A real change: both cores (every core) taken by another job halfway through
// a lavapipe sweep. The reference shares the cores with the load, its time
// grows far past the noise, and the sweep is flagged.
TEST(DriftSweep, ALoadStartedHalfwayIsFlaggedOnLavapipe) {
  Plan plan = planOf(
      {"dot.two_pass_shared", "dot.two_pass_subgroup_add", "dot.two_pass_global", "dot.two_pass_subgroup_shuffle"},
      {4096});
  Runner runner(&ks::testing::device());
  std::atomic<bool> stop_load{false};
  std::vector<std::thread> load;
  RunCallbacks cb;
  cb.point = [&](const Measurement&) {
    if (!load.empty()) return;
    // After the first point: two busy loops per hardware thread (the
    // one-workgroup reference then gets about half a core).
    for (unsigned i = 0; i < 2 * std::max(2u, std::thread::hardware_concurrency()); ++i)
      load.emplace_back([&stop_load] {
        volatile uint64_t x = 0;
        while (!stop_load.load(std::memory_order_relaxed)) x = x + 1;
      });
  };
  std::atomic<bool> cancel{false};
  runner.run(plan, cb, cancel);
  stop_load.store(true);
  for (auto& t : load) t.join();
  const DriftReport& drift = runner.drift();
  ASSERT_GE(drift.checks.size(), 3u) << drift.summary();
  EXPECT_TRUE(drift.unstable) << drift.summary();
  EXPECT_GT(drift.changeOf(drift.worst_check), 0.03) << "the load slows the reference: " << drift.summary();
  std::printf("[ info     ] %s\n", drift.summary().c_str());
}

TEST(DriftSweep, HostReferenceWithoutADevice) {
  // No device: the C++ loop on steady_clock. Every kernel change may check.
  Plan plan = planOf({"cpu.dot.naive", "cpu.dot.simd"}, {1024, 4096});
  Runner runner(nullptr);
  std::atomic<bool> cancel{false};
  const auto points = runner.run(plan, {}, cancel);
  ASSERT_EQ(points.size(), 4u);
  const DriftReport& drift = runner.drift();
  EXPECT_EQ(drift.error, "");
  EXPECT_EQ(drift.clock, "wall");
  EXPECT_TRUE(contains(drift.reference, "C++ FMA loop on the host, 8 chains x ")) << drift.reference;
  ASSERT_EQ(drift.checks.size(), 5u) << drift.summary();
  expectRealCheck(drift.checks[0], "start", 0);
  for (size_t i = 1; i <= 3; ++i) expectRealCheck(drift.checks[i], "between", i);
  expectRealCheck(drift.checks[4], "end", 4);
}

TEST(DriftSweep, IntervalLimitsTheChecksBetweenKernels) {
  Plan plan = planOf({"cpu.dot.naive", "cpu.dot.simd"}, {1024, 4096});
  plan.drift_interval_ms = 3600 * 1000;
  Runner runner(nullptr);
  std::atomic<bool> cancel{false};
  runner.run(plan, {}, cancel);
  ASSERT_EQ(runner.drift().checks.size(), 2u) << runner.drift().summary();
  EXPECT_EQ(runner.drift().checks[0].when, "start");
  EXPECT_EQ(runner.drift().checks[1].when, "end");
}

TEST(DriftSweep, OffMeansNoReferenceRuns) {
  Plan plan = planOf({"cpu.dot.naive", "cpu.dot.simd"}, {1024});
  plan.drift_check = false;
  Runner runner(nullptr);
  size_t calls = 0;
  RunCallbacks cb;
  cb.drift = [&](const DriftReport&) { ++calls; };
  std::atomic<bool> cancel{false};
  EXPECT_EQ(runner.run(plan, cb, cancel).size(), 2u);
  EXPECT_TRUE(runner.drift().checks.empty());
  EXPECT_EQ(calls, 0u);
}

TEST(DriftSweep, CancelSkipsThePendingChecks) {
  Plan plan = planOf({"cpu.dot.naive", "cpu.dot.simd"}, {1024, 4096});
  Runner runner(nullptr);
  std::atomic<bool> cancel{false};
  RunCallbacks cb;
  cb.point = [&](const Measurement&) { cancel.store(true); };  // Stop pressed during the first point
  const auto points = runner.run(plan, cb, cancel);
  EXPECT_EQ(points.size(), 1u);
  ASSERT_EQ(runner.drift().checks.size(), 1u) << "only the start check ran";
  EXPECT_EQ(runner.drift().checks[0].when, "start");
  EXPECT_EQ(runner.drift().error, "") << "a cancelled check is not a failure";

  // Cancelled before anything ran: no check at all.
  Runner idle(nullptr);
  std::atomic<bool> stopped{true};
  EXPECT_TRUE(idle.run(plan, {}, stopped).empty());
  EXPECT_TRUE(idle.drift().checks.empty());
}

TEST(DriftReferenceRuns, ACancelledCheckFailsAsCancelled) {
  DriftReference reference(&ks::testing::device());
  std::atomic<bool> cancel{true};
  auto c = reference.check("start", 0, 0, cancel);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "cancelled");
}

TEST(DriftReferenceRuns, CalibratesOnceAndKeepsTheWorkloadFixed) {
  DriftReference reference(&ks::testing::device());
  EXPECT_TRUE(contains(reference.description(), "not calibrated yet")) << reference.description();
  std::atomic<bool> cancel{false};
  const auto t0 = std::chrono::steady_clock::now();
  auto first = reference.check("start", 0, 0, cancel);
  const auto t1 = std::chrono::steady_clock::now();
  ASSERT_TRUE(first.ok()) << first.error().message;
  const std::string calibrated = reference.description();
  auto second = reference.check("between", 1, 0, cancel);
  const auto t2 = std::chrono::steady_clock::now();
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(reference.description(), calibrated) << "the workload must not change between checks";
  EXPECT_EQ(second->samples_ns.size(), 15u);
  // Roughly the target on a CPU device, 10 ms per run (calibration accepts
  // half and up), within what a shared machine allows.
  EXPECT_GT(second->stats.median, 2e6);
  EXPECT_LT(second->stats.median, 40e6);
  using ms = std::chrono::duration<double, std::milli>;
  std::printf("[ info     ] %s: first check (with calibration) %.1f ms, later check %.1f ms\n", calibrated.c_str(),
              ms(t1 - t0).count(), ms(t2 - t1).count());
}

}  // namespace
