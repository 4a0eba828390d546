/* kernelscope kernel
# A kernel file: this comment block (the manifest) and the GLSL compute shader
# below it. Copy it, change the id, and run it with
#   kernelscope-cli run --kernel-file THIS.comp --kernels ID --sizes 256,512
# Lines starting with '#' inside the block are comments. Expressions are
# muParser expressions of M, N, K (the size), WG_X, WG_Y, WG_Z (the workgroup)
# and the tunables; + - * / ^ % ceil() floor() min() max() == != < <= && || ?: work.

id:          user.gemm_tiled_shared
title:       Shared-memory tiles, tile = workgroup (file version of gemm.tiled_shared)
description: Each T x T workgroup stages one T x T tile of A and of B in shared
             memory per step; edge tiles are zero-padded, so any M, N, K works.
origin:      seed 000 mat_mul_optimized_nv; a copy of the built-in gemm.tiled_shared

# gemm: C (M x N) = A (M x K) * B (K x N), fp32, row-major. The engine binds
# A, B and C at bindings 0, 1, 2, fills A and B with seeded random values,
# poisons C with NaN and checks it against OpenBLAS sgemm.
workload:    gemm

# The default workgroup; --wg picks others. It reaches the shader as
# specialization constants 0, 1, 2 (see local_size_x_id below).
workgroup:   16x16

# Workgroups to dispatch (x, y, z). One grid line per pass; with several, each
# pass is compiled with PASS defined as 1, 2, ...
grid:        ceil(N / WG_X), ceil(M / WG_Y), 1

# Shared memory per workgroup, in bytes: checked against the device's limit
# before anything runs.
shared:      2 * WG_X * WG_Y * 4

# When a constraint is false the point is skipped with the message after ';'.
constraint:  WG_X == WG_Y && WG_Z == 1 ; the tile is the workgroup: use a square shape like 16x16

# Optional: FLOP and byte counts (defaults: the workload's, 2*M*N*K and each
# matrix moved once), push constants (default: M, N, K as uints), tunables
# (injected as #defines), e.g.
#   tunable:   UNROLL = 1 in 1, 2, 4 ; inner-loop unroll
# and what the kernel needs: 'extension: VK_...', 'feature: float64'.
*/
#version 450
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 0) const uint WG_X = 16;
layout(constant_id = 1) const uint WG_Y = 16;
layout(local_size_x_id = 0, local_size_y_id = 1) in;

layout(std430, binding = 0) readonly buffer BufA { float A[]; };
layout(std430, binding = 1) readonly buffer BufB { float B[]; };
layout(std430, binding = 2) writeonly buffer BufC { float C[]; };
layout(push_constant) uniform Size { uint M; uint N; uint K; };

#ifndef UNROLL
#define UNROLL 1
#endif

shared float tileA[WG_Y * WG_X];
shared float tileB[WG_Y * WG_X];

void main() {
  const uint T = WG_X;  // WG_X == WG_Y: a constraint of the manifest
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint row = gl_WorkGroupID.y * T + ty;
  const uint col = gl_WorkGroupID.x * T + tx;

  float acc = 0.0;
  for (uint t = 0; t < K; t += T) {
    tileA[ty * T + tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0;
    tileB[ty * T + tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0;
    barrier();
    for (uint k = 0; k < T; k += UNROLL) {
      [[unroll]] for (uint u = 0; u < UNROLL; ++u)
        acc += tileA[ty * T + k + u] * tileB[(k + u) * T + tx];
    }
    barrier();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
