#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/bench/statistics.h"
#include "engine/bench/verify.h"

using namespace ks;

TEST(Statistics, OddCountKnownValues) {
  const Stats s = computeStats({5, 1, 3, 2, 4});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.stddev, std::sqrt(2.5), 1e-12);  // sample stddev (n - 1)
  EXPECT_NEAR(s.cv, std::sqrt(2.5) / 3, 1e-12);
}

TEST(Statistics, EvenCountMedianIsMeanOfMiddlePair) {
  const Stats s = computeStats({10, 40, 20, 30});
  EXPECT_DOUBLE_EQ(s.median, 25);
  EXPECT_DOUBLE_EQ(s.mean, 25);
}

TEST(Statistics, SingleAndEmpty) {
  const Stats one = computeStats({7});
  EXPECT_DOUBLE_EQ(one.median, 7);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_DOUBLE_EQ(one.cv, 0);
  const Stats none = computeStats({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_DOUBLE_EQ(none.median, 0);
}

TEST(Statistics, MedianIgnoresOneOutlier) {
  const Stats s = computeStats({100, 101, 99, 100, 100000});
  EXPECT_DOUBLE_EQ(s.median, 100);
  EXPECT_GT(s.mean, 1000);
}

TEST(Verify, RelativeFrobenius) {
  const float ref[4] = {3, 0, 0, 4};  // norm 5
  const float same[4] = {3, 0, 0, 4};
  const float off[4] = {3, 0, 0, 4.5f};
  EXPECT_DOUBLE_EQ(relativeFrobeniusError(same, ref, 4), 0);
  EXPECT_NEAR(relativeFrobeniusError(off, ref, 4), 0.1, 1e-12);
  const float withNan[4] = {3, NAN, 0, 4};
  EXPECT_TRUE(std::isnan(relativeFrobeniusError(withNan, ref, 4)));
  const float withInf[4] = {3, INFINITY, 0, 4};
  EXPECT_TRUE(std::isnan(relativeFrobeniusError(withInf, ref, 4)));
}

TEST(Verify, ToleranceGrowsWithK) {
  EXPECT_LT(gemmTolerance(1), gemmTolerance(100));
  EXPECT_LT(gemmTolerance(100), gemmTolerance(10000));
  // Tight enough to catch a dropped term at K = 5000 (error ~ 1/sqrt(K)).
  EXPECT_LT(gemmTolerance(5000), 1e-3);
  EXPECT_EQ(judge(1e-7, 1e-7, gemmTolerance(64), "").status, VerifyStatus::Ok);
  EXPECT_EQ(judge(1e-2, 1e-7, gemmTolerance(64), "").status, VerifyStatus::Failed);
  EXPECT_EQ(judge(NAN, 1e-7, gemmTolerance(64), "").status, VerifyStatus::Failed);
  // A small overall error does not hide one wrong element.
  EXPECT_EQ(judge(1e-7, 1e-2, gemmTolerance(64), "").status, VerifyStatus::Failed);
  EXPECT_EQ(judge(1e-7, NAN, gemmTolerance(64), "").status, VerifyStatus::Failed);
}

TEST(Verify, MaxScaledErrorFindsOneBadElement) {
  std::vector<float> ref(10000, 1.0f), c(10000, 1.0f);
  c[1234] = 1.5f;  // one element off by 0.5
  EXPECT_LT(relativeFrobeniusError(c.data(), ref.data(), c.size()), 0.01);
  EXPECT_NEAR(maxScaledError(c.data(), ref.data(), c.size(), 10.0), 0.05, 1e-12);
  c[9] = NAN;
  EXPECT_TRUE(std::isnan(maxScaledError(c.data(), ref.data(), c.size(), 10.0)));
}

#include "engine/cpu/cpu_info.h"

TEST(OpenBlasCore, GenericCoreOnAnAvxCpuIsWarnedAbout) {
  // This project's machines: OpenBLAS 0.3.21 picks Prescott on AVX-512 CPUs.
  const std::string w = ks::cpu::openblasCoreWarning("Prescott", "sse4.2 avx avx2 fma avx512f");
  EXPECT_NE(w.find("OPENBLAS_CORETYPE=SkylakeX"), std::string::npos) << w;
  EXPECT_NE(w.find("AVX-512"), std::string::npos) << w;
  EXPECT_NE(ks::cpu::openblasCoreWarning("Core2", "sse4.2 avx avx2 fma").find("OPENBLAS_CORETYPE=Haswell"),
            std::string::npos);
  // The right core, or an old CPU: nothing to say.
  EXPECT_TRUE(ks::cpu::openblasCoreWarning("SkylakeX", "sse4.2 avx avx2 fma avx512f").empty());
  EXPECT_TRUE(ks::cpu::openblasCoreWarning("Cooperlake", "sse4.2 avx avx2 fma avx512f").empty());
  EXPECT_TRUE(ks::cpu::openblasCoreWarning("Prescott", "sse4.2").empty());
}

#include "engine/kernels/registry.h"
#include "engine/kernels/workload.h"

TEST(Half, RoundTripsAndRoundsToNearestEven) {
  using ks::floatToHalf;
  using ks::halfToFloat;
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 0.000061035156f, 1.0f / 64, -0.33325195f})
    EXPECT_EQ(halfToFloat(floatToHalf(f)), f) << f;  // exactly representable
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(1e6f), 0x7C00);                // overflow to infinity
  EXPECT_EQ(floatToHalf(1.0f + 1.0f / 2048), 0x3C00);  // halfway: to even
  EXPECT_EQ(floatToHalf(1.0f + 3.0f / 2048), 0x3C02);  // halfway: to even (up)
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_FLOAT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
}

TEST(Gemm16Workload, ReferenceUsesTheRoundedInputsAndTheFusedRelu) {
  const auto* k = ks::Registry::instance().find("gemm.coopmat");
  ASSERT_NE(k, nullptr);
  ks::Params relu = k->defaultParams();
  relu.values["RELU"] = 1;
  const ks::ProblemSize s{32, 32, 16};
  auto w = ks::makeWorkload(*k, s, relu, 3);
  ASSERT_EQ(w->inputs[0].size(), 32u * 16u * 2u);  // halves
  const auto& ref = ks::referenceOf(*w);
  const auto* a = reinterpret_cast<const uint16_t*>(w->inputs[0].data());
  const auto* b = reinterpret_cast<const uint16_t*>(w->inputs[1].data());
  int negatives_clamped = 0;
  for (uint64_t i = 0; i < s.m; ++i)
    for (uint64_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (uint64_t p = 0; p < s.k; ++p)
        acc += double(ks::halfToFloat(a[i * s.k + p])) * ks::halfToFloat(b[p * s.n + j]);
      EXPECT_NEAR(ref[i * s.n + j], std::max(0.0, acc), 1e-4);
      negatives_clamped += acc < 0;
    }
  EXPECT_GT(negatives_clamped, 0);
  // An fp16 output of the reference passes; one wrong element does not.
  w->output_precision = 16;
  std::vector<uint16_t> out(ref.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = ks::floatToHalf(float(ref[i]));
  relu.values["OUT16"] = 1;
  EXPECT_EQ(ks::verifyOutput(*k, *w, out.data(), relu).status, ks::VerifyStatus::Ok);
  out[5] = ks::floatToHalf(ks::halfToFloat(out[5]) + 1.0f);
  EXPECT_EQ(ks::verifyOutput(*k, *w, out.data(), relu).status, ks::VerifyStatus::Failed);
}

#include <random>

TEST(Statistics, QuartilesOutliersAndTheMediansConfidenceInterval) {
  const ks::Stats s = ks::computeStats({1, 2, 3, 4, 5, 6, 7, 8, 9, 100});
  EXPECT_DOUBLE_EQ(s.q1, 3.25);
  EXPECT_DOUBLE_EQ(s.q3, 7.75);
  EXPECT_DOUBLE_EQ(s.iqr, 4.5);
  EXPECT_EQ(s.outliers, 1u);  // 100 > 7.75 + 6.75
  EXPECT_LE(s.ci_low, s.median);
  EXPECT_GE(s.ci_high, s.median);
  EXPECT_LT(s.ci_high, 100);  // the outlier does not widen the median's interval to the max
}

TEST(Statistics, TheMediansIntervalCoversTheTrueMedianAtTheExpectedRate) {
  // Skewed (lognormal, like timings) with a known median of exp(0) = 1.
  std::mt19937_64 rng(99);
  std::lognormal_distribution<double> dist(0.0, 0.5);
  for (size_t n : {10u, 30u, 200u}) {
    int covered = 0;
    const int trials = 2000;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> v(n);
      for (auto& x : v) x = dist(rng);
      const ks::Stats s = ks::computeStats(v);
      covered += s.ci_low <= 1.0 && 1.0 <= s.ci_high;
    }
    const double rate = double(covered) / trials;
    EXPECT_GE(rate, 0.93) << "n=" << n;  // nominal 95%; order statistics round outward
    EXPECT_LE(rate, 0.99) << "n=" << n;  // not the trivial min..max interval
  }
}

#include "engine/bench/complexity.h"

TEST(Complexity, SlopesOfKnownPowerLawsAndTheCutoff) {
  auto point = [](const char* kernel, ks::ProblemSize size, double ns) {
    ks::Measurement m;
    m.item.kernel = kernel;
    m.item.size = size;
    m.samples_ns = {ns, ns, ns};
    m.stats = ks::computeStats(m.samples_ns);
    m.verification = ks::judge(0, 0, 1, "");
    return m;
  };
  std::vector<ks::Measurement> ms;
  // gemm: t = N^3 above a fixed cost that dominates small sizes; dot: t = 2 N.
  for (uint64_t n : {16u, 32u, 64u, 128u, 256u, 512u})
    ms.push_back(point("cpu.gemm.naive", {n, n, n}, 1e5 + double(n) * n * n));
  for (uint64_t n : {1024u, 4096u, 16384u, 65536u}) ms.push_back(point("cpu.dot.naive", {1, n, 1, 1}, 2.0 * n));
  ms.push_back(point("cpu.gemm.openblas", {64, 64, 64}, 100));  // one size: no fit
  auto failed = point("cpu.gemm.blocked", {64, 64, 64}, 1);     // failed points never count
  failed.status = ks::PointStatus::Failed;
  ms.push_back(failed);
  const auto fits = ks::fitComplexity(ms);
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_EQ(fits[0].series, "cpu.gemm.naive");
  EXPECT_EQ(fits[0].points, 3u);          // the upper half: 128, 256, 512
  EXPECT_NEAR(fits[0].slope, 3.0, 0.15);  // the fixed cost bends the small sizes only
  EXPECT_NEAR(fits[1].slope, 1.0, 1e-9);
  EXPECT_NEAR(fits[1].slope_error, 0.0, 1e-9);
  // All sizes: the fixed cost drags the gemm slope well below 3.
  const auto all = ks::fitComplexity(ms, 1.0);
  EXPECT_LT(all[0].slope, 2.5);
  EXPECT_GT(all[0].slope_error, 0.0);
  EXPECT_DOUBLE_EQ(ks::problemScale({1000, 1000, 1, 2}), 1000.0);
  EXPECT_DOUBLE_EQ(ks::problemScale({1, 4096, 1, 1}), 4096.0);
}
