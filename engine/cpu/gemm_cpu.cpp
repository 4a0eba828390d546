#include "engine/cpu/gemm_cpu.h"

#include <cblas.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace ks::cpu {

void gemmNaive(const float* a, const float* b, float* c, const ProblemSize& s, const Params&) {
  for (uint64_t i = 0; i < s.m; ++i)
    for (uint64_t j = 0; j < s.n; ++j) {
      float acc = 0.0f;
      for (uint64_t k = 0; k < s.k; ++k) acc += a[i * s.k + k] * b[k * s.n + j];
      c[i * s.n + j] = acc;
    }
}

void gemmBlocked(const float* a, const float* b, float* c, const ProblemSize& s, const Params& params) {
  const uint64_t block = static_cast<uint64_t>(params.get("BLOCK", 64));
  const uint64_t row_blocks = (s.m + block - 1) / block;
  const unsigned threads =
      static_cast<unsigned>(std::min<uint64_t>(std::max(1u, std::thread::hardware_concurrency()), row_blocks));
  auto work = [&](unsigned t) {
    for (uint64_t rb = t; rb < row_blocks; rb += threads) {
      const uint64_t i0 = rb * block, i1 = std::min(s.m, i0 + block);
      for (uint64_t i = i0; i < i1; ++i) std::fill(c + i * s.n, c + (i + 1) * s.n, 0.0f);
      for (uint64_t k0 = 0; k0 < s.k; k0 += block) {
        const uint64_t k1 = std::min(s.k, k0 + block);
        for (uint64_t j0 = 0; j0 < s.n; j0 += block) {
          const uint64_t j1 = std::min(s.n, j0 + block);
          for (uint64_t i = i0; i < i1; ++i)
            for (uint64_t k = k0; k < k1; ++k) {
              const float aik = a[i * s.k + k];
              const float* brow = b + k * s.n;
              float* crow = c + i * s.n;
              for (uint64_t j = j0; j < j1; ++j) crow[j] += aik * brow[j];  // vectorizes
            }
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
}

void gemmOpenBlas(const float* a, const float* b, float* c, const ProblemSize& s, const Params&) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.m), static_cast<int>(s.n),
              static_cast<int>(s.k), 1.0f, a, static_cast<int>(s.k), b, static_cast<int>(s.n), 0.0f, c,
              static_cast<int>(s.n));
}

double gemmEntryDouble(const float* a, const float* b, const ProblemSize& s, uint64_t row, uint64_t col) {
  double acc = 0.0;
  for (uint64_t k = 0; k < s.k; ++k) acc += double(a[row * s.k + k]) * double(b[k * s.n + col]);
  return acc;
}

}  // namespace ks::cpu
