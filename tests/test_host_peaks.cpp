// The host CPU's peaks: the SIMD loops compute what they should in every
// instruction set the CPU has, and the measured peaks land with plausible
// values (no Vulkan device needed). Bounds are loose: the machine may be busy.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "engine/bench/peaks.h"
#include "engine/cpu/cpu_info.h"
#include "engine/cpu/peak_loops.h"

namespace ks {
namespace {

using cpu::Simd;

std::vector<Simd> supportedSimd() {
  std::vector<Simd> out;
  for (Simd s : {Simd::Portable, Simd::Sse, Simd::Avx2Fma, Simd::Avx512f})
    if (cpu::simdSupported(s)) out.push_back(s);
  return out;
}

const DevicePeaks& hostPeaks() {
  static DevicePeaks peaks = [] {
    PeakOptions o;
    o.host_reps = 5;
    o.host_target_ms = 5;
    o.warmup_ms = 20;
    o.host_stream_bytes = 96ull << 20;  // 3 x 32 MiB: quick, and past most caches of one core
    std::atomic<bool> cancel{false};
    auto p = measureHostPeaks(o, cancel);
    if (!p) throw std::runtime_error(p.error().message);
    return *p;
  }();
  return peaks;
}

// One chain, one thread, no SIMD: each step waits for the one before.
volatile float g_mul = 0.9990234375f, g_add = 0.0009765625f, g_sink = 0;
double scalarChainGflops() {
  const float mul = g_mul, add = g_add;
  const uint64_t steps = 20'000'000;
  float acc = 0.5f;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < steps; ++i) acc = acc * mul + add;
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  g_sink = acc;
  return 2.0 * steps / ns;
}

TEST(HostSimd, WidestMatchesTheCpuFeatures) {
  const std::string features = " " + cpu::hostInfo().cpu_features + " ";
  const Simd widest = cpu::widestSimd();
  EXPECT_TRUE(cpu::simdSupported(widest));
#if defined(__x86_64__)
  if (features.find(" avx512f ") != std::string::npos)
    EXPECT_EQ(widest, Simd::Avx512f);
  else if (features.find(" avx2 ") != std::string::npos && features.find(" fma ") != std::string::npos)
    EXPECT_EQ(widest, Simd::Avx2Fma);
  else
    EXPECT_EQ(widest, Simd::Sse);
#endif
  EXPECT_EQ(cpu::fmaFlopPerIteration(widest), 2.0 * cpu::fmaChains(widest) * cpu::simdLanes(widest));
}

TEST(HostSimd, FmaLoopsComputeTheirChains) {
  const float mul = 0.75f, add = 0.125f;
  for (Simd s : supportedSimd()) {
    // Chain c starts at c / 16 and takes acc * mul + add each step, in every lane.
    double want = 0;
    for (unsigned c = 0; c < cpu::fmaChains(s); ++c) {
      double acc = 0.0625 * c;
      for (int i = 0; i < 37; ++i) acc = acc * mul + add;
      want += acc * cpu::simdLanes(s);
    }
    EXPECT_NEAR(cpu::fmaLoop(s, 37, mul, add), want, 1e-5 * want) << cpu::simdName(s);
  }
}

TEST(HostSimd, StreamLoopsCoverEveryElement) {
  for (Simd s : supportedSimd()) {
    const uint64_t n = 1000 + 13;  // a tail after the last whole vector
    std::vector<float> a(n + 1, -1), b(n + 1), c(n + 1, -1);
    for (uint64_t i = 0; i < n; ++i) a[i] = float(i), b[i] = float(2 * i);
    cpu::streamCopy(s, a.data(), c.data(), n);
    for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(c[i], float(i)) << cpu::simdName(s) << " at " << i;
    EXPECT_EQ(c[n], -1) << "copy wrote past the end";
    cpu::streamTriad(s, a.data(), b.data(), c.data(), 0.5f, n);
    for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(a[i], float(2 * i) + 0.5f * float(i)) << cpu::simdName(s);
    EXPECT_EQ(a[n], -1) << "triad wrote past the end";
  }
}

TEST(HostPeaks, AllThreeAreMeasuredWithTheirUnits) {
  const auto& p = hostPeaks();
  ASSERT_EQ(p.results.size(), 3u);
  const std::string cpu_model = cpu::hostInfo().cpu_model;
  for (const auto& [id, unit] : {std::pair{"cpu_fp32_fma", "GFLOP/s"}, {"cpu_triad", "GB/s"}, {"cpu_copy", "GB/s"}}) {
    const PeakResult* r = p.find(id);
    ASSERT_NE(r, nullptr) << id;
    EXPECT_TRUE(r->measured()) << id << ": " << r->note;
    EXPECT_TRUE(std::isfinite(r->value)) << id;
    EXPECT_EQ(r->unit, unit);
    EXPECT_EQ(peakUnitOf(id), unit);
    EXPECT_TRUE(isHostPeak(id));
    EXPECT_EQ(r->runs, 5u);
    EXPECT_NE(r->title.find("host CPU"), std::string::npos) << r->title;
    EXPECT_NE(r->title.find(cpu_model), std::string::npos) << r->title;
    // How it ran: the instruction set and the threads.
    EXPECT_NE(r->note.find(cpu::simdName(cpu::widestSimd())), std::string::npos) << r->note;
    EXPECT_NE(r->note.find(std::to_string(cpu::usableHardwareThreads()) + " thread"), std::string::npos) << r->note;
  }
  EXPECT_NE(p.find("cpu_triad")->note.find("3 arrays of 32 MiB"), std::string::npos) << p.find("cpu_triad")->note;
  EXPECT_FALSE(p.measured_at.empty());
}

TEST(HostPeaks, BandwidthIsPlausible) {
  const auto& p = hostPeaks();
  for (const char* id : {"cpu_triad", "cpu_copy"}) {
    const double v = p.valueOf(id);
    EXPECT_GT(v, 0.1) << id;    // even a busy laptop moves more than 100 MB/s
    EXPECT_LT(v, 10000) << id;  // and no host reaches 10 TB/s
  }
  EXPECT_EQ(p.cpuBandwidthGbps(), std::max(p.valueOf("cpu_triad"), p.valueOf("cpu_copy")));
  // Triad and copy move the same memory: within a factor of 4 of each other even on a busy machine.
  EXPECT_LT(p.valueOf("cpu_triad") / p.valueOf("cpu_copy"), 4);
  EXPECT_GT(p.valueOf("cpu_triad") / p.valueOf("cpu_copy"), 0.25);
}

TEST(HostPeaks, FmaBeatsAScalarChain) {
  const double peak = hostPeaks().cpuFp32Gflops();
  ASSERT_GT(peak, 0);
  EXPECT_LT(peak, 1e5);  // 100 TFLOP/s: no CPU
  // Many independent SIMD chains against one scalar chain's latency: even SSE on one thread (4 lanes x
  // 12 chains in flight) is tens of times ahead, so a busy machine leaves a wide margin.
  const double scalar = std::max({scalarChainGflops(), scalarChainGflops(), scalarChainGflops()});
  EXPECT_GT(peak, 10 * scalar) << "peak " << peak << " GFLOP/s, one scalar chain " << scalar;
}

TEST(HostPeaks, CancelStopsWithAnError) {
  std::atomic<bool> cancel{true};
  auto p = measureHostPeaks(PeakOptions{}, cancel);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, "cancelled");
}

}  // namespace
}  // namespace ks
