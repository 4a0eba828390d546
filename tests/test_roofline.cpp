// The roofline places points where the kernels' own counts say, against
// given (synthetic) peaks.
#include <gtest/gtest.h>

#include "engine/bench/report.h"
#include "engine/bench/roofline.h"

namespace ks {
namespace {

DevicePeaks syntheticPeaks() {
  DevicePeaks p;
  p.measured_at = "2026-11-21T00:00:00Z";
  p.results = {{"fp32_fma", "fp32", "GFLOP/s", 50000, 0, 5, ""},
               {"coopmat_16x8x16_f16_f32", "coopmat", "GFLOP/s", 400000, 0, 5, ""},
               {"coopmat_16x8x16_f16_f16", "coopmat", "GFLOP/s", 600000, 0, 5, ""},
               {"copy_shader", "copy", "GB/s", 3000, 0, 5, ""},
               {"copy_buffer", "copy", "GB/s", 4000, 0, 5, ""}};
  return p;
}

// The same with the host CPU's peaks beside the device's.
DevicePeaks withCpuPeaks() {
  DevicePeaks p = syntheticPeaks();
  p.results.push_back({"cpu_fp32_fma", "host CPU fp32 FMA", "GFLOP/s", 200, 0, 5, ""});
  p.results.push_back({"cpu_triad", "host CPU triad", "GB/s", 25, 0, 5, ""});
  p.results.push_back({"cpu_copy", "host CPU copy", "GB/s", 20, 0, 5, ""});
  return p;
}

Measurement okPoint(const std::string& kernel, ProblemSize size, double median_ns) {
  const KernelInfo* k = Registry::instance().find(kernel);
  Measurement m;
  m.item.kernel = kernel;
  m.item.params = k->defaultParams();
  size.rank = k->size_rank;
  m.item.size = size;
  m.samples_ns = {median_ns};
  m.stats = computeStats(m.samples_ns);
  m.gflops = k->flops(size) / median_ns;
  m.gbps = k->bytes(size, m.item.params) / median_ns;
  m.verification.status = VerifyStatus::Ok;
  return m;
}

TEST(Roofline, IntensityComesFromTheKernelsCounts) {
  const auto& reg = Registry::instance();
  // gemm n^3: 2 n^3 FLOP over 3 n^2 floats of 4 bytes = n / 6.
  EXPECT_DOUBLE_EQ(arithmeticIntensity(*reg.find("gemm.tile2d"), {1024, 1024, 1024, 3}, {}), 1024.0 / 6);
  // dot: 2N FLOP over 2N floats read (+ one written) -> about 1/4.
  const double dot = arithmeticIntensity(*reg.find("dot.two_pass_shared"), {1, 1 << 20, 1, 1}, {});
  EXPECT_NEAR(dot, 0.25, 1e-5);
  // gemv M x N: 2MN FLOP over (MN + N + M) floats.
  const double gemv = arithmeticIntensity(*reg.find("gemv.row_per_thread"), {1000, 2000, 1, 2}, {});
  EXPECT_NEAR(gemv, 2.0 * 1000 * 2000 / (4.0 * (1000 * 2000 + 2000 + 1000)), 1e-9);
}

TEST(Roofline, CeilingIsTheLowerOfComputeAndMemory) {
  auto c = ceilingFor(*Registry::instance().find("gemm.tile2d"), {}, syntheticPeaks());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->compute_gflops, 50000);
  EXPECT_EQ(c->bandwidth_gbps, 4000);  // the better copy
  EXPECT_EQ(c->attainable(1), 4000);
  EXPECT_EQ(c->attainable(12.5), 50000);  // the ridge
  EXPECT_EQ(c->attainable(100), 50000);
}

TEST(Roofline, TensorCoreKernelsUseTheCoopmatRoof) {
  auto c = ceilingFor(*Registry::instance().find("gemm.coopmat"), {}, syntheticPeaks());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->compute_gflops, 400000);  // fp32 accumulation, not the fp16-accumulator rate
}

TEST(Roofline, CpuKernelsHaveNoGpuRoof) {
  // Peaks from before the host CPU was measured: nothing bounds a CPU kernel.
  EXPECT_FALSE(ceilingFor(*Registry::instance().find("cpu.gemm.openblas"), {}, syntheticPeaks()));
  const double flop = 2.0 * 512 * 512 * 512;
  EXPECT_FALSE(fractionOfPeak(okPoint("cpu.gemm.openblas", {512, 512, 512, 3}, flop / 150), syntheticPeaks()));
}

TEST(Roofline, CpuKernelsUseTheHostCpuRoofs) {
  const auto peaks = withCpuPeaks();
  EXPECT_EQ(peaks.cpuFp32Gflops(), 200);
  EXPECT_EQ(peaks.cpuBandwidthGbps(), 25);  // the better of triad and copy
  EXPECT_TRUE(peaks.hasCpuPeaks());
  EXPECT_FALSE(syntheticPeaks().hasCpuPeaks());
  auto c = ceilingFor(*Registry::instance().find("cpu.gemm.openblas"), {}, peaks);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->cpu);
  EXPECT_EQ(c->compute_gflops, 200);
  EXPECT_EQ(c->bandwidth_gbps, 25);
  EXPECT_EQ(c->compute_name, "CPU fp32 FMA");
  EXPECT_EQ(c->attainable(1), 25);
  EXPECT_EQ(c->attainable(100), 200);
  // fp32 dot: fp32 FMA and memory; fp64 gemv: the memory roof only.
  const KernelInfo& dot = *Registry::instance().find("cpu.dot.openblas");
  c = ceilingFor(dot, dot.defaultParams(), peaks);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->compute_gflops, 200);
  const KernelInfo& gemv = *Registry::instance().find("cpu.gemv.openblas");
  Params fp64 = gemv.defaultParams();
  fp64.values["PREC"] = 64;
  c = ceilingFor(gemv, fp64, peaks);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->compute_gflops, 0);
  EXPECT_EQ(c->bandwidth_gbps, 25);
  // GPU kernels keep the device's roofs.
  c = ceilingFor(*Registry::instance().find("gemm.tile2d"), {}, peaks);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->cpu);
  EXPECT_EQ(c->compute_gflops, 50000);
  EXPECT_EQ(c->bandwidth_gbps, 4000);
  // Only the host CPU's peaks (a session without a device): GPU kernels have no roof.
  DevicePeaks host_only;
  host_only.results = {peaks.results.end() - 3, peaks.results.end()};
  EXPECT_FALSE(ceilingFor(*Registry::instance().find("gemm.tile2d"), {}, host_only));
  EXPECT_TRUE(ceilingFor(*Registry::instance().find("cpu.gemm.openblas"), {}, host_only));
}

TEST(Roofline, CpuPointsAreAFractionOfTheHostCpuRoof) {
  const auto peaks = withCpuPeaks();
  // OpenBLAS gemm 512^3 at 150 GFLOP/s: intensity 512/6 is past the CPU ridge (200 / 25 = 8): 75% compute.
  const double flop = 2.0 * 512 * 512 * 512;
  Measurement gemm = okPoint("cpu.gemm.openblas", {512, 512, 512, 3}, flop / 150);
  auto f = fractionOfPeak(gemm, peaks);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->cpu);
  EXPECT_EQ(f->bound, "compute");
  EXPECT_NEAR(f->fraction, 0.75, 1e-9);
  EXPECT_NEAR(f->attainable, 200, 1e-9);
  // A dot at 2^24 moving 10 GB/s: 40% of the 25 GB/s CPU memory roof (the GPU's 4 TB/s would say 0.25%).
  const uint64_t n = 1 << 24;
  const KernelInfo* k = Registry::instance().find("cpu.dot.openblas");
  const double bytes = k->bytes({1, n, 1, 1}, k->defaultParams());
  Measurement dot = okPoint("cpu.dot.openblas", {1, n, 1, 1}, bytes / 10);
  f = fractionOfPeak(dot, peaks);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->bound, "memory");
  EXPECT_NEAR(f->fraction, 0.4, 1e-9);
  // The CLI's "% peak" column has them too.
  const std::string table = formatSummaryTable({gemm, dot}, &peaks);
  EXPECT_NE(table.find("75% compute"), std::string::npos) << table;
  EXPECT_NE(table.find("40% memory"), std::string::npos) << table;
  EXPECT_EQ(formatPeakFraction(gemm, syntheticPeaks()), "-");
}

TEST(Peaks, KnownIdsHaveTheirUnits) {
  EXPECT_EQ(peakUnitOf("fp32_fma"), "GFLOP/s");
  EXPECT_EQ(peakUnitOf("coopmat_16x8x16_f16_f32"), "GFLOP/s");
  EXPECT_EQ(peakUnitOf("cpu_fp32_fma"), "GFLOP/s");
  EXPECT_EQ(peakUnitOf("copy_buffer"), "GB/s");
  EXPECT_EQ(peakUnitOf("cpu_triad"), "GB/s");
  EXPECT_EQ(peakUnitOf("cpu_copy"), "GB/s");
  EXPECT_EQ(peakUnitOf("submit"), "us");
  EXPECT_EQ(peakUnitOf("something_new"), "");
  EXPECT_TRUE(isHostPeak("cpu_triad"));
  EXPECT_FALSE(isHostPeak("copy_shader"));
}

TEST(Roofline, MemoryBoundPointIsAFractionOfBandwidth) {
  // dot at 2^24: 2^24 * 8 bytes; at 2000 GB/s that is half of the 4000 GB/s roof.
  const uint64_t n = 1 << 24;
  const KernelInfo* k = Registry::instance().find("dot.two_pass_shared");
  const double bytes = k->bytes({1, n, 1, 1}, k->defaultParams());
  Measurement m = okPoint("dot.two_pass_shared", {1, n, 1, 1}, bytes / 2000);
  auto f = fractionOfPeak(m, syntheticPeaks());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->bound, "memory");
  EXPECT_NEAR(f->fraction, 0.5, 1e-9);
  EXPECT_NE(formatPeakFraction(m, syntheticPeaks()).find("50% memory"), std::string::npos);
}

TEST(Roofline, ComputeBoundPointIsAFractionOfTheFmaPeak) {
  // gemm 4096^3 at 40 TFLOP/s against a 50 TFLOP/s roof: 80%, compute bound.
  const double flop = 2.0 * 4096 * 4096 * 4096;
  Measurement m = okPoint("gemm.tile2d", {4096, 4096, 4096, 3}, flop / 40000);
  auto f = fractionOfPeak(m, syntheticPeaks());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->bound, "compute");
  EXPECT_NEAR(f->fraction, 0.8, 1e-9);
  EXPECT_NEAR(f->intensity, 4096.0 / 6, 1e-9);
}

TEST(Roofline, FailedPointsGetNoFraction) {
  Measurement m = okPoint("gemm.tile2d", {256, 256, 256, 3}, 1000);
  m.verification.status = VerifyStatus::Failed;
  m.status = PointStatus::Failed;
  EXPECT_FALSE(fractionOfPeak(m, syntheticPeaks()));
  EXPECT_EQ(formatPeakFraction(m, syntheticPeaks()), "-");
}

TEST(Roofline, SummaryTableGainsAPeakColumnOnlyWithPeaks) {
  const auto peaks = syntheticPeaks();
  std::vector<Measurement> points{okPoint("gemm.tile2d", {4096, 4096, 4096, 3}, 2.0 * 4096 * 4096 * 4096 / 40000)};
  EXPECT_EQ(formatSummaryTable(points).find("% peak"), std::string::npos);
  const std::string with = formatSummaryTable(points, &peaks);
  EXPECT_NE(with.find("% peak"), std::string::npos);
  EXPECT_NE(with.find("80% compute"), std::string::npos) << with;
}

TEST(Report, PointLineCountsOutliersAndKeepsThem) {
  Measurement m = okPoint("gemm.tile2d", {256, 256, 256, 3}, 1000);
  m.samples_ns = {1000, 1001, 999, 1000, 1002, 998, 1000, 1001, 999, 1000, 5000};  // one slow run
  m.stats = computeStats(m.samples_ns);
  const std::string line = formatPointLine(m, 1, 1);
  EXPECT_NE(line.find("n=11 (1 outlier, kept)"), std::string::npos) << line;
  m.samples_ns.pop_back();
  m.stats = computeStats(m.samples_ns);
  EXPECT_EQ(formatPointLine(m, 1, 1).find("outlier"), std::string::npos);
}

}  // namespace
}  // namespace ks
