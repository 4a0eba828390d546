#version 450
// Peak arithmetic: CHAINS independent multiply-add chains of WIDTH-wide
// vectors (4, or 2: packed half pairs) per invocation, so the issue rate (not
// latency) bounds the time. FP16 = 1 uses halves (shaderFloat16).
// acc = acc * m + a converges (|m| < 1) and never reaches Inf or denormals; m
// and a come from push constants so nothing folds.
#ifndef WIDTH
#define WIDTH 4
#endif
#if FP16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define SCALAR float16_t
#if WIDTH == 2
#define VEC f16vec2
#else
#define VEC f16vec4
#endif
#else
#define SCALAR float
#if WIDTH == 2
#define VEC vec2
#else
#define VEC vec4
#endif
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
#if WIDTH == 2
  sink[gid] = float(s.x + s.y);  // keeps every chain alive
#else
  sink[gid] = float(s.x + s.y + s.z + s.w);  // keeps every chain alive
#endif
}
