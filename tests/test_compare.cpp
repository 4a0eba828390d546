// Compare: the Mann-Whitney U test against values worked out by hand or by
// enumeration, and two sessions side by side.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "engine/bench/compare.h"
#include "engine/bench/report.h"
#include "engine/session/session.h"
#include "synthetic_session.h"

namespace {

using ks::testing::failedPoint;
using ks::testing::okPoint;
using ks::testing::planItem;
using ks::testing::samplesAround;
using ks::testing::syntheticSession;

std::vector<double> scaled(const std::vector<double>& v, double factor) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * factor);
  return out;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// ---------------------------------------------------------------- Mann-Whitney U

TEST(MannWhitney, CompletelySeparatedFiveAgainstFiveIsTwoOverTwoHundredFiftyTwo) {
  // Of the C(10, 5) = 252 equally likely splits, one gives U = 0 and one U = 25.
  const auto low = ks::mannWhitneyU({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_TRUE(low.exact);
  EXPECT_EQ(low.u, 0);
  EXPECT_NEAR(low.p, 2.0 / 252, 1e-15);
  EXPECT_LT(low.z, 0);

  const auto high = ks::mannWhitneyU({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  EXPECT_EQ(high.u, 25);
  EXPECT_NEAR(high.p, 2.0 / 252, 1e-15);
  EXPECT_GT(high.z, 0);
}

TEST(MannWhitney, InterleavedSamplesAreNotSignificant) {
  // U = 0 + 1 + 2 + 3 + 4 = 10; 87 of the 252 splits have U <= 10, so p = 174/252.
  const auto r = ks::mannWhitneyU({1, 3, 5, 7, 9}, {2, 4, 6, 8, 10});
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u, 10);
  EXPECT_NEAR(r.p, 174.0 / 252, 1e-12);
}

TEST(MannWhitney, TextbookCriticalValueForTenAgainstTen) {
  // Tables give 23 as the largest U significant at 5% (two-sided) for n1 = n2 = 10.
  // a: seven values below every b, then values above 4, 9 and 10 of the b's.
  const std::vector<double> b = {100, 101, 102, 103, 104, 105, 106, 107, 108, 109};
  const auto at23 = ks::mannWhitneyU({0, 1, 2, 3, 4, 5, 6, 103.5, 108.5, 109.5}, b);
  const auto at24 = ks::mannWhitneyU({0, 1, 2, 3, 4, 5, 6, 104.5, 108.5, 109.5}, b);
  EXPECT_EQ(at23.u, 23);
  EXPECT_EQ(at24.u, 24);
  // Tail sums over all C(20, 10) splits, enumerated independently.
  EXPECT_NEAR(at23.p, 0.04325705254497824, 1e-12);
  EXPECT_NEAR(at24.p, 0.05242590227110351, 1e-12);
  EXPECT_LT(at23.p, ks::kSignificanceLevel);
  EXPECT_GT(at24.p, ks::kSignificanceLevel);
}

TEST(MannWhitney, IdenticalSamplesGivePOne) {
  const auto r = ks::mannWhitneyU({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5});
  EXPECT_FALSE(r.exact) << "ties: the exact table does not apply";
  EXPECT_EQ(r.u, 12.5);  // exactly n1 * n2 / 2
  EXPECT_EQ(r.z, 0);
  EXPECT_EQ(r.p, 1);
}

TEST(MannWhitney, TiesGetMidranksAndTheTieCorrectedVariance) {
  // Pooled: 1a 2a 2a 2b 3a 3b 3b 4b 5b. Ranks: 1; 2,3,4 -> 3; 5,6,7 -> 6; 8; 9.
  // R1 = 1 + 3 + 3 + 6 = 13, U = 13 - 4*5/2 = 3 (= 0 + 0.5 + 0.5 + 2 by pairs).
  // Var = 4*5/12 * (10 - (24 + 24) / (9*8)) = 15.5556; z = -(7 - 0.5) / 3.94405.
  const auto r = ks::mannWhitneyU({1, 2, 2, 3}, {2, 3, 3, 4, 5});
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.u, 3);
  EXPECT_NEAR(r.z, -1.6480507967206073, 1e-12);
  EXPECT_NEAR(r.p, 0.09934224785346527, 1e-12);
}

TEST(MannWhitney, NormalApproximationAgreesWithExactAtTwentyAgainstTwenty) {
  // a = 0, 2, ..., 38; b the same shifted by an odd amount (no ties): from
  // nearly the same to clearly different.
  for (int shift : {1, 3, 5, 7, 9, 11, 13}) {
    SCOPED_TRACE("shift " + std::to_string(shift));
    std::vector<double> a, b;
    for (int i = 0; i < 20; ++i) a.push_back(2 * i), b.push_back(2 * i + shift);
    const auto exact = ks::mannWhitneyU(a, b);
    const auto normal = ks::mannWhitneyU(a, b, ks::MannWhitneyMethod::Normal);
    EXPECT_TRUE(exact.exact);
    EXPECT_FALSE(normal.exact);
    EXPECT_EQ(exact.u, normal.u);
    EXPECT_EQ(exact.z, normal.z);
    EXPECT_NEAR(exact.p, normal.p, 0.005);
    EXPECT_NE(exact.p, normal.p) << "both came from the same formula";
  }
  // One value checked against an independent enumeration (shift 9: U = 120).
  std::vector<double> a, b;
  for (int i = 0; i < 20; ++i) a.push_back(2 * i), b.push_back(2 * i + 9);
  EXPECT_NEAR(ks::mannWhitneyU(a, b).p, 0.030411256038764864, 1e-12);
}

TEST(MannWhitney, LargeSamplesUseTheNormalApproximation) {
  const auto r = ks::mannWhitneyU(samplesAround(100, ks::kMannWhitneyExactLimit + 1), samplesAround(50, 30));
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.u, double((ks::kMannWhitneyExactLimit + 1) * 30));
  EXPECT_LT(r.p, 1e-9);
}

TEST(MannWhitney, SwappingTheSamplesMirrorsU) {
  const std::vector<double> a = {3.1, 0.4, 2.2, 9.0, 5.5, 1.0};
  const std::vector<double> b = {4.0, 2.5, 7.7, 6.1};
  const auto ab = ks::mannWhitneyU(a, b), ba = ks::mannWhitneyU(b, a);
  EXPECT_EQ(ab.u + ba.u, 24);
  EXPECT_EQ(ab.z, -ba.z);
  EXPECT_DOUBLE_EQ(ab.p, ba.p);
}

TEST(MannWhitney, AnEmptySampleGivesPOne) {
  const auto r = ks::mannWhitneyU({}, {1, 2, 3});
  EXPECT_EQ(r.u, 0);
  EXPECT_EQ(r.z, 0);
  EXPECT_EQ(r.p, 1);
  EXPECT_EQ(ks::mannWhitneyU({1, 2, 3}, {}).p, 1);
}

TEST(MannWhitney, SignificanceMarks) {
  EXPECT_EQ(ks::significanceMark(0.0009), "***");
  EXPECT_EQ(ks::significanceMark(0.001), "**");
  EXPECT_EQ(ks::significanceMark(0.0099), "**");
  EXPECT_EQ(ks::significanceMark(0.01), "*");
  EXPECT_EQ(ks::significanceMark(0.0499), "*");
  EXPECT_EQ(ks::significanceMark(0.05), "");
  EXPECT_EQ(ks::significanceMark(1), "");
  EXPECT_EQ(ks::significanceMark(std::nan("")), "");
}

// ---------------------------------------------------------------- compareSessions

// 99.5 .. 100.5 ns, all different; the median is 100.
const std::vector<double> kBaselineSamples = samplesAround(100, 11);

TEST(CompareSessions, HalvedTimesGiveRatioOneHalfAndAreSignificant) {
  const auto item = planItem("cpu.gemm.naive", 16);
  const auto baseline = syntheticSession({okPoint(item, kBaselineSamples)});
  const auto current = syntheticSession({okPoint(item, scaled(kBaselineSamples, 0.5))});
  const auto c = ks::compareSessions(baseline, current);
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
  ASSERT_EQ(c.rows.size(), 1u);
  const auto& r = c.rows[0];
  EXPECT_EQ(r.kernel, "cpu.gemm.naive");
  EXPECT_EQ(r.params, "-");
  EXPECT_EQ(r.size.str(), "16");
  EXPECT_TRUE(r.comparable());
  EXPECT_DOUBLE_EQ(r.baseline_median_ns, 100);
  EXPECT_DOUBLE_EQ(r.current_median_ns, 50);
  EXPECT_DOUBLE_EQ(r.ratio, 0.5);
  EXPECT_DOUBLE_EQ(r.speedup, 2);
  EXPECT_EQ(r.baseline_samples, 11u);
  EXPECT_EQ(r.current_samples, 11u);
  // Every current sample is below every baseline one: U = 0, exact p = 2 / C(22, 11).
  EXPECT_TRUE(r.test.exact);
  EXPECT_EQ(r.test.u, 0);
  EXPECT_LT(r.test.z, 0) << "z < 0: the current samples are the smaller ones";
  EXPECT_NEAR(r.test.p, 2.0 / 705432, 1e-15);
  EXPECT_TRUE(r.significant());
  EXPECT_EQ(c.compared, 1u);
  EXPECT_DOUBLE_EQ(c.geomean_ratio, 0.5);
  EXPECT_EQ(c.significantly_faster, 1u);
  EXPECT_EQ(c.significantly_slower, 0u);
  EXPECT_TRUE(c.only_in_baseline.empty());
  EXPECT_TRUE(c.only_in_current.empty());
}

TEST(CompareSessions, GeometricMeanAndCountsOverSeveralPoints) {
  const auto a = planItem("cpu.gemm.naive", 16), b = planItem("cpu.gemm.naive", 32),
             same = planItem("cpu.gemm.blocked", 16);
  const auto baseline =
      syntheticSession({okPoint(a, kBaselineSamples), okPoint(b, kBaselineSamples), okPoint(same, kBaselineSamples)});
  const auto current = syntheticSession({okPoint(a, scaled(kBaselineSamples, 0.5)),
                                         okPoint(b, scaled(kBaselineSamples, 4)), okPoint(same, kBaselineSamples)});
  const auto c = ks::compareSessions(baseline, current);
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(c.rows[0].ratio, 0.5);
  EXPECT_DOUBLE_EQ(c.rows[1].ratio, 4);
  EXPECT_DOUBLE_EQ(c.rows[2].ratio, 1);
  EXPECT_GT(c.rows[1].test.z, 0) << "slower now: z > 0";
  EXPECT_FALSE(c.rows[2].significant()) << "p " << c.rows[2].test.p;
  EXPECT_EQ(c.compared, 3u);
  EXPECT_NEAR(c.geomean_ratio, std::cbrt(0.5 * 4 * 1), 1e-12);
  EXPECT_EQ(c.significantly_faster, 1u);
  EXPECT_EQ(c.significantly_slower, 1u);
}

TEST(CompareSessions, PointsMatchOnKernelWorkgroupAndSize) {
  const auto wg16 = planItem("gemm.naive", 32, {16, 16, 1}), wg8 = planItem("gemm.naive", 32, {8, 8, 1}),
             bigger = planItem("gemm.naive", 64, {16, 16, 1}),
             other = planItem("gemm.naive_coalesced", 32, {16, 16, 1});
  const auto baseline = syntheticSession({okPoint(wg8, kBaselineSamples), okPoint(wg16, kBaselineSamples)});
  const auto current = syntheticSession(
      {okPoint(wg16, kBaselineSamples), okPoint(bigger, kBaselineSamples), okPoint(other, kBaselineSamples)});
  const auto c = ks::compareSessions(baseline, current);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].kernel, "gemm.naive");
  EXPECT_EQ(c.rows[0].params, "16x16");
  EXPECT_EQ(c.rows[0].size.str(), "32");
  EXPECT_EQ(c.only_in_baseline, std::vector<std::string>{"gemm.naive 8x8 32"});
  EXPECT_EQ(c.only_in_current, (std::vector<std::string>{"gemm.naive 16x16 64", "gemm.naive_coalesced 16x16 32"}));
}

TEST(CompareSessions, TunablesArePartOfThePoint) {
  ks::PlanItem bk4 = planItem("gemm.block_tiling", 64, {8, 16, 1}), bk8 = bk4;
  bk4.params.values["BK"] = 4;
  bk8.params.values["BK"] = 8;
  const auto c = ks::compareSessions(syntheticSession({okPoint(bk4, kBaselineSamples)}),
                                     syntheticSession({okPoint(bk8, kBaselineSamples)}));
  EXPECT_TRUE(c.rows.empty());
  ASSERT_EQ(c.only_in_baseline.size(), 1u);
  EXPECT_TRUE(contains(c.only_in_baseline[0], "BK=4")) << c.only_in_baseline[0];
  ASSERT_EQ(c.only_in_current.size(), 1u);
  EXPECT_TRUE(contains(c.only_in_current[0], "BK=8")) << c.only_in_current[0];
}

TEST(CompareSessions, CpuKernelsMatchWhateverTheirUnusedWorkgroup) {
  // A session in memory keeps the default shape; one read from a file has none.
  ks::PlanItem in_memory = planItem("cpu.gemm.naive", 16), from_file = in_memory;
  in_memory.params.wg = {16, 16, 1};
  from_file.params.wg = {};
  const auto c = ks::compareSessions(syntheticSession({okPoint(from_file, kBaselineSamples)}),
                                     syntheticSession({okPoint(in_memory, kBaselineSamples)}));
  EXPECT_EQ(c.rows.size(), 1u);
  EXPECT_TRUE(c.only_in_baseline.empty());
  EXPECT_TRUE(c.only_in_current.empty());
}

TEST(CompareSessions, RepeatedPointsMatchInOrder) {
  const auto item = planItem("cpu.gemm.naive", 16);
  const auto baseline = syntheticSession({okPoint(item, kBaselineSamples), okPoint(item, scaled(kBaselineSamples, 2))});
  const auto current = syntheticSession(
      {okPoint(item, kBaselineSamples), okPoint(item, kBaselineSamples), okPoint(item, kBaselineSamples)});
  const auto c = ks::compareSessions(baseline, current);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(c.rows[0].ratio, 1);
  EXPECT_DOUBLE_EQ(c.rows[1].ratio, 0.5);
  EXPECT_EQ(c.only_in_current, std::vector<std::string>{"cpu.gemm.naive 16"});
}

TEST(CompareSessions, AFailedPointIsShownByItsStatusAndGetsNoRatio) {
  const auto item = planItem("gemm.naive", 32, {16, 16, 1}), fine = planItem("cpu.gemm.naive", 16);
  const auto baseline = syntheticSession({okPoint(item, kBaselineSamples), okPoint(fine, kBaselineSamples)});
  const auto current = syntheticSession({failedPoint(item, "vkQueueSubmit: the device was lost (VK_ERROR_DEVICE_LOST)"),
                                         okPoint(fine, kBaselineSamples)});
  const auto c = ks::compareSessions(baseline, current);
  ASSERT_EQ(c.rows.size(), 2u);
  const auto& r = c.rows[0];
  EXPECT_TRUE(r.baseline_ok);
  EXPECT_FALSE(r.current_ok);
  EXPECT_FALSE(r.comparable());
  EXPECT_FALSE(r.significant());
  EXPECT_EQ(r.current_status, "failed: vkQueueSubmit: the device was lost (VK_ERROR_DEVICE_LOST)");
  EXPECT_EQ(r.current_median_ns, 0);
  EXPECT_TRUE(std::isnan(r.ratio));
  EXPECT_TRUE(std::isnan(r.speedup));
  // Only the point that is ok on both sides counts.
  EXPECT_EQ(c.compared, 1u);
  EXPECT_DOUBLE_EQ(c.geomean_ratio, 1);

  const std::string text = ks::formatComparison(c);
  EXPECT_TRUE(contains(text, "failed: vkQueueSubmit: the device was lost")) << text;
  EXPECT_TRUE(contains(text, "over 1 compared point:")) << text;
}

TEST(CompareSessions, NothingComparableGivesNoGeometricMean) {
  const auto item = planItem("cpu.gemm.naive", 16);
  const auto c = ks::compareSessions(syntheticSession({failedPoint(item, "out of memory")}),
                                     syntheticSession({okPoint(item, kBaselineSamples)}));
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].baseline_status, "failed: out of memory");
  EXPECT_EQ(c.compared, 0u);
  EXPECT_TRUE(std::isnan(c.geomean_ratio));
  EXPECT_TRUE(contains(ks::formatComparison(c), "nothing to compare"));
}

TEST(CompareSessions, WarnsAboutEachDifferenceInWhatTheRunsDependOn) {
  const auto base = syntheticSession({okPoint(planItem("cpu.gemm.naive", 16), kBaselineSamples)});
  struct Change {
    const char* expected;  // the warning, in full
    void (*apply)(ks::Session&);
  };
  const Change changes[] = {
      {"device differs: baseline 'llvmpipe (LLVM 15.0.7, 256 bits)', current 'NVIDIA H100'",
       [](ks::Session& s) { s.device->name = "NVIDIA H100"; }},
      {"device driver differs: baseline 'llvmpipe', current 'radv'",
       [](ks::Session& s) { s.device->driver_name = "radv"; }},
      {"device driver version differs: baseline '23.2.1', current '24.0.0'",
       [](ks::Session& s) { s.device->driver_version = "24.0.0"; }},
      {"Vulkan API version differs: baseline '1.3.255', current '1.4.300'",
       [](ks::Session& s) { s.device->api_version = "1.4.300"; }},
      {"device: the baseline session ran on 'llvmpipe (LLVM 15.0.7, 256 bits)', the current session had no Vulkan "
       "device",
       [](ks::Session& s) { s.device.reset(); }},
      {"kernelscope version differs: baseline '1.0.0-test', current '1.1.0'",
       [](ks::Session& s) { s.app_version = "1.1.0"; }},
      {"kernelscope commit differs: baseline '0123456789ab', current 'fedcba987654'",
       [](ks::Session& s) { s.app_commit = "fedcba987654"; }},
      {"glslang version differs: baseline '11:14.0.0', current '11:15.1.0'",
       [](ks::Session& s) { s.glslang_version = "11:15.1.0"; }},
      {"CPU differs: baseline 'Test CPU', current 'Other CPU'", [](ks::Session& s) { s.host.cpu_model = "Other CPU"; }},
      {"OpenBLAS core differs: baseline 'Haswell', current 'Prescott'",
       [](ks::Session& s) { s.host.openblas_core = "Prescott"; }},
      {"OpenBLAS threads differs: baseline '2', current '8'", [](ks::Session& s) { s.host.openblas_threads = 8; }},
      {"environment OPENBLAS_CORETYPE differs: baseline unset, current 'Haswell'",
       [](ks::Session& s) { s.environment["OPENBLAS_CORETYPE"] = "Haswell"; }},
      {"input rotation differs: baseline 'on (256 MiB)', current 'off'",
       [](ks::Session& s) { s.plan.rotate_inputs = false; }},
      {"input rotation differs: baseline 'on (256 MiB)', current 'on (64 MiB)'",
       [](ks::Session& s) { s.plan.cache_bytes = 64 << 20; }},
      {"the current session is unstable: its drift check says UNSTABLE: reference time moved +10.0% by check 2 "
       "(after 1 point, at the end); threshold 3%",
       [](ks::Session& s) {
         std::vector<ks::DriftCheck> checks(2);
         checks[0] = {"start", 0, {1000, 1000, 1000}, ks::computeStats({1000, 1000, 1000})};
         checks[1] = {"end", 1, {1100, 1100, 1100}, ks::computeStats({1100, 1100, 1100})};
         s.drift = ks::evaluateDrift("test reference", checks, 0.03);
       }},
  };
  for (const auto& change : changes) {
    SCOPED_TRACE(change.expected);
    ks::Session current = base;
    change.apply(current);
    const auto c = ks::compareSessions(base, current);
    EXPECT_EQ(c.warnings, std::vector<std::string>{change.expected});
    EXPECT_EQ(c.rows.size(), 1u) << "a warning does not stop the comparison";
  }
  // The other way round: the current session has the device.
  ks::Session without = base;
  without.device.reset();
  EXPECT_EQ(ks::compareSessions(without, base).warnings,
            std::vector<std::string>{"device: the current session ran on 'llvmpipe (LLVM 15.0.7, 256 bits)', the "
                                     "baseline session had no Vulkan device"});
}

TEST(CompareSessions, NoWarningsWhenOnlyTheResultsDiffer) {
  auto current = syntheticSession({okPoint(planItem("cpu.gemm.naive", 16), scaled(kBaselineSamples, 3))});
  current.created = "2025-01-01T00:00:00Z";  // when it ran is not a difference in setup
  current.notes = "after the fix";
  const auto c =
      ks::compareSessions(syntheticSession({okPoint(planItem("cpu.gemm.naive", 16), kBaselineSamples)}), current);
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
  EXPECT_DOUBLE_EQ(c.geomean_ratio, 3);
}

TEST(CompareSessions, SessionsReadBackFromFilesCompareTheSame) {
  // The synthetic sessions pass the strict loader, and nothing the comparison
  // reads is lost on the way.
  const auto gpu = planItem("gemm.naive", 32, {16, 16, 1}), cpu = planItem("cpu.gemm.naive", 16);
  const auto baseline = syntheticSession({okPoint(gpu, kBaselineSamples), okPoint(cpu, kBaselineSamples)});
  auto current = syntheticSession({okPoint(gpu, scaled(kBaselineSamples, 0.5)), failedPoint(cpu, "device lost")});
  current.device->driver_version = "24.0.0";
  auto loaded_baseline = ks::sessionFromJson(ks::sessionToJson(baseline));
  auto loaded_current = ks::sessionFromJson(ks::sessionToJson(current));
  ASSERT_TRUE(loaded_baseline.ok()) << loaded_baseline.error().message;
  ASSERT_TRUE(loaded_current.ok()) << loaded_current.error().message;
  EXPECT_EQ(ks::formatComparison(ks::compareSessions(*loaded_baseline, *loaded_current)),
            ks::formatComparison(ks::compareSessions(baseline, current)));
}

// ---------------------------------------------------------------- reporters

TEST(CompareReport, WarningsFirstThenRowsThenTheSummary) {
  const auto item = planItem("cpu.gemm.naive", 16), gone = planItem("cpu.gemm.naive", 32);
  const auto baseline = syntheticSession({okPoint(item, kBaselineSamples), okPoint(gone, kBaselineSamples)});
  auto current = syntheticSession({okPoint(item, scaled(kBaselineSamples, 0.5))});
  current.device->driver_version = "24.0.0";
  const std::string text = ks::formatComparison(ks::compareSessions(baseline, current));
  const size_t warning = text.find("warning: device driver version differs: baseline '23.2.1', current '24.0.0'");
  const size_t header = text.find("kernel          params  size  baseline  current  ratio  speedup  p        sig");
  const size_t row = text.find("cpu.gemm.naive  -       16    100 ns    50 ns    0.500  2.00x    2.8e-06  ***");
  const size_t mean = text.find("geometric mean ratio over 1 compared point: 0.500 (2.00x faster)\n");
  const size_t counts = text.find("significant at p < 0.05: 1 faster, 0 slower, 0 not significant\n");
  const size_t only = text.find("only in baseline: cpu.gemm.naive 32\n");
  ASSERT_NE(warning, std::string::npos) << text;
  ASSERT_NE(header, std::string::npos) << text;
  ASSERT_NE(row, std::string::npos) << text;
  ASSERT_NE(mean, std::string::npos) << text;
  ASSERT_NE(counts, std::string::npos) << text;
  ASSERT_NE(only, std::string::npos) << text;
  EXPECT_LT(warning, header);
  EXPECT_LT(header, row);
  EXPECT_LT(row, mean);
  EXPECT_LT(mean, counts);
  EXPECT_LT(counts, only);
}

TEST(CompareReport, SlowerIsSaidAsSlower) {
  const auto item = planItem("cpu.gemm.naive", 16);
  const auto c = ks::compareSessions(syntheticSession({okPoint(item, kBaselineSamples)}),
                                     syntheticSession({okPoint(item, scaled(kBaselineSamples, 1.25))}));
  const std::string text = ks::formatComparison(c);
  EXPECT_TRUE(contains(text, "1.250  0.80x")) << text;
  EXPECT_TRUE(contains(text, "geometric mean ratio over 1 compared point: 1.250 (1.25x slower)")) << text;
  EXPECT_TRUE(contains(text, "0 faster, 1 slower")) << text;
}

TEST(CompareReport, CsvHasOneLinePerRowAndLeavesNumbersOutForFailedPoints) {
  const auto ok = planItem("cpu.gemm.naive", 16), bad = planItem("gemm.naive", 32, {16, 16, 1});
  const auto baseline = syntheticSession({okPoint(ok, kBaselineSamples), okPoint(bad, kBaselineSamples)});
  const auto current = syntheticSession({okPoint(ok, scaled(kBaselineSamples, 0.5)), failedPoint(bad, "lost, really")});
  std::istringstream csv(ks::comparisonToCsv(ks::compareSessions(baseline, current)));
  std::vector<std::string> lines;
  for (std::string line; std::getline(csv, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "kernel,params,m,n,k,baseline_status,current_status,baseline_median_ns,current_median_ns,"
            "baseline_samples,current_samples,ratio,speedup,u,z,p");
  EXPECT_EQ(lines[1].rfind("cpu.gemm.naive,-,16,16,16,ok,ok,100.0,50.0,11,11,0.500000,2.000000,0.0,", 0), 0u)
      << lines[1];
  EXPECT_EQ(lines[2], "gemm.naive,16x16,32,32,32,ok,\"failed: lost, really\",100.0,,11,0,,,,,");
}

}  // namespace
