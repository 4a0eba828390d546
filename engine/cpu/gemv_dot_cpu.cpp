#include "engine/cpu/gemv_dot_cpu.h"

#include <cblas.h>

#include <algorithm>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ks::cpu {

namespace {

bool isDouble(const Params& p) { return p.get("PREC", 32) == 64; }

template <typename T>
void gemvNaiveT(const T* a, const T* x, T* y, const ProblemSize& s, int trans) {
  if (trans == 0) {
    for (uint64_t i = 0; i < s.m; ++i) {
      T acc = 0;
      for (uint64_t j = 0; j < s.n; ++j) acc += a[i * s.n + j] * x[j];
      y[i] = acc;
    }
  } else {
    std::fill(y, y + s.n, T(0));
    for (uint64_t i = 0; i < s.m; ++i)
      for (uint64_t j = 0; j < s.n; ++j) y[j] += a[i * s.n + j] * x[i];
  }
}

template <typename T>
T dotNaiveT(const T* x, const T* y, uint64_t n) {
  T acc = 0;
  for (uint64_t i = 0; i < n; ++i) acc += x[i] * y[i];
  return acc;
}

// Portable unrolled version: U independent accumulators break the add chain.
template <typename T, int U>
T dotUnrolled(const T* x, const T* y, uint64_t n) {
  T acc[U] = {};
  uint64_t i = 0;
  for (; i + U <= n; i += U)
    for (int u = 0; u < U; ++u) acc[u] += x[i + u] * y[i + u];
  T total = 0;
  for (int u = 0; u < U; ++u) total += acc[u];
  for (; i < n; ++i) total += x[i] * y[i];
  return total;
}

#if defined(__x86_64__)
template <int U>
__attribute__((target("avx2,fma"))) float dotAvx2(const float* x, const float* y, uint64_t n) {
  __m256 acc[U];
  for (int u = 0; u < U; ++u) acc[u] = _mm256_setzero_ps();
  uint64_t i = 0;
  for (; i + 8 * U <= n; i += 8 * U)
    for (int u = 0; u < U; ++u)
      acc[u] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8 * u), _mm256_loadu_ps(y + i + 8 * u), acc[u]);
  for (int u = 1; u < U; ++u) acc[0] = _mm256_add_ps(acc[0], acc[u]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc[0]);
  float total = 0;
  for (float l : lanes) total += l;
  for (; i < n; ++i) total += x[i] * y[i];
  return total;
}

template <int U>
__attribute__((target("avx2,fma"))) double dotAvx2(const double* x, const double* y, uint64_t n) {
  __m256d acc[U];
  for (int u = 0; u < U; ++u) acc[u] = _mm256_setzero_pd();
  uint64_t i = 0;
  for (; i + 4 * U <= n; i += 4 * U)
    for (int u = 0; u < U; ++u)
      acc[u] = _mm256_fmadd_pd(_mm256_loadu_pd(x + i + 4 * u), _mm256_loadu_pd(y + i + 4 * u), acc[u]);
  for (int u = 1; u < U; ++u) acc[0] = _mm256_add_pd(acc[0], acc[u]);
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, acc[0]);
  double total = 0;
  for (double l : lanes) total += l;
  for (; i < n; ++i) total += x[i] * y[i];
  return total;
}
#endif

template <typename T>
T dotSimdT(const T* x, const T* y, uint64_t n, int unroll) {
#if defined(__x86_64__)
  if (hasAvx2Fma()) switch (unroll) {
      case 1:
        return dotAvx2<1>(x, y, n);
      case 2:
        return dotAvx2<2>(x, y, n);
      case 4:
        return dotAvx2<4>(x, y, n);
      default:
        return dotAvx2<8>(x, y, n);
    }
#endif
  switch (unroll) {
    case 1:
      return dotUnrolled<T, 1>(x, y, n);
    case 2:
      return dotUnrolled<T, 2>(x, y, n);
    case 4:
      return dotUnrolled<T, 4>(x, y, n);
    default:
      return dotUnrolled<T, 8>(x, y, n);
  }
}

template <typename T>
T dotThreadsT(const T* x, const T* y, uint64_t n, unsigned threads) {
  threads = std::max(1u, std::min<unsigned>(threads, unsigned(std::max<uint64_t>(1, n / 4096))));
  std::vector<T> partial(threads, T(0));
  std::vector<std::thread> pool;
  const uint64_t chunk = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const uint64_t lo = std::min(n, t * chunk), hi = std::min(n, lo + chunk);
      partial[t] = dotSimdT(x + lo, y + lo, hi - lo, 4);
    });
  for (auto& th : pool) th.join();
  T total = 0;
  for (T p : partial) total += p;
  return total;
}

}  // namespace

bool hasAvx2Fma() {
#if defined(__x86_64__)
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
#else
  return false;
#endif
}

void gemvNaive(const Inputs& in, void* out, const ProblemSize& s, const Params& p) {
  const int trans = p.get("TRANS", 0);
  if (isDouble(p))
    gemvNaiveT(static_cast<const double*>(in[0]), static_cast<const double*>(in[1]), static_cast<double*>(out), s,
               trans);
  else
    gemvNaiveT(static_cast<const float*>(in[0]), static_cast<const float*>(in[1]), static_cast<float*>(out), s, trans);
}

void gemvOpenBlas(const Inputs& in, void* out, const ProblemSize& s, const Params& p) {
  const auto trans = p.get("TRANS", 0) ? CblasTrans : CblasNoTrans;
  if (isDouble(p))
    cblas_dgemv(CblasRowMajor, trans, int(s.m), int(s.n), 1.0, static_cast<const double*>(in[0]), int(s.n),
                static_cast<const double*>(in[1]), 1, 0.0, static_cast<double*>(out), 1);
  else
    cblas_sgemv(CblasRowMajor, trans, int(s.m), int(s.n), 1.0f, static_cast<const float*>(in[0]), int(s.n),
                static_cast<const float*>(in[1]), 1, 0.0f, static_cast<float*>(out), 1);
}

void dotNaive(const Inputs& in, void* out, const ProblemSize& s, const Params& p) {
  if (isDouble(p))
    *static_cast<double*>(out) = dotNaiveT(static_cast<const double*>(in[0]), static_cast<const double*>(in[1]), s.n);
  else
    *static_cast<float*>(out) = dotNaiveT(static_cast<const float*>(in[0]), static_cast<const float*>(in[1]), s.n);
}

void dotSimd(const Inputs& in, void* out, const ProblemSize& s, const Params& p) {
  const int unroll = p.get("UNROLL", 4);
  if (isDouble(p))
    *static_cast<double*>(out) =
        dotSimdT(static_cast<const double*>(in[0]), static_cast<const double*>(in[1]), s.n, unroll);
  else
    *static_cast<float*>(out) =
        dotSimdT(static_cast<const float*>(in[0]), static_cast<const float*>(in[1]), s.n, unroll);
}

void dotThreads(const Inputs& in, void* out, const ProblemSize& s, const Params& p) {
  const unsigned threads = unsigned(p.get("THREADS", 2));
  if (isDouble(p))
    *static_cast<double*>(out) =
        dotThreadsT(static_cast<const double*>(in[0]), static_cast<const double*>(in[1]), s.n, threads);
  else
    *static_cast<float*>(out) =
        dotThreadsT(static_cast<const float*>(in[0]), static_cast<const float*>(in[1]), s.n, threads);
}

void dotOpenBlas(const Inputs& in, void* out, const ProblemSize& s, const Params& p) {
  if (isDouble(p))
    *static_cast<double*>(out) =
        cblas_ddot(int(s.n), static_cast<const double*>(in[0]), 1, static_cast<const double*>(in[1]), 1);
  else
    *static_cast<float*>(out) =
        cblas_sdot(int(s.n), static_cast<const float*>(in[0]), 1, static_cast<const float*>(in[1]), 1);
}

}  // namespace ks::cpu
