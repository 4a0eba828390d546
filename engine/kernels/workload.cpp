#include "engine/kernels/workload.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace ks {

namespace {

template <typename T>
void fillRandomT(std::vector<T>& v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<T> mag(T(1) / 64, T(1));
  for (auto& x : v) x = (rng() & 1) ? mag(rng) : -mag(rng);
}

template <typename T>
std::vector<uint8_t> randomBytes(uint64_t count, uint64_t seed) {
  std::vector<T> v(count);
  fillRandomT(v, seed);
  std::vector<uint8_t> bytes(count * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

template <typename T>
double maxAbs(const std::vector<uint8_t>& bytes) {
  const T* p = reinterpret_cast<const T*>(bytes.data());
  double m = 0;
  for (size_t i = 0; i < bytes.size() / sizeof(T); ++i) m = std::max(m, std::fabs(double(p[i])));
  return m;
}

template <typename T>
double at(const void* data, size_t i) {
  return double(static_cast<const T*>(data)[i]);
}

double valueAt(const void* data, size_t i, int precision) {
  return precision == 64 ? at<double>(data, i) : at<float>(data, i);
}

// gemv reference in double: y = A x (trans 0) or y = A^T x (trans 1).
template <typename T>
std::vector<double> gemvReference(const Workload& w) {
  const T* a = reinterpret_cast<const T*>(w.inputs[0].data());
  const T* x = reinterpret_cast<const T*>(w.inputs[1].data());
  const uint64_t m = w.size.m, n = w.size.n;
  std::vector<double> y(w.output_count, 0.0);
  if (w.trans == 0) {
    for (uint64_t i = 0; i < m; ++i) {
      double acc = 0;
      for (uint64_t j = 0; j < n; ++j) acc += double(a[i * n + j]) * double(x[j]);
      y[i] = acc;
    }
  } else {
    for (uint64_t i = 0; i < m; ++i)
      for (uint64_t j = 0; j < n; ++j) y[j] += double(a[i * n + j]) * double(x[i]);
  }
  return y;
}

template <typename T>
std::vector<double> dotReference(const Workload& w, double* sum_sq) {
  const T* x = reinterpret_cast<const T*>(w.inputs[0].data());
  const T* y = reinterpret_cast<const T*>(w.inputs[1].data());
  double acc = 0, sq = 0;
  for (uint64_t i = 0; i < w.size.n; ++i) {
    const double p = double(x[i]) * double(y[i]);
    acc += p;
    sq += p * p;
  }
  if (sum_sq) *sum_sq = sq;
  return {acc};
}

}  // namespace

void fillRandom(std::vector<float>& v, uint64_t seed) { fillRandomT(v, seed); }
void fillRandom(std::vector<double>& v, uint64_t seed) { fillRandomT(v, seed); }

int precisionOf(const Params& p) { return p.get("PREC", 32); }

std::vector<const void*> Workload::inputPointers() const {
  std::vector<const void*> out;
  for (const auto& in : inputs) out.push_back(in.data());
  return out;
}

std::string Workload::key() const {
  return family + "/" + std::to_string(size.m) + "x" + std::to_string(size.n) + "x" + std::to_string(size.k) + "/" +
         std::to_string(precision) + "/" + std::to_string(trans) + "/" + std::to_string(seed);
}

std::string workloadKey(const KernelInfo& kernel, const ProblemSize& size, const Params& params, uint64_t seed) {
  Workload w;
  w.family = kernel.workload;
  w.size = size;
  w.seed = seed;
  w.precision = precisionOf(params);
  w.trans = kernel.workload == "gemv" ? params.get("TRANS", 0) : 0;
  return w.key();
}

double reductionTolerance(uint64_t inner, int precision) {
  const double u = precision == 64 ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23);
  return u * (8.0 * std::sqrt(double(inner)) + 4.0);
}

std::unique_ptr<Workload> makeWorkload(const KernelInfo& kernel, const ProblemSize& s, const Params& params,
                                       uint64_t seed) {
  auto w = std::make_unique<Workload>();
  w->family = kernel.workload;
  w->size = s;
  w->seed = seed;
  w->precision = precisionOf(params);
  // Each input gets its own stream, derived from the seed and the size.
  const uint64_t base = seed * 0x9E3779B97F4A7C15ull ^ (s.m << 40) ^ (s.n << 20) ^ s.k;
  const bool f64 = w->precision == 64;
  auto input = [&](uint64_t count, uint64_t salt) {
    return f64 ? randomBytes<double>(count, base ^ salt) : randomBytes<float>(count, base ^ salt);
  };
  auto amax = [&](size_t i) { return f64 ? maxAbs<double>(w->inputs[i]) : maxAbs<float>(w->inputs[i]); };
  if (w->family == "gemm") {
    w->inputs = {input(s.m * s.k, 0xA), input(s.k * s.n, 0xB)};
    w->output_count = s.m * s.n;
    w->inner = s.k;
  } else if (w->family == "gemv") {
    w->trans = params.get("TRANS", 0);
    const uint64_t in_len = w->trans ? s.m : s.n, out_len = w->trans ? s.n : s.m;
    w->inputs = {input(s.m * s.n, 0xA), input(in_len, 0xC)};
    w->output_count = out_len;
    w->inner = in_len;
  } else if (w->family == "dot") {
    w->inputs = {input(s.n, 0xD), input(s.n, 0xE)};
    w->output_count = 1;
    w->inner = s.n;
  }
  w->scale = std::sqrt(double(w->inner)) * amax(0) * amax(1);
  // A dot product of random signs can come out near zero: judge it against the
  // size of its terms, not only its value.
  if (w->family == "dot") w->norm_floor = w->scale / 3.0;
  return w;
}

const std::vector<double>& referenceOf(Workload& w) {
  if (w.has_reference) return w.reference;
  const bool f64 = w.precision == 64;
  if (w.family == "gemm") {
    // OpenBLAS sgemm on the same inputs (gemm is fp32 only).
    std::vector<float> c(w.output_count);
    const auto& s = w.size;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n), int(s.k), 1.0f,
                reinterpret_cast<const float*>(w.inputs[0].data()), int(s.k),
                reinterpret_cast<const float*>(w.inputs[1].data()), int(s.n), 0.0f, c.data(), int(s.n));
    w.reference.assign(c.begin(), c.end());
  } else if (w.family == "gemv") {
    w.reference = f64 ? gemvReference<double>(w) : gemvReference<float>(w);
  } else if (w.family == "dot") {
    w.reference = f64 ? dotReference<double>(w, nullptr) : dotReference<float>(w, nullptr);
  }
  w.has_reference = true;
  return w.reference;
}

Verification verifyOutput(const KernelInfo& kernel, Workload& w, const void* output, const Params& params) {
  const double tol = kernel.tolerance ? kernel.tolerance(w.size, params) : reductionTolerance(w.inner, w.precision);
  if (kernel.reference_is_self && w.family == "gemm") {
    // The reference cannot check itself: compare sampled entries with a
    // double-precision dot product instead.
    std::mt19937_64 rng(w.seed ^ 0x5EED);
    const size_t samples = std::min<size_t>(256, w.output_count);
    const float* a = reinterpret_cast<const float*>(w.inputs[0].data());
    const float* b = reinterpret_cast<const float*>(w.inputs[1].data());
    std::vector<float> got(samples), want(samples);
    for (size_t i = 0; i < samples; ++i) {
      const uint64_t idx = samples == w.output_count ? i : rng() % w.output_count;
      const uint64_t row = idx / w.size.n, col = idx % w.size.n;
      double acc = 0;
      for (uint64_t k = 0; k < w.size.k; ++k) acc += double(a[row * w.size.k + k]) * double(b[k * w.size.n + col]);
      got[i] = static_cast<const float*>(output)[idx];
      want[i] = float(acc);
    }
    return judge(relativeFrobeniusError(got.data(), want.data(), samples),
                 maxScaledError(got.data(), want.data(), samples, w.scale), tol,
                 std::to_string(samples) + " sampled entries vs a double-precision dot product");
  }
  const auto& ref = referenceOf(w);
  double diff = 0, norm = 0, worst = 0;
  for (size_t i = 0; i < w.output_count; ++i) {
    const double v = valueAt(output, i, w.precision);
    if (!std::isfinite(v)) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      return judge(nan, nan, tol, "the output holds NaN or Inf");
    }
    const double d = v - ref[i];
    diff += d * d;
    norm += ref[i] * ref[i];
    worst = std::max(worst, std::fabs(d));
  }
  const double denom = std::max(std::sqrt(norm), w.norm_floor);
  const double rel = denom > 0 ? std::sqrt(diff) / denom : std::sqrt(diff);
  const std::string what =
      w.family == "gemm" ? "all entries vs OpenBLAS sgemm" : "all entries vs a double-precision reference";
  return judge(rel, w.scale > 0 ? worst / w.scale : worst, tol, what);
}

}  // namespace ks
