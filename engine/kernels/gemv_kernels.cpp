// The gemv family (seed 002): y = A x, or the vector-matrix form x^T A
// (TRANS = 1), in float or double. Bandwidth-bound: judged in GB/s.
#include <cstdlib>

#include "engine/cpu/gemv_dot_cpu.h"
#include "engine/kernels/registry.h"
#include "engine/kernels/workload.h"

namespace ks {

namespace {

uint32_t ceilDiv(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }
uint64_t elem(const Params& p) { return precisionOf(p) == 64 ? 8 : 4; }
uint64_t inLen(const ProblemSize& s, const Params& p) { return p.get("TRANS", 0) ? s.m : s.n; }
uint64_t outLen(const ProblemSize& s, const Params& p) { return p.get("TRANS", 0) ? s.n : s.m; }

std::optional<std::string> needFloat64(const Params& p, const vk::DeviceInfo& d) {
  if (precisionOf(p) == 64 && !d.shader_float64) return std::string("no shaderFloat64");
  return std::nullopt;
}

const Tunable kPrec{"PREC", {32, 64}, 32, "precision: 32 float, 64 double (needs shaderFloat64)"};

// A binding holds at most this much of A. A larger matrix (32768^2 floats are
// 4 GiB: over every maxStorageBufferRange, and over NVIDIA's
// maxMemoryAllocationSize) is split into row blocks, one buffer and one
// dispatch each. KS_MAX_BINDING_BYTES lowers it (the tests split small matrices).
uint64_t maxBindingBytes() {
  if (const char* env = std::getenv("KS_MAX_BINDING_BYTES"); env && *env) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end && !*end && v > 0) return v;
  }
  return 2ull << 30;
}

// Row blocks of A for y = A x (TRANS = 1 sums over rows: it cannot split this way).
struct RowBlocks {
  uint64_t rows = 0;   // per block (the last may have fewer)
  uint64_t count = 1;  // 1: A is one buffer
};
RowBlocks rowBlocks(const ProblemSize& s, const Params& p) {
  const uint64_t row_bytes = elem(p) * s.n;
  if (p.get("TRANS", 0) || row_bytes * s.m <= maxBindingBytes()) return {s.m, 1};
  uint64_t rows = maxBindingBytes() / row_bytes;
  rows -= rows % 64;               // each block's slice of y starts on a 256-byte boundary
  if (rows == 0) return {s.m, 1};  // rows longer than a binding: refused by the buffer checks
  return {rows, (s.m + rows - 1) / rows};
}
const Tunable kTrans{"TRANS", {0, 1}, 0, "0: y = A x; 1: y = A^T x (seed 002's x^T A)"};

}  // namespace

void useGemvWorkload(KernelInfo& k) {
  k.size_rank = 2;
  k.workload = "gemv";
  k.memory_bound = true;
  k.flops = [](const ProblemSize& s) { return 2.0 * double(s.m) * double(s.n); };
  k.bytes = [](const ProblemSize& s, const Params& p) {
    return double(elem(p)) * (double(s.m) * double(s.n) + double(inLen(s, p)) + double(outLen(s, p)));
  };
  k.buffers = [](const ProblemSize& s, const Params& p) {
    const uint64_t e = elem(p);
    return std::vector<BufferSpec>{{"matrix A", e * s.m * s.n, BufferRole::Input},
                                   {"vector x", e * inLen(s, p), BufferRole::Input},
                                   {"vector y", e * outLen(s, p), BufferRole::Output}};
  };
  k.tolerance = [](const ProblemSize& s, const Params& p) { return reductionTolerance(inLen(s, p), precisionOf(p)); };
}

namespace {

KernelInfo gemvKernel(std::string id, std::string title, Backend backend) {
  KernelInfo k;
  k.id = std::move(id);
  k.family = "gemv";
  k.backend = backend;
  k.title = std::move(title);
  useGemvWorkload(k);
  k.tunables = {kPrec, kTrans};
  k.constraints = "any M, N";
  if (backend == Backend::Cpu) {
    k.uses_workgroup = false;
    k.default_wg = {1, 1, 1};
  } else {
    // As the workload's, with A in row blocks where it is too large for one binding.
    k.buffers = [](const ProblemSize& s, const Params& p) {
      const uint64_t e = elem(p);
      const RowBlocks blocks = rowBlocks(s, p);
      std::vector<BufferSpec> out;
      for (uint64_t b = 0; b < blocks.count; ++b) {
        const uint64_t first = b * blocks.rows, rows = std::min(blocks.rows, s.m - first);
        const std::string name =
            blocks.count == 1 ? "matrix A"
                              : "matrix A, rows " + std::to_string(first) + "-" + std::to_string(first + rows - 1);
        out.push_back({name, e * rows * s.n, BufferRole::Input, false, 0, e * first * s.n});
      }
      out.push_back({"vector x", e * inLen(s, p), BufferRole::Input, false, 1});
      out.push_back({"vector y", e * outLen(s, p), BufferRole::Output});
      return out;
    };
    k.check_device = needFloat64;
    k.workgroup_dims = 1;
    k.default_wg = {64, 1, 1};
    k.groups = [](const ProblemSize& s, const Params& p) {
      return std::array<uint32_t, 3>{ceilDiv(outLen(s, p), p.wg.x), 1, 1};
    };
  }
  return k;
}

// The DispatchSteps of the 1-D gemv shaders (push constants M, N), each
// workgroup computing `outputs_per_group` elements of y: one step, or one per
// row block of A, each binding its block, x and its slice of y. The blocks
// write disjoint slices, so no barrier separates them.
std::vector<DispatchStep> gemvSteps(const KernelInfo& k, const ProblemSize& s, const Params& p,
                                    uint64_t outputs_per_group) {
  DispatchStep step;
  step.shader = k.shader;
  step.defines = k.fixed_defines;
  for (const auto& [name, v] : p.values) step.defines.emplace_back(name, std::to_string(v));
  step.spec_constants = {p.wg.x};
  step.groups = {ceilDiv(outLen(s, p), outputs_per_group), 1, 1};
  step.push = {uint32_t(s.m), uint32_t(s.n)};
  const RowBlocks blocks = rowBlocks(s, p);
  if (blocks.count == 1) return {step};
  std::vector<DispatchStep> steps;
  const uint64_t e = elem(p);
  const auto x = uint32_t(blocks.count), y = x + 1;
  for (uint64_t b = 0; b < blocks.count; ++b) {
    const uint64_t first = b * blocks.rows, rows = std::min(blocks.rows, s.m - first);
    DispatchStep part = step;
    part.push = {uint32_t(rows), uint32_t(s.n)};
    part.groups = {ceilDiv(rows, outputs_per_group), 1, 1};
    part.bindings = {{uint32_t(b), 0, 0}, {x, 0, 0}, {y, e * first, e * rows}};
    part.after_previous = false;
    steps.push_back(std::move(part));
  }
  return steps;
}

}  // namespace

void registerGemvKernels(std::vector<KernelInfo>& out) {
  {
    auto k = gemvKernel("gemv.naive_matmul", "As a matrix product: gemm.naive with a one-column B", Backend::Vulkan);
    k.description =
        "Seed 002's first attempt, kept as the cautionary baseline: the vector is treated as an N x 1 matrix and "
        "run through the naive gemm kernel, so of an 8x8 workgroup only the 8 invocations of column 0 work.";
    k.origin = "seed 002 matrix-matrix product";
    k.shader = "gemm_naive.comp";
    k.workgroup_dims = 2;
    k.default_wg = {8, 8, 1};
    // TRANS 0: y (M x 1) = A (M x N) * x (N x 1); TRANS 1: y^T (1 x N) = x^T (1 x M) * A (M x N).
    k.buffers = [](const ProblemSize& s, const Params& p) {
      const uint64_t e = elem(p);
      BufferSpec a{"matrix A", e * s.m * s.n, BufferRole::Input, false, 0};
      BufferSpec x{"vector x", e * inLen(s, p), BufferRole::Input, false, 1};
      BufferSpec y{"vector y", e * outLen(s, p), BufferRole::Output};
      return p.get("TRANS", 0) ? std::vector<BufferSpec>{x, a, y} : std::vector<BufferSpec>{a, x, y};
    };
    k.steps = [](const ProblemSize& s, const Params& p, const vk::DeviceInfo&) {
      const bool t = p.get("TRANS", 0);
      const uint64_t gm = t ? 1 : s.m, gn = t ? s.n : 1, gk = t ? s.m : s.n;
      DispatchStep step;
      step.shader = "gemm_naive.comp";
      step.defines = {{"COALESCED", "0"}, {"PREC", std::to_string(precisionOf(p))}};
      step.spec_constants = {p.wg.x, p.wg.y};
      step.groups = {ceilDiv(gm, p.wg.x), ceilDiv(gn, p.wg.y), 1};
      step.push = {uint32_t(gm), uint32_t(gn), uint32_t(gk), 0};
      return std::vector<DispatchStep>{step};
    };
    out.push_back(std::move(k));
  }
  {
    auto k =
        gemvKernel("gemv.row_per_thread", "One output per invocation, straight from device memory", Backend::Vulkan);
    k.description =
        "Each invocation computes one element of y. With TRANS=0 neighbours read rows N elements apart "
        "(uncoalesced); with TRANS=1 they read adjacent columns.";
    k.origin = "seed 002 (CPU reference loop, on the GPU)";
    k.shader = "gemv_row_per_thread.comp";
    k.steps = [](const ProblemSize& s, const Params& p, const vk::DeviceInfo&) {
      static const KernelInfo* self = Registry::instance().find("gemv.row_per_thread");
      return gemvSteps(*self, s, p, p.wg.x);
    };
    out.push_back(std::move(k));
  }
  for (int cacheA : {1, 0}) {
    const std::string id = cacheA ? "gemv.tiled_shared" : "gemv.uncached";
    auto k = gemvKernel(id,
                        cacheA ? "Vector and matrix tiles staged in shared memory"
                               : "Vector tile in shared memory, matrix read directly",
                        Backend::Vulkan);
    k.description =
        cacheA ? "A workgroup owns WG outputs; per chunk of TILE it stages x and the WG x TILE block of A in shared "
                 "memory, loading A so neighbouring invocations read neighbouring addresses."
               : "As gemv.tiled_shared, but A is read straight from device memory: each element of A is used once, "
                 "so staging it buys nothing (\"caching is useless without reuse\").";
    k.origin = cacheA ? "seed 002 tiled group-shared version" : "seed 002 simpler uncached version";
    k.shader = "gemv_tiled.comp";
    k.fixed_defines = {{"CACHE_A", cacheA ? "1" : "0"}};
    k.tunables.push_back({"TILE", {16, 32, 64, 128, 256, 512}, 32, "reduction chunk staged per step"});
    k.shared_bytes = [cacheA](const Params& p) {
      const uint64_t tile = uint64_t(p.get("TILE", 32));
      return elem(p) * (tile + (cacheA ? uint64_t(p.wg.x) * (tile + 1) : 0));
    };
    k.constraints = cacheA ? "any M, N; shared memory (TILE + WG*(TILE+1)) elements" : "any M, N";
    k.steps = [id](const ProblemSize& s, const Params& p, const vk::DeviceInfo&) {
      const KernelInfo* self = Registry::instance().find(id);
      return gemvSteps(*self, s, p, p.wg.x);
    };
    out.push_back(std::move(k));
  }
  {
    auto k = gemvKernel("gemv.subgroup", "One output per subgroup, lanes combined with subgroupAdd", Backend::Vulkan);
    k.description =
        "The lanes of a subgroup stride along one row of A (TRANS=0, coalesced) or down one column (TRANS=1), "
        "then subgroupAdd folds their partial sums.";
    k.origin = "seed 004's simd_sum applied to seed 002's product";
    k.shader = "gemv_subgroup.comp";
    k.constraints = "any M, N; workgroup a multiple of the subgroup size";
    k.check_device = [](const Params& p, const vk::DeviceInfo& d) -> std::optional<std::string> {
      if (auto why = needFloat64(p, d)) return why;
      if (!d.hasSubgroupArithmetic()) return std::string("no subgroup arithmetic in compute shaders");
      if (d.subgroup_size && p.wg.x % d.subgroup_size)
        return "workgroup " + std::to_string(p.wg.x) + " is not a multiple of the subgroup size " +
               std::to_string(d.subgroup_size);
      return std::nullopt;
    };
    k.steps = [](const ProblemSize& s, const Params& p, const vk::DeviceInfo& d) {
      static const KernelInfo* self = Registry::instance().find("gemv.subgroup");
      const uint32_t perGroup = std::max(1u, p.wg.x / std::max(1u, d.subgroup_size));
      return gemvSteps(*self, s, p, perGroup);
    };
    out.push_back(std::move(k));
  }
  {
    auto k = gemvKernel("cpu.gemv.naive", "CPU loops, one thread", Backend::Cpu);
    k.description = "Row-by-row dot products (TRANS=0) or row-by-row updates of y (TRANS=1).";
    k.origin = "seed 002 CPU reference";
    k.cpu = cpu::gemvNaive;
    out.push_back(std::move(k));
  }
  {
    auto k = gemvKernel("cpu.gemv.openblas", "OpenBLAS cblas_sgemv / cblas_dgemv", Backend::Cpu);
    k.description = "The BLAS baseline; verified against a double-precision reference like the GPU kernels.";
    k.origin = "BLAS";
    k.cpu = cpu::gemvOpenBlas;
    out.push_back(std::move(k));
  }
}

}  // namespace ks
