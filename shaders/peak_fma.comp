#version 450
// Peak arithmetic: CHAINS independent vec4 multiply-add chains per invocation,
// ITER steps each, so the issue rate (not latency) bounds the time. FP16 = 1
// uses f16vec4 (shaderFloat16). acc = acc * m + a converges (|m| < 1) and never
// reaches Inf or denormals; m and a come from push constants so nothing folds.
#if FP16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define VEC f16vec4
#define SCALAR float16_t
#else
#define VEC vec4
#define SCALAR float
#endif
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Sink { float sink[]; };
layout(push_constant) uniform Args { float mul; float add; uint iterations; };

void main() {
  const uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256;
  const VEC m = VEC(SCALAR(mul));
  const VEC a = VEC(SCALAR(add));
  // Per-invocation start values (computed in fp32, then converted once).
  const float start = float(gid % 7u) * 0.125;
  VEC acc[CHAINS];
  [[unroll]] for (uint c = 0; c < CHAINS; ++c) acc[c] = VEC(start + 0.0625 * c);
  for (uint i = 0; i < iterations; ++i) {
    [[unroll]] for (uint u = 0; u < 4; ++u)
      [[unroll]] for (uint c = 0; c < CHAINS; ++c) acc[c] = fma(acc[c], m, a);
  }
  VEC s = acc[0];
  [[unroll]] for (uint c = 1; c < CHAINS; ++c) s += acc[c];
  sink[gid] = float(s.x + s.y + s.z + s.w);  // keeps every chain alive
}
