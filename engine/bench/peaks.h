#pragma once
// Measured peaks of a device: what its arithmetic and memory can do at best,
// for the roofline and the "% of measured peak" of every point.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "engine/bench/statistics.h"
#include "engine/vulkan/context.h"

namespace ks {

struct PeakResult {
  std::string id;     // fp32_fma, fp16_fma, coopmat_16x8x16_f16_f32, copy_shader, copy_buffer, dispatch, submit
  std::string title;  // what was measured, for people
  std::string unit;   // "GFLOP/s", "GB/s" or "us"
  double value = 0;   // from the median time; 0 = not measured (see note)
  double cv = 0;      // of the timed runs
  uint32_t runs = 0;  // timed runs behind the median
  std::string note;   // how it ran (sizes, groups), or why it was not measured

  bool measured() const { return value > 0; }
};

struct DevicePeaks {
  std::string measured_at;  // ISO 8601 UTC
  std::vector<PeakResult> results;

  const PeakResult* find(const std::string& id) const;
  double valueOf(const std::string& id) const;  // 0 when absent or not measured
  // The ceilings of the roofline: fp32 FMA, and the better of the two copies.
  double fp32Gflops() const { return valueOf("fp32_fma"); }
  double bandwidthGbps() const;
  // Best tensor-core rate for fp16 inputs with this accumulator (16 or 32 bits).
  double coopmatGflops(int acc_bits) const;
};

struct PeakOptions {
  uint32_t reps = 15;        // timed runs per measurement (median)
  uint32_t warmup_ms = 200;  // clocks ramp up first
  double target_ms = 10;     // compute runs are scaled up to about this long
  uint64_t copy_bytes = 0;   // 0: 1 GiB on GPUs (within the device limits), 64 MiB on CPU devices
  uint32_t overhead_reps = 200;
};

// Measures every peak the device supports, in order; `each` sees each result
// as it lands. A peak the device cannot run is listed with the reason.
Result<DevicePeaks> measurePeaks(vk::Device& device, const PeakOptions& options, const std::atomic<bool>& cancel,
                                 const std::function<void(const PeakResult&)>& each = {});

}  // namespace ks
