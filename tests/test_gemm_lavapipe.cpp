// Every GPU gemm kernel, run for real on lavapipe and verified against OpenBLAS.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>

#include "engine/bench/runner.h"
#include "tests/lavapipe.h"

using namespace ks;

namespace {

using ks::testing::device;

Plan quickPlan(uint32_t reps = 2, uint32_t warmup = 1) {
  Plan p;
  p.reps = reps;
  p.warmup = warmup;
  p.warmup_ms = 0;
  p.seed = 7;
  return p;
}

std::vector<const KernelInfo*> gpuKernels() {
  std::vector<const KernelInfo*> out;
  for (const auto& k : Registry::instance().all())
    if (k.backend == Backend::Vulkan && k.family == "gemm") out.push_back(&k);
  return out;
}

}  // namespace

TEST(GemmLavapipe, DeviceIsUsableAndTimestamped) {
  const auto& info = device().info();
  EXPECT_GT(info.max_invocations, 0u);
  EXPECT_GT(info.max_shared_memory, 0u);
  EXPECT_TRUE(info.timestamps) << "lavapipe supports timestamps; the GPU clock must be used";
}

// Sizes that fit, and awkward ones where the kernel claims to support them.
TEST(GemmLavapipe, EveryKernelVerifiesAtFittingAndAwkwardSizes) {
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  // {1000, 1200, 900}: seed 000's interleave experiment, A 1000x900 times B 900x1200.
  // {13, 8, 12}, {1, 4, 4}: M not a multiple of the register tile (bounds-checked).
  const std::vector<ProblemSize> sizes = {{64, 64, 64}, {1, 1, 1},   {17, 17, 17}, {1000, 1200, 900},
                                          {5, 3, 7},    {13, 8, 12}, {1, 4, 4}};
  for (const auto* k : gpuKernels())
    for (const auto& size : sizes) {
      SCOPED_TRACE(k->id + " at " + size.str());
      PlanItem item{k->id, k->defaultParams(), size};
      const auto why = checkPoint(*k, size, item.params, &device().info());
      const Measurement m = runner.runPoint(item, quickPlan(size.m >= 1000 ? 1 : 2, size.m >= 1000 ? 0 : 1), cancel);
      if (why && unsupportedReason(*k, &device().info())) {
        // A kernel this device cannot run at all (cooperative matrices on lavapipe) says why.
        EXPECT_EQ(m.status, PointStatus::Skipped);
        EXPECT_NE(m.error.find("unsupported: no VK_"), std::string::npos) << m.error;
        continue;
      }
      if (why) {
        // Only size constraints may refuse these shapes, and they say so.
        EXPECT_EQ(m.status, PointStatus::Skipped);
        EXPECT_NE(m.error.find("is not a multiple of"), std::string::npos) << m.error;
        EXPECT_NE(k->constraints.find("multiple"), std::string::npos);
        continue;
      }
      ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
      EXPECT_EQ(m.verification.status, VerifyStatus::Ok) << m.verification.rel_error;
      EXPECT_LE(m.verification.rel_error, m.verification.tolerance);
      EXPECT_EQ(m.clock, "gpu_timestamp");
      ASSERT_FALSE(m.samples_ns.empty());
      for (double s : m.samples_ns) EXPECT_GT(s, 0);
      EXPECT_NEAR(m.gflops, k->flops(size) / m.stats.median, 1e-9 * m.gflops);
    }
}

TEST(GemmLavapipe, NonDefaultShapesAndTunablesVerify) {
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  const ProblemSize odd{65, 33, 47};
  struct Case {
    const char* kernel;
    WorkgroupShape wg;
    std::map<std::string, int> values;
  };
  const std::vector<Case> cases = {
      {"gemm.naive", {1, 1, 1}, {}},
      {"gemm.naive", {32, 4, 1}, {}},
      {"gemm.naive_coalesced", {16, 16, 1}, {}},
      {"gemm.tiled_shared", {8, 8, 1}, {}},
      {"gemm.tiled_shared", {32, 32, 1}, {}},
      {"gemm.tiled_shared_unroll", {16, 16, 1}, {{"UNROLL", 16}}},
      {"gemm.tiled_shared_unroll", {8, 8, 1}, {{"UNROLL", 2}}},
      {"gemm.block_tiling", {8, 8, 1}, {{"BK", 1}, {"BN", 8}}},
      {"gemm.block_tiling", {16, 8, 1}, {{"BK", 16}, {"BN", 2}}},
      {"gemm.block_tiling", {4, 16, 1}, {{"BK", 8}, {"BN", 1}}},
  };
  for (const auto& c : cases) {
    PlanItem item{c.kernel, {c.wg, c.values}, odd};
    SCOPED_TRACE(std::string(c.kernel) + " " + item.params.str(true));
    const Measurement m = runner.runPoint(item, quickPlan(), cancel);
    ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
    EXPECT_EQ(m.verification.status, VerifyStatus::Ok);
  }
  // The upper ladder with lavapipe-sized tiles, at sizes that are multiples of them.
  for (const char* id : {"gemm.tile2d", "gemm.tile2d_padded", "gemm.tile2d_dbuf"})
    for (const auto& [tiles, size] : std::vector<std::pair<std::map<std::string, int>, ProblemSize>>{
             {{{"BM", 64}, {"BN", 64}, {"BK", 16}, {"TM", 4}, {"TN", 4}}, {128, 192, 64}},
             {{{"BM", 128}, {"BN", 64}, {"BK", 16}, {"TM", 8}, {"TN", 4}}, {256, 128, 48}},
             {{{"BM", 32}, {"BN", 32}, {"BK", 16}, {"TM", 4}, {"TN", 4}}, {32, 96, 48}}}) {
      PlanItem item{id, {{1, 1, 1}, tiles}, size};
      SCOPED_TRACE(std::string(id) + " " + item.params.str(false) + " at " + size.str());
      const Measurement m = runner.runPoint(item, quickPlan(), cancel);
      ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
      EXPECT_EQ(m.verification.status, VerifyStatus::Ok);
    }
  for (const char* id : {"gemm.reg4x4", "gemm.reg8x4"})
    for (WorkgroupShape wg : {WorkgroupShape{4, 4, 1}, WorkgroupShape{16, 8, 1}, WorkgroupShape{1, 32, 1}}) {
      PlanItem item{id, {wg, {}}, {72, 36, 44}};
      SCOPED_TRACE(std::string(id) + " " + wg.str());
      const Measurement m = runner.runPoint(item, quickPlan(), cancel);
      ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
    }
}

TEST(GemmLavapipe, ShapesOverTheDeviceLimitsAreRefusedWithTheReason) {
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  const auto& info = device().info();
  PlanItem wide{"gemm.naive", {{info.max_invocations, 2, 1}, {}}, {64, 64, 64}};
  Measurement m = runner.runPoint(wide, quickPlan(), cancel);
  EXPECT_EQ(m.status, PointStatus::Skipped);
  EXPECT_NE(m.error.find("maxComputeWorkGroupInvocations"), std::string::npos) << m.error;

  // Shared memory: BK=16, BN=8 with a 64x16 workgroup needs 40 KiB.
  PlanItem big{"gemm.block_tiling", {{64, 16, 1}, {{"BK", 16}, {"BN", 8}}}, {64, 64, 64}};
  m = runner.runPoint(big, quickPlan(), cancel);
  if (info.max_shared_memory < 40960) {
    EXPECT_EQ(m.status, PointStatus::Skipped);
    EXPECT_NE(m.error.find("maxComputeSharedMemorySize"), std::string::npos) << m.error;
  }
}

TEST(GemmLavapipe, BuffersOverTheDeviceLimitAreRefusedWithAMessage) {
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  const auto& info = device().info();
  // A K x N matrix one column wider than the largest storage buffer.
  const uint64_t n = info.max_storage_buffer_range / 4 / 64 + 1;
  if (n > (1u << 24)) GTEST_SKIP() << "device allows huge buffers";
  PlanItem item{"gemm.naive_coalesced", {{8, 8, 1}, {}}, {1, n, 64}};
  const Measurement m = runner.runPoint(item, quickPlan(), cancel);
  EXPECT_EQ(m.status, PointStatus::Skipped);  // refused before any allocation
  EXPECT_NE(m.error.find("maxStorageBufferRange"), std::string::npos) << m.error;
  EXPECT_NE(m.error.find("matrix B"), std::string::npos) << m.error;
}

TEST(GemmLavapipe, PoisonedOutputCatchesUnwrittenElements) {
  // Dispatch only half the rows of the naive kernel: the rest stays NaN.
  auto& dev = device();
  const uint32_t n = 32;
  std::vector<float> a(n * n), b(n * n), c(n * n, 0.0f);
  fillRandom(a, 1);
  fillRandom(b, 2);
  auto ba = dev.createBuffer(a.size() * 4, vk::Placement::DeviceLocal, "A");
  auto bb = dev.createBuffer(b.size() * 4, vk::Placement::DeviceLocal, "B");
  auto bc = dev.createBuffer(c.size() * 4, vk::Placement::DeviceLocal, "C");
  ASSERT_TRUE(ba && bb && bc);
  ASSERT_TRUE(dev.upload(*ba, a.data(), a.size() * 4));
  ASSERT_TRUE(dev.upload(*bb, b.data(), b.size() * 4));
  ASSERT_TRUE(dev.fill(*bc, 0x7FC00000u));
  vk::PipelineDesc desc;
  desc.name = "gemm_naive.comp";
  desc.source = shaderSource(desc.name);
  desc.defines = {{"COALESCED", "1"}};
  desc.spec_constants = {8, 8};
  auto pipe = dev.pipeline(desc);
  ASSERT_TRUE(pipe) << pipe.error().message;
  const uint32_t push[4] = {n, n, n, 0};
  auto d = dev.prepareDispatch(**pipe, {&*ba, &*bb, &*bc}, push, {n / 8, n / 16, 1});
  ASSERT_TRUE(d);
  ASSERT_TRUE((*d)->run());
  ASSERT_TRUE(dev.download(*bc, c.data(), c.size() * 4));
  EXPECT_TRUE(std::isfinite(c[0]));
  EXPECT_TRUE(std::isnan(c[n * n - 1]));
  EXPECT_TRUE(std::isnan(relativeFrobeniusError(c.data(), a.data(), c.size())));
}

TEST(GemmLavapipe, CancelStopsBetweenPointsAndKeepsFinishedOnes) {
  Runner runner(&device());
  Plan plan = quickPlan(3, 1);
  SweepSpec spec;
  spec.kernels = {Registry::instance().find("gemm.naive_coalesced"), Registry::instance().find("gemm.reg4x4")};
  spec.sizes = {{32, 32, 32}, {64, 64, 64}, {128, 128, 128}};
  plan.items = buildPlan(spec).value();
  ASSERT_EQ(plan.items.size(), 6u);
  std::atomic<bool> cancel{false};
  std::vector<size_t> progress;
  size_t seen = 0;
  RunCallbacks cb;
  cb.point = [&](const Measurement&) {
    if (++seen == 2) cancel.store(true);  // stop after the second point
  };
  cb.progress = [&](size_t done, size_t total) {
    EXPECT_EQ(total, 6u);
    progress.push_back(done);
  };
  const auto points = runner.run(plan, cb, cancel);
  ASSERT_EQ(points.size(), 2u);
  for (const auto& m : points) EXPECT_EQ(m.status, PointStatus::Ok);
  EXPECT_EQ(progress, (std::vector<size_t>{0, 1, 2}));

  std::atomic<bool> already{true};
  EXPECT_TRUE(runner.run(plan, {}, already).empty());
}

TEST(GemmLavapipe, CancelInsideAPointMarksItCancelled) {
  Runner runner(&device());
  std::atomic<bool> cancel{true};
  PlanItem item{"gemm.naive", {{8, 8, 1}, {}}, {64, 64, 64}};
  const Measurement m = runner.runPoint(item, quickPlan(), cancel);
  EXPECT_EQ(m.status, PointStatus::Cancelled);
  EXPECT_TRUE(m.samples_ns.empty());
}

TEST(GemmLavapipe, CpuKernelsVerifyToo) {
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  for (const char* id : {"cpu.gemm.naive", "cpu.gemm.blocked", "cpu.gemm.openblas"})
    for (ProblemSize s : {ProblemSize{1, 1, 1}, ProblemSize{17, 17, 17}, ProblemSize{100, 90, 120}}) {
      SCOPED_TRACE(std::string(id) + " " + s.str());
      const Measurement m =
          runner.runPoint({id, Registry::instance().find(id)->defaultParams(), s}, quickPlan(), cancel);
      ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
      EXPECT_EQ(m.clock, "wall");
      EXPECT_EQ(m.verification.status, VerifyStatus::Ok);
    }
}

TEST(GemmLavapipe, WarmupLastsAtLeastItsMinimumTime) {
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  Plan plan = quickPlan(2, 1);
  plan.warmup_ms = 60;
  for (const char* id : {"gemm.naive_coalesced", "cpu.gemm.naive"}) {
    SCOPED_TRACE(id);
    const auto t0 = std::chrono::steady_clock::now();
    const Measurement m =
        runner.runPoint({id, Registry::instance().find(id)->defaultParams(), {8, 8, 8}}, plan, cancel);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
    EXPECT_GT(m.warmup_runs, 1u);  // one run of an 8^3 gemm takes far less than 60 ms
    EXPECT_GE(ms, 60.0);
    EXPECT_EQ(m.samples_ns.size(), 2u);
  }
  plan.warmup = 0;  // no warm-up at all
  const Measurement none = runner.runPoint({"cpu.gemm.naive", {}, {8, 8, 8}}, plan, cancel);
  EXPECT_EQ(none.warmup_runs, 0u);
}

TEST(GemmLavapipe, DispatchOverheadIsPositiveAndFinite) {
  auto r = measureDispatchOverhead(device(), 50);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->submit.count, 50u);
  EXPECT_GT(r->submit.median, 0);
  EXPECT_GT(r->dispatch.median, 0);
  EXPECT_TRUE(std::isfinite(r->dispatch.max));
  // Every way of waiting the device offers, the default (fence) first, and the device left in it.
  std::vector<std::string> modes;
  for (const auto& w : r->waits) {
    modes.push_back(w.mode);
    EXPECT_EQ(w.dispatch.count, 50u) << w.mode;
    EXPECT_GT(w.dispatch.median, 0) << w.mode;
  }
  std::vector<std::string> expected{"fence", "spin"};
  if (device().info().timeline_semaphore) expected.push_back("timeline");
  EXPECT_EQ(modes, expected);
  EXPECT_DOUBLE_EQ(r->dispatch.median, r->waits.front().dispatch.median);
  EXPECT_LE(r->fastest().dispatch.median, r->dispatch.median);
  EXPECT_EQ(device().waitMode(), vk::Device::WaitMode::Fence);
}

TEST(GemmLavapipe, PointsVerifyWithEveryWaitMode) {
  // The wait changes only how the host learns that a submission finished:
  // results, timestamps and the watchdog work the same.
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  using Mode = vk::Device::WaitMode;
  for (Mode mode : {Mode::Spin, Mode::Timeline}) {
    auto set = device().setWaitMode(mode);
    if (mode == Mode::Timeline && !device().info().timeline_semaphore) {
      ASSERT_FALSE(set.ok());
      EXPECT_NE(set.error().message.find("timeline"), std::string::npos);
      continue;
    }
    ASSERT_TRUE(set.ok()) << set.error().message;
    const Measurement m = runner.runPoint(
        {"gemm.tiled_shared", Registry::instance().find("gemm.tiled_shared")->defaultParams(), {64, 64, 64}},
        quickPlan(3, 1), cancel);
    EXPECT_EQ(m.status, PointStatus::Ok) << waitModeName(mode) << ": " << m.error;
    EXPECT_EQ(m.verification.status, VerifyStatus::Ok) << waitModeName(mode);
    EXPECT_EQ(m.samples_ns.size(), 3u);
  }
  ASSERT_TRUE(device().setWaitMode(Mode::Fence).ok());
}

TEST(GemmLavapipe, AdaptiveRepetitionsStopForAReasonAndSaySo) {
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  Plan plan = quickPlan(6, 0);
  plan.target_ci = 0.5;  // loose: met right away
  Measurement m = runner.runPoint({"cpu.gemm.naive", {}, {16, 16, 16}}, plan, cancel);
  ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
  EXPECT_EQ(m.stop_reason, "ci_target");
  EXPECT_LE(m.stats.ciRelative(), 0.5);

  plan.target_ci = 1e-9;  // unreachable: the budget ends it
  // Long enough that the first 6 runs leave some of it even on a loaded
  // 2-core machine (50 ms once went by within them under a parallel build).
  plan.budget_ms = 300;
  plan.max_reps = 1000000;
  const auto t0 = std::chrono::steady_clock::now();
  m = runner.runPoint({"gemm.naive_coalesced", {{8, 8, 1}, {}}, {32, 32, 32}}, plan, cancel);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
  EXPECT_EQ(m.stop_reason, "time_budget");
  EXPECT_GE(ms, 300.0);
  EXPECT_GT(m.samples_ns.size(), 6u);

  plan.budget_ms = 100000;
  plan.max_reps = 9;  // the cap ends it
  m = runner.runPoint({"cpu.gemm.naive", {}, {8, 8, 8}}, plan, cancel);
  EXPECT_EQ(m.stop_reason, "max_reps");
  EXPECT_EQ(m.samples_ns.size(), 9u);

  plan.target_ci = 0;  // fixed
  m = runner.runPoint({"cpu.gemm.naive", {}, {8, 8, 8}}, plan, cancel);
  EXPECT_EQ(m.stop_reason, "reps");
  EXPECT_EQ(m.samples_ns.size(), 6u);
}
