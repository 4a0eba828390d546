#version 450
// The GPU's turn in the interleave experiment (seed 000, experiment 5): one
// exact integer step on every element, so the host can replay the rounds and
// check the final buffer bit for bit. A 2D grid of 256-wide workgroups.
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Args { uint count; };
void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256;
  if (i < count) data[i] = data[i] * 1664525u + 1013904223u;
}
