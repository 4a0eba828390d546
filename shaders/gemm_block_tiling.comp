#version 450
#extension GL_EXT_control_flow_attributes : require
// gemm.block_tiling (seed 001's "block tiling"): a workgroup of WG_X x WG_Y
// invocations computes a (WG_Y*BN) x (WG_X*BN) tile of C; each invocation owns
// BN x BN outputs, strided by the workgroup size so that shared-memory reads
// and global stores stay contiguous across neighbours. K advances BK at a
// time through shared memory (A stored transposed). Edges are bounds-checked,
// so any M, N, K works.
layout(constant_id = 0) const uint WG_X = 16;
layout(constant_id = 1) const uint WG_Y = 16;
layout(local_size_x_id = 0, local_size_y_id = 1) in;

layout(std430, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, binding = 2) writeonly buffer BufC { float C[]; };
layout(push_constant) uniform Size { uint M; uint N; uint K; };

#ifndef BK
#define BK 4
#endif
#ifndef BN
#define BN 4
#endif

const uint TILE_M = WG_Y * BN;
const uint TILE_N = WG_X * BN;
shared float tileA[BK * WG_Y * BN];  // [k][row]
shared float tileB[BK * WG_X * BN];  // [k][col]

void main() {
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint tid = ty * WG_X + tx;
  const uint threads = WG_X * WG_Y;
  const uint rowBase = gl_WorkGroupID.y * TILE_M;
  const uint colBase = gl_WorkGroupID.x * TILE_N;

  float acc[BN][BN];
  [[unroll]] for (uint i = 0; i < BN; ++i)
    [[unroll]] for (uint j = 0; j < BN; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < K; k0 += BK) {
    for (uint e = tid; e < TILE_M * BK; e += threads) {
      const uint r = e / BK, kk = e % BK;
      const uint gr = rowBase + r, gk = k0 + kk;
      tileA[kk * TILE_M + r] = (gr < M && gk < K) ? A[gr * K + gk] : 0.0;
    }
    for (uint e = tid; e < TILE_N * BK; e += threads) {
      const uint kk = e / TILE_N, c = e % TILE_N;
      const uint gk = k0 + kk, gc = colBase + c;
      tileB[kk * TILE_N + c] = (gk < K && gc < N) ? B[gk * N + gc] : 0.0;
    }
    barrier();
    [[unroll]] for (uint kk = 0; kk < BK; ++kk) {
      float a[BN], b[BN];
      [[unroll]] for (uint i = 0; i < BN; ++i) a[i] = tileA[kk * TILE_M + ty + i * WG_Y];
      [[unroll]] for (uint j = 0; j < BN; ++j) b[j] = tileB[kk * TILE_N + tx + j * WG_X];
      [[unroll]] for (uint i = 0; i < BN; ++i)
        [[unroll]] for (uint j = 0; j < BN; ++j) acc[i][j] += a[i] * b[j];
    }
    barrier();
  }
  [[unroll]] for (uint i = 0; i < BN; ++i) {
    const uint row = rowBase + ty + i * WG_Y;
    [[unroll]] for (uint j = 0; j < BN; ++j) {
      const uint col = colBase + tx + j * WG_X;
      if (row < M && col < N) C[row * N + col] = acc[i][j];
    }
  }
}
