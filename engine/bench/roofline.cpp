#include "engine/bench/roofline.h"

#include <algorithm>

#include "engine/kernels/workload.h"

namespace ks {

double RooflineCeiling::attainable(double intensity) const {
  const double memory = intensity * bandwidth_gbps;
  if (compute_gflops <= 0) return memory;
  if (bandwidth_gbps <= 0) return compute_gflops;
  return std::min(compute_gflops, memory);
}

double arithmeticIntensity(const KernelInfo& kernel, const ProblemSize& size, const Params& params) {
  if (!kernel.flops || !kernel.bytes) return 0;
  const double bytes = kernel.bytes(size, params);
  return bytes > 0 ? kernel.flops(size) / bytes : 0;
}

std::optional<RooflineCeiling> ceilingFor(const KernelInfo& kernel, const Params& params, const DevicePeaks& peaks) {
  RooflineCeiling c;
  if (kernel.backend == Backend::Cpu) {
    c.cpu = true;
    c.bandwidth_gbps = peaks.cpuBandwidthGbps();
    if (precisionOf(params) == 32) {
      c.compute_gflops = peaks.cpuFp32Gflops();
      c.compute_name = "CPU fp32 FMA";
    }  // fp64: the memory roof only
  } else {
    c.bandwidth_gbps = peaks.bandwidthGbps();
    if (kernel.workload == "gemm16") {  // fp16 inputs on tensor cores, fp32 accumulation
      c.compute_gflops = peaks.coopmatGflops(32);
      c.compute_name = "coopmat fp16 -> fp32";
    } else if (precisionOf(params) == 32) {
      c.compute_gflops = peaks.fp32Gflops();
      c.compute_name = "fp32 FMA";
    }  // fp64: no measured compute peak, the memory roof still applies
  }
  if (c.compute_gflops <= 0 && c.bandwidth_gbps <= 0) return std::nullopt;
  return c;
}

std::optional<PeakFraction> fractionOfPeak(const Measurement& m, const DevicePeaks& peaks) {
  if (!m.trustworthy() || m.gflops <= 0) return std::nullopt;
  const KernelInfo* kernel = Registry::instance().find(m.item.kernel);
  if (!kernel) return std::nullopt;
  auto ceiling = ceilingFor(*kernel, m.item.params, peaks);
  if (!ceiling) return std::nullopt;
  PeakFraction f;
  f.intensity = arithmeticIntensity(*kernel, m.item.size, m.item.params);
  if (f.intensity <= 0) return std::nullopt;
  f.attainable = ceiling->attainable(f.intensity);
  if (f.attainable <= 0) return std::nullopt;
  const bool memory = ceiling->compute_gflops <= 0 || f.intensity * ceiling->bandwidth_gbps < ceiling->compute_gflops;
  f.bound = memory && ceiling->bandwidth_gbps > 0 ? "memory" : "compute";
  f.fraction = m.gflops / f.attainable;
  f.cpu = ceiling->cpu;
  return f;
}

}  // namespace ks
