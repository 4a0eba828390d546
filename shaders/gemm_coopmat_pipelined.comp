#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
// gemm.coopmat_pipelined: gemm.coopmat with the levers that keep tensor cores
// fed. A workgroup of WARPS_M x WARPS_N subgroups computes a BM x BN tile of
// C; each subgroup a WM x WN block of 16x16 fp32 accumulators.
//   - The next K tile is loaded from global memory into registers (128-bit
//     loads of 8 halves) while the current one is multiplied.
//   - STAGES = 2: two shared buffers, one barrier per K step; STAGES = 1: one
//     buffer, two barriers (half the shared memory, for larger tiles).
//   - SKEW halves pad each shared row, so the 8 rows a fragment load reads
//     fall in different banks.
//   - GROUP_M > 1: workgroups walk C in column strips GROUP_M tiles tall, so
//     tiles running together share their A rows and B columns in L2.
// fp16 A (M x K) and B (K x N), both row-major; fp32 accumulation; fp32 or
// fp16 (OUT16) output; optional fused ReLU (seed 003's epilogue).
const uint WARPS = WARPS_M * WARPS_N;
const uint THREADS = 32 * WARPS;
const uint BM = WARPS_M * WM, BN = WARPS_N * WN;
const uint FM = WM / 16, FN = WN / 16;  // fragments per subgroup
layout(local_size_x = 32 * WARPS_M * WARPS_N) in;  // subgroup size 32 (checked by the registry)

layout(std430, binding = 0) readonly buffer BufA { uvec4 A[]; };  // 8 halves per uvec4
layout(std430, binding = 1) readonly buffer BufB { uvec4 B[]; };
#if OUT16
layout(std430, binding = 2) writeonly buffer BufC { float16_t C[]; };
#else
layout(std430, binding = 2) writeonly buffer BufC { float C[]; };
#endif
layout(push_constant) uniform Size { uint M; uint N; uint K; };

const uint LDA = (BK + SKEW) / 8, LDB = (BN + SKEW) / 8;  // shared row strides in uvec4
const uint A_STAGE = BM * LDA, B_STAGE = BK * LDB;
shared uvec4 As[STAGES * A_STAGE];  // [stage][row][k]
shared uvec4 Bs[STAGES * B_STAGE];  // [stage][k][col]

const uint A_VECS = BM * BK / 8 / THREADS;  // 128-bit loads per invocation per K tile
const uint B_VECS = BK * BN / 8 / THREADS;

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint warp = gl_SubgroupID;
  const uint warpRow = warp / WARPS_N, warpCol = warp % WARPS_N;

  // Grouped block order: consecutive workgroups go down a strip of GROUP_M tile rows.
  const uint tilesN = gl_NumWorkGroups.x, tilesM = gl_NumWorkGroups.y;
  const uint linear = gl_WorkGroupID.y * tilesN + gl_WorkGroupID.x;
  const uint perGroup = GROUP_M * tilesN;
  const uint firstM = (linear / perGroup) * GROUP_M;
  const uint groupRows = min(tilesM - firstM, GROUP_M);
  const uint tileM = firstM + (linear % perGroup) % groupRows;
  const uint tileN = (linear % perGroup) / groupRows;
  const uint rowBase = tileM * BM, colBase = tileN * BN;
  const uint K8 = K / 8, N8 = N / 8;

  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FM][FN];
  [[unroll]] for (uint i = 0; i < FM; ++i)
    [[unroll]] for (uint j = 0; j < FN; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

  uvec4 aReg[A_VECS], bReg[B_VECS];
#define LOAD_TILE(k0)                                                      \
  [[unroll]] for (uint v = 0; v < A_VECS; ++v) {                           \
    const uint e = tid + v * THREADS, r = e / (BK / 8), c = e % (BK / 8);  \
    aReg[v] = A[(rowBase + r) * K8 + (k0) / 8 + c];                        \
  }                                                                        \
  [[unroll]] for (uint v = 0; v < B_VECS; ++v) {                           \
    const uint e = tid + v * THREADS, r = e / (BN / 8), c = e % (BN / 8);  \
    bReg[v] = B[((k0) + r) * N8 + colBase / 8 + c];                        \
  }
#define STORE_TILE(s)                                                      \
  [[unroll]] for (uint v = 0; v < A_VECS; ++v) {                           \
    const uint e = tid + v * THREADS, r = e / (BK / 8), c = e % (BK / 8);  \
    As[(s) * A_STAGE + r * LDA + c] = aReg[v];                             \
  }                                                                        \
  [[unroll]] for (uint v = 0; v < B_VECS; ++v) {                           \
    const uint e = tid + v * THREADS, r = e / (BN / 8), c = e % (BN / 8);  \
    Bs[(s) * B_STAGE + r * LDB + c] = bReg[v];                             \
  }

  LOAD_TILE(0)
  STORE_TILE(0)
  barrier();
  uint stage = 0;
  for (uint k0 = 0; k0 < K; k0 += BK) {
    const bool more = k0 + BK < K;
    if (more) { LOAD_TILE(k0 + BK) }  // in flight during the multiply-adds below
    [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[FM];
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> b[FN];
      // Offsets and strides in uvec4 units (8 halves).
      [[unroll]] for (uint i = 0; i < FM; ++i)
        coopMatLoadNV(a[i], As, stage * A_STAGE + (warpRow * WM + i * 16) * LDA + kk / 8, LDA, false);
      [[unroll]] for (uint j = 0; j < FN; ++j)
        coopMatLoadNV(b[j], Bs, stage * B_STAGE + kk * LDB + (warpCol * WN + j * 16) / 8, LDB, false);
      [[unroll]] for (uint i = 0; i < FM; ++i)
        [[unroll]] for (uint j = 0; j < FN; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
    }
#if STAGES == 2
    // The other buffer was last read before the previous barrier: safe to fill.
    if (more) {
      stage ^= 1u;
      STORE_TILE(stage)
    }
    barrier();
#else
    barrier();  // everyone is done reading the tile
    if (more) { STORE_TILE(0) }
    barrier();
#endif
  }

  [[unroll]] for (uint i = 0; i < FM; ++i)
    [[unroll]] for (uint j = 0; j < FN; ++j) {
#if RELU
      for (int e = 0; e < acc[i][j].length(); ++e) acc[i][j][e] = max(acc[i][j][e], 0.0);
#endif
      const uint row = rowBase + warpRow * WM + i * 16, col = colBase + warpCol * WN + j * 16;
#if OUT16
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> out16 = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(acc[i][j]);
      coopMatStoreNV(out16, C, row * N + col, N, false);
#else
      coopMatStoreNV(acc[i][j], C, row * N + col, N, false);
#endif
    }
}
