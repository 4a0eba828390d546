#version 450
// Device memory bandwidth: dst = src, 16 bytes per invocation, a 2D grid of
// 256-wide workgroups (x wraps at the group-count limit).
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform Args { uint count; };
void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256;
  if (i < count) dst[i] = src[i];
}
