#pragma once
// The roofline: where a point sits against the device's measured ceilings.
// Intensity comes from the kernel's own counts (FLOP / bytes moved, each
// input read once and the output written once).
#include <optional>
#include <string>

#include "engine/bench/peaks.h"
#include "engine/bench/runner.h"
#include "engine/kernels/registry.h"

namespace ks {

struct RooflineCeiling {
  double compute_gflops = 0;  // 0: no measured compute peak applies (fp64, CPU kernels)
  std::string compute_name;   // "fp32 FMA", "coopmat fp16 -> fp32"
  double bandwidth_gbps = 0;  // the better of the two copies
  // The roof at an intensity: min(compute, intensity x bandwidth); bandwidth
  // alone where no compute peak applies.
  double attainable(double intensity) const;
};

// FLOP per byte from the kernel's counts; 0 when it moves no bytes or is unknown.
double arithmeticIntensity(const KernelInfo& kernel, const ProblemSize& size, const Params& params);

// The ceilings that bound a GPU kernel's points; nullopt for CPU kernels (the
// peaks are the GPU's) or when nothing was measured.
std::optional<RooflineCeiling> ceilingFor(const KernelInfo& kernel, const Params& params, const DevicePeaks& peaks);

struct PeakFraction {
  double fraction = 0;    // achieved GFLOP/s / attainable GFLOP/s at the point's intensity
  double intensity = 0;   // FLOP per byte
  double attainable = 0;  // GFLOP/s
  std::string bound;      // "compute" or "memory": which ceiling is lower at this intensity
};
// For an ok point of a GPU kernel with measured peaks; nullopt otherwise.
std::optional<PeakFraction> fractionOfPeak(const Measurement& m, const DevicePeaks& peaks);

}  // namespace ks
