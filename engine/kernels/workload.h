#pragma once
// A workload: the seeded inputs of a point, its reference result and how an
// output is judged against it. One per family (gemm, gemv, dot); kernels of a
// family at the same size and precision share it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/bench/verify.h"
#include "engine/kernels/registry.h"

namespace ks {

struct Workload {
  std::string family;
  ProblemSize size;
  uint64_t seed = 0;
  int precision = 32;                        // inputs: 16 half, 32 float, 64 double
  int output_precision = 32;                 // the output element (gemm16: OUT16 picks 16 or 32)
  bool relu = false;                         // gemm16: the reference applies max(0, x)
  int trans = 0;                             // gemv: 0 y = A x, 1 y = A^T x (x^T A)
  std::vector<std::vector<uint8_t>> inputs;  // host copies, in binding order
  size_t output_count = 0;                   // elements of the output
  double scale = 1;                          // typical magnitude of one output (for the worst-element error)
  double norm_floor = 0;                     // floor of ||reference|| in the relative error (a dot may be ~0)
  uint64_t inner = 1;                        // reduction length (K, N or M): the error grows with it
  std::vector<double> reference;             // computed on first use
  bool has_reference = false;

  uint64_t outputBytes() const { return output_count * uint64_t(output_precision / 8); }
  std::vector<const void*> inputPointers() const;
  std::string key() const;
};

int precisionOf(const Params& p);  // PREC tunable, 32 when absent
std::string workloadKey(const KernelInfo& kernel, const ProblemSize& size, const Params& params, uint64_t seed);
std::unique_ptr<Workload> makeWorkload(const KernelInfo& kernel, const ProblemSize& size, const Params& params,
                                       uint64_t seed);
const std::vector<double>& referenceOf(Workload& w);

// Judges a kernel's output (float or double, output_count elements).
Verification verifyOutput(const KernelInfo& kernel, Workload& w, const void* output, const Params& params);

// Byte-for-byte comparison (copies, the interleave's final buffer): the
// errors are the fraction of bytes that differ, the tolerance 0.
Verification verifyBytes(const void* expected, const void* got, uint64_t bytes, const std::string& what);

// Relative tolerance for a reduction of length `inner` in this precision.
double reductionTolerance(uint64_t inner, int precision);

// IEEE half precision, round to nearest even.
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
int outputPrecisionOf(const KernelInfo& kernel, const Params& p);

// Seeded values in [-1, -1/64] u [1/64, 1]: never zero, never tiny.
void fillRandom(std::vector<float>& v, uint64_t seed);
void fillRandom(std::vector<double>& v, uint64_t seed);

}  // namespace ks
