#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// gemv.subgroup: one output per subgroup. Its lanes stride along the row of
// A (TRANS = 0: adjacent addresses, coalesced) or down a column (TRANS = 1:
// N elements apart), then subgroupAdd combines the lanes' partial sums.
#if PREC == 64
#define REAL double
#else
#define REAL float
#endif
layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer BufA { REAL A[]; };
layout(std430, binding = 1) readonly buffer BufX { REAL x[]; };
layout(std430, binding = 2) writeonly buffer BufY { REAL y[]; };
layout(push_constant) uniform Size { uint M; uint N; };

void main() {
  const uint out_i = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
#if TRANS == 0
  const uint OUTS = M, LEN = N;
#else
  const uint OUTS = N, LEN = M;
#endif
  if (out_i >= OUTS) return;  // whole subgroups leave together
  REAL acc = 0.0;
  for (uint k = gl_SubgroupInvocationID; k < LEN; k += gl_SubgroupSize) {
#if TRANS == 0
    acc += A[out_i * N + k] * x[k];
#else
    acc += A[k * N + out_i] * x[k];
#endif
  }
  acc = subgroupAdd(acc);
  if (subgroupElect()) y[out_i] = acc;
}
