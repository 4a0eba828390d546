#pragma once
// CPU gemm baselines: C = A * B, row-major floats.
#include "engine/kernels/types.h"

namespace ks::cpu {

void gemmNaive(const float* a, const float* b, float* c, const ProblemSize& size, const Params& params);
// Cache-blocked (BLOCK x BLOCK tiles, i-k-j order) and threaded over row blocks.
void gemmBlocked(const float* a, const float* b, float* c, const ProblemSize& size, const Params& params);
void gemmOpenBlas(const float* a, const float* b, float* c, const ProblemSize& size, const Params& params);

// The same in double precision for spot checks of the reference itself.
double gemmEntryDouble(const float* a, const float* b, const ProblemSize& size, uint64_t row, uint64_t col);

}  // namespace ks::cpu
