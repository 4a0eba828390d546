/* kernelscope kernel
# A kernel file: a manifest in this comment block, then the GLSL shader.
# Run it with
#   kernelscope-cli run --kernel-file THIS.comp --kernels ID --sizes 65536,1048576
# Expressions: muParser, over M, N, K, WG_X, WG_Y, WG_Z and the tunables.

id:          user.dot_two_pass_shared
title:       Two passes, log-step tree in shared memory (file version of dot.two_pass_shared)
description: GROUPS workgroups each fold their grid-stride share of x.y with a
             tree in shared memory into a partial sum; a second one-workgroup
             pass folds the partial sums. Both passes are timed as one point.
origin:      seed 004 TWO_PASS_THREADGROUP_MEMORY; a copy of the built-in dot.two_pass_shared

# dot: result = x . y over N elements. The engine binds x, y and the one-element
# result at bindings 0, 1, 2 and checks it against a double-precision sum.
workload:    dot

tunable:     PREC = 32 in 32, 64 ; precision: 32 float, 64 double (needs shaderFloat64)
tunable:     GROUPS = 256 in 16, 32, 64, 128, 256, 512, 1024, 2048, 4096 ; workgroups of the first pass
workgroup:   256x1

# Two grid lines: two passes, compiled with PASS=1 and PASS=2, with a barrier
# between them.
grid:        GROUPS, 1, 1
grid:        1, 1, 1

# Scratch buffers follow the workload's (binding 3 on), sized in bytes.
buffer:      scratch partial sums = (PREC / 8) * GROUPS
shared:      (PREC / 8) * WG_X
push:        N
constraint:  WG_Y == 1 && WG_Z == 1 ; a 1-D workgroup (write e.g. 256x1)
constraint:  WG_X >= 1 && 2 ^ floor(log2(WG_X)) == WG_X ; the workgroup size must be a power of two (tree reduction)
*/
#version 450
#if PREC == 64
#define REAL double
#else
#define REAL float
#endif
layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer BufX { REAL x[]; };
layout(std430, binding = 1) readonly buffer BufY { REAL y[]; };
layout(std430, binding = 2) writeonly buffer BufOut { REAL result[]; };
layout(std430, binding = 3) buffer BufPartials { REAL partials[]; };
layout(push_constant) uniform Args { uint N; };  // GROUPS is a #define: a compile-time grid stride

shared REAL tree[WG];

void main() {
  const uint t = gl_LocalInvocationID.x;
  REAL acc = 0.0;
#if PASS == 1
  for (uint i = gl_GlobalInvocationID.x; i < N; i += WG * GROUPS) acc += x[i] * y[i];
#else
  for (uint i = t; i < GROUPS; i += WG) acc += partials[i];
#endif
  tree[t] = acc;
  for (uint s = WG / 2; s > 0; s >>= 1) {
    barrier();
    if (t < s) tree[t] += tree[t + s];
  }
  if (t == 0) {
#if PASS == 1
    partials[gl_WorkGroupID.x] = tree[0];
#else
    result[0] = tree[0];
#endif
  }
}
