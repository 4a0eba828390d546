#pragma once
// Verification of a result against a reference.
#include <cstddef>
#include <cstdint>
#include <string>

namespace ks {

// Unverified: the kernel ran but has nothing to be checked against (a kernel
// file's custom workload); never shown as ok.
enum class VerifyStatus { Ok, Failed, Skipped, Unverified };
std::string verifyStatusName(VerifyStatus s);

struct Verification {
  VerifyStatus status = VerifyStatus::Skipped;
  double rel_error = 0;  // relative Frobenius error ||C - R|| / ||R||; NaN if C has NaN/Inf
  double max_error = 0;  // max |C - R| over all elements / the size-based scale (catches one bad element)
  double tolerance = 0;  // both errors must be within it
  std::string note;      // what was compared, or why it was skipped
};

// ||c - ref||_F / ||ref||_F in double; NaN when c holds a NaN or Inf.
double relativeFrobeniusError(const float* c, const float* ref, size_t count);

// Tolerance for a length-K fp32 dot-product result: rounding grows like sqrt(K)
// for random data; the factor 8 leaves room for a different summation order.
double gemmTolerance(uint64_t k, double unit_roundoff = 1.0 / (1 << 23));

// max |c - ref| / scale; NaN when c holds a NaN or Inf. For gemm the scale is
// sqrt(K) * max|A| * max|B|, the typical magnitude of one output.
double maxScaledError(const float* c, const float* ref, size_t count, double scale);

Verification judge(double rel_error, double max_error, double tolerance, std::string note);

}  // namespace ks
