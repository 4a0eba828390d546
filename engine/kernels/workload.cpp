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
  if (precision == 16) return double(halfToFloat(static_cast<const uint16_t*>(data)[i]));
  return precision == 64 ? at<double>(data, i) : at<float>(data, i);
}

std::vector<uint8_t> randomHalves(uint64_t count, uint64_t seed) {
  std::vector<float> v(count);
  fillRandomT(v, seed);
  std::vector<uint8_t> bytes(count * 2);
  auto* h = reinterpret_cast<uint16_t*>(bytes.data());
  for (uint64_t i = 0; i < count; ++i) h[i] = floatToHalf(v[i]);
  return bytes;
}

std::vector<float> halvesToFloats(const std::vector<uint8_t>& bytes) {
  const auto* h = reinterpret_cast<const uint16_t*>(bytes.data());
  std::vector<float> f(bytes.size() / 2);
  for (size_t i = 0; i < f.size(); ++i) f[i] = halfToFloat(h[i]);
  return f;
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

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0));  // Inf / NaN
  if (exp >= 31) return uint16_t(sign | 0x7c00u);                                         // overflow
  if (exp <= 0) {                                                                         // subnormal or zero
    if (exp < -10) return uint16_t(sign);
    mant |= 0x800000u;
    const uint32_t shift = uint32_t(14 - exp);
    uint32_t half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(exp) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) ++half;  // a carry into the exponent is right
  return uint16_t(half);
}

float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

int outputPrecisionOf(const KernelInfo& kernel, const Params& p) {
  if (kernel.workload == "gemm16") return p.get("OUT16", 0) ? 16 : 32;
  return precisionOf(p);
}

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
         std::to_string(precision) + "/" + std::to_string(trans) + "/" + std::to_string(relu) + "/" +
         std::to_string(seed);
}

std::string workloadKey(const KernelInfo& kernel, const ProblemSize& size, const Params& params, uint64_t seed) {
  Workload w;
  w.family = kernel.workload;
  // A custom workload's buffers are the kernel's own, and depend on its parameters.
  if (w.family == "custom") w.family += ":" + kernel.id + ":" + params.str(true);
  w.size = size;
  w.seed = seed;
  w.precision = kernel.workload == "gemm16" ? 16 : precisionOf(params);
  w.trans = kernel.workload == "gemv" ? params.get("TRANS", 0) : 0;
  w.relu = kernel.workload == "gemm16" && params.get("RELU", 0);
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
  w->precision = kernel.workload == "gemm16" ? 16 : precisionOf(params);
  w->output_precision = outputPrecisionOf(kernel, params);
  w->relu = kernel.workload == "gemm16" && params.get("RELU", 0);
  // Each input gets its own stream, derived from the seed and the size.
  const uint64_t base = seed * 0x9E3779B97F4A7C15ull ^ (s.m << 40) ^ (s.n << 20) ^ s.k;
  const bool f64 = w->precision == 64;
  auto input = [&](uint64_t count, uint64_t salt) {
    return f64 ? randomBytes<double>(count, base ^ salt) : randomBytes<float>(count, base ^ salt);
  };
  if (w->family == "custom") {
    // Seeded random floats in every input buffer; no reference to compute.
    w->precision = w->output_precision = 32;
    uint64_t salt = 0x10;
    for (const auto& b : kernel.buffers(s, params)) {
      if (b.role == BufferRole::Input) w->inputs.push_back(randomBytes<float>(b.bytes / 4, base ^ salt++));
      if (b.role == BufferRole::Output) w->output_count = b.bytes / 4;
    }
    return w;
  }
  if (w->family == "transfer" || w->family == "interleave") {
    // Raw bytes (the interleave reads them as 32-bit integers); a transfer is N bytes, an interleave N elements.
    const uint64_t bytes = w->family == "transfer" ? s.n : 4 * s.n;
    w->inputs = {randomBytes<float>(bytes / 4, base ^ 0x7)};
    w->output_count = bytes / 4;
    return w;
  }
  auto amax = [&](size_t i) {
    if (w->precision == 16) {
      double m = 0;
      for (float f : halvesToFloats(w->inputs[i])) m = std::max(m, std::fabs(double(f)));
      return m;
    }
    return f64 ? maxAbs<double>(w->inputs[i]) : maxAbs<float>(w->inputs[i]);
  };
  if (w->family == "gemm16") {
    // Generated in fp32 and rounded to fp16; the reference uses the rounded values.
    w->inputs = {randomHalves(s.m * s.k, base ^ 0xA), randomHalves(s.k * s.n, base ^ 0xB)};
    w->output_count = s.m * s.n;
    w->inner = s.k;
  } else if (w->family == "gemm") {
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
  if (w.family == "gemm16") {
    // OpenBLAS sgemm on the fp16 inputs widened to fp32 (exactly), then the fused ReLU.
    const auto a = halvesToFloats(w.inputs[0]), b = halvesToFloats(w.inputs[1]);
    std::vector<float> c(w.output_count);
    const auto& s = w.size;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n), int(s.k), 1.0f, a.data(), int(s.k),
                b.data(), int(s.n), 0.0f, c.data(), int(s.n));
    w.reference.resize(c.size());
    for (size_t i = 0; i < c.size(); ++i) w.reference[i] = w.relu ? std::max(0.0f, c[i]) : c[i];
  } else if (w.family == "gemm") {
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

Verification verifyBytes(const void* expected, const void* got, uint64_t bytes, const std::string& what) {
  const auto* a = static_cast<const uint8_t*>(expected);
  const auto* b = static_cast<const uint8_t*>(got);
  uint64_t wrong = 0, first = bytes;
  for (uint64_t i = 0; i < bytes; ++i)
    if (a[i] != b[i]) {
      if (!wrong) first = i;
      ++wrong;
    }
  const double fraction = bytes ? double(wrong) / double(bytes) : 0;
  std::string note = what + ": " + std::to_string(bytes) + " bytes compared, " + std::to_string(wrong) + " differ";
  if (wrong) note += " (the first at byte " + std::to_string(first) + ")";
  return judge(fraction, fraction, 0, note);
}

Verification verifyOutput(const KernelInfo& kernel, Workload& w, const void* output, const Params& params) {
  if (w.family == "transfer")
    return verifyBytes(w.inputs[0].data(), output, w.inputs[0].size(), "the copy vs the seeded source");
  if (w.family == "custom") {
    // Nothing to compare with; still say how much of the output was never written.
    size_t poisoned = 0;
    for (size_t i = 0; i < w.output_count; ++i) poisoned += std::isnan(static_cast<const float*>(output)[i]);
    Verification v;
    v.status = VerifyStatus::Unverified;
    v.rel_error = v.max_error = std::numeric_limits<double>::quiet_NaN();
    v.note = "custom workload: no reference; " + std::to_string(poisoned) + " of " + std::to_string(w.output_count) +
             " output floats still hold the NaN poison";
    return v;
  }
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
    const double v = valueAt(output, i, w.output_precision);
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
  const std::string what = w.family == "gemm"     ? "all entries vs OpenBLAS sgemm"
                           : w.family == "gemm16" ? "all entries vs OpenBLAS sgemm on the fp16-rounded inputs"
                                                  : "all entries vs a double-precision reference";
  return judge(rel, w.scale > 0 ? worst / w.scale : worst, tol, what);
}

}  // namespace ks
