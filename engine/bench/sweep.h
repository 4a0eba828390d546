#pragma once
// Sweeps: parsing sizes, shapes and tunables, and expanding them into a Plan.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/kernels/registry.h"

namespace ks {

struct PlanItem {
  std::string kernel;
  Params params;
  ProblemSize size;
  bool operator==(const PlanItem&) const = default;
};

struct Plan {
  std::vector<PlanItem> items;
  uint32_t reps = 20;
  uint32_t warmup = 3;
  // Warm-up also lasts at least this long, so clocks that dropped while the
  // GPU idled (e.g. during a CPU point) ramp up before timing starts.
  uint32_t warmup_ms = 200;
  uint64_t seed = 1;
  // Adaptive repetitions: after `reps`, keep timing until the median's 95%
  // confidence interval is within +-target_ci of it (e.g. 0.01), or the point
  // has been timed for budget_ms, or max_reps samples are in. 0 = exactly reps.
  double target_ci = 0;
  uint32_t max_reps = 1000;
  uint32_t budget_ms = 2000;
  // Bandwidth kernels whose inputs fit in `cache_bytes` would measure the
  // cache: their runs rotate among enough copies of the inputs that the data
  // touched between two uses of one copy exceeds it. Off: points that fit
  // are only marked cache-resident.
  bool rotate_inputs = true;
  uint64_t cache_bytes = 256ull << 20;
  // Drift detection (see drift.h): a short reference runs at the start,
  // between kernels (at most once per drift_interval_ms) and at the end; the
  // sweep is unstable when its median time moves by more than drift_threshold.
  bool drift_check = true;
  double drift_threshold = 0.03;
  uint32_t drift_interval_ms = 1000;
  // The dispatch watchdog: a submission that runs longer is stopped, its point
  // failed, the device recreated and the sweep goes on. 0: automatic, 5 s past
  // a pessimistic estimate of the point's run from its FLOP and byte counts.
  uint32_t dispatch_timeout_ms = 0;
  // Also time, for every GPU point, the upload of its inputs from host memory
  // and the download of its output (plan.reps samples each, after warm-up),
  // so that the kernel time can be shown next to the end-to-end time.
  bool with_transfers = false;
};

// "128,256,512", "64:4096:x2" (geometric), "256:2048:+256" (linear), mixed.
Result<std::vector<uint64_t>> parseSizeList(const std::string& text);
// "1024x768x512,3000x5000x4000" (M x N x K) or plain sizes for squares.
Result<std::vector<ProblemSize>> parseMnkList(const std::string& text);
// "N", "MxN" or "MxNxK" items and ranges of N; each family maps them (see problemSize()).
Result<std::vector<SizeSpec>> parseSizeSpecs(const std::string& text);
Result<std::vector<WorkgroupShape>> parseShapeList(const std::string& text);
// "BK=4,8" -> {"BK", {4, 8}}
Result<std::pair<std::string, std::vector<int>>> parseParamSweep(const std::string& text);

struct SweepSpec {
  std::vector<const KernelInfo*> kernels;
  std::vector<SizeSpec> sizes;
  std::vector<WorkgroupShape> shapes;  // empty: each kernel's default
  std::map<std::string, std::vector<int>> params;
  // Tunables not swept take this device's defaults where they depend on it.
  const vk::DeviceInfo* device = nullptr;
};

// Sizes outermost (inputs and the reference are shared by every kernel at a
// size). A size form a kernel's family does not take is left out for that
// kernel; a kernel no size fits is left out with a note (an error when no
// kernel is left).
Result<std::vector<PlanItem>> buildPlan(const SweepSpec& spec, std::vector<std::string>* notes = nullptr);

}  // namespace ks
