/* kernelscope kernel
# A fast SGEMM as a kernel file: on an H200 it runs at the speed of the best
# built-in (44.5 TFLOP/s at 4096, 45.5 at 8192; gemm.warptile 44.3 / 45.5),
# measured, verified and tunable like one:
#   kernelscope-cli run --kernel-file sgemm_quadrants.comp --kernels user.sgemm_quadrants --sizes 4096
#   kernelscope-cli tune --kernel-file sgemm_quadrants.comp --kernel user.sgemm_quadrants --size 4096
# The workgroup size follows from the tiles ((BM/WM) * (BN/WN) subgroups of
# 32): the shader sets local_size_x itself ('workgroup: fixed').
id:          user.sgemm_quadrants
title:       SGEMM, warp tiling with split 4x4 quadrants (vec4 shared reads, grouped order)
description: Each subgroup owns a WM x WN tile of C; each lane's 8x8 outputs are four
             4x4 quadrants half a warp tile apart, so every shared-memory read is a
             conflict-free vec4. The next K tile is loaded into registers during the
             math (PIPE=1); GROUP_M orders the workgroups for L2 reuse.
origin:      siboehm SGEMM_CUDA kernel 10 (warptiling); CUTLASS's split thread tile
workload:    gemm
workgroup:   fixed
tunable:     BM = 128 in 64, 128, 256 ; rows of C per workgroup
tunable:     BN = 128 in 64, 128, 256 ; columns of C per workgroup
tunable:     BK = 16 in 8, 16, 32 ; K-depth of a shared tile
tunable:     WM = 64 in 32, 64, 128 ; rows of C per subgroup
tunable:     WN = 32 in 16, 32, 64 ; columns of C per subgroup
tunable:     GROUP_M = 1 in 1, 4, 8, 16 ; workgroup rows per group of the launch order (L2 reuse)
tunable:     PIPE = 1 in 0, 1 ; 1: the next tile is loaded into registers during the math (two shared stages); 0: one stage, two barriers, fewer registers
grid:        N / BN, M / BM, 1
shared:      (PIPE + 1) * BK * ((BM + 4) + (BN + 4)) * 4
constraint:  M % BM == 0 && N % BN == 0 && K % BK == 0 ; M, N, K multiples of BM, BN, BK
constraint:  BM % WM == 0 && BN % WN == 0 && WM * WN == 2048 ; each subgroup owns WM x WN = 32 lanes x 8x8
constraint:  (BM * BK / 4) % ((BM / WM) * (BN / WN) * 32) == 0 && (BN * BK / 4) % ((BM / WM) * (BN / WN) * 32) == 0 ; tiles split into whole vec4 loads
*/
#version 450
#extension GL_EXT_control_flow_attributes : require

#define THREADS_N ((BM / WM) * (BN / WN) * 32)
const uint THREADS = THREADS_N;
layout(local_size_x = THREADS_N) in;

layout(std430, binding = 0) readonly buffer BufA { vec4 A[]; };   // M x K/4
layout(std430, binding = 1) readonly buffer BufB { vec4 B[]; };   // K x N/4
layout(std430, binding = 2) writeonly buffer BufC { vec4 C[]; };  // M x N/4
layout(push_constant) uniform Size { uint M; uint N; uint K; };

// Lanes of a subgroup: LR rows x LC columns of 4x4 quadrant pairs.
const uint LR = WM / 8, LC = WN / 8;
const uint LDA4 = BM / 4 + 1, LDB4 = BN / 4 + 1;  // padded rows, in vec4
shared vec4 As[(PIPE + 1) * BK * LDA4];                   // [stage][k][m / 4]: A transposed
shared vec4 Bs[(PIPE + 1) * BK * LDB4];                   // [stage][k][n / 4]

const uint A_REGS = BM * BK / 4 / THREADS;
const uint B_VECS = BK * BN / 4 / THREADS;

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint lane = tid % 32, warp = tid / 32;
  const uint warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
  const uint lr = lane / LC, lc = lane % LC;

  // Grouped launch order: GROUP_M block rows share their B columns in L2.
  const uint gridN = N / BN, gridM = M / BM;
  const uint pid = gl_WorkGroupID.y * gridN + gl_WorkGroupID.x;
  const uint perGroup = GROUP_M * gridN;
  const uint firstM = (pid / perGroup) * GROUP_M;
  const uint groupRows = min(gridM - firstM, uint(GROUP_M));
  const uint blockM = firstM + (pid % perGroup) % groupRows;
  const uint blockN = (pid % perGroup) / groupRows;
  const uint rowBase = blockM * BM, colBase = blockN * BN;
  const uint K4 = K / 4, N4 = N / 4;

  vec4 acc[8][2];
  [[unroll]] for (uint i = 0; i < 8; ++i) {
    acc[i][0] = vec4(0.0);
    acc[i][1] = vec4(0.0);
  }
  vec4 aReg[A_REGS], bReg[B_VECS];

#define LOAD_A(k0)                                                               \
  [[unroll]] for (uint v = 0; v < A_REGS; ++v) {                                 \
    const uint e = tid + v * THREADS, r = e / (BK / 4), kc = e % (BK / 4);       \
    aReg[v] = A[(rowBase + r) * K4 + (k0) / 4 + kc];                             \
  }
#define STORE_A(s)                                                               \
  [[unroll]] for (uint v = 0; v < A_REGS; ++v) {                                 \
    const uint e = tid + v * THREADS, r = e / (BK / 4), kc = e % (BK / 4);       \
    const uint base = (s) * BK * LDA4 + kc * 4 * LDA4 + r / 4;                   \
    As[base][r % 4] = aReg[v].x;                                                 \
    As[base + LDA4][r % 4] = aReg[v].y;                                          \
    As[base + 2 * LDA4][r % 4] = aReg[v].z;                                      \
    As[base + 3 * LDA4][r % 4] = aReg[v].w;                                      \
  }
#define LOAD_B(k0)                                                               \
  [[unroll]] for (uint v = 0; v < B_VECS; ++v) {                                 \
    const uint e = tid + v * THREADS, kr = e / (BN / 4), c4 = e % (BN / 4);      \
    bReg[v] = B[((k0) + kr) * N4 + colBase / 4 + c4];                            \
  }
#define STORE_B(s)                                                               \
  [[unroll]] for (uint v = 0; v < B_VECS; ++v) {                                 \
    const uint e = tid + v * THREADS, kr = e / (BN / 4), c4 = e % (BN / 4);      \
    Bs[(s) * BK * LDB4 + kr * LDB4 + c4] = bReg[v];                              \
  }

  LOAD_A(0)
  LOAD_B(0)
  STORE_A(0)
  STORE_B(0)
  barrier();
  uint stage = 0;
  const uint aCol = (warpRow * WM) / 4 + lr, bCol = (warpCol * WN) / 4 + lc;
  for (uint k0 = 0; k0 < K; k0 += BK) {
#if PIPE
    const bool more = k0 + BK < K;
    if (more) {
      LOAD_A(k0 + BK)
      LOAD_B(k0 + BK)
    }
#else
    if (k0 > 0) {
      barrier();  // everyone is done with the previous tile
      LOAD_A(k0)
      LOAD_B(k0)
      STORE_A(0)
      STORE_B(0)
      barrier();
    }
#endif
    [[unroll]] for (uint k = 0; k < BK; ++k) {
      const uint ao = stage * BK * LDA4 + k * LDA4 + aCol;
      const uint bo = stage * BK * LDB4 + k * LDB4 + bCol;
      const vec4 a0 = As[ao], a1 = As[ao + WM / 8];
      const vec4 b0 = Bs[bo], b1 = Bs[bo + WN / 8];
      const float a[8] = float[8](a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w);
      [[unroll]] for (uint i = 0; i < 8; ++i) {
        acc[i][0] += a[i] * b0;
        acc[i][1] += a[i] * b1;
      }
    }
#if PIPE
    if (more) {
      stage ^= 1u;
      STORE_A(stage)
      STORE_B(stage)
    }
    barrier();
#endif
  }
  [[unroll]] for (uint i = 0; i < 8; ++i) {
    const uint row = rowBase + warpRow * WM + (i / 4) * (WM / 2) + lr * 4 + i % 4;
    C[row * N4 + colBase / 4 + bCol] = acc[i][0];
    C[row * N4 + colBase / 4 + bCol + WN / 8] = acc[i][1];
  }
}
