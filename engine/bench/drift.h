#pragma once
// Drift detection: a short, fixed reference workload is timed at the start of
// a sweep, between kernels and at the end. If its median time moves by more
// than a threshold, the machine changed under the sweep (clocks, thermal
// throttling, another job) and its points may not be comparable.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/bench/statistics.h"
#include "engine/result.h"
#include "engine/vulkan/context.h"

namespace ks {

struct DriftCheck {
  std::string when;                // "start", "between" (kernels) or "end"
  size_t after_points = 0;         // points finished before the check
  std::vector<double> samples_ns;  // the reference's timed runs
  Stats stats;                     // of samples_ns
};

struct DriftReport {
  std::string reference;  // what ran, e.g. "peak_fma.comp fp32, 16 workgroups x 64 iterations"
  std::string clock;      // "gpu_timestamp" or "wall"
  double threshold = 0.03;
  std::vector<DriftCheck> checks;
  double max_change = 0;   // largest |median_i / median_0 - 1|
  size_t worst_check = 0;  // index into checks of that largest change
  bool unstable = false;   // max_change > threshold (needs 2+ checks)
  std::string error;       // why the reference could not run (the checks before it still count)

  // The signed change of checks[i] against the first check (0 without one).
  double changeOf(size_t i) const;
  // One line for people: "stable: reference time within +-0.8% over 5 checks
  // (threshold 3%)" or "UNSTABLE: reference time moved +4.2% by check 3 (after
  // 12 points, between kernels); threshold 3%". Checks count from 1 here.
  std::string summary() const;
};

inline constexpr const char* kDriftWhen[] = {"start", "between", "end"};
bool isDriftWhen(const std::string& when);

// Pure: change relative to the first check's median; unstable when the
// largest change exceeds `threshold` (a change equal to it, up to rounding,
// is not more than it). Fewer than 2 checks are never unstable.
DriftReport evaluateDrift(std::string reference, std::vector<DriftCheck> checks, double threshold);

// The reference workload. With a device: a small fixed dispatch of
// shaders/peak_fma.comp (fp32), its iteration count calibrated once, at the
// first check, to about `target_ms` per run and kept fixed afterwards; GPU
// timestamps where the device has them. Without one: a fixed C++ FMA loop on
// the host, timed with steady_clock.
class DriftReference {
 public:
  struct Options {
    uint32_t untimed_runs = 2;
    uint32_t timed_runs = 15;
    double target_ms = 0.5;  // one run; calibrated once
  };

  explicit DriftReference(vk::Device* device);  // nullptr: the CPU loop
  DriftReference(vk::Device* device, Options options);
  ~DriftReference();

  // One check: at least `untimed_runs` and `warmup_ms` of untimed runs (clocks
  // ramp up after the device idled), then `timed_runs` timed ones. Fails with a
  // reason, never throws; a cancelled check fails with "cancelled".
  Result<DriftCheck> check(const std::string& when, size_t after_points, uint32_t warmup_ms,
                           const std::atomic<bool>& cancel);

  std::string description() const;  // what runs, once calibrated
  std::string clock() const;        // "gpu_timestamp" or "wall"

 private:
  struct Gpu;
  Result<std::vector<double>> runGpu(uint32_t warmup_ms, const std::atomic<bool>& cancel);
  Result<std::vector<double>> runCpu(uint32_t warmup_ms, const std::atomic<bool>& cancel);

  vk::Device* device_;
  Options options_;
  std::unique_ptr<Gpu> gpu_;  // pipeline, sink and recorded dispatch, made at the first check
  uint64_t iterations_ = 0;   // 0 until calibrated
};

}  // namespace ks
