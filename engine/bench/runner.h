#pragma once
// The Runner executes a Plan on the calling thread (the engine thread) and
// reports one Measurement per point through callbacks.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/bench/drift.h"
#include "engine/bench/statistics.h"
#include "engine/bench/sweep.h"
#include "engine/bench/verify.h"
#include "engine/kernels/workload.h"
#include "engine/vulkan/context.h"

namespace ks {

enum class PointStatus { Ok, Failed, Skipped, Cancelled };
std::string pointStatusName(PointStatus s);
Result<PointStatus> parsePointStatus(const std::string& s);

// Timings measured beside a point's samples and summarised like them:
// "upload" and "download" (Plan::with_transfers), "gpu", "cpu" and "sync"
// (the interleave experiment's split of a round).
struct TimedPart {
  std::string name;
  std::vector<double> samples_ns;
  Stats stats;  // of samples_ns
};

struct Measurement {
  PlanItem item;
  PointStatus status = PointStatus::Ok;
  std::string error;           // why it failed / was skipped
  std::string clock;           // "gpu_timestamp" or "wall"
  std::string method;          // how it ran where that depends on the device (e.g. which atomic)
  std::string pipeline_stats;  // the driver's statistics of the compiled code, "Register Count=128; ..."
  std::string shader_hash;     // FNV-1a of each dispatch's GLSL source and defines, "3f2a...;..."

  std::vector<double> samples_ns;  // one per timed repetition, on `clock`
  std::vector<double> wall_ns;     // host submit-to-fence beside GPU samples
  uint32_t warmup_runs = 0;        // untimed runs done before the samples
  uint32_t input_sets = 1;         // copies of the inputs the runs rotated among
  bool cache_resident = false;     // a bandwidth kernel whose data between reuses fits in plan.cache_bytes
  std::string stop_reason;         // why sampling stopped: reps, ci_target, time_budget, max_reps
  Stats stats;
  double gflops = 0;  // from the median
  double gbps = 0;    // from the median, each input read once and output written once
  Verification verification;
  std::vector<TimedPart> parts;
  std::string transfer_method;  // how the uploads and downloads ran (Plan::with_transfers)

  const TimedPart* part(const std::string& name) const;
  double partMedian(const std::string& name) const;  // 0 when absent
  bool hasTransfers() const { return part("upload") && part("download"); }
  double transferNs() const { return partMedian("upload") + partMedian("download"); }
  // The kernel's median plus the median upload and download: what one run costs from and to host memory.
  double endToEndNs() const { return stats.median + transferNs(); }

  bool trustworthy() const { return status == PointStatus::Ok && verification.status == VerifyStatus::Ok; }
  // Ran and was timed, and its output is right or has nothing to be checked
  // against (a custom workload's, shown as unverified): what charts, compare
  // and fits take. A failed verification is never timed.
  bool timed() const {
    return status == PointStatus::Ok &&
           (verification.status == VerifyStatus::Ok || verification.status == VerifyStatus::Unverified);
  }
};

// How many input sets a point rotates among, and whether its data still fits
// the cache between two uses of one set (too little memory for enough sets,
// or rotation off). Only bandwidth-bound kernels rotate.
struct InputRotation {
  uint32_t sets = 1;
  bool cache_resident = false;
};
// `set_bytes`: the memory one set of inputs occupies (slots aligned to cache lines).
inline constexpr uint64_t kMaxInputSets = 65536;
InputRotation inputRotation(bool memory_bound, uint64_t set_bytes, const Plan& plan, uint64_t max_sets);

// The watchdog's limit for one submission of a point, in seconds: the plan's
// dispatch_timeout_ms, or automatic (see Plan).
double dispatchTimeoutSeconds(const KernelInfo& kernel, const PlanItem& item, const Plan& plan,
                              const vk::DeviceInfo& device);

// Warm-up runs `plan.warmup` times and for at least `plan.warmup_ms`; a warm-up of 0 turns both off.
bool warmupWanted(const Plan& plan, uint32_t done, std::chrono::steady_clock::time_point start);
// Whether sampling is done, and why: the fixed count, or (adaptive) the
// confidence target, the time budget or the sample cap.
std::optional<std::string> samplingDone(const Plan& plan, const std::vector<double>& samples,
                                        std::chrono::steady_clock::time_point start);

// Faults a test injects to show that verification catches them.
enum class InjectedFault { None, CorruptCopy, CorruptInterleave };

struct RunCallbacks {
  std::function<void(const Measurement&)> point;
  std::function<void(size_t done, size_t total)> progress;
  std::function<void(const DriftReport&)> drift;  // after each drift check (or its failure)
};

class Runner {
 public:
  explicit Runner(vk::Device* device);  // nullptr: CPU kernels only
  ~Runner();

  // Runs every point in order; stops between dispatches once `cancel` is set.
  // With plan.drift_check, times the drift reference at the start, between
  // kernels and at the end (see Plan); a failed reference never fails the sweep.
  std::vector<Measurement> run(const Plan& plan, const RunCallbacks& callbacks, const std::atomic<bool>& cancel);
  // The drift checks of the last run() (empty when plan.drift_check was off).
  const DriftReport& drift() const { return drift_; }
  Measurement runPoint(const PlanItem& item, const Plan& plan, const std::atomic<bool>& cancel);
  // Why a point would be skipped before it runs (a size or shape the kernel
  // cannot take, no device, not enough host memory); nullopt when it can run.
  std::optional<std::string> whySkipped(const PlanItem& item) const;
  // After runPoint: when the point lost or hung the device (the watchdog),
  // recreates it so that later points run, and says so in m.error. False when
  // the device could not be recreated (m.error says why).
  bool recoverDevice(Measurement& m);
  // Tests only: damages the data of transfer and interleave points after they ran.
  void injectFault(InjectedFault fault) { fault_ = fault; }

 private:
  Workload& workload(const KernelInfo& kernel, const PlanItem& item, const Plan& plan);
  Measurement runGpu(const KernelInfo& kernel, const PlanItem& item, const Plan& plan, const std::atomic<bool>& cancel);
  Measurement runCpu(const KernelInfo& kernel, const PlanItem& item, const Plan& plan, const std::atomic<bool>& cancel);
  Measurement runTransfer(const KernelInfo& kernel, const PlanItem& item, const Plan& plan,
                          const std::atomic<bool>& cancel);
  Measurement runInterleave(const KernelInfo& kernel, const PlanItem& item, const Plan& plan,
                            const std::atomic<bool>& cancel);
  void finish(Measurement& m, const KernelInfo& kernel, Workload& w, const void* output);
  // Plan::with_transfers: times uploads of the inputs into `buffers` (slot 0 of rotated ones).
  // An input buffer and the bytes of the workload that go into it.
  struct UploadTarget {
    vk::Buffer* buffer = nullptr;
    const uint8_t* data = nullptr;
    uint64_t bytes = 0;
  };
  Status timeUploads(Measurement& m, const Plan& plan, const std::vector<UploadTarget>& inputs);
  // ... and downloads of the output into `out`, the last of which is what gets verified.
  Status timeDownloads(Measurement& m, const Plan& plan, const vk::Buffer& output, std::vector<uint8_t>& out,
                       int output_precision);

  vk::Device* device_;
  std::unique_ptr<Workload> workload_;  // the inputs of the last point (shared by kernels of a size)
  DriftReport drift_;
  InjectedFault fault_ = InjectedFault::None;
};

struct DispatchOverhead {
  struct Wait {
    std::string mode;  // "fence", "spin", "timeline"
    Stats submit;      // an empty vkQueueSubmit, submit to signalled, in ns
    Stats dispatch;    // one 1x1x1 dispatch of an empty shader (pre-recorded), submit to signalled, in ns
  };
  std::vector<Wait> waits;  // every wait the device offers; the fence wait (the default) first
  Stats submit;             // the fence wait's
  Stats dispatch;
  const Wait& fastest() const;  // by the dispatch's median
};
std::string waitModeName(vk::Device::WaitMode mode);
// Fixed costs, after 10 warm-up round trips each, with each way of waiting.
Result<DispatchOverhead> measureDispatchOverhead(vk::Device& device, uint32_t reps);

}  // namespace ks
