#version 450
#extension GL_EXT_control_flow_attributes : require
// gemm.tiled_shared / gemm.tiled_shared_unroll: the CUDA-sample tiled matmul
// (seed 000's mat_mul_optimized_nv). The tile is the workgroup (square, T x T):
// each invocation loads one A and one B element per tile into shared memory,
// then accumulates T products from shared memory. UNROLL > 1 splits the inner
// loop into fixed-length chunks the compiler unrolls (seed 001's "unroll").
// Edge tiles are zero-padded, so any M, N, K works.
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
  const uint T = WG_X;  // WG_X == WG_Y, checked by the registry
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
