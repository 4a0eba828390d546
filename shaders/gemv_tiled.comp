#version 450
// gemv.tiled_shared / gemv.uncached (seed 002). A workgroup of WG invocations
// owns WG outputs and walks the reduction in chunks of TILE: the chunk of x is
// staged in shared memory (it is reused by all WG invocations).
// CACHE_A = 1 (tiled_shared) also stages the WG x TILE block of A in shared
// memory, loaded so neighbouring invocations read neighbouring addresses;
// that pays off only where the direct reads are uncoalesced (TRANS = 0).
// CACHE_A = 0 (uncached) reads A directly: "caching is useless without reuse".
#if PREC == 64
#define REAL double
#else
#define REAL float
#endif
layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer BufA { REAL A[]; };  // M x N, row-major
layout(std430, binding = 1) readonly buffer BufX { REAL x[]; };
layout(std430, binding = 2) writeonly buffer BufY { REAL y[]; };
layout(push_constant) uniform Size { uint M; uint N; };

shared REAL xs[TILE];
#if CACHE_A
shared REAL As[WG * (TILE + 1)];  // +1: rows of the tile start in different banks
#endif

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint base = gl_WorkGroupID.x * WG;
  const uint out_i = base + t;
#if TRANS == 0
  const uint OUTS = M, LEN = N;
#else
  const uint OUTS = N, LEN = M;
#endif
  REAL acc = 0.0;
  for (uint k0 = 0; k0 < LEN; k0 += TILE) {
    for (uint e = t; e < TILE; e += WG) xs[e] = k0 + e < LEN ? x[k0 + e] : REAL(0);
#if CACHE_A
    for (uint e = t; e < WG * TILE; e += WG) {
#if TRANS == 0
      const uint r = e / TILE, c = e % TILE;  // r: output row, c: position in the chunk
      const bool inside = base + r < OUTS && k0 + c < LEN;
      As[r * (TILE + 1) + c] = inside ? A[(base + r) * N + k0 + c] : REAL(0);
#else
      const uint c = e / WG, r = e % WG;  // c: position in the chunk (a row of A), r: output column
      const bool inside = base + r < OUTS && k0 + c < LEN;
      As[r * (TILE + 1) + c] = inside ? A[(k0 + c) * N + base + r] : REAL(0);
#endif
    }
#endif
    barrier();
    if (out_i < OUTS) {
      const uint len = min(uint(TILE), LEN - k0);
      for (uint c = 0; c < len; ++c) {
#if CACHE_A
        acc += As[t * (TILE + 1) + c] * xs[c];
#elif TRANS == 0
        acc += A[out_i * N + k0 + c] * xs[c];
#else
        acc += A[(k0 + c) * N + out_i] * xs[c];
#endif
      }
    }
    barrier();
  }
  if (out_i < OUTS) y[out_i] = acc;
}
