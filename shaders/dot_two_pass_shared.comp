#version 450
// dot.two_pass_shared (seed 004's TWO_PASS_THREADGROUP_MEMORY): as
// dot.two_pass_global, with the log-step tree in shared memory.
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
