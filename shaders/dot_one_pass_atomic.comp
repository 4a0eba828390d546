#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// dot.one_pass_atomic (seed 004's one-pass atomic): each workgroup reduces
// its share (subgroupAdd, then shared memory) and adds it to result[0] with
// one atomic. ATOMIC_FLOAT = 1: a float atomic add (VK_EXT_shader_atomic_float);
// 0: a compare-and-swap loop on the value's bits. result[0] starts at zero.
#if PREC == 64
#define REAL double
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#endif
#if ATOMIC_FLOAT
#extension GL_EXT_shader_atomic_float : require
#endif
#ifndef REAL
#define REAL float
#endif
layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer BufX { REAL x[]; };
layout(std430, binding = 1) readonly buffer BufY { REAL y[]; };
#if ATOMIC_FLOAT
layout(std430, binding = 2) buffer BufOut { REAL result[]; };
#elif PREC == 64
layout(std430, binding = 2) buffer BufOut { uint64_t resultBits[]; };
#else
layout(std430, binding = 2) buffer BufOut { uint resultBits[]; };
#endif
layout(push_constant) uniform Args { uint N; };  // GROUPS is a #define: a compile-time grid stride

shared REAL perSubgroup[WG];

void addToResult(REAL v) {
#if ATOMIC_FLOAT
  atomicAdd(result[0], v);
#elif PREC == 64
  uint64_t expected = resultBits[0];
  for (;;) {
    const uint64_t desired = doubleBitsToUint64(uint64BitsToDouble(expected) + v);
    const uint64_t seen = atomicCompSwap(resultBits[0], expected, desired);
    if (seen == expected) break;
    expected = seen;
  }
#else
  uint expected = resultBits[0];
  for (;;) {
    const uint desired = floatBitsToUint(uintBitsToFloat(expected) + v);
    const uint seen = atomicCompSwap(resultBits[0], expected, desired);
    if (seen == expected) break;
    expected = seen;
  }
#endif
}

void main() {
  REAL acc = 0.0;
  for (uint i = gl_GlobalInvocationID.x; i < N; i += WG * GROUPS) acc += x[i] * y[i];
  acc = subgroupAdd(acc);
  if (subgroupElect()) perSubgroup[gl_SubgroupID] = acc;
  barrier();
  if (gl_LocalInvocationID.x == 0) {
    REAL total = 0.0;
    for (uint s = 0; s < gl_NumSubgroups; ++s) total += perSubgroup[s];
    addToResult(total);
  }
}
