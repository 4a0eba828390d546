/* kernelscope kernel
# A kernel file: a manifest in this comment block, then the GLSL shader.
# Run it with
#   kernelscope-cli run --kernel-file THIS.comp --kernels ID --sizes 1024,4096
# Expressions: muParser, over M, N, K, WG_X, WG_Y, WG_Z and the tunables.

id:          user.gemv_row_per_thread
title:       One output per invocation (file version of gemv.row_per_thread)
description: Each invocation computes one element of y straight from device
             memory. TRANS=0: neighbours read rows N apart (uncoalesced);
             TRANS=1: they read adjacent columns.
origin:      seed 002; a copy of the built-in gemv.row_per_thread

# gemv: y = A x (A is M x N, row-major), or y = A^T x with TRANS=1. The engine
# binds A, x and y at bindings 0, 1, 2 and checks y against a double-precision
# reference. The tunables PREC (32 float, 64 double) and TRANS are the
# workload's own: declare them to sweep them.
workload:    gemv

tunable:     PREC = 32 in 32, 64 ; precision: 32 float, 64 double (needs shaderFloat64)
tunable:     TRANS = 0 in 0, 1 ; 0: y = A x; 1: y = A^T x
workgroup:   64x1
grid:        ceil((TRANS ? N : M) / WG_X), 1, 1
constraint:  WG_Y == 1 && WG_Z == 1 ; a 1-D workgroup (write e.g. 64x1)

# Push constants, as uints in this order (the default is M, N, K).
push:        M, N
*/
#version 450
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
