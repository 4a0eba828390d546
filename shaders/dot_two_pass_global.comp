#version 450
// dot.two_pass_global (seed 004's TWO_PASS_DEVICE_MEMORY). Pass 1: GROUPS
// workgroups each sum a grid-stride share of x[i] * y[i] and fold the WG
// per-invocation sums in a log-step tree kept in device memory (work[]);
// pass 2: one workgroup folds the GROUPS partials the same way.
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
layout(std430, binding = 4) coherent buffer BufWork { REAL work[]; };  // GROUPS * WG
layout(push_constant) uniform Args { uint N; };  // GROUPS is a #define: a compile-time grid stride

void main() {
  const uint t = gl_LocalInvocationID.x;
  REAL acc = 0.0;
#if PASS == 1
  for (uint i = gl_GlobalInvocationID.x; i < N; i += WG * GROUPS) acc += x[i] * y[i];
  const uint base = gl_WorkGroupID.x * WG;
#else
  for (uint i = t; i < GROUPS; i += WG) acc += partials[i];
  const uint base = 0;
#endif
  work[base + t] = acc;
  for (uint s = WG / 2; s > 0; s >>= 1) {
    memoryBarrierBuffer();
    barrier();
    if (t < s) work[base + t] += work[base + t + s];
  }
  if (t == 0) {
#if PASS == 1
    partials[gl_WorkGroupID.x] = work[base];
#else
    result[0] = work[base];
#endif
  }
}
