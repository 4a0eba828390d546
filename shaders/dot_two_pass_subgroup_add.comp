#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// dot.two_pass_subgroup_add (seed 004's simd_sum): each subgroup folds
// its lanes with one subgroupAdd (the hardware reduction), the
// subgroup sums meet in shared memory, and the first subgroup folds those.
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

shared REAL perSubgroup[WG];  // at most WG subgroups

REAL foldSubgroup(REAL v) { return subgroupAdd(v); }

void main() {
  const uint t = gl_LocalInvocationID.x;
  REAL acc = 0.0;
#if PASS == 1
  for (uint i = gl_GlobalInvocationID.x; i < N; i += WG * GROUPS) acc += x[i] * y[i];
#else
  for (uint i = t; i < GROUPS; i += WG) acc += partials[i];
#endif
  acc = foldSubgroup(acc);
  if (gl_SubgroupInvocationID == 0) perSubgroup[gl_SubgroupID] = acc;
  barrier();
  if (gl_SubgroupID == 0) {
    REAL v = 0.0;
    for (uint i = gl_SubgroupInvocationID; i < gl_NumSubgroups; i += gl_SubgroupSize) v += perSubgroup[i];
    v = foldSubgroup(v);
    if (gl_SubgroupInvocationID == 0) {
#if PASS == 1
      partials[gl_WorkGroupID.x] = v;
#else
      result[0] = v;
#endif
    }
  }
}
