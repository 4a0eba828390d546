#include "engine/cpu/peak_loops.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ks::cpu {

namespace {

// Accumulators per loop: FMA latency (4-5 cycles) x FMA units (2) with room
// to spare, within the register file (32 zmm; 16 ymm/xmm with the constants).
constexpr unsigned kChainsAvx512 = 16;
constexpr unsigned kChainsAvx2 = 12;
constexpr unsigned kChainsSse = 12;
constexpr unsigned kChainsPortable = 8;

float fmaPortable(uint64_t iterations, float mul, float add) {
  float acc[kChainsPortable];
  for (unsigned c = 0; c < kChainsPortable; ++c) acc[c] = 0.0625f * float(c);
  for (uint64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 8
    for (unsigned c = 0; c < kChainsPortable; ++c) acc[c] = acc[c] * mul + add;
  }
  float sum = 0;
  for (float a : acc) sum += a;
  return sum;
}

void copyPortable(const float* a, float* c, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) c[i] = a[i];
}

void triadPortable(float* a, const float* b, const float* c, float s, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

#if defined(__x86_64__)

__attribute__((target("avx512f"))) float fmaAvx512(uint64_t iterations, float mul, float add) {
  const __m512 m = _mm512_set1_ps(mul), a = _mm512_set1_ps(add);
  __m512 acc[kChainsAvx512];
  for (unsigned c = 0; c < kChainsAvx512; ++c) acc[c] = _mm512_set1_ps(0.0625f * float(c));
  for (uint64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (unsigned c = 0; c < kChainsAvx512; ++c) acc[c] = _mm512_fmadd_ps(acc[c], m, a);
  }
  __m512 sum = acc[0];
  for (unsigned c = 1; c < kChainsAvx512; ++c) sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float lanes[16];  // not _mm512_reduce_add_ps: GCC 12 warns inside it
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

__attribute__((target("avx2,fma"))) float fmaAvx2(uint64_t iterations, float mul, float add) {
  const __m256 m = _mm256_set1_ps(mul), a = _mm256_set1_ps(add);
  __m256 acc[kChainsAvx2];
  for (unsigned c = 0; c < kChainsAvx2; ++c) acc[c] = _mm256_set1_ps(0.0625f * float(c));
  for (uint64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (unsigned c = 0; c < kChainsAvx2; ++c) acc[c] = _mm256_fmadd_ps(acc[c], m, a);
  }
  __m256 sum = acc[0];
  for (unsigned c = 1; c < kChainsAvx2; ++c) sum = _mm256_add_ps(sum, acc[c]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

float fmaSse(uint64_t iterations, float mul, float add) {
  const __m128 m = _mm_set1_ps(mul), a = _mm_set1_ps(add);
  __m128 acc[kChainsSse];
  for (unsigned c = 0; c < kChainsSse; ++c) acc[c] = _mm_set1_ps(0.0625f * float(c));
  for (uint64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (unsigned c = 0; c < kChainsSse; ++c) acc[c] = _mm_add_ps(_mm_mul_ps(acc[c], m), a);
  }
  __m128 sum = acc[0];
  for (unsigned c = 1; c < kChainsSse; ++c) sum = _mm_add_ps(sum, acc[c]);
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, sum);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

__attribute__((target("avx512f"))) void copyAvx512(const float* a, float* c, uint64_t n) {
  uint64_t i = 0;
#pragma GCC unroll 4
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(c + i, _mm512_loadu_ps(a + i));
  copyPortable(a + i, c + i, n - i);
}

__attribute__((target("avx512f"))) void triadAvx512(float* a, const float* b, const float* c, float s, uint64_t n) {
  const __m512 sv = _mm512_set1_ps(s);
  uint64_t i = 0;
#pragma GCC unroll 4
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(a + i, _mm512_fmadd_ps(sv, _mm512_loadu_ps(c + i), _mm512_loadu_ps(b + i)));
  triadPortable(a + i, b + i, c + i, s, n - i);
}

__attribute__((target("avx2,fma"))) void copyAvx2(const float* a, float* c, uint64_t n) {
  uint64_t i = 0;
#pragma GCC unroll 4
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(c + i, _mm256_loadu_ps(a + i));
  copyPortable(a + i, c + i, n - i);
}

__attribute__((target("avx2,fma"))) void triadAvx2(float* a, const float* b, const float* c, float s, uint64_t n) {
  const __m256 sv = _mm256_set1_ps(s);
  uint64_t i = 0;
#pragma GCC unroll 4
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(a + i, _mm256_fmadd_ps(sv, _mm256_loadu_ps(c + i), _mm256_loadu_ps(b + i)));
  triadPortable(a + i, b + i, c + i, s, n - i);
}

void copySse(const float* a, float* c, uint64_t n) {
  uint64_t i = 0;
#pragma GCC unroll 4
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(c + i, _mm_loadu_ps(a + i));
  copyPortable(a + i, c + i, n - i);
}

void triadSse(float* a, const float* b, const float* c, float s, uint64_t n) {
  const __m128 sv = _mm_set1_ps(s);
  uint64_t i = 0;
#pragma GCC unroll 4
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(a + i, _mm_add_ps(_mm_loadu_ps(b + i), _mm_mul_ps(sv, _mm_loadu_ps(c + i))));
  triadPortable(a + i, b + i, c + i, s, n - i);
}

#endif

}  // namespace

bool simdSupported(Simd simd) {
#if defined(__x86_64__)
  switch (simd) {
    case Simd::Avx512f:
      return __builtin_cpu_supports("avx512f");
    case Simd::Avx2Fma:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Simd::Sse:
    case Simd::Portable:
      return true;  // SSE2 is part of x86-64
  }
  return false;
#else
  return simd == Simd::Portable;
#endif
}

Simd widestSimd() {
  for (Simd s : {Simd::Avx512f, Simd::Avx2Fma, Simd::Sse})
    if (simdSupported(s)) return s;
  return Simd::Portable;
}

std::string simdName(Simd simd) {
  switch (simd) {
    case Simd::Avx512f:
      return "AVX-512F";
    case Simd::Avx2Fma:
      return "AVX2+FMA";
    case Simd::Sse:
      return "SSE (mul + add)";
    case Simd::Portable:
      return "portable C++";
  }
  return "?";
}

unsigned simdLanes(Simd simd) {
  switch (simd) {
    case Simd::Avx512f:
      return 16;
    case Simd::Avx2Fma:
      return 8;
    case Simd::Sse:
      return 4;
    case Simd::Portable:
      return 1;
  }
  return 1;
}

unsigned fmaChains(Simd simd) {
  switch (simd) {
    case Simd::Avx512f:
      return kChainsAvx512;
    case Simd::Avx2Fma:
      return kChainsAvx2;
    case Simd::Sse:
      return kChainsSse;
    case Simd::Portable:
      return kChainsPortable;
  }
  return kChainsPortable;
}

double fmaFlopPerIteration(Simd simd) { return 2.0 * fmaChains(simd) * simdLanes(simd); }

// Each entry point falls back to portable code for a SIMD the CPU (or the
// build target) lacks, so a wrong choice is slow, never an illegal instruction.
float fmaLoop(Simd simd, uint64_t iterations, float mul, float add) {
#if defined(__x86_64__)
  if (simdSupported(simd)) switch (simd) {
      case Simd::Avx512f:
        return fmaAvx512(iterations, mul, add);
      case Simd::Avx2Fma:
        return fmaAvx2(iterations, mul, add);
      case Simd::Sse:
        return fmaSse(iterations, mul, add);
      case Simd::Portable:
        break;
    }
#endif
  return fmaPortable(iterations, mul, add);
}

void streamCopy(Simd simd, const float* a, float* c, uint64_t n) {
#if defined(__x86_64__)
  if (simdSupported(simd)) switch (simd) {
      case Simd::Avx512f:
        return copyAvx512(a, c, n);
      case Simd::Avx2Fma:
        return copyAvx2(a, c, n);
      case Simd::Sse:
        return copySse(a, c, n);
      case Simd::Portable:
        break;
    }
#endif
  copyPortable(a, c, n);
}

void streamTriad(Simd simd, float* a, const float* b, const float* c, float s, uint64_t n) {
#if defined(__x86_64__)
  if (simdSupported(simd)) switch (simd) {
      case Simd::Avx512f:
        return triadAvx512(a, b, c, s, n);
      case Simd::Avx2Fma:
        return triadAvx2(a, b, c, s, n);
      case Simd::Sse:
        return triadSse(a, b, c, s, n);
      case Simd::Portable:
        break;
    }
#endif
  triadPortable(a, b, c, s, n);
}

}  // namespace ks::cpu
