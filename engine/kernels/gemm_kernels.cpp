// The gemm family: the matrix-multiply ladder of seeds 000 and 001.
#include "engine/bench/verify.h"
#include "engine/cpu/gemm_cpu.h"
#include "engine/kernels/registry.h"

namespace ks {

namespace {

uint32_t ceilDiv(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

double gemmFlops(const ProblemSize& s) { return 2.0 * double(s.m) * double(s.n) * double(s.k); }
double gemmBytes(const ProblemSize& s, const Params&) {
  return 4.0 * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n);
}
std::vector<BufferSpec> gemmBuffers(const ProblemSize& s, const Params&) {
  return {{"matrix A", 4 * s.m * s.k, BufferRole::Input},
          {"matrix B", 4 * s.k * s.n, BufferRole::Input},
          {"matrix C", 4 * s.m * s.n, BufferRole::Output}};
}
double gemmFp32Tolerance(const ProblemSize& s, const Params&) { return gemmTolerance(s.k); }

// CPU gemm functions take typed pointers; the registry hands them the workload's buffers.
CpuFn cpuGemm(void (*fn)(const float*, const float*, float*, const ProblemSize&, const Params&)) {
  return [fn](const std::vector<const void*>& in, void* out, const ProblemSize& s, const Params& p) {
    fn(static_cast<const float*>(in[0]), static_cast<const float*>(in[1]), static_cast<float*>(out), s, p);
  };
}

std::optional<std::string> requireSquareWorkgroup(const Params& p) {
  if (p.wg.x != p.wg.y || p.wg.z != 1)
    return "workgroup " + p.wg.str() + " is not square: the tile is the workgroup (use e.g. 16x16)";
  return std::nullopt;
}

std::optional<std::string> requireMultiples(const ProblemSize& s, uint64_t mm, uint64_t nm, uint64_t km) {
  std::string why;
  auto add = [&](const char* name, uint64_t v, uint64_t mult) {
    if (v % mult)
      why += std::string(why.empty() ? "" : "; ") + name + "=" + std::to_string(v) + " is not a multiple of " +
             std::to_string(mult);
  };
  add("M", s.m, mm);
  add("N", s.n, nm);
  add("K", s.k, km);
  if (why.empty()) return std::nullopt;
  return why;
}

KernelInfo gpuGemm(std::string id, std::string title, std::string shader) {
  KernelInfo k;
  k.id = std::move(id);
  k.family = "gemm";
  k.backend = Backend::Vulkan;
  k.title = std::move(title);
  k.shader = std::move(shader);
  useGemmWorkload(k);
  k.constraints = "any M, N, K";
  return k;
}

KernelInfo cpuGemmKernel(std::string id, std::string title, CpuFn fn) {
  KernelInfo k;
  k.id = std::move(id);
  k.family = "gemm";
  k.backend = Backend::Cpu;
  k.title = std::move(title);
  k.uses_workgroup = false;
  k.default_wg = {1, 1, 1};
  k.flops = gemmFlops;
  k.bytes = gemmBytes;
  k.tolerance = gemmFp32Tolerance;
  k.workload = "gemm";
  k.constraints = "any M, N, K";
  k.cpu = std::move(fn);
  return k;
}

}  // namespace

void useGemmWorkload(KernelInfo& k) {
  k.workload = "gemm";
  k.size_rank = 3;
  k.flops = gemmFlops;
  k.bytes = gemmBytes;
  k.buffers = gemmBuffers;
  k.tolerance = gemmFp32Tolerance;
}

namespace {

// The C tile of a tensor-core workgroup: WARPS_M x WM rows by WARPS_N x WN columns.
uint64_t tileM(const Params& p) { return uint64_t(p.get("WARPS_M", 2) * p.get("WM", 64)); }
uint64_t tileN(const Params& p) { return uint64_t(p.get("WARPS_N", 4) * p.get("WN", 32)); }

// The one dispatch of the tensor-core kernels: a workgroup per tile, every
// tunable a define, push constants M, N, K.
std::vector<DispatchStep> coopmatSteps(const std::string& shader, const ProblemSize& s, const Params& p,
                                       std::vector<std::pair<std::string, std::string>> extra_defines = {}) {
  const uint64_t tile_m = tileM(p), tile_n = tileN(p);
  DispatchStep step;
  step.shader = shader;
  for (const auto& [name, v] : p.values) step.defines.emplace_back(name, std::to_string(v));
  step.defines.insert(step.defines.end(), extra_defines.begin(), extra_defines.end());
  step.groups = {ceilDiv(s.n, tile_n), ceilDiv(s.m, tile_m), 1};
  step.push = {uint32_t(s.m), uint32_t(s.n), uint32_t(s.k), 0};
  return {step};
}

}  // namespace

void registerGemmKernels(std::vector<KernelInfo>& out) {
  {
    auto k = gpuGemm("gemm.naive", "Naive, one output per invocation (x walks rows)", "gemm_naive.comp");
    k.description =
        "C[row][col] as a K-long dot product; invocation x indexes rows, so neighbours "
        "read A and write C a whole row apart (uncoalesced).";
    k.origin = "seed 000 mat_mul_simple1; seed 001 naive";
    k.fixed_defines = {{"COALESCED", "0"}};
    k.default_wg = {8, 8, 1};
    k.groups = [](const ProblemSize& s, const Params& p) {
      return std::array<uint32_t, 3>{ceilDiv(s.m, p.wg.x), ceilDiv(s.n, p.wg.y), 1};
    };
    out.push_back(std::move(k));
  }
  {
    auto k = gpuGemm("gemm.naive_coalesced", "Naive with coalescing index order (x walks columns)", "gemm_naive.comp");
    k.description =
        "The naive kernel with x indexing columns: neighbours read adjacent B elements, "
        "share A, and write adjacent C elements.";
    k.origin = "seed 001 global mem";
    k.fixed_defines = {{"COALESCED", "1"}};
    k.default_wg = {8, 8, 1};
    k.groups = [](const ProblemSize& s, const Params& p) {
      return std::array<uint32_t, 3>{ceilDiv(s.n, p.wg.x), ceilDiv(s.m, p.wg.y), 1};
    };
    out.push_back(std::move(k));
  }
  auto tiledGroups = [](const ProblemSize& s, const Params& p) {
    return std::array<uint32_t, 3>{ceilDiv(s.n, p.wg.x), ceilDiv(s.m, p.wg.y), 1};
  };
  auto tiledShared = [](const Params& p) { return 2ull * p.wg.x * p.wg.y * sizeof(float); };
  {
    auto k = gpuGemm("gemm.tiled_shared", "Shared-memory tiles (CUDA-sample port), tile = workgroup",
                     "gemm_tiled_shared.comp");
    k.description =
        "Each T x T workgroup stages one T x T tile of A and of B in shared memory per "
        "step; edge tiles are zero-padded.";
    k.origin = "seed 000 mat_mul_optimized_nv; seed 001 tg mem";
    k.fixed_defines = {{"UNROLL", "1"}};
    k.constraints = "any M, N, K; square workgroup";
    k.check_params = requireSquareWorkgroup;
    k.shared_bytes = tiledShared;
    k.groups = tiledGroups;
    out.push_back(std::move(k));
  }
  {
    auto k = gpuGemm("gemm.tiled_shared_unroll", "Shared-memory tiles with an unrolled inner loop",
                     "gemm_tiled_shared.comp");
    k.description = "gemm.tiled_shared with the inner product over the tile unrolled UNROLL times.";
    k.origin = "seed 001 tg mem unroll";
    k.tunables = {{"UNROLL", {2, 4, 8, 16}, 4, "inner-loop unroll factor (divides the tile)"}};
    k.constraints = "any M, N, K; square workgroup; UNROLL divides the tile";
    k.check_params = [](const Params& p) -> std::optional<std::string> {
      if (auto why = requireSquareWorkgroup(p)) return why;
      const int unroll = p.get("UNROLL", 4);
      if (p.wg.x % unroll) return "UNROLL=" + std::to_string(unroll) + " does not divide the " + p.wg.str() + " tile";
      return std::nullopt;
    };
    k.shared_bytes = tiledShared;
    k.groups = tiledGroups;
    out.push_back(std::move(k));
  }
  for (int rows : {4, 8}) {
    const std::string r = std::to_string(rows);
    auto k = gpuGemm("gemm.reg" + r + "x4", "Register tile " + r + "x4 per invocation (mat4 * vec4)",
                     "gemm_register_tile.comp");
    k.description = "Each invocation computes a " + r +
                    "x4 block of C in registers from vec4 loads, "
                    "without shared memory or barriers; rows past M are bounds-checked.";
    k.origin = rows == 4 ? "seed 000 mat_mul_opt1" : "seed 000 mat_mul_opt2";
    k.fixed_defines = {{"ROWS", r}};
    k.default_wg = rows == 4 ? WorkgroupShape{8, 8, 1} : WorkgroupShape{16, 8, 1};
    k.constraints = "N and K multiples of 4 (vec4 loads); any M";
    k.check_size = [](const ProblemSize& s, const Params&) { return requireMultiples(s, 1, 4, 4); };
    k.groups = [rows](const ProblemSize& s, const Params& p) {
      return std::array<uint32_t, 3>{ceilDiv(s.n / 4, p.wg.x), ceilDiv(ceilDiv(s.m, rows), p.wg.y), 1};
    };
    out.push_back(std::move(k));
  }
  {
    auto k = gpuGemm("gemm.block_tiling", "Block tiling: shared memory + BN x BN outputs per invocation",
                     "gemm_block_tiling.comp");
    k.description =
        "A workgroup computes a (WG_Y*BN) x (WG_X*BN) tile of C; K advances BK at a time "
        "through shared memory; each invocation keeps BN x BN accumulators.";
    k.origin = "seed 001 block tiling";
    k.tunables = {{"BK", {1, 2, 4, 8, 16}, 4, "K-depth of a shared-memory tile"},
                  {"BN", {1, 2, 4, 8, 16}, 4, "outputs per invocation along each axis (BN x BN)"}};
    k.constraints = "any M, N, K; shared memory 4*BK*BN*(WG_X+WG_Y) bytes";
    k.shared_bytes = [](const Params& p) { return uint64_t(4) * p.get("BK", 4) * p.get("BN", 4) * (p.wg.x + p.wg.y); };
    k.groups = [](const ProblemSize& s, const Params& p) {
      const uint32_t bn = static_cast<uint32_t>(p.get("BN", 4));
      return std::array<uint32_t, 3>{ceilDiv(s.n, uint64_t(p.wg.x) * bn), ceilDiv(s.m, uint64_t(p.wg.y) * bn), 1};
    };
    out.push_back(std::move(k));
  }
  // The upper ladder: one shader, three steps (see gemm_tile2d.comp).
  struct Step {
    const char* id;
    const char* title;
    int pad, dbuf;
    const char* what;
  };
  for (const Step& st : {Step{"gemm.tile2d", "2D block tiling, vec4 loads, A transposed in shared memory", 0, 0,
                              "BM x BN tile per workgroup, TM x TN per invocation, vec4 global loads"},
                         Step{"gemm.tile2d_padded", "2D block tiling with a bank-conflict-free shared layout", 1, 0,
                              "as gemm.tile2d, shared rows padded by 4 floats"},
                         Step{"gemm.tile2d_dbuf", "2D block tiling, double-buffered shared memory", 1, 1,
                              "as gemm.tile2d_padded, two shared stages: the next tile loads during the math"}}) {
    auto k = gpuGemm(st.id, st.title, "gemm_tile2d.comp");
    k.description = std::string(st.what) + "; the workgroup size follows from the tiles ((BM/TM)*(BN/TN)).";
    k.origin = "siboehm SGEMM_CUDA kernels 5-6 (2D blocktiling, vectorize) and double buffering";
    k.fixed_defines = {{"PAD", std::to_string(st.pad)}, {"DBUF", std::to_string(st.dbuf)}, {"WARP", "0"}};
    k.uses_workgroup = false;  // the tiles decide it
    k.default_wg = {1, 1, 1};
    k.tunables = {{"BM", {32, 64, 128, 256}, 128, "rows of C per workgroup"},
                  {"BN", {32, 64, 128, 256}, 128, "columns of C per workgroup"},
                  {"BK", {4, 8, 16, 32}, 8, "K-depth of a shared tile"},
                  {"TM", {4, 8, 16}, 8, "rows per invocation (multiple of 4)"},
                  {"TN", {4, 8, 16}, 8, "columns per invocation (multiple of 4)"}};
    k.constraints = "M, N multiples of BM, BN; K multiple of BK; N, K multiples of 4";
    k.check_params = [](const Params& p) -> std::optional<std::string> {
      const int bm = p.get("BM", 128), bn = p.get("BN", 128), bk = p.get("BK", 8), tm = p.get("TM", 8),
                tn = p.get("TN", 8);
      const int threads = (bm / tm) * (bn / tn);
      if (bm % tm || bn % tn || threads == 0) return std::string("BM and BN must be multiples of TM and TN");
      if ((bm * bk / 4) % threads || (bk * bn / 4) % threads)
        return "a " + std::to_string(bm) + "x" + std::to_string(bk) + " / " + std::to_string(bk) + "x" +
               std::to_string(bn) + " tile does not split into whole vec4 loads over " + std::to_string(threads) +
               " invocations";
      return std::nullopt;
    };
    k.check_device = [](const Params& p, const vk::DeviceInfo& d) -> std::optional<std::string> {
      const uint32_t threads = uint32_t((p.get("BM", 128) / p.get("TM", 8)) * (p.get("BN", 128) / p.get("TN", 8)));
      if (threads > d.max_invocations || threads > d.max_workgroup_size[0])
        return std::to_string(threads) + " invocations per workgroup, over this device's limit " +
               std::to_string(std::min(d.max_invocations, d.max_workgroup_size[0]));
      return std::nullopt;
    };
    k.shared_bytes = [dbuf = st.dbuf, pad = st.pad](const Params& p) {
      const uint64_t bm = p.get("BM", 128), bn = p.get("BN", 128), bk = p.get("BK", 8);
      return uint64_t(dbuf ? 2 : 1) * bk * ((bm + (pad ? 4 : 0)) + (bn + (pad ? 4 : 0))) * 4;
    };
    k.check_size = [](const ProblemSize& s, const Params& p) -> std::optional<std::string> {
      std::string why;
      auto need = [&](const char* n, uint64_t v, uint64_t mult, const char* what) {
        if (v % mult)
          why += std::string(why.empty() ? "" : "; ") + n + "=" + std::to_string(v) + " is not a multiple of " + what +
                 "=" + std::to_string(mult);
      };
      need("M", s.m, uint64_t(p.get("BM", 128)), "BM");
      need("N", s.n, uint64_t(p.get("BN", 128)), "BN");
      need("K", s.k, uint64_t(p.get("BK", 8)), "BK");
      if (why.empty()) return std::nullopt;
      return why;
    };
    k.groups = [](const ProblemSize& s, const Params& p) {
      return std::array<uint32_t, 3>{ceilDiv(s.n, uint64_t(p.get("BN", 128))), ceilDiv(s.m, uint64_t(p.get("BM", 128))),
                                     1};
    };
    out.push_back(std::move(k));
  }
  {
    // The top rung: gemm.tile2d_dbuf with warp tiling (siboehm's kernel 10).
    const KernelInfo& base = out.back();  // gemm.tile2d_dbuf
    auto k = base;
    k.id = "gemm.warptile";
    k.title = "Warp tiling: each subgroup owns a WM x WN sub-tile (double-buffered 2D tiling)";
    k.description =
        "gemm.tile2d_dbuf with the outputs of a workgroup split among its subgroups of 32: each "
        "owns a WM x WN sub-tile and each lane covers it in WMITER x WNITER steps of TM x TN. The "
        "workgroup has (BM/WM)*(BN/WN)*32 invocations (a 'warp' of 32 matches NVIDIA's subgroups; "
        "elsewhere it still computes correctly).";
    k.origin = "siboehm SGEMM_CUDA kernel 10 (warptiling)";
    k.fixed_defines = {{"PAD", "1"}, {"DBUF", "1"}, {"WARP", "1"}};
    k.tunables = {
        {"BM", {64, 128, 256}, 128, "rows of C per workgroup"},
        {"BN", {64, 128, 256}, 128, "columns of C per workgroup"},
        {"BK", {8, 16, 32}, 8, "K-depth of a shared tile (16 is faster where 33 KiB of shared memory fit)"},
        {"WM", {32, 64, 128}, 64, "rows of C per subgroup"},
        {"WN", {32, 64, 128}, 64, "columns of C per subgroup"},
        {"WNITER", {1, 2, 4}, 4, "column steps per lane"},
        {"TM", {4, 8}, 8, "rows per lane step (multiple of 4)"},
        {"TN", {4, 8}, 4, "columns per lane step (multiple of 4)"},
        {"VECA", {0, 1}, 0, "1: read the transposed A tile as vec4 (slower on an H200: 41.9 vs 44.4 TFLOP/s)"}};
    auto threads = [](const Params& p) {
      return uint32_t((p.get("BM", 128) / p.get("WM", 64)) * (p.get("BN", 128) / p.get("WN", 64)) * 32);
    };
    k.check_params = [threads](const Params& p) -> std::optional<std::string> {
      const int bm = p.get("BM", 128), bn = p.get("BN", 128), bk = p.get("BK", 8), wm = p.get("WM", 64),
                wn = p.get("WN", 64), wni = p.get("WNITER", 4), tm = p.get("TM", 8), tn = p.get("TN", 4);
      if (bm % wm || bn % wn) return std::string("BM and BN must be multiples of WM and WN");
      const int per = 32 * tm * tn * wni;
      if ((wm * wn) % per || (wm * wn) / per == 0)
        return std::string("WM*WN must split into 32 lanes x TM x TN x WNITER");
      const int wmiter = (wm * wn) / per;
      if (wm % wmiter || wn % wni || (wn / wni) % tn || (wm / wmiter) % tm)
        return std::string("the warp sub-tiles do not split into TM x TN steps");
      const int t = int(threads(p));
      if ((bm * bk / 4) % t || (bk * bn / 4) % t) return std::string("the tiles do not split into whole vec4 loads");
      return std::nullopt;
    };
    k.check_device = [threads](const Params& p, const vk::DeviceInfo& d) -> std::optional<std::string> {
      if (threads(p) > d.max_invocations) return std::string("too many invocations for this device");
      return std::nullopt;
    };
    // check_size: gemm.tile2d_dbuf's (multiples of BM, BN, BK).
    k.shared_bytes = [](const Params& p) {
      const uint64_t bm = p.get("BM", 128), bn = p.get("BN", 128), bk = p.get("BK", 8);
      return 2 * bk * ((bm + 4) + (bn + 4)) * 4;
    };
    k.constraints = "M, N, K multiples of BM, BN, BK";
    out.push_back(std::move(k));
  }
  {
    auto k = gpuGemm("gemm.coopmat", "Tensor cores: VK_NV_cooperative_matrix, fp16 in, fp32 accumulate",
                     "gemm_coopmat.comp");
    k.description =
        "A workgroup of WARPS_M x WARPS_N subgroups computes a BM x BN tile of C with cooperative-matrix "
        "multiply-adds (fp16 inputs, fp32 accumulators); A and B tiles are staged in shared memory, BK deep. "
        "OUT16 writes fp16 instead of fp32; RELU fuses max(0, x) before the store (seed 003's fused epilogue). "
        "Inputs are generated in fp32, rounded to fp16; the reference is OpenBLAS sgemm on the rounded values.";
    k.origin = "seed 003 Metal 4 cooperative tensors; VK_NV_cooperative_matrix";
    k.workload = "gemm16";
    k.uses_workgroup = false;  // the warp layout decides it
    k.default_wg = {1, 1, 1};
    k.required_extensions = {"VK_NV_cooperative_matrix"};
    k.tunables = {
        {"OUT16", {0, 1}, 0, "0: fp32 output; 1: fp16 output"}, {"RELU", {0, 1}, 0, "1: fused ReLU epilogue"},
        {"WARPS_M", {1, 2, 4}, 2, "subgroups along M"},         {"WARPS_N", {1, 2, 4}, 4, "subgroups along N"},
        {"WM", {32, 64}, 64, "rows of C per subgroup"},         {"WN", {32, 64}, 32, "columns of C per subgroup"},
        {"BK", {16, 32, 64}, 32, "K-depth of a shared tile"}};
    k.constraints = "M, N multiples of the tile (WARPS*W), K of BK; 16x16x16 fp16 fragments";
    k.flops = gemmFlops;
    k.bytes = [](const ProblemSize& s, const Params& p) {
      return 2.0 * (double(s.m) * s.k + double(s.k) * s.n) + (p.get("OUT16", 0) ? 2.0 : 4.0) * double(s.m) * s.n;
    };
    k.buffers = [](const ProblemSize& s, const Params& p) {
      return std::vector<BufferSpec>{{"matrix A (fp16)", 2 * s.m * s.k, BufferRole::Input},
                                     {"matrix B (fp16)", 2 * s.k * s.n, BufferRole::Input},
                                     {"matrix C", (p.get("OUT16", 0) ? 2u : 4u) * s.m * s.n, BufferRole::Output}};
    };
    k.tolerance = [](const ProblemSize& s, const Params& p) {
      // fp32 accumulation like sgemm (with margin); an fp16 output adds its rounding, 2^-11 relative.
      return 4 * gemmTolerance(s.k) + (p.get("OUT16", 0) ? 1.0 / 1024 : 0.0);
    };
    k.shared_bytes = [](const Params& p) {
      const uint64_t bk = uint64_t(p.get("BK", 32));
      return 2 * (tileM(p) * (bk + 8) + bk * (tileN(p) + 8));
    };
    k.check_device = [](const Params& p, const vk::DeviceInfo& d) -> std::optional<std::string> {
      if (!d.float16_storage) return std::string("no 16-bit storage buffers / shaderFloat16");
      if (d.subgroup_size != 32) return "subgroup size " + std::to_string(d.subgroup_size) + ", the kernel needs 32";
      bool shape = false;
      for (const auto& c : d.coopmat_shapes)
        shape |= c.m == 16 && c.n == 16 && c.k == 16 && c.a == "f16" && c.b == "f16" && c.c == "f32";
      if (!shape) return std::string("no 16x16x16 fp16 x fp16 -> fp32 cooperative-matrix shape");
      const uint32_t threads = uint32_t(32 * p.get("WARPS_M", 2) * p.get("WARPS_N", 4));
      if (threads > d.max_invocations) return std::to_string(threads) + " invocations, over the device limit";
      return std::nullopt;
    };
    k.check_size = [](const ProblemSize& s, const Params& p) -> std::optional<std::string> {
      if (s.m % tileM(p) || s.n % tileN(p) || s.k % uint64_t(p.get("BK", 32)))
        return "M, N, K must be multiples of " + std::to_string(tileM(p)) + ", " + std::to_string(tileN(p)) + ", " +
               std::to_string(p.get("BK", 32));
      return std::nullopt;
    };
    k.steps = [](const ProblemSize& s, const Params& p, const vk::DeviceInfo&) {
      return coopmatSteps("gemm_coopmat.comp", s, p, {{"TM", "16"}, {"TN", "16"}, {"TK", "16"}});
    };
    out.push_back(std::move(k));
  }
  {
    // The tensor-core kernel with the levers that keep the tensor cores fed.
    auto k = out.back();  // gemm.coopmat: workload, buffers, tolerance, device checks
    k.id = "gemm.coopmat_pipelined";
    k.title = "Tensor cores, pipelined: register prefetch, double-buffered shared tiles, grouped block order";
    k.shader = "gemm_coopmat_pipelined.comp";
    k.description =
        "gemm.coopmat with larger subgroup tiles (up to 128x128 of 16x16 accumulators), the next K tile loaded into "
        "registers with 128-bit loads while the current one is multiplied, two shared buffers (STAGES=2, one barrier "
        "per K step) or one (STAGES=1, for larger tiles), rows skewed by SKEW halves against bank conflicts, and "
        "workgroups walking C in strips GROUP_M tiles tall so that tiles in flight share A and B in L2.";
    k.origin = "gemm.coopmat + CUTLASS-style software pipelining (issue 13)";
    k.tunables = {{"OUT16", {0, 1}, 0, "0: fp32 output; 1: fp16 output"},
                  {"RELU", {0, 1}, 0, "1: fused ReLU epilogue"},
                  {"WARPS_M", {1, 2, 4}, 4, "subgroups along M"},
                  {"WARPS_N", {1, 2, 4}, 4, "subgroups along N"},
                  {"WM", {32, 64, 128}, 64, "rows of C per subgroup"},
                  {"WN", {32, 64, 128}, 32, "columns of C per subgroup"},
                  {"BK", {16, 32, 64}, 32, "K-depth of a shared tile"},
                  {"STAGES", {1, 2}, 1, "shared buffers: 2 overlap the next tile's stores with the math; 1 needs half"},
                  {"SKEW", {0, 8}, 8, "halves of padding per shared row (bank conflicts)"},
                  {"GROUP_M", {1, 4, 8, 16}, 8, "tile rows per strip of the block order (L2 reuse)"}};
    k.constraints = "M, N multiples of the tile (WARPS*W), K of BK; 16x16x16 fp16 fragments";
    auto threads = [](const Params& p) { return uint64_t(32 * p.get("WARPS_M", 2) * p.get("WARPS_N", 2)); };
    k.check_params = [threads](const Params& p) -> std::optional<std::string> {
      const uint64_t bk = uint64_t(p.get("BK", 32)), t = threads(p);
      // Every invocation loads whole 8-half vectors of both tiles.
      if ((tileM(p) * bk / 8) % t || (bk * tileN(p) / 8) % t)
        return "a " + std::to_string(tileM(p)) + "x" + std::to_string(bk) + " / " + std::to_string(bk) + "x" +
               std::to_string(tileN(p)) + " tile does not split into whole 128-bit loads over " + std::to_string(t) +
               " invocations";
      return std::nullopt;
    };
    // check_device (fp16, subgroups of 32, the 16x16x16 shape, invocations) and
    // check_size (whole tiles): gemm.coopmat's.
    k.shared_bytes = [](const Params& p) {
      const uint64_t bk = uint64_t(p.get("BK", 32)), skew = uint64_t(p.get("SKEW", 8));
      return uint64_t(p.get("STAGES", 2)) * 2 * (tileM(p) * (bk + skew) + bk * (tileN(p) + skew));
    };
    k.steps = [](const ProblemSize& s, const Params& p, const vk::DeviceInfo&) {
      return coopmatSteps("gemm_coopmat_pipelined.comp", s, p);
    };
    out.push_back(std::move(k));
  }
  {
    auto k = cpuGemmKernel("cpu.gemm.naive", "CPU triple loop, one thread", cpuGemm(cpu::gemmNaive));
    k.description = "i-j-k loops; B is walked down its columns.";
    k.origin = "seed 000 Naive CPU";
    out.push_back(std::move(k));
  }
  {
    auto k = cpuGemmKernel("cpu.gemm.blocked", "CPU cache-blocked, all cores", cpuGemm(cpu::gemmBlocked));
    k.description =
        "BLOCK x BLOCK tiles in i-k-j order so the inner loop vectorizes; row blocks "
        "are spread over all hardware threads.";
    k.origin = "seed 000 (transposed CPU multiply remark)";
    k.tunables = {{"BLOCK", {32, 64, 128, 256}, 64, "tile edge in elements"}};
    out.push_back(std::move(k));
  }
  {
    auto k = cpuGemmKernel("cpu.gemm.openblas", "OpenBLAS cblas_sgemm", cpuGemm(cpu::gemmOpenBlas));
    k.reference_is_self = true;
    k.description = "The BLAS baseline; also the reference every other gemm is verified against.";
    k.origin = "seed 000 Accelerate sgemm; seed 001 MPS";
    out.push_back(std::move(k));
  }
}

}  // namespace ks
