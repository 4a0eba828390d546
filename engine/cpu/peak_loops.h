#pragma once
// The loops behind the host CPU's peaks (engine/bench/peaks.h): independent
// FMA chains, and STREAM's copy and triad, in the SIMD the CPU has.
#include <cstdint>
#include <string>

namespace ks::cpu {

// SSE has no FMA: a multiply and an add per step (the same 2 FLOP). Portable
// is plain C++ for CPUs that are not x86-64.
enum class Simd { Portable, Sse, Avx2Fma, Avx512f };

Simd widestSimd();  // of the CPU this runs on
bool simdSupported(Simd simd);
std::string simdName(Simd simd);  // "AVX-512F", "AVX2+FMA", "SSE (mul + add)", "portable C++"
unsigned simdLanes(Simd simd);    // fp32 lanes of one register
unsigned fmaChains(Simd simd);    // independent accumulators of fmaLoop

// FLOP of one fmaLoop iteration: chains x lanes x 2.
double fmaFlopPerIteration(Simd simd);
// `iterations` steps of acc = acc * mul + add on fmaChains(simd) independent
// registers: enough chains that the FMA units' issue rate bounds it, not one
// chain's latency. Returns the sum of the accumulators (use it: nothing folds).
float fmaLoop(Simd simd, uint64_t iterations, float mul, float add);

// STREAM over [0, n): copy c[i] = a[i]; triad a[i] = b[i] + s * c[i].
void streamCopy(Simd simd, const float* a, float* c, uint64_t n);
void streamTriad(Simd simd, float* a, const float* b, const float* c, float s, uint64_t n);

}  // namespace ks::cpu
