// The dot-product family (seed 004): six GPU reductions as Vulkan expresses
// them, and CPU baselines, in float or double. Bandwidth-bound.
#include <cmath>

#include "engine/cpu/gemv_dot_cpu.h"
#include "engine/kernels/registry.h"
#include "engine/kernels/workload.h"

namespace ks {

namespace {

uint64_t elem(const Params& p) { return precisionOf(p) == 64 ? 8 : 4; }
bool isPowerOfTwo(uint32_t v) { return v && !(v & (v - 1)); }

const Tunable kPrec{"PREC", {32, 64}, 32, "precision: 32 float, 64 double (needs shaderFloat64)"};
// The first pass's grid: one full wave of workgroups, as many as the device's
// multiprocessors hold at once, keeps every load unit busy (256 groups left an
// H200 at 42% of torch.dot). Where the driver does not say, 256.
std::optional<int> groupsForDevice(const vk::DeviceInfo& d, const WorkgroupShape& wg) {
  if (!d.multiprocessors || !d.threads_per_multiprocessor || !wg.x) return std::nullopt;
  const double wave = double(d.multiprocessors) * std::max(1u, d.threads_per_multiprocessor / wg.x);
  int best = 16;  // the legal value nearest the wave, on a log scale
  for (int v = 16; v <= 4096; v *= 2)
    if (std::abs(std::log2(double(v) / wave)) < std::abs(std::log2(double(best) / wave))) best = v;
  return best;
}

Tunable groupsTunable() {
  Tunable t{"GROUPS",
            {16, 32, 64, 128, 256, 512, 1024, 2048, 4096},
            256,
            "workgroups of the first pass (seed 004: more groups were faster)"};
  t.device_default = groupsForDevice;
  t.device_default_help =
      "one wave: multiprocessors x resident workgroups per multiprocessor (VK_NV_shader_sm_builtins or "
      "VK_AMD_shader_core_properties), rounded to a power of two; 256 where the driver does not say";
  return t;
}
const Tunable kGroups = groupsTunable();

enum Needs : unsigned { kNone = 0, kShuffle = 1, kArithmetic = 2, kPow2 = 4, kMemoryModel = 8 };

std::vector<BufferSpec> vectors(const ProblemSize& s, const Params& p, bool zero_result);

}  // namespace

void useDotWorkload(KernelInfo& k) {
  k.size_rank = 1;
  k.workload = "dot";
  k.memory_bound = true;
  k.flops = [](const ProblemSize& s) { return 2.0 * double(s.n); };
  k.bytes = [](const ProblemSize& s, const Params& p) { return double(elem(p)) * (2.0 * double(s.n) + 1.0); };
  k.tolerance = [](const ProblemSize& s, const Params& p) { return reductionTolerance(s.n, precisionOf(p)); };
  k.buffers = [](const ProblemSize& s, const Params& p) { return vectors(s, p, false); };
}

namespace {

KernelInfo dotKernel(std::string id, std::string title, Backend backend) {
  KernelInfo k;
  k.id = std::move(id);
  k.family = "dot";
  k.backend = backend;
  k.title = std::move(title);
  useDotWorkload(k);
  k.buffers = nullptr;  // each variant binds its own after the vectors
  k.tunables = {kPrec};
  k.constraints = "any N";
  if (backend == Backend::Cpu) {
    k.uses_workgroup = false;
    k.default_wg = {1, 1, 1};
  } else {
    k.workgroup_dims = 1;
    k.default_wg = {256, 1, 1};
    k.tunables.push_back(kGroups);
  }
  return k;
}

std::optional<std::string> checkDevice(unsigned needs, const Params& p, const vk::DeviceInfo& d) {
  if (precisionOf(p) == 64 && !d.shader_float64) return std::string("no shaderFloat64");
  if ((needs & kShuffle) && !d.hasSubgroupShuffle()) return std::string("no subgroup shuffle in compute shaders");
  if ((needs & kArithmetic) && !d.hasSubgroupArithmetic())
    return std::string("no subgroup arithmetic in compute shaders");
  if ((needs & kMemoryModel) && !d.memory_model) return std::string("no vulkanMemoryModel");
  if ((needs & (kShuffle | kArithmetic)) && d.subgroup_size && p.wg.x % d.subgroup_size)
    return "workgroup " + std::to_string(p.wg.x) + " is not a multiple of the subgroup size " +
           std::to_string(d.subgroup_size);
  return std::nullopt;
}

// The vector buffers every GPU variant binds first.
std::vector<BufferSpec> vectors(const ProblemSize& s, const Params& p, bool zero_result) {
  const uint64_t e = elem(p);
  return {{"vector x", e * s.n, BufferRole::Input},
          {"vector y", e * s.n, BufferRole::Input},
          {"result", e, BufferRole::Output, zero_result}};
}

DispatchStep pass(const std::string& shader, const Params& p, int which, uint32_t groups, uint64_t n,
                  std::vector<std::pair<std::string, std::string>> extra = {}) {
  DispatchStep step;
  step.shader = shader;
  // GROUPS as a #define, not a push constant: with the grid stride known at
  // compile time the loads of the first pass pipeline (2.4x on an H200 at 2^24).
  step.defines = {{"PREC", std::to_string(precisionOf(p))},
                  {"PASS", std::to_string(which)},
                  {"GROUPS", std::to_string(p.get("GROUPS", 256))}};
  for (auto& e : extra) step.defines.push_back(std::move(e));
  step.spec_constants = {p.wg.x};
  step.groups = {groups, 1, 1};
  step.push = {uint32_t(n), uint32_t(p.get("GROUPS", 256))};
  return step;
}

KernelInfo twoPass(std::string id, std::string title, std::string shader, unsigned needs, std::string description,
                   std::string origin, bool work_buffer) {
  auto k = dotKernel(std::move(id), std::move(title), Backend::Vulkan);
  k.shader = shader;
  k.description = std::move(description) + " Both passes are timed as one point.";
  k.origin = std::move(origin);
  if (needs & kPow2) {
    k.constraints = "any N; workgroup size a power of two";
    k.check_params = [](const Params& p) -> std::optional<std::string> {
      if (!isPowerOfTwo(p.wg.x))
        return "workgroup " + std::to_string(p.wg.x) + " is not a power of two (tree reduction)";
      return std::nullopt;
    };
  } else {
    k.constraints = "any N; workgroup a multiple of the subgroup size";
  }
  k.check_device = [needs](const Params& p, const vk::DeviceInfo& d) { return checkDevice(needs, p, d); };
  k.shared_bytes = [work_buffer](const Params& p) { return work_buffer ? 0 : elem(p) * p.wg.x; };
  k.buffers = [work_buffer](const ProblemSize& s, const Params& p) {
    auto b = vectors(s, p, false);
    const uint64_t groups = uint64_t(p.get("GROUPS", 256));
    b.push_back({"partial sums", elem(p) * groups, BufferRole::Scratch});
    if (work_buffer) b.push_back({"reduction tree", elem(p) * groups * p.wg.x, BufferRole::Scratch});
    return b;
  };
  k.steps = [shader](const ProblemSize& s, const Params& p, const vk::DeviceInfo&) {
    return std::vector<DispatchStep>{pass(shader, p, 1, uint32_t(p.get("GROUPS", 256)), s.n),
                                     pass(shader, p, 2, 1, s.n)};
  };
  return k;
}

bool floatAtomic(const Params& p, const vk::DeviceInfo& d) {
  return precisionOf(p) == 64 ? d.float64_atomic_add : d.float32_atomic_add;
}

}  // namespace

void registerDotKernels(std::vector<KernelInfo>& out) {
  out.push_back(twoPass("dot.two_pass_global", "Two passes, log-step tree in device memory", "dot_two_pass_global.comp",
                        kPow2,
                        "GROUPS workgroups each fold their grid-stride share with a log-step tree kept in device "
                        "memory; a second one-workgroup pass folds the partial sums.",
                        "seed 004 TWO_PASS_DEVICE_MEMORY", true));
  out.push_back(twoPass("dot.two_pass_shared", "Two passes, log-step tree in shared memory", "dot_two_pass_shared.comp",
                        kPow2, "As dot.two_pass_global with the log-step tree in shared memory.",
                        "seed 004 TWO_PASS_THREADGROUP_MEMORY", false));
  out.push_back(twoPass("dot.two_pass_subgroup_shuffle", "Two passes, subgroupShuffleXor within subgroups",
                        "dot_two_pass_subgroup_shuffle.comp", kShuffle,
                        "Lanes fold with subgroupShuffleXor at offsets below the subgroup size; subgroup sums meet "
                        "in shared memory.",
                        "seed 004 SIMD shuffle", false));
  out.push_back(twoPass("dot.two_pass_subgroup_add", "Two passes, subgroupAdd within subgroups",
                        "dot_two_pass_subgroup_add.comp", kArithmetic,
                        "Lanes fold with one subgroupAdd; subgroup sums meet in shared memory.", "seed 004 simd_sum",
                        false));
  {
    auto k = dotKernel("dot.one_pass_atomic", "One pass, workgroup sums added atomically", Backend::Vulkan);
    k.shader = "dot_one_pass_atomic.comp";
    k.description =
        "Each workgroup reduces its share with subgroupAdd and shared memory and adds it to the result with one "
        "atomic: a float atomic add where VK_EXT_shader_atomic_float offers it, else a compare-and-swap loop on "
        "the value's bits (the point records which). The result is zeroed before every run.";
    k.origin = "seed 004 one-pass atomic";
    k.constraints = "any N; workgroup a multiple of the subgroup size";
    k.check_device = [](const Params& p, const vk::DeviceInfo& d) -> std::optional<std::string> {
      if (auto why = checkDevice(kArithmetic, p, d)) return why;
      if (precisionOf(p) == 64 && !d.float64_atomic_add && !d.int64_atomics)
        return std::string("no float64 atomic add and no 64-bit integer atomics for a compare-and-swap loop");
      return std::nullopt;
    };
    k.method_note = [](const Params& p, const vk::DeviceInfo& d) {
      return floatAtomic(p, d) ? std::string("float atomic add (VK_EXT_shader_atomic_float)")
                               : std::string("compare-and-swap loop on the bits (no float atomic add)");
    };
    k.shared_bytes = [](const Params& p) { return elem(p) * p.wg.x; };
    k.buffers = [](const ProblemSize& s, const Params& p) { return vectors(s, p, true); };
    k.steps = [](const ProblemSize& s, const Params& p, const vk::DeviceInfo& d) {
      return std::vector<DispatchStep>{pass("dot_one_pass_atomic.comp", p, 1, uint32_t(p.get("GROUPS", 256)), s.n,
                                            {{"ATOMIC_FLOAT", floatAtomic(p, d) ? "1" : "0"}})};
    };
    out.push_back(std::move(k));
  }
  {
    auto k = dotKernel("dot.one_pass_last_block", "One pass, the last workgroup adds the partials", Backend::Vulkan);
    k.shader = "dot_one_pass_last_block.comp";
    k.description =
        "Each workgroup stores its partial sum in a coherent buffer, fences it with memoryBarrierBuffer, and takes "
        "a ticket from an atomic counter (acquire-release, device scope); the workgroup holding the last ticket "
        "fences again and adds all partials. Seed 004 found this cannot work on Metal, whose device atomics are "
        "relaxed-only with no device-scope fence between threadgroups, so the last one may read stale partials. "
        "In Vulkan the fence before the ticket makes each partial visible device-wide before its ticket is "
        "taken, and the last ticket is taken after every other one, so the sum is complete.";
    k.origin = "seed 004 last-block detection";
    k.constraints = "any N; workgroup a multiple of the subgroup size";
    k.check_device = [](const Params& p, const vk::DeviceInfo& d) { return checkDevice(kArithmetic, p, d); };
    k.shared_bytes = [](const Params& p) { return elem(p) * p.wg.x; };
    k.buffers = [](const ProblemSize& s, const Params& p) {
      auto b = vectors(s, p, false);
      b.push_back({"partial sums", elem(p) * uint64_t(p.get("GROUPS", 256)), BufferRole::Scratch});
      b.push_back({"ticket counter", 4, BufferRole::Scratch, true});
      return b;
    };
    k.steps = [](const ProblemSize& s, const Params& p, const vk::DeviceInfo&) {
      return std::vector<DispatchStep>{pass("dot_one_pass_last_block.comp", p, 1, uint32_t(p.get("GROUPS", 256)), s.n)};
    };
    out.push_back(std::move(k));
  }
  {
    auto k = dotKernel("cpu.dot.naive", "CPU loop, one accumulator", Backend::Cpu);
    k.description = "One running sum: every add waits for the previous one.";
    k.origin = "seed 004 plain C++";
    k.cpu = cpu::dotNaive;
    out.push_back(std::move(k));
  }
  {
    auto k = dotKernel("cpu.dot.simd", "CPU SIMD, UNROLL independent accumulators", Backend::Cpu);
    k.description =
        "8-wide AVX2/FMA vectors (4-wide for double) with UNROLL independent accumulators where the CPU "
        "has AVX2 and FMA, else the same unrolling in plain C++.";
    k.origin = "seed 004 NEON unrolled x1..x8";
    k.tunables.push_back({"UNROLL", {1, 2, 4, 8}, 4, "independent vector accumulators"});
    k.cpu = cpu::dotSimd;
    out.push_back(std::move(k));
  }
  {
    auto k = dotKernel("cpu.dot.threads", "CPU threads, each a slice with SIMD", Backend::Cpu);
    k.description =
        "THREADS threads each sum a contiguous slice with the SIMD kernel (UNROLL 4); the slices add up "
        "at the end. Thread start-up is part of the time.";
    k.origin = "seed 004 multithreaded";
    k.tunables.push_back({"THREADS", {1, 2, 4, 8}, 2, "threads"});
    k.cpu = cpu::dotThreads;
    out.push_back(std::move(k));
  }
  {
    auto k = dotKernel("cpu.dot.openblas", "OpenBLAS cblas_sdot / cblas_ddot", Backend::Cpu);
    k.description = "The BLAS baseline (seed 004's vDSP/BLAS).";
    k.origin = "seed 004 vDSP/BLAS";
    k.cpu = cpu::dotOpenBlas;
    out.push_back(std::move(k));
  }
}

}  // namespace ks
