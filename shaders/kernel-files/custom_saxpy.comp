/* kernelscope kernel
# A kernel file: a manifest in this comment block, then the GLSL shader.
# Run it with
#   kernelscope-cli run --kernel-file THIS.comp --kernels ID --sizes 1048576
# Expressions: muParser, over M, N, K, WG_X, WG_Y, WG_Z and the tunables.

id:          user.saxpy
title:       y = a x + y' (a custom workload)
description: Each invocation handles ITEMS consecutive elements: reads x and y,
             writes out. A custom workload has no reference, so its points are
             timed but marked unverified.

# custom: the kernel declares its own buffers (bound in the order written) and
# sizes; input buffers get seeded random floats, the output is poisoned with
# NaN first (the note says how much of it the kernel left unwritten).
workload:    custom
size:        N

buffer:      input x = 4 * N
buffer:      input y = 4 * N
buffer:      output out = 4 * N

tunable:     ITEMS = 1 in 1, 2, 4, 8 ; elements per invocation
workgroup:   256x1
grid:        ceil(N / (WG_X * ITEMS)), 1, 1
# A custom workload must say what it computes and moves.
flops:       2 * N
bytes:       3 * 4 * N
memory_bound: yes
constraint:  WG_Y == 1 && WG_Z == 1 ; a 1-D workgroup (write e.g. 256x1)
*/
#version 450
layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer BufX { float x[]; };
layout(std430, binding = 1) readonly buffer BufY { float y[]; };
layout(std430, binding = 2) writeonly buffer BufOut { float result[]; };
layout(push_constant) uniform Size { uint M; uint N; uint K; };

const float a = 1.5;

void main() {
  const uint first = gl_GlobalInvocationID.x * ITEMS;
  for (uint i = first; i < min(first + ITEMS, N); ++i) result[i] = a * x[i] + y[i];
}
