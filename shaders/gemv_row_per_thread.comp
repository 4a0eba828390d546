#version 450
// gemv.row_per_thread: one invocation per output element, reading A and x
// straight from device memory. TRANS = 0 (y = A x): neighbouring invocations
// walk rows N elements apart (uncoalesced). TRANS = 1 (y = A^T x, seed 002's
// x^T A): they walk adjacent columns (coalesced).
#if PREC == 64
#define REAL double
#else
#define REAL float
#endif
layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer BufA { REAL A[]; };  // M x N, row-major
layout(std430, binding = 1) readonly buffer BufX { REAL x[]; };  // N (TRANS 0) or M (TRANS 1)
layout(std430, binding = 2) writeonly buffer BufY { REAL y[]; };
layout(push_constant) uniform Size { uint M; uint N; };

void main() {
  const uint out_i = gl_GlobalInvocationID.x;
  REAL acc = 0.0;
#if TRANS == 0
  if (out_i >= M) return;
  for (uint j = 0; j < N; ++j) acc += A[out_i * N + j] * x[j];
#else
  if (out_i >= N) return;
  for (uint i = 0; i < M; ++i) acc += A[i * N + out_i] * x[i];
#endif
  y[out_i] = acc;
}
