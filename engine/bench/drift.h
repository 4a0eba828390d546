#pragma once
// Drift detection: a short, fixed reference workload is timed at the start of
// a sweep, between kernels and at the end. If its median time moves by more
// than a threshold, the machine changed under the sweep (clocks, thermal
// throttling, another job) and its points may not be comparable.
#include <atomic>
#include <cstdint>
#include <functional>
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

// When a check counts as drift. ThresholdOnly is how sessions before
// kernelscope 0.1's CI rule were judged (kept so they load with their verdict).
enum class DriftRule {
  ThresholdAndCi,  // the median moved past the threshold AND the two checks' 95% CIs of the median are disjoint
  ThresholdOnly,   // the median moved past the threshold
};
std::string driftRuleName(DriftRule rule);  // "threshold+ci", "threshold"
Result<DriftRule> parseDriftRule(const std::string& name);

struct DriftReport {
  std::string reference;  // what ran, e.g. "peak_fma.comp fp32, 16 workgroups x 64 iterations"
  std::string clock;      // "gpu_timestamp" or "wall"
  double threshold = 0.03;
  DriftRule rule = DriftRule::ThresholdAndCi;
  // The smallest change that counts on this reference, whatever the threshold:
  // how far it moves between checks on a quiet machine (0 on a GPU; on a CPU
  // device or the host loop, a shared machine's CPU speed moves the reference
  // by up to ~24% between checks; see DriftReference::noiseFloor()).
  double noise_floor = 0;
  std::vector<DriftCheck> checks;
  double max_change = 0;   // largest |median_i / median_0 - 1|
  size_t worst_check = 0;  // the largest significant change when unstable, else the largest change
  bool unstable = false;   // a check moved significantly under `rule` (needs 2+ checks)
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

// Pure: change relative to the first check's median; unstable when a check's
// change exceeds `threshold` (a change equal to it, up to rounding, is not
// more than it) and, under ThresholdAndCi, its median's 95% confidence
// interval does not overlap the first check's: a move inside the noise of the
// two checks is not evidence that the machine changed. Fewer than 2 checks are
// never unstable.
// The noise floor of the reference on `device` (nullptr: the host loop): 0 on
// a GPU, 25% on a CPU device or the host (see DriftReference::noiseFloor()).
double driftNoiseFloor(const vk::DeviceInfo* device);

// A change must also exceed `noise_floor` (see DriftReport).
DriftReport evaluateDrift(std::string reference, std::vector<DriftCheck> checks, double threshold,
                          DriftRule rule = DriftRule::ThresholdAndCi, double noise_floor = 0);

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
    double target_ms = 0.5;          // one run on a GPU; calibrated once
    double software_target_ms = 10;  // one run on a CPU device (lavapipe) or the host loop: longer than the
                                     // scheduler's favour to a thread that sleeps, so a load slows it
    uint32_t steady_window = 5;      // warm-up runs per window when waiting for a steady time
    double steady_tolerance = 0.02;  // two windows' medians within this: steady
    uint32_t max_warmup_ms = 1000;   // give up waiting for a steady time (the check still runs)
  };

  explicit DriftReference(vk::Device* device);  // nullptr: the CPU loop
  DriftReference(vk::Device* device, Options options);
  ~DriftReference();

  // One check: at least `untimed_runs` and `warmup_ms` of untimed runs, then
  // more until two consecutive windows of runs agree (GPU clocks ramp up after
  // the device idled during a CPU verification; OpenBLAS worker threads spin
  // for a while after the verification and take lavapipe's cores), at most
  // max_warmup_ms; then `timed_runs` timed ones. Fails with a reason, never
  // throws; a cancelled check fails with "cancelled".
  Result<DriftCheck> check(const std::string& when, size_t after_points, uint32_t warmup_ms,
                           const std::atomic<bool>& cancel);

  // The device was recreated: its pipeline and buffers are made again at the
  // next check, with the same calibrated iteration count.
  void deviceRecreated();

  std::string description() const;  // what runs, once calibrated
  // 0 on a GPU; 25% on a CPU device (lavapipe) or for the host loop, whose
  // time follows the shared CPU's speed (measured: up to +24% between checks on
  // an idle 2-core VM, docs/PERFORMANCE.md "Drift"; another job taking the
  // cores moves it by +50% to +100%).
  double noiseFloor() const;
  std::string clock() const;  // "gpu_timestamp" or "wall"

 private:
  struct Gpu;
  Result<std::vector<double>> runGpu(uint32_t warmup_ms, const std::atomic<bool>& cancel);
  Result<std::vector<double>> runCpu(uint32_t warmup_ms, const std::atomic<bool>& cancel);
  // Untimed runs of `runOnce` until the device is steady (see check()).
  Status warmUp(const std::function<Result<double>()>& runOnce, uint32_t warmup_ms);
  double targetMs() const;

  vk::Device* device_;
  Options options_;
  std::unique_ptr<Gpu> gpu_;  // pipeline, sink and recorded dispatch, made at the first check
  uint64_t iterations_ = 0;   // 0 until calibrated
};

}  // namespace ks
