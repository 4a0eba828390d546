#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
// gemm.coopmat: tensor cores through VK_NV_cooperative_matrix. fp16 A and B,
// fp32 accumulation, fp32 or fp16 (OUT16) output, optional fused ReLU (the
// Metal 4 sample of seed 003). A workgroup of WARPS_M x WARPS_N subgroups
// computes a BM x BN tile; each subgroup a WM x WN block of TM x TN fragments.
// K advances BK at a time: the A and B tiles are staged in shared memory with
// 16-byte loads, then every subgroup loads its fragments from there.
// Fragment shape (TM, TN, TK) comes from the device's property list.
const uint WARPS = WARPS_M * WARPS_N;
const uint BM = WARPS_M * WM, BN = WARPS_N * WN;
layout(local_size_x = 32 * WARPS_M * WARPS_N) in;  // subgroup size 32 (checked by the registry)

layout(std430, binding = 0) readonly buffer BufA { uvec4 A[]; };  // M x K halves, 8 per uvec4
layout(std430, binding = 1) readonly buffer BufB { uvec4 B[]; };  // K x N halves
#if OUT16
layout(std430, binding = 2) writeonly buffer BufC { float16_t C[]; };
#else
layout(std430, binding = 2) writeonly buffer BufC { float C[]; };
#endif
layout(push_constant) uniform Size { uint M; uint N; uint K; };

const uint PADH = 8;                // halves of padding per shared row
const uint LDA = BK + PADH, LDB = BN + PADH;
shared uvec4 As[BM * LDA / 8];      // [row][k]
shared uvec4 Bs[BK * LDB / 8];      // [k][col]

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint warp = gl_SubgroupID;
  const uint warpRow = warp / WARPS_N, warpCol = warp % WARPS_N;
  const uint rowBase = gl_WorkGroupID.y * BM, colBase = gl_WorkGroupID.x * BN;
  const uint K8 = K / 8, N8 = N / 8;
  const uint THREADS = 32 * WARPS;

  fcoopmatNV<32, gl_ScopeSubgroup, TM, TN> acc[WM / TM][WN / TN];
  [[unroll]] for (uint i = 0; i < WM / TM; ++i)
    [[unroll]] for (uint j = 0; j < WN / TN; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, TM, TN>(0.0);

  for (uint k0 = 0; k0 < K; k0 += BK) {
    // A tile: BM x BK halves = BM * BK / 8 uvec4.
    for (uint e = tid; e < BM * BK / 8; e += THREADS) {
      const uint r = e / (BK / 8), c = e % (BK / 8);
      As[r * (LDA / 8) + c] = A[(rowBase + r) * K8 + k0 / 8 + c];
    }
    // B tile: BK x BN halves.
    for (uint e = tid; e < BK * BN / 8; e += THREADS) {
      const uint r = e / (BN / 8), c = e % (BN / 8);
      Bs[r * (LDB / 8) + c] = B[(k0 + r) * N8 + colBase / 8 + c];
    }
    barrier();
    [[unroll]] for (uint kk = 0; kk < BK; kk += TK) {
      fcoopmatNV<16, gl_ScopeSubgroup, TM, TK> a[WM / TM];
      fcoopmatNV<16, gl_ScopeSubgroup, TK, TN> b[WN / TN];
      // Element offsets and strides are in uvec4 units (8 halves).
      [[unroll]] for (uint i = 0; i < WM / TM; ++i)
        coopMatLoadNV(a[i], As, (warpRow * WM + i * TM) * (LDA / 8) + kk / 8, LDA / 8, false);
      [[unroll]] for (uint j = 0; j < WN / TN; ++j)
        coopMatLoadNV(b[j], Bs, kk * (LDB / 8) + (warpCol * WN + j * TN) / 8, LDB / 8, false);
      [[unroll]] for (uint i = 0; i < WM / TM; ++i)
        [[unroll]] for (uint j = 0; j < WN / TN; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
    }
    barrier();
  }

  [[unroll]] for (uint i = 0; i < WM / TM; ++i)
    [[unroll]] for (uint j = 0; j < WN / TN; ++j) {
#if RELU
      for (int e = 0; e < acc[i][j].length(); ++e) acc[i][j][e] = max(acc[i][j][e], 0.0);
#endif
      const uint row = rowBase + warpRow * WM + i * TM, col = colBase + warpCol * WN + j * TN;
#if OUT16
      fcoopmatNV<16, gl_ScopeSubgroup, TM, TN> out16 = fcoopmatNV<16, gl_ScopeSubgroup, TM, TN>(acc[i][j]);
      coopMatStoreNV(out16, C, row * N + col, N, false);
#else
      coopMatStoreNV(acc[i][j], C, row * N + col, N, false);
#endif
    }
}
