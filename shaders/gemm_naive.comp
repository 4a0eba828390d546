#version 450
// gemm.naive / gemm.naive_coalesced: one output element per invocation.
// COALESCED = 0: invocation x walks the rows of C, so neighbouring invocations
// read A and write C K resp. N floats apart (the "naive" rung of seed 001).
// COALESCED = 1: x walks the columns, so neighbours read adjacent B elements,
// share the A element, and write adjacent C elements (seed 001's "global mem").
layout(constant_id = 0) const uint WG_X = 8;
layout(constant_id = 1) const uint WG_Y = 8;
layout(local_size_x_id = 0, local_size_y_id = 1) in;

// REAL: float, or double for gemv.naive_matmul's PREC=64 (gemm is fp32).
#if defined(PREC) && PREC == 64
#define REAL double
#else
#define REAL float
#endif
layout(std430, binding = 0) readonly buffer BufA { REAL A[]; };
layout(std430, binding = 1) readonly buffer BufB { REAL B[]; };
layout(std430, binding = 2) writeonly buffer BufC { REAL C[]; };
layout(push_constant) uniform Size { uint M; uint N; uint K; };

void main() {
#if COALESCED
  const uint col = gl_GlobalInvocationID.x;
  const uint row = gl_GlobalInvocationID.y;
#else
  const uint row = gl_GlobalInvocationID.x;
  const uint col = gl_GlobalInvocationID.y;
#endif
  if (row >= M || col >= N) return;
  REAL acc = 0.0;
  for (uint k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}
