#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
// Peak cooperative-matrix throughput for one fragment shape: every subgroup
// runs CHAINS independent accumulators through `iterations` multiply-adds of
// constant fp16 fragments, with ACC_BITS (16 or 32) accumulators. Values stay
// small (a = b = 2^-8) so nothing overflows.
layout(local_size_x = 128) in;  // 4 subgroups of 32 (checked before use)
layout(std430, binding = 0) writeonly buffer Sink { float sink[]; };
layout(push_constant) uniform Args { float value; float unused; uint iterations; };

#if ACC_BITS == 16
#define ACC_T float16_t
#else
#define ACC_T float
#endif

void main() {
  const fcoopmatNV<16, gl_ScopeSubgroup, TM, TK> a = fcoopmatNV<16, gl_ScopeSubgroup, TM, TK>(float16_t(value));
  const fcoopmatNV<16, gl_ScopeSubgroup, TK, TN> b = fcoopmatNV<16, gl_ScopeSubgroup, TK, TN>(float16_t(value));
  fcoopmatNV<ACC_BITS, gl_ScopeSubgroup, TM, TN> acc[CHAINS];
  [[unroll]] for (uint c = 0; c < CHAINS; ++c) acc[c] = fcoopmatNV<ACC_BITS, gl_ScopeSubgroup, TM, TN>(ACC_T(0.0));
  for (uint i = 0; i < iterations; ++i)
    [[unroll]] for (uint c = 0; c < CHAINS; ++c) acc[c] = coopMatMulAddNV(a, b, acc[c]);
  fcoopmatNV<32, gl_ScopeSubgroup, TM, TN> s = fcoopmatNV<32, gl_ScopeSubgroup, TM, TN>(acc[0]);
  [[unroll]] for (uint c = 1; c < CHAINS; ++c) s += fcoopmatNV<32, gl_ScopeSubgroup, TM, TN>(acc[c]);
  const uint tile = gl_WorkGroupID.x * (gl_WorkGroupSize.x / 32) + gl_SubgroupID;
  coopMatStoreNV(s, sink, tile * TM * TN, TN, false);
}
