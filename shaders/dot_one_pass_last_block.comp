#version 450
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// dot.one_pass_last_block (seed 004's last-block detection, which fails on
// Metal). Each workgroup writes its partial sum to a coherent (device-scope)
// buffer, fences it (memoryBarrierBuffer), then takes a ticket from an atomic
// counter with acquire-release semantics at device scope. The workgroup with
// the last ticket fences again and adds the partials: every other workgroup's
// partial was made visible before its ticket, and the last ticket comes after
// all of them. Metal's device atomics are relaxed-only and it has no such
// device-scope fence between threadgroups, so there the last threadgroup may
// read stale partials. The counter is cleared before every run.
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
// coherent: reads and writes of the partials go to device-coherent memory, not
// a workgroup-local cache.
layout(std430, binding = 3) coherent buffer BufPartials { REAL partials[]; };
layout(std430, binding = 4) buffer BufCounter { uint tickets; };
layout(push_constant) uniform Args { uint N; };  // GROUPS is a #define: a compile-time grid stride

shared REAL perSubgroup[WG];

void main() {
  REAL acc = 0.0;
  for (uint i = gl_GlobalInvocationID.x; i < N; i += WG * GROUPS) acc += x[i] * y[i];
  acc = subgroupAdd(acc);
  if (subgroupElect()) perSubgroup[gl_SubgroupID] = acc;
  barrier();
  if (gl_LocalInvocationID.x != 0) return;

  REAL total = 0.0;
  for (uint s = 0; s < gl_NumSubgroups; ++s) total += perSubgroup[s];
  partials[gl_WorkGroupID.x] = total;
  memoryBarrierBuffer();  // release: the partial is visible device-wide before the ticket
  const uint ticket = atomicAdd(tickets, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
  if (ticket != GROUPS - 1) return;
  memoryBarrierBuffer();  // acquire: every earlier partial is visible to the reads below
  REAL sum = 0.0;
  for (uint g = 0; g < GROUPS; ++g) sum += partials[g];
  result[0] = sum;
}
