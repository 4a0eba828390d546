#version 450
#extension GL_EXT_control_flow_attributes : require
// The upper SGEMM ladder (siboehm's CUDA steps, in GLSL): a workgroup of
// (BM/TM)*(BN/TN) invocations computes a BM x BN tile of C; each invocation
// keeps a TM x TN block of it in registers. K advances BK at a time through
// shared memory, A stored transposed so both operands are read along rows.
// All global traffic is vec4 (so N and K are multiples of 4).
//   PAD  = 1: rows of the shared tiles padded by 4 floats, so the transposed
//             stores of A and the vec4 reads of B spread over the banks.
//   DBUF = 1: two shared buffers; the next tile's loads are issued before the
//             current tile's math and land in the other buffer: one barrier
//             per step instead of two, and the loads overlap the FMAs.
//   WARP = 1: warp tiling (siboehm's kernel 10): each subgroup of 32 owns a
//             WM x WN sub-tile, which each lane covers in WMITER x WNITER
//             steps of TM x TN, so a subgroup's shared reads stay within a
//             small window and its outer products reuse registers.
//   VECA = 1: the transposed A tile is read back as vec4 (128-bit shared
//             loads of TM rows at once) instead of TM scalar loads.
// Without WARP the whole workgroup is one "warp" (WM = BM, WN = BN).
#ifndef VECA
#define VECA 0
#endif
#if WARP
#define THREADS_N ((BM / WM) * (BN / WN) * 32)
const uint LANES = 32;
#else
#define WM BM
#define WN BN
#define WNITER 1
#define THREADS_N ((BM / TM) * (BN / TN))
const uint LANES = THREADS_N;
#endif
const uint THREADS = THREADS_N;
const uint WMITER = (WM * WN) / (LANES * TM * TN * WNITER);
const uint WSUBM = WM / WMITER, WSUBN = WN / WNITER;
layout(local_size_x = THREADS_N) in;

layout(std430, binding = 0) readonly buffer BufA { vec4 A[]; };   // M x K/4
layout(std430, binding = 1) readonly buffer BufB { vec4 B[]; };   // K x N/4
layout(std430, binding = 2) writeonly buffer BufC { vec4 C[]; };  // M x N/4
layout(push_constant) uniform Size { uint M; uint N; uint K; };

#if PAD
const uint LDA = BM + 4, LDB = BN + 4;
#else
const uint LDA = BM, LDB = BN;
#endif
#if DBUF
const uint STAGES = 2;
#else
const uint STAGES = 1;
#endif
#if VECA
shared vec4 As4[STAGES * BK * LDA / 4];  // [stage][k][row / 4]
#define AS_STORE(i, v) As4[(i) >> 2][(i)&3] = (v)
#else
shared float As[STAGES * BK * LDA];  // [stage][k][row]
#define AS_STORE(i, v) As[i] = (v)
#endif
shared vec4 Bs[STAGES * BK * LDB / 4];  // [stage][k][col/4]

const uint A_VECS = BM * BK / 4 / THREADS;  // vec4 loads per invocation per tile
const uint B_VECS = BK * BN / 4 / THREADS;

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint lane = tid % LANES, warp = tid / LANES;
  const uint warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
  const uint tRow = lane / (WSUBN / TN), tCol = lane % (WSUBN / TN);
  const uint rowBase = gl_WorkGroupID.y * BM, colBase = gl_WorkGroupID.x * BN;
  const uint K4 = K / 4, N4 = N / 4;

  float acc[WMITER * TM][WNITER * TN];
  [[unroll]] for (uint i = 0; i < WMITER * TM; ++i)
    [[unroll]] for (uint j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.0;

  vec4 aReg[A_VECS], bReg[B_VECS];
  // Global -> registers for the tile at k0.
#define LOAD_TILE(k0)                                                              \
  [[unroll]] for (uint v = 0; v < A_VECS; ++v) {                                   \
    const uint e = tid + v * THREADS, r = e / (BK / 4), kc = e % (BK / 4);         \
    aReg[v] = A[(rowBase + r) * K4 + (k0) / 4 + kc];                               \
  }                                                                                \
  [[unroll]] for (uint v = 0; v < B_VECS; ++v) {                                   \
    const uint e = tid + v * THREADS, kr = e / (BN / 4), c4 = e % (BN / 4);        \
    bReg[v] = B[((k0) + kr) * N4 + colBase / 4 + c4];                              \
  }
  // Registers -> shared stage s (A transposed).
#define STORE_TILE(s)                                                              \
  [[unroll]] for (uint v = 0; v < A_VECS; ++v) {                                   \
    const uint e = tid + v * THREADS, r = e / (BK / 4), kc = e % (BK / 4);         \
    const uint base = (s) * BK * LDA + (kc * 4) * LDA + r;                         \
    AS_STORE(base, aReg[v].x);                                                     \
    AS_STORE(base + LDA, aReg[v].y);                                               \
    AS_STORE(base + 2 * LDA, aReg[v].z);                                           \
    AS_STORE(base + 3 * LDA, aReg[v].w);                                           \
  }                                                                                \
  [[unroll]] for (uint v = 0; v < B_VECS; ++v) {                                   \
    const uint e = tid + v * THREADS, kr = e / (BN / 4), c4 = e % (BN / 4);        \
    Bs[(s) * BK * (LDB / 4) + kr * (LDB / 4) + c4] = bReg[v];                      \
  }

  LOAD_TILE(0)
  STORE_TILE(0)
  barrier();
  uint stage = 0;
  for (uint k0 = 0; k0 < K; k0 += BK) {
#if DBUF
    const bool more = k0 + BK < K;
    if (more) { LOAD_TILE(k0 + BK) }  // in flight during the math below
#endif
    [[unroll]] for (uint k = 0; k < BK; ++k) {
      float a[WMITER * TM];
      vec4 b[WNITER * TN / 4];
      [[unroll]] for (uint s = 0; s < WMITER; ++s) {
        const uint aBase = stage * BK * LDA + k * LDA + warpRow * WM + s * WSUBM + tRow * TM;
#if VECA
        [[unroll]] for (uint i = 0; i < TM; i += 4) {
          const vec4 v = As4[(aBase + i) / 4];
          a[s * TM + i] = v.x;
          a[s * TM + i + 1] = v.y;
          a[s * TM + i + 2] = v.z;
          a[s * TM + i + 3] = v.w;
        }
#else
        [[unroll]] for (uint i = 0; i < TM; ++i) a[s * TM + i] = As[aBase + i];
#endif
      }
      [[unroll]] for (uint t = 0; t < WNITER; ++t)
        [[unroll]] for (uint j = 0; j < TN / 4; ++j)
          b[t * (TN / 4) + j] =
              Bs[stage * BK * (LDB / 4) + k * (LDB / 4) + (warpCol * WN + t * WSUBN + tCol * TN) / 4 + j];
      [[unroll]] for (uint i = 0; i < WMITER * TM; ++i)
        [[unroll]] for (uint j = 0; j < WNITER * TN / 4; ++j) {
          acc[i][4 * j + 0] += a[i] * b[j].x;
          acc[i][4 * j + 1] += a[i] * b[j].y;
          acc[i][4 * j + 2] += a[i] * b[j].z;
          acc[i][4 * j + 3] += a[i] * b[j].w;
        }
    }
#if DBUF
    if (more) {
      stage ^= 1u;
      STORE_TILE(stage)
    }
    barrier();
#else
    barrier();
    if (k0 + BK < K) {
      LOAD_TILE(k0 + BK)
      STORE_TILE(0)
    }
    barrier();
#endif
  }
  [[unroll]] for (uint s = 0; s < WMITER; ++s)
    [[unroll]] for (uint i = 0; i < TM; ++i) {
      const uint row = rowBase + warpRow * WM + s * WSUBM + tRow * TM + i;
      [[unroll]] for (uint t = 0; t < WNITER; ++t)
        [[unroll]] for (uint j = 0; j < TN / 4; ++j) {
          const uint a = s * TM + i, c = t * TN + 4 * j;
          C[row * N4 + (colBase + warpCol * WN + t * WSUBN + tCol * TN) / 4 + j] =
              vec4(acc[a][c], acc[a][c + 1], acc[a][c + 2], acc[a][c + 3]);
        }
    }
}
