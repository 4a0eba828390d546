#pragma once
// Measured peaks of a device and of the host CPU: what their arithmetic and
// memory can do at best, for the roofline and the "% of measured peak" of
// every point (GPU kernels against the device's, CPU kernels the host's).
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "engine/bench/statistics.h"
#include "engine/vulkan/context.h"

namespace ks {

struct PeakResult {
  // The device's: fp32_fma, fp16_fma, coopmat_16x8x16_f16_f32, copy_shader, copy_buffer, dispatch, submit;
  // the host CPU's: cpu_fp32_fma, cpu_triad, cpu_copy.
  std::string id;
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
  // The device's ceilings of the roofline: fp32 FMA, and the better of the two copies.
  double fp32Gflops() const { return valueOf("fp32_fma"); }
  double bandwidthGbps() const;
  // Best tensor-core rate for fp16 inputs with this accumulator (16 or 32 bits).
  double coopmatGflops(int acc_bits) const;
  // The host CPU's ceilings: fp32 FMA on all cores, and the better of STREAM triad and copy.
  double cpuFp32Gflops() const { return valueOf("cpu_fp32_fma"); }
  double cpuBandwidthGbps() const;
  bool hasCpuPeaks() const { return cpuFp32Gflops() > 0 || cpuBandwidthGbps() > 0; }
};

// Ids of the host CPU's peaks start with this ("cpu_fp32_fma").
inline constexpr const char* kHostPeakPrefix = "cpu_";
bool isHostPeak(const std::string& id);
// The unit a known peak id is measured in ("GFLOP/s", "GB/s", "us"); empty for
// an id this build does not know (a newer file's).
std::string peakUnitOf(const std::string& id);

struct PeakOptions {
  uint32_t reps = 15;        // timed runs per measurement (median)
  uint32_t warmup_ms = 200;  // clocks ramp up first
  double target_ms = 10;     // compute runs are scaled up to about this long
  uint64_t copy_bytes = 0;   // 0: 1 GiB on GPUs (within the device limits), 64 MiB on CPU devices
  uint32_t overhead_reps = 200;
  // The host CPU (all its hardware threads).
  uint32_t host_reps = 9;          // timed runs per measurement (median)
  double host_target_ms = 20;      // FMA runs are scaled up to about this long
  uint64_t host_stream_bytes = 0;  // the three triad arrays together; 0: at least 256 MiB and 8x the
                                   // last-level cache, within 1 GiB and a quarter of available memory
  uint32_t host_threads = 0;       // 0: one per hardware thread this process may use
};

// Measures every peak the device supports, then the host CPU's, in order;
// `each` sees each result as it lands. A peak the device cannot run is listed
// with the reason.
Result<DevicePeaks> measurePeaks(vk::Device& device, const PeakOptions& options, const std::atomic<bool>& cancel,
                                 const std::function<void(const PeakResult&)>& each = {});

// The host CPU's peaks alone (no Vulkan device needed): fp32 FMA on every
// hardware thread with the widest SIMD the CPU has (AVX-512F, AVX2+FMA or
// SSE), and STREAM triad and copy over buffers well past the last-level cache.
Result<DevicePeaks> measureHostPeaks(const PeakOptions& options, const std::atomic<bool>& cancel,
                                     const std::function<void(const PeakResult&)>& each = {});

}  // namespace ks
