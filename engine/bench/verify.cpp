#include "engine/bench/verify.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ks {

std::string verifyStatusName(VerifyStatus s) {
  switch (s) {
    case VerifyStatus::Ok:
      return "ok";
    case VerifyStatus::Failed:
      return "failed";
    case VerifyStatus::Unverified:
      return "unverified";
    default:
      return "skipped";
  }
}

double relativeFrobeniusError(const float* c, const float* ref, size_t count) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(c[i])) return std::numeric_limits<double>::quiet_NaN();
    const double d = double(c[i]) - double(ref[i]);
    diff += d * d;
    norm += double(ref[i]) * double(ref[i]);
  }
  if (norm == 0) return diff == 0 ? 0 : std::numeric_limits<double>::infinity();
  return std::sqrt(diff / norm);
}

double gemmTolerance(uint64_t k, double unit_roundoff) { return unit_roundoff * (8.0 * std::sqrt(double(k)) + 4.0); }

double maxScaledError(const float* c, const float* ref, size_t count, double scale) {
  double worst = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(c[i])) return std::numeric_limits<double>::quiet_NaN();
    worst = std::max(worst, std::fabs(double(c[i]) - double(ref[i])));
  }
  return scale > 0 ? worst / scale : worst;
}

Verification judge(double rel_error, double max_error, double tolerance, std::string note) {
  Verification v;
  v.rel_error = rel_error;
  v.max_error = max_error;
  v.tolerance = tolerance;
  v.note = std::move(note);
  const bool ok =
      std::isfinite(rel_error) && rel_error <= tolerance && std::isfinite(max_error) && max_error <= tolerance;
  v.status = ok ? VerifyStatus::Ok : VerifyStatus::Failed;
  return v;
}

}  // namespace ks
