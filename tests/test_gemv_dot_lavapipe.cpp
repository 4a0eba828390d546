// Every gemv and dot kernel (GPU and CPU), run for real on lavapipe and verified
// against the double-precision references of their workloads; the reasons a
// point is refused; and a poisoned output being caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <new>

#include "engine/bench/runner.h"
#include "engine/session/session.h"
#include "tests/lavapipe.h"

using namespace ks;

// The largest single host allocation while `g_track_allocations` is set: shows
// that a point refused for its buffer sizes never makes its inputs.
namespace {
std::atomic<bool> g_track_allocations{false};
std::atomic<size_t> g_largest_allocation{0};
}  // namespace

// GCC pairs the inlined operator new with free() and warns; they do match.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t bytes) {
  if (g_track_allocations.load(std::memory_order_relaxed)) {
    size_t cur = g_largest_allocation.load(std::memory_order_relaxed);
    while (bytes > cur && !g_largest_allocation.compare_exchange_weak(cur, bytes)) {
    }
  }
  if (void* p = std::malloc(bytes ? bytes : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace {

using ks::testing::device;

Plan quickPlan(uint32_t reps = 2, uint32_t warmup = 1, uint64_t seed = 7) {
  Plan p;
  p.reps = reps;
  p.warmup = warmup;
  p.warmup_ms = 0;
  p.seed = seed;
  p.cache_bytes = 4 << 20;  // still rotates small points, without copying 256 MiB each
  return p;
}

std::vector<const KernelInfo*> family(const std::string& name, bool gpu_only = false) {
  std::vector<const KernelInfo*> out;
  for (const auto& k : Registry::instance().all())
    if (k.family == name && (!gpu_only || k.backend == Backend::Vulkan)) out.push_back(&k);
  return out;
}

Params withValues(const KernelInfo& k, std::map<std::string, int> values) {
  Params p = k.defaultParams();
  for (const auto& [name, v] : values) p.values[name] = v;
  return p;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const uint64_t kBigDot = (1u << 20) + 3;

// A point that must have run and verified: timing, clock, GB/s and error.
void expectVerified(const KernelInfo& k, const Measurement& m, double bytes) {
  ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
  EXPECT_EQ(m.verification.status, VerifyStatus::Ok) << m.verification.note;
  EXPECT_TRUE(m.trustworthy());
  EXPECT_LE(m.verification.rel_error, m.verification.tolerance);
  EXPECT_DOUBLE_EQ(m.verification.tolerance, k.tolerance(m.item.size, m.item.params));
  EXPECT_EQ(m.clock, k.backend == Backend::Vulkan ? "gpu_timestamp" : "wall");
  ASSERT_FALSE(m.samples_ns.empty());
  for (double s : m.samples_ns) EXPECT_GT(s, 0);
  ASSERT_GT(m.stats.median, 0);
  EXPECT_DOUBLE_EQ(k.bytes(m.item.size, m.item.params), bytes);
  EXPECT_GT(m.gbps, 0);
  EXPECT_NEAR(m.gbps, bytes / m.stats.median, 1e-9 * m.gbps);
  EXPECT_NEAR(m.gflops, k.flops(m.item.size) / m.stats.median, 1e-9 * m.gflops);
}

// Runs one point; a PREC=64 point on a device without fp64 must be refused.
// Returns whether it ran.
bool runOrExpectNoFp64(Runner& runner, const KernelInfo& k, const PlanItem& item, const Plan& plan, double bytes,
                       Measurement* out = nullptr) {
  std::atomic<bool> cancel{false};
  const Measurement m = runner.runPoint(item, plan, cancel);
  if (out) *out = m;
  if (k.backend == Backend::Vulkan && precisionOf(item.params) == 64 && !device().info().shader_float64) {
    EXPECT_EQ(m.status, PointStatus::Skipped);
    EXPECT_TRUE(contains(m.error, "no shaderFloat64")) << m.error;
    return false;
  }
  expectVerified(k, m, bytes);
  return !::testing::Test::HasFatalFailure();
}

}  // namespace

TEST(GemvDotLavapipe, FamiliesAreRegistered) {
  const auto gemv = family("gemv"), dot = family("dot");
  // As registered when this test was written: 5 + 2 gemv, 6 + 4 dot (more may come).
  EXPECT_GE(gemv.size(), 7u);
  EXPECT_GE(family("gemv", true).size(), 5u);
  EXPECT_GE(dot.size(), 10u);
  EXPECT_GE(family("dot", true).size(), 6u);
  for (const auto* k : gemv) EXPECT_EQ(k->size_rank, 2u) << k->id;
  for (const auto* k : dot) EXPECT_EQ(k->size_rank, 1u) << k->id;
  const auto& info = device().info();
  EXPECT_TRUE(info.timestamps);
  EXPECT_GT(info.max_storage_buffer_range, 0u);
  std::printf(
      "[ device   ] %s: subgroup %u, fp64 %d, float32 atomic add %d, float64 atomic add %d, "
      "int64 atomics %d, maxStorageBufferRange %llu\n",
      info.name.c_str(), info.subgroup_size, int(info.shader_float64), int(info.float32_atomic_add),
      int(info.float64_atomic_add), int(info.int64_atomics),
      static_cast<unsigned long long>(info.max_storage_buffer_range));
}

// 1. Every gemv kernel, both precisions, both orientations, square and non-square.
TEST(GemvDotLavapipe, EveryGemvKernelVerifiesAtEveryPrecisionOrientationAndShape) {
  Runner runner(&device());
  const auto kernels = family("gemv");
  std::vector<SizeSpec> specs = {SizeSpec{1}, SizeSpec{31}, SizeSpec{1000}, SizeSpec{1000, 31}, SizeSpec{31, 1000}};
  int ran = 0;
  // Sizes outermost, kernels innermost: kernels of a size and precision share a workload.
  for (const auto& spec : specs)
    for (int prec : {32, 64})
      for (int trans : {0, 1})
        for (const auto* k : kernels) {
          auto size = problemSize(*k, spec);
          ASSERT_TRUE(size) << size.error().message;
          if (spec.dims.size() == 1) {
            EXPECT_EQ(size->m, spec.dims[0]);
            EXPECT_EQ(size->n, spec.dims[0]);
          } else {
            EXPECT_EQ(size->m, spec.dims[0]);
            EXPECT_EQ(size->n, spec.dims[1]);
          }
          EXPECT_EQ(size->k, 1u);
          const PlanItem item{k->id, withValues(*k, {{"PREC", prec}, {"TRANS", trans}}), *size};
          SCOPED_TRACE(k->id + " at " + spec.str() + " " + item.params.str(true));
          const bool big = size->m * size->n >= 1000 * 1000;
          const double e = prec == 64 ? 8 : 4;
          const double bytes = e * (double(size->m) * double(size->n) + double(size->m) + double(size->n));
          Measurement m;
          if (runOrExpectNoFp64(runner, *k, item, quickPlan(big ? 1 : 2, big ? 0 : 1), bytes, &m)) {
            ++ran;
            EXPECT_EQ(m.item.size.rank, 2u);
            // The reduction runs over the input vector: N for y = A x, M for A^T x.
            EXPECT_DOUBLE_EQ(m.verification.tolerance, reductionTolerance(trans ? size->m : size->n, prec));
          }
          if (HasFatalFailure()) return;
        }
  // 5 shapes x 2 orientations, each precision (PREC=64 on the GPU only with fp64).
  const size_t gpu = family("gemv", true).size(), cpu = kernels.size() - gpu;
  EXPECT_EQ(size_t(ran), 5 * 2 * (2 * cpu + (device().info().shader_float64 ? 2 : 1) * gpu));
}

// 2. Every dot kernel at awkward and large sizes, both precisions.
TEST(GemvDotLavapipe, EveryDotKernelVerifiesAtEveryPrecisionAndSize) {
  Runner runner(&device());
  const auto kernels = family("dot");
  int ran = 0;
  for (uint64_t n : {uint64_t(1), uint64_t(31), uint64_t(1000), kBigDot})
    for (int prec : {32, 64})
      for (const auto* k : kernels) {
        auto size = problemSize(*k, SizeSpec{n});
        ASSERT_TRUE(size) << size.error().message;
        EXPECT_EQ(size->n, n);
        EXPECT_EQ(size->m, 1u);
        EXPECT_EQ(size->k, 1u);
        const PlanItem item{k->id, withValues(*k, {{"PREC", prec}}), *size};
        SCOPED_TRACE(k->id + " at " + std::to_string(n) + " " + item.params.str(true));
        const double bytes = (prec == 64 ? 8.0 : 4.0) * (2.0 * double(n) + 1.0);
        Measurement m;
        const bool big = n == kBigDot;
        if (runOrExpectNoFp64(runner, *k, item, quickPlan(big ? 1 : 2, big ? 0 : 1), bytes, &m)) {
          ++ran;
          EXPECT_EQ(m.item.size.rank, 1u);
          if (big && prec == 64) {
            EXPECT_LT(m.verification.rel_error, 1e-12);
          }
        }
        if (HasFatalFailure()) return;
      }
  const size_t gpu = family("dot", true).size(), cpu = kernels.size() - gpu;
  EXPECT_EQ(size_t(ran), 4 * (2 * cpu + (device().info().shader_float64 ? 2 : 1) * gpu));
}

TEST(GemvDotLavapipe, GpuDotKernelsVerifyAcrossGroupsAndWorkgroups) {
  Runner runner(&device());
  const uint64_t n = 100003;
  for (int prec : {32, 64})
    for (const auto* k : family("dot", true))
      for (int groups : {16, 4096})
        for (WorkgroupShape wg : {WorkgroupShape{64, 1, 1}, WorkgroupShape{256, 1, 1}}) {
          Params params = withValues(*k, {{"PREC", prec}, {"GROUPS", groups}});
          params.wg = wg;
          const PlanItem item{k->id, params, *problemSize(*k, SizeSpec{n})};
          SCOPED_TRACE(k->id + " " + params.str(true));
          runOrExpectNoFp64(runner, *k, item, quickPlan(), (prec == 64 ? 8.0 : 4.0) * (2.0 * double(n) + 1.0));
          if (HasFatalFailure()) return;
        }
}

// 3. The last-block reduction depends on a fence and an acquire-release ticket
// to see every partial: run it many times, checking each run's output.
TEST(GemvDotLavapipe, OnePassLastBlockIsCorrectOnEveryRun) {
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  const KernelInfo* k = Registry::instance().find("dot.one_pass_last_block");
  ASSERT_NE(k, nullptr);
  int runs = 0, ok = 0;
  for (uint64_t seed = 1; seed <= 25; ++seed)
    for (uint64_t n : {uint64_t(31), uint64_t(1000), uint64_t(65537), kBigDot})
      for (int groups : {16, 256, 4096}) {
        const int prec = (seed % 4 == 0 && device().info().shader_float64) ? 64 : 32;
        Params params = withValues(*k, {{"PREC", prec}, {"GROUPS", groups}});
        if (seed % 3 == 1) params.wg = {64, 1, 1};
        const PlanItem item{k->id, params, *problemSize(*k, SizeSpec{n})};
        const Measurement m = runner.runPoint(item, quickPlan(1, 0, seed), cancel);
        ++runs;
        EXPECT_EQ(m.samples_ns.size(), 1u);
        EXPECT_EQ(m.warmup_runs, 0u);
        if (m.status == PointStatus::Ok && m.verification.status == VerifyStatus::Ok) {
          ++ok;
        } else {
          ADD_FAILURE() << "seed " << seed << " N " << n << " " << params.str(true) << ": " << m.error << " (rel error "
                        << m.verification.rel_error << ")";
        }
      }
  EXPECT_EQ(runs, 25 * 4 * 3);
  EXPECT_EQ(ok, runs);
}

// 4. The one-pass atomic records which atomic it used.
TEST(GemvDotLavapipe, OnePassAtomicRecordsWhichAtomicItUsed) {
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  const auto& info = device().info();
  const KernelInfo* k = Registry::instance().find("dot.one_pass_atomic");
  ASSERT_NE(k, nullptr);
  for (int prec : {32, 64}) {
    SCOPED_TRACE("PREC " + std::to_string(prec));
    const PlanItem item{k->id, withValues(*k, {{"PREC", prec}}), *problemSize(*k, SizeSpec{4099})};
    const Measurement m = runner.runPoint(item, quickPlan(), cancel);
    if (prec == 64 && !info.shader_float64) {
      EXPECT_EQ(m.status, PointStatus::Skipped);
      continue;
    }
    if (prec == 64 && !info.float64_atomic_add && !info.int64_atomics) {
      EXPECT_EQ(m.status, PointStatus::Skipped);
      EXPECT_TRUE(contains(m.error, "compare-and-swap")) << m.error;
      continue;
    }
    ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
    EXPECT_EQ(m.verification.status, VerifyStatus::Ok);
    ASSERT_FALSE(m.method.empty());
    const bool float_add = prec == 64 ? info.float64_atomic_add : info.float32_atomic_add;
    if (float_add) {
      EXPECT_TRUE(contains(m.method, "atomic add")) << m.method;
      EXPECT_FALSE(contains(m.method, "compare-and-swap")) << m.method;
    } else {
      EXPECT_TRUE(contains(m.method, "compare-and-swap")) << m.method;
    }
    EXPECT_EQ(m.method, k->method_note(item.params, info));
    std::printf("[ method   ] PREC=%d: %s\n", prec, m.method.c_str());
  }
  // Kernels whose method does not depend on the device record none.
  const KernelInfo* shared = Registry::instance().find("dot.two_pass_shared");
  const Measurement m = runner.runPoint({shared->id, shared->defaultParams(), {1, 4099, 1}}, quickPlan(), cancel);
  ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
  EXPECT_TRUE(m.method.empty()) << m.method;
}

// 5. Double precision is far more accurate; tolerances grow with the length.
TEST(GemvDotLavapipe, PrecisionMattersAndTolerancesGrowWithN) {
  EXPECT_LT(reductionTolerance(1000, 32), reductionTolerance(1 << 20, 32));
  EXPECT_LT(reductionTolerance(1000, 64), reductionTolerance(1 << 20, 64));
  EXPECT_LT(reductionTolerance(1 << 20, 64), reductionTolerance(1, 32));
  EXPECT_GT(reductionTolerance(1 << 20, 64), 1e-12);  // the 1e-12 below is tighter than the tolerance
  const KernelInfo* dotk = Registry::instance().find("dot.two_pass_shared");
  EXPECT_LT(dotk->tolerance({1, 1000, 1, 1}, dotk->defaultParams()),
            dotk->tolerance({1, 1 << 20, 1, 1}, dotk->defaultParams()));
  const KernelInfo* gemvk = Registry::instance().find("gemv.row_per_thread");
  // The gemv reduction runs over N for y = A x and over M for A^T x.
  const ProblemSize tall{1000, 31, 1, 2}, wide{31, 1000, 1, 2};
  EXPECT_LT(gemvk->tolerance(tall, withValues(*gemvk, {{"TRANS", 0}})),
            gemvk->tolerance(wide, withValues(*gemvk, {{"TRANS", 0}})));
  EXPECT_LT(gemvk->tolerance(wide, withValues(*gemvk, {{"TRANS", 1}})),
            gemvk->tolerance(tall, withValues(*gemvk, {{"TRANS", 1}})));

  if (!device().info().shader_float64) GTEST_SKIP() << "no shaderFloat64 on this device";
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  for (const char* id : {"dot.two_pass_shared", "dot.one_pass_last_block", "cpu.dot.naive"}) {
    SCOPED_TRACE(id);
    const KernelInfo* k = Registry::instance().find(id);
    const ProblemSize size = *problemSize(*k, SizeSpec{kBigDot});
    const Measurement m32 = runner.runPoint({id, withValues(*k, {{"PREC", 32}}), size}, quickPlan(1, 0), cancel);
    const Measurement m64 = runner.runPoint({id, withValues(*k, {{"PREC", 64}}), size}, quickPlan(1, 0), cancel);
    ASSERT_EQ(m32.status, PointStatus::Ok) << m32.error;
    ASSERT_EQ(m64.status, PointStatus::Ok) << m64.error;
    EXPECT_LE(m32.verification.rel_error, reductionTolerance(kBigDot, 32));
    EXPECT_LT(m64.verification.rel_error, 1e-12);
    // A float sum of a million terms cannot be that accurate.
    EXPECT_GT(m32.verification.rel_error, 1e-10);
    EXPECT_LT(m64.verification.rel_error, m32.verification.rel_error);
    std::printf("[ accuracy ] %s N=%llu: fp32 %.3g (tolerance %.3g), fp64 %.3g\n", id,
                static_cast<unsigned long long>(kBigDot), m32.verification.rel_error, m32.verification.tolerance,
                m64.verification.rel_error);
  }
}

// Without shaderFloat64 every GPU PREC=64 point is refused, with the reason.
TEST(GemvDotLavapipe, Fp64PointsAreRefusedWithoutShaderFloat64) {
  vk::DeviceInfo no_fp64 = device().info();
  no_fp64.shader_float64 = false;
  for (const char* fam : {"gemv", "dot"})
    for (const auto* k : family(fam)) {
      SCOPED_TRACE(k->id);
      const ProblemSize size = *problemSize(*k, SizeSpec{64});
      const auto why = checkPoint(*k, size, withValues(*k, {{"PREC", 64}}), &no_fp64);
      if (k->backend == Backend::Cpu) {
        EXPECT_FALSE(why) << *why;
      } else {
        ASSERT_TRUE(why);
        EXPECT_TRUE(contains(*why, "no shaderFloat64")) << *why;
        EXPECT_FALSE(checkPoint(*k, size, withValues(*k, {{"PREC", 32}}), &no_fp64));
      }
    }
}

// 6. Refusals, each with its reason.
TEST(GemvDotLavapipe, IllegalPointsAreRefusedWithTheReason) {
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  const auto& info = device().info();

  // Dot kernels (and the 1-D gemv ones) read local_size_x only.
  for (const char* fam : {"dot", "gemv"})
    for (const auto* k : family(fam, true)) {
      if (k->workgroup_dims != 1) continue;
      SCOPED_TRACE(k->id);
      Params p = k->defaultParams();
      p.wg = {16, 16, 1};
      const Measurement m = runner.runPoint({k->id, p, *problemSize(*k, SizeSpec{256})}, quickPlan(), cancel);
      EXPECT_EQ(m.status, PointStatus::Skipped);
      EXPECT_TRUE(contains(m.error, "1-D workgroup")) << m.error;
      EXPECT_TRUE(m.samples_ns.empty());
    }

  // Tree reductions halve the workgroup each step.
  for (const char* id : {"dot.two_pass_shared", "dot.two_pass_global"}) {
    SCOPED_TRACE(id);
    const KernelInfo* k = Registry::instance().find(id);
    Params p = k->defaultParams();
    p.wg = {96, 1, 1};
    const Measurement m = runner.runPoint({id, p, *problemSize(*k, SizeSpec{1000})}, quickPlan(), cancel);
    EXPECT_EQ(m.status, PointStatus::Skipped);
    EXPECT_TRUE(contains(m.error, "power of two")) << m.error;
  }

  // Subgroup kernels need whole subgroups.
  if (info.subgroup_size > 1 && info.subgroup_size + 1 <= info.max_invocations) {
    for (const char* id : {"gemv.subgroup", "dot.two_pass_subgroup_add", "dot.two_pass_subgroup_shuffle",
                           "dot.one_pass_atomic", "dot.one_pass_last_block"}) {
      SCOPED_TRACE(id);
      const KernelInfo* k = Registry::instance().find(id);
      Params p = k->defaultParams();
      p.wg = {info.subgroup_size + 1, 1, 1};
      const Measurement m = runner.runPoint({id, p, *problemSize(*k, SizeSpec{1000})}, quickPlan(), cancel);
      EXPECT_EQ(m.status, PointStatus::Skipped);
      EXPECT_TRUE(contains(m.error, "multiple of the subgroup size")) << m.error;
    }
  } else {
    ADD_FAILURE() << "cannot test the subgroup-size rule: subgroup size " << info.subgroup_size;
  }

  // Sizes of the wrong form for the family.
  for (const auto* k : family("dot")) {
    SCOPED_TRACE(k->id);
    for (SizeSpec spec : {SizeSpec{4, 5, 6}, SizeSpec{4, 5}}) {
      auto s = problemSize(*k, spec);
      ASSERT_FALSE(s);
      EXPECT_TRUE(contains(s.error().message, "takes sizes N (elements)")) << s.error().message;
    }
  }
  for (const auto* k : family("gemv")) {
    auto s = problemSize(*k, SizeSpec{4, 5, 6});
    ASSERT_FALSE(s);
    EXPECT_TRUE(contains(s.error().message, "takes sizes N or MxN")) << s.error().message;
  }

  // Zero sizes.
  const KernelInfo* dotk = Registry::instance().find("dot.two_pass_shared");
  const Measurement zero = runner.runPoint({dotk->id, dotk->defaultParams(), {1, 0, 1}}, quickPlan(), cancel);
  EXPECT_EQ(zero.status, PointStatus::Skipped);
  EXPECT_TRUE(contains(zero.error, "at least 1")) << zero.error;
}

TEST(GemvDotLavapipe, DotVectorsOverTheStorageBufferRangeAreRefusedBeforeAllocating) {
  Runner runner(&device());
  std::atomic<bool> cancel{false};
  const auto& info = device().info();
  const uint64_t n = info.max_storage_buffer_range / 4 + 1;  // one float more than the largest buffer
  if (n > (uint64_t(1) << 31)) GTEST_SKIP() << "device allows huge buffers";
  // The allocation hook sees a large allocation.
  g_largest_allocation = 0;
  g_track_allocations = true;
  {
    std::vector<uint8_t> probe(4 << 20, 1);
    EXPECT_EQ(probe[123], 1);
  }
  g_track_allocations = false;
  ASSERT_GE(g_largest_allocation.load(), size_t(4) << 20);
  for (const char* id : {"dot.two_pass_shared", "dot.one_pass_last_block", "dot.one_pass_atomic"}) {
    SCOPED_TRACE(id);
    const KernelInfo* k = Registry::instance().find(id);
    const PlanItem item{id, withValues(*k, {{"PREC", 32}}), *problemSize(*k, SizeSpec{n})};
    const auto why = checkPoint(*k, item.size, item.params, &info);
    ASSERT_TRUE(why);
    EXPECT_TRUE(contains(*why, "maxStorageBufferRange")) << *why;

    g_largest_allocation = 0;
    g_track_allocations = true;
    const auto t0 = std::chrono::steady_clock::now();
    const Measurement m = runner.runPoint(item, quickPlan(), cancel);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    g_track_allocations = false;
    EXPECT_EQ(m.status, PointStatus::Skipped);
    EXPECT_TRUE(contains(m.error, "maxStorageBufferRange")) << m.error;
    EXPECT_TRUE(contains(m.error, "vector x")) << m.error;
    EXPECT_EQ(m.error, *why);
    EXPECT_TRUE(m.samples_ns.empty());
    // The inputs would be 2 x maxStorageBufferRange bytes: none were made.
    EXPECT_LT(g_largest_allocation.load(), size_t(1) << 20);
    EXPECT_LT(ms, 1000.0);
  }
  // The same vector length in a gemv's matrix row count is refused too.
  const KernelInfo* g = Registry::instance().find("gemv.row_per_thread");
  const auto why = checkPoint(*g, *problemSize(*g, SizeSpec{n, 1}), g->defaultParams(), &info);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "maxStorageBufferRange")) << *why;
}

// 7. Elements a kernel leaves unwritten stay NaN and fail verification.
TEST(GemvDotLavapipe, PoisonedOutputIsCaught) {
  auto& dev = device();
  const KernelInfo* k = Registry::instance().find("gemv.row_per_thread");
  ASSERT_NE(k, nullptr);
  const ProblemSize size = *problemSize(*k, SizeSpec{64, 48});
  const Params params = withValues(*k, {{"PREC", 32}, {"TRANS", 0}});
  auto w = makeWorkload(*k, size, params, 3);
  ASSERT_EQ(w->inputs.size(), 2u);
  ASSERT_EQ(w->output_count, 64u);

  auto ba = dev.createBuffer(w->inputs[0].size(), vk::Placement::DeviceLocal, "A");
  auto bx = dev.createBuffer(w->inputs[1].size(), vk::Placement::DeviceLocal, "x");
  auto by = dev.createBuffer(w->outputBytes(), vk::Placement::DeviceLocal, "y");
  ASSERT_TRUE(ba && bx && by);
  ASSERT_TRUE(dev.upload(*ba, w->inputs[0].data(), w->inputs[0].size()));
  ASSERT_TRUE(dev.upload(*bx, w->inputs[1].data(), w->inputs[1].size()));
  ASSERT_TRUE(dev.fill(*by, 0x7FC00000u));
  vk::PipelineDesc desc;
  desc.name = "gemv_row_per_thread.comp";
  desc.source = shaderSource(desc.name);
  ASSERT_FALSE(desc.source.empty());
  desc.defines = {{"PREC", "32"}, {"TRANS", "0"}};
  desc.spec_constants = {8};
  desc.buffer_count = 3;
  desc.push_constant_bytes = 32;
  auto pipe = dev.pipeline(desc);
  ASSERT_TRUE(pipe) << pipe.error().message;
  const uint32_t push[8] = {uint32_t(size.m), uint32_t(size.n)};

  // Half the workgroups: rows 32..63 stay NaN.
  auto half = dev.prepareDispatch(**pipe, {&*ba, &*bx, &*by}, push, {4, 1, 1});
  ASSERT_TRUE(half) << half.error().message;
  ASSERT_TRUE((*half)->run());
  std::vector<float> y(64);
  ASSERT_TRUE(dev.download(*by, y.data(), y.size() * 4));
  EXPECT_TRUE(std::isfinite(y[0]));
  EXPECT_TRUE(std::isfinite(y[31]));
  EXPECT_TRUE(std::isnan(y[32]));
  EXPECT_TRUE(std::isnan(y[63]));
  Verification v = verifyOutput(*k, *w, y.data(), params);
  EXPECT_EQ(v.status, VerifyStatus::Failed);
  EXPECT_TRUE(std::isnan(v.rel_error));
  EXPECT_TRUE(contains(v.note, "NaN")) << v.note;

  // All of them: the same output verifies.
  auto full = dev.prepareDispatch(**pipe, {&*ba, &*bx, &*by}, push, {8, 1, 1});
  ASSERT_TRUE(full) << full.error().message;
  ASSERT_TRUE((*full)->run());
  ASSERT_TRUE(dev.download(*by, y.data(), y.size() * 4));
  v = verifyOutput(*k, *w, y.data(), params);
  EXPECT_EQ(v.status, VerifyStatus::Ok) << v.rel_error;

  // One wrong element is caught too.
  y[17] += 1.0f;
  EXPECT_EQ(verifyOutput(*k, *w, y.data(), params).status, VerifyStatus::Failed);

  // A dot result left as NaN, in either precision.
  const KernelInfo* d = Registry::instance().find("dot.one_pass_atomic");
  for (int prec : {32, 64}) {
    const Params dp = withValues(*d, {{"PREC", prec}});
    auto dw = makeWorkload(*d, *problemSize(*d, SizeSpec{1000}), dp, 5);
    const double nan64 = std::numeric_limits<double>::quiet_NaN();
    const float nan32 = std::numeric_limits<float>::quiet_NaN();
    const Verification dv = verifyOutput(*d, *dw, prec == 64 ? static_cast<const void*>(&nan64) : &nan32, dp);
    EXPECT_EQ(dv.status, VerifyStatus::Failed);
    EXPECT_TRUE(std::isnan(dv.rel_error));
    // The reference itself verifies.
    const double ref = referenceOf(*dw)[0];
    const float ref32 = float(ref);
    EXPECT_EQ(verifyOutput(*d, *dw, prec == 64 ? static_cast<const void*>(&ref) : &ref32, dp).status, VerifyStatus::Ok);
  }
}

// ---------------------------------------------------------------- input rotation

TEST(InputRotation, EnoughSetsThatTheDataBetweenReusesExceedsTheCache) {
  Plan plan;
  plan.cache_bytes = 256 << 20;
  const uint64_t input = 1 << 20;  // 1 MiB of inputs: 257 sets, 256 MiB between two uses of one
  auto r = inputRotation(true, input, plan, ~0ull);
  EXPECT_EQ(r.sets, 257u);
  EXPECT_FALSE(r.cache_resident);
  EXPECT_GE((r.sets - 1) * input, plan.cache_bytes);
  // Not quite enough memory: fewer sets, and the point says it is cache-resident.
  r = inputRotation(true, input, plan, 100);
  EXPECT_EQ(r.sets, 100u);
  EXPECT_TRUE(r.cache_resident);
  // Inputs as big as the cache need no rotation and are not cache-resident.
  r = inputRotation(true, plan.cache_bytes, plan, ~0ull);
  EXPECT_EQ(r.sets, 1u);
  EXPECT_FALSE(r.cache_resident);
  // Compute-bound kernels never rotate and are never marked.
  r = inputRotation(false, input, plan, ~0ull);
  EXPECT_EQ(r.sets, 1u);
  EXPECT_FALSE(r.cache_resident);
  // Rotation off: a small point is marked, a big one is not.
  plan.rotate_inputs = false;
  EXPECT_TRUE(inputRotation(true, input, plan, ~0ull).cache_resident);
  EXPECT_EQ(inputRotation(true, input, plan, ~0ull).sets, 1u);
  EXPECT_FALSE(inputRotation(true, 512ull << 20, plan, ~0ull).cache_resident);
}

TEST(InputRotation, RotatedGpuAndCpuPointsVerifyAndRecordTheirSets) {
  Runner runner(&device());
  Plan plan = quickPlan(5, 2);
  plan.cache_bytes = 1 << 20;
  for (const char* id : {"dot.two_pass_shared", "cpu.dot.simd", "gemv.tiled_shared", "cpu.gemv.openblas"}) {
    SCOPED_TRACE(id);
    const KernelInfo& k = *Registry::instance().find(id);
    PlanItem item{id, k.defaultParams(), k.family == "dot" ? ProblemSize{1, 4096, 1, 1} : ProblemSize{64, 64, 1, 2}};
    std::atomic<bool> cancel{false};
    Measurement m = runner.runPoint(item, plan, cancel);
    expectVerified(k, m, k.bytes(m.item.size, m.item.params));
    // dot 4096: 32 KiB of inputs -> 1 MiB / 32 KiB + 1 = 33 sets; gemv 64x64: 16.25 KiB -> 65 sets.
    const uint64_t input = k.family == "dot" ? 2 * 4096 * 4 : (64 * 64 + 64) * 4;
    EXPECT_EQ(m.input_sets, (plan.cache_bytes + input - 1) / input + 1);
    EXPECT_FALSE(m.cache_resident);
  }
}

TEST(InputRotation, RotatedCopiesLargerThanTheStorageBufferRangeBindOneSetAtATime) {
  // gemv 2048 x 2048: 16 MiB of matrix per set; the default 256 MiB cache
  // budget needs 17 sets, a buffer of 272 MiB: over lavapipe's 128 MiB
  // maxStorageBufferRange. Each run binds one set (under the validation layer
  // in the test suite, a whole-buffer binding would be an error).
  Runner runner(&device());
  Plan plan = quickPlan(2, 1);
  plan.cache_bytes = 256ull << 20;
  const KernelInfo& k = *Registry::instance().find("gemv.row_per_thread");
  PlanItem item{k.id, k.defaultParams(), ProblemSize{2048, 2048, 1, 2}};
  std::atomic<bool> cancel{false};
  Measurement m = runner.runPoint(item, plan, cancel);
  expectVerified(k, m, k.bytes(m.item.size, m.item.params));
  EXPECT_GE(m.input_sets, 17u);
  EXPECT_GT(uint64_t(m.input_sets) * 2048 * 2048 * 4, device().info().max_storage_buffer_range)
      << "the rotated copies must exceed the range for this test to mean anything";
}

TEST(Allocations, BuffersAreDedicatedAllocationsUnlessTurnedOffAndBothVerify) {
  // Each buffer gets a dedicated allocation (the driver may then use large
  // pages); KS_DEDICATED_ALLOCATION=0 is the comparison docs/PERFORMANCE.md
  // measured. Both must give verified points (under the validation layer here).
  auto& dev = device();
  const KernelInfo& k = *Registry::instance().find("gemv.subgroup");
  for (const char* setting : {"", "0"}) {
    SCOPED_TRACE(std::string("KS_DEDICATED_ALLOCATION=") + setting);
    if (*setting)
      ::setenv("KS_DEDICATED_ALLOCATION", setting, 1);
    else
      ::unsetenv("KS_DEDICATED_ALLOCATION");
    auto buffer = dev.createBuffer(1 << 20, vk::Placement::DeviceLocal, "a test buffer");
    ASSERT_TRUE(buffer.ok()) << buffer.error().message;
    EXPECT_EQ(buffer->dedicated(), !*setting);
    EXPECT_TRUE(buffer->memoryFlags() & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vk::Buffer moved = std::move(*buffer);  // the record travels with the buffer
    EXPECT_EQ(moved.dedicated(), !*setting);
    Runner runner(&dev);
    PlanItem item{k.id, k.defaultParams(), ProblemSize{256, 256, 1, 2}};
    std::atomic<bool> cancel{false};
    Measurement m = runner.runPoint(item, quickPlan(2, 1), cancel);
    expectVerified(k, m, k.bytes(m.item.size, m.item.params));
  }
  ::unsetenv("KS_DEDICATED_ALLOCATION");
}

TEST(Bindings, RangesOverTheDeviceLimitsAreRefusedWithTheLimit) {
  auto& dev = device();
  const auto& info = dev.info();
  auto pipeline = ks::testing::emptyPipeline(dev);
  ASSERT_TRUE(pipeline.ok()) << pipeline.error().message;
  auto small = dev.createBuffer(4096, vk::Placement::DeviceLocal, "a test buffer");
  ASSERT_TRUE(small.ok());
  std::vector<vk::Device::RecordedStep> steps{{*pipeline, {1, 1, 1}, {}}};
  if (info.min_storage_offset_alignment > 1) {
    auto misaligned = dev.prepareDispatch(steps, {vk::BufferRange{&*small, 4, 256}}, {});
    ASSERT_FALSE(misaligned.ok());
    EXPECT_NE(misaligned.error().message.find("minStorageBufferOffsetAlignment"), std::string::npos)
        << misaligned.error().message;
  }
  auto past_end = dev.prepareDispatch(steps, {vk::BufferRange{&*small, 0, 8192}}, {});
  ASSERT_FALSE(past_end.ok());
  EXPECT_NE(past_end.error().message.find("runs past its buffer"), std::string::npos) << past_end.error().message;
  if (info.max_storage_buffer_range < (512ull << 20)) {
    const uint64_t bytes = info.max_storage_buffer_range + (1 << 20);
    auto big = dev.createBuffer(bytes, vk::Placement::DeviceLocal, "a large buffer", false);
    ASSERT_TRUE(big.ok()) << big.error().message;
    auto whole = dev.prepareDispatch(steps, {vk::BufferRange{&*big}}, {});
    ASSERT_FALSE(whole.ok());
    EXPECT_NE(whole.error().message.find("maxStorageBufferRange"), std::string::npos) << whole.error().message;
    auto slice = dev.prepareDispatch(steps, {vk::BufferRange{&*big, 0, 1 << 20}}, {});
    EXPECT_TRUE(slice.ok()) << slice.error().message;
    if (slice.ok()) EXPECT_TRUE((*slice)->run().ok());
  }
}

TEST(Bindings, GemvSplitsALargeMatrixIntoRowBlocksThatStillVerify) {
  // The split happens past 2 GiB (32768^2 floats on an H200); a lower limit
  // makes the same code path run here: 1000 rows of 4 KiB in blocks of 256.
  setenv("KS_MAX_BINDING_BYTES", "1048576", 1);
  Runner runner(&device());
  const ProblemSize size{1000, 1024, 1, 2};
  for (const char* id : {"gemv.subgroup", "gemv.tiled_shared", "gemv.row_per_thread"}) {
    SCOPED_TRACE(id);
    const KernelInfo& k = *Registry::instance().find(id);
    const Params p = k.defaultParams();
    const auto buffers = k.buffers(size, p);
    ASSERT_EQ(buffers.size(), 6u);  // four blocks of A, x, y
    EXPECT_EQ(buffers[3].name, "matrix A, rows 768-999");
    EXPECT_EQ(buffers[3].input_offset, 768u * 1024 * 4);
    EXPECT_EQ(buffers[3].bytes, 232u * 1024 * 4);
    const auto steps = dispatchSteps(k, size, p, device().info());
    ASSERT_EQ(steps.size(), 4u);
    EXPECT_EQ(steps[3].push[0], 232u);
    EXPECT_EQ(steps[3].bindings[2], (vk::SubBinding{5, 768 * 4, 232 * 4}));
    EXPECT_FALSE(steps[1].after_previous);
    PlanItem item{id, p, size};
    std::atomic<bool> cancel{false};
    const Measurement m = runner.runPoint(item, quickPlan(), cancel);
    expectVerified(k, m, k.bytes(size, p));
    EXPECT_EQ(std::count(m.shader_hash.begin(), m.shader_hash.end(), ';'), 3) << m.shader_hash;
    // y = A^T x sums over the rows: it cannot split, and A is still one buffer.
    EXPECT_EQ(k.buffers(size, withValues(k, {{"TRANS", 1}})).size(), 3u);
  }
  // Timed uploads put each block's own rows into it (the kernel then reads
  // what they wrote, so verification checks them).
  Plan plan = quickPlan();
  plan.with_transfers = true;
  const KernelInfo& k = *Registry::instance().find("gemv.subgroup");
  std::atomic<bool> cancel{false};
  const Measurement m = runner.runPoint({k.id, k.defaultParams(), size}, plan, cancel);
  expectVerified(k, m, k.bytes(size, k.defaultParams()));
  EXPECT_FALSE(m.parts.empty());
  unsetenv("KS_MAX_BINDING_BYTES");
}

TEST(InputRotation, WithoutRotationSmallPointsAreMarkedCacheResident) {
  Runner runner(&device());
  Plan plan = quickPlan(3, 1);
  plan.rotate_inputs = false;
  const KernelInfo& k = *Registry::instance().find("dot.two_pass_shared");
  std::atomic<bool> cancel{false};
  Measurement m = runner.runPoint({k.id, k.defaultParams(), {1, 4096, 1, 1}}, plan, cancel);
  expectVerified(k, m, k.bytes(m.item.size, m.item.params));
  EXPECT_EQ(m.input_sets, 1u);
  EXPECT_TRUE(m.cache_resident);
  // gemm is compute-bound: never rotated, never marked.
  const KernelInfo& g = *Registry::instance().find("gemm.naive");
  plan.rotate_inputs = true;
  Measurement gm = runner.runPoint({g.id, g.defaultParams(), {64, 64, 64, 3}}, plan, cancel);
  ASSERT_EQ(gm.status, PointStatus::Ok) << gm.error;
  EXPECT_EQ(gm.input_sets, 1u);
  EXPECT_FALSE(gm.cache_resident);
}

TEST(InputRotation, TheSessionKeepsSetsAndTheCacheMark) {
  Runner runner(&device());
  Session session = newSession();
  session.device = device().info();
  session.plan = quickPlan(3, 1);
  session.plan.cache_bytes = 1 << 20;
  const KernelInfo& k = *Registry::instance().find("dot.two_pass_shared");
  std::atomic<bool> cancel{false};
  session.plan.items = {{k.id, k.defaultParams(), {1, 4096, 1, 1}}};
  session.points.push_back(runner.runPoint(session.plan.items[0], session.plan, cancel));
  session.plan.rotate_inputs = false;
  session.points.push_back(runner.runPoint(session.plan.items[0], session.plan, cancel));
  session.plan.rotate_inputs = true;  // as the file says; a capped point may still be cache-resident
  auto back = sessionFromJson(sessionToJson(session));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(back->plan.rotate_inputs);
  EXPECT_EQ(back->plan.cache_bytes, 1u << 20);
  ASSERT_EQ(back->points.size(), 2u);
  EXPECT_EQ(back->points[0].input_sets, 33u);
  EXPECT_FALSE(back->points[0].cache_resident);
  EXPECT_EQ(back->points[1].input_sets, 1u);
  EXPECT_TRUE(back->points[1].cache_resident);

  // A file cannot claim rotated points for a plan that did not rotate.
  session.plan.rotate_inputs = false;
  auto bad = sessionFromJson(sessionToJson(session));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("points[0].input_sets: 33 sets, but plan.rotate_inputs is false"),
            std::string::npos)
      << bad.error().message;
  // Nor a compute-bound kernel that was cache-resident.
  Session gemm = newSession();
  gemm.device = device().info();
  gemm.plan = quickPlan(3, 1);
  const KernelInfo& g = *Registry::instance().find("gemm.naive");
  gemm.plan.items = {{g.id, g.defaultParams(), {32, 32, 32, 3}}};
  gemm.points.push_back(runner.runPoint(gemm.plan.items[0], gemm.plan, cancel));
  ASSERT_TRUE(sessionFromJson(sessionToJson(gemm)));
  gemm.points[0].cache_resident = true;
  bad = sessionFromJson(sessionToJson(gemm));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("only bandwidth-bound kernels rotate their inputs"), std::string::npos)
      << bad.error().message;
}
