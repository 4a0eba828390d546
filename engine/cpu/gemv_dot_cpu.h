#pragma once
// CPU baselines for the bandwidth-bound families: y = A x (or A^T x) and dot
// products, in float or double (PREC), naive, SIMD-unrolled, threaded, OpenBLAS.
#include <vector>

#include "engine/kernels/types.h"

namespace ks::cpu {

using Inputs = std::vector<const void*>;

void gemvNaive(const Inputs& in, void* out, const ProblemSize& s, const Params& p);
void gemvOpenBlas(const Inputs& in, void* out, const ProblemSize& s, const Params& p);

void dotNaive(const Inputs& in, void* out, const ProblemSize& s, const Params& p);
// UNROLL independent accumulators (1/2/4/8) of 8-wide AVX2/FMA vectors where
// the CPU has them, else the same unrolling in plain C++.
void dotSimd(const Inputs& in, void* out, const ProblemSize& s, const Params& p);
// THREADS threads (1/2/4/8), each a contiguous slice.
void dotThreads(const Inputs& in, void* out, const ProblemSize& s, const Params& p);
void dotOpenBlas(const Inputs& in, void* out, const ProblemSize& s, const Params& p);

bool hasAvx2Fma();

}  // namespace ks::cpu
