#pragma once
// The roofline: where a point sits against the measured ceilings of what ran
// it: GPU kernels under the Vulkan device's, CPU kernels under the host CPU's.
// Intensity comes from the kernel's own counts (FLOP / bytes moved, each
// input read once and the output written once).
#include <optional>
#include <string>

#include "engine/bench/peaks.h"
#include "engine/bench/runner.h"
#include "engine/kernels/registry.h"

namespace ks {

struct RooflineCeiling {
  double compute_gflops = 0;  // 0: no measured compute peak applies (fp64)
  std::string compute_name;   // "fp32 FMA", "coopmat fp16 -> fp32", "CPU fp32 FMA"
  double bandwidth_gbps = 0;  // GPU: the better of the two copies; CPU: of STREAM triad and copy
  bool cpu = false;           // the host CPU's roofs (a CPU kernel)
  // The roof at an intensity: min(compute, intensity x bandwidth); bandwidth
  // alone where no compute peak applies.
  double attainable(double intensity) const;
};

// FLOP per byte from the kernel's counts; 0 when it moves no bytes or is unknown.
double arithmeticIntensity(const KernelInfo& kernel, const ProblemSize& size, const Params& params);

// The ceilings that bound a kernel's points: the device's for GPU kernels, the
// host CPU's for CPU kernels (fp32 FMA for fp32, memory for all); nullopt when
// none of those was measured (e.g. a session from before CPU peaks).
std::optional<RooflineCeiling> ceilingFor(const KernelInfo& kernel, const Params& params, const DevicePeaks& peaks);

struct PeakFraction {
  double fraction = 0;    // achieved GFLOP/s / attainable GFLOP/s at the point's intensity
  double intensity = 0;   // FLOP per byte
  double attainable = 0;  // GFLOP/s
  std::string bound;      // "compute" or "memory": which ceiling is lower at this intensity
  bool cpu = false;       // against the host CPU's roofs (a CPU kernel), else the device's
};
// For an ok point whose kernel has measured ceilings (ceilingFor); nullopt otherwise.
std::optional<PeakFraction> fractionOfPeak(const Measurement& m, const DevicePeaks& peaks);

}  // namespace ks
