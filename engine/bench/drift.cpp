#include "engine/bench/drift.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>

#include "engine/bench/warmup.h"
#include "engine/kernels/registry.h"

namespace ks {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// "+4.2%", "0.8%"; small changes keep two significant digits instead of
// rounding to 0.0% (a threshold of 0.001% must still be readable).
std::string percent(double fraction, bool sign) {
  const double p = 100 * fraction;
  const bool small = p != 0 && std::fabs(p) < 0.1;
  char buf[32];
  if (sign)
    std::snprintf(buf, sizeof buf, small ? "%+.2g%%" : "%+.1f%%", p);
  else
    std::snprintf(buf, sizeof buf, small ? "%.2g%%" : "%.1f%%", p);
  return buf;
}

std::string thresholdText(double threshold) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%%", 100 * threshold);
  return buf;
}

std::string whenText(const std::string& when) {
  if (when == "start") return "at the start";
  if (when == "between") return "between kernels";
  if (when == "end") return "at the end";
  return when;
}

std::string firstLine(const std::string& s) {
  const auto eol = s.find('\n');
  return eol == std::string::npos ? s : s.substr(0, eol) + " ...";
}

// The host reference: 8 independent multiply-add chains, so the issue rate
// (not one chain's latency) bounds it, as in peak_fma.comp. m and a come from
// volatiles so nothing folds; |m| < 1 keeps the values finite and normal.
volatile float g_cpu_mul = 0.9990234375f;
volatile float g_cpu_add = 0.0009765625f;
volatile float g_cpu_sink = 0;

[[gnu::noinline]] float cpuFmaLoop(uint64_t iterations, float mul, float add) {
  float acc[8];
  for (int c = 0; c < 8; ++c) acc[c] = 0.0625f * float(c);
  for (uint64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < 8; ++c) acc[c] = acc[c] * mul + add;
  float sum = 0;
  for (float a : acc) sum += a;
  return sum;
}

double timeCpuLoop(uint64_t iterations) {
  const float mul = g_cpu_mul, add = g_cpu_add;
  const auto t0 = Clock::now();
  g_cpu_sink = cpuFmaLoop(iterations, mul, add);
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

double medianOf(std::vector<double> v) { return computeStats(std::move(v)).median; }

constexpr uint64_t kMaxIterations = 1ull << 22;

// Workgroups of 256 in the reference dispatch. Small on purpose: it should cost
// little next to the sweep, and clocks and thermal state are the whole chip's.
// On a CPU device (lavapipe) one workgroup, run by one of its threads: spread
// over every core, the reference doubled whenever anything else ran on one of
// them for a moment (a daemon, OpenBLAS's threads spinning after a
// verification), which is noise; on one core it slows only when the machine
// has no free core left, which is a change worth flagging.
uint32_t referenceGroups(const vk::DeviceInfo& info) { return info.isSoftware() ? 1 : 64; }

// The next iteration count while calibrating: scaled towards the target,
// at least doubled (the first probes are dominated by fixed costs).
uint64_t grown(uint64_t iterations, double median_ns, double target_ns) {
  const double factor = std::clamp(target_ns / std::max(median_ns, 1.0), 2.0, 64.0);
  return std::min<uint64_t>(kMaxIterations, uint64_t(double(iterations) * factor));
}

}  // namespace

std::string driftRuleName(DriftRule rule) { return rule == DriftRule::ThresholdOnly ? "threshold" : "threshold+ci"; }

Result<DriftRule> parseDriftRule(const std::string& name) {
  for (DriftRule r : {DriftRule::ThresholdAndCi, DriftRule::ThresholdOnly})
    if (driftRuleName(r) == name) return r;
  return makeError("unknown drift rule '" + name + "' (expected threshold+ci or threshold)");
}

bool isDriftWhen(const std::string& when) {
  return std::find(std::begin(kDriftWhen), std::end(kDriftWhen), when) != std::end(kDriftWhen);
}

double DriftReport::changeOf(size_t i) const {
  if (i >= checks.size() || !(checks[0].stats.median > 0)) return 0;
  return checks[i].stats.median / checks[0].stats.median - 1;
}

std::string DriftReport::summary() const {
  std::string text;
  std::string limit = thresholdText(threshold);
  if (noise_floor > threshold) limit += ", noise floor " + thresholdText(noise_floor);  // the floor is what counts
  if (checks.empty()) {
    text = "not checked: " + (error.empty() ? std::string("the reference did not run") : firstLine(error));
    return text;
  }
  if (checks.size() < 2) {
    text = "too few checks to judge drift: 1 (needs 2 or more; threshold " + limit + ")";
  } else if (unstable) {
    const DriftCheck& worst = checks[worst_check];
    text = "UNSTABLE: reference time moved " + percent(changeOf(worst_check), true) + " by check " +
           std::to_string(worst_check + 1) + " (after " + std::to_string(worst.after_points) +
           (worst.after_points == 1 ? " point, " : " points, ") + whenText(worst.when) + "); threshold " + limit;
  } else {
    text = "stable: reference time within +-" + percent(max_change, false) + " over " + std::to_string(checks.size()) +
           " checks (threshold " + limit + ")";
    if (max_change > threshold * (1 + 1e-9)) {
      text += "; the largest move (" + percent(changeOf(worst_check), true) + ", check " +
              std::to_string(worst_check + 1) + ") is within ";
      text += max_change <= noise_floor * (1 + 1e-9)
                  ? "the reference's noise floor on this device (" + thresholdText(noise_floor) + ")"
                  : std::string("the checks' noise: their 95% CIs overlap");
    }
  }
  if (!error.empty()) text += "; then the reference failed: " + firstLine(error);
  return text;
}

DriftReport evaluateDrift(std::string reference, std::vector<DriftCheck> checks, double threshold, DriftRule rule,
                          double noise_floor) {
  DriftReport r;
  r.reference = std::move(reference);
  r.threshold = threshold;
  r.rule = rule;
  r.noise_floor = noise_floor;
  r.checks = std::move(checks);
  if (r.checks.size() < 2 || !(r.checks[0].stats.median > 0)) return r;
  const Stats& first = r.checks[0].stats;
  double worst_significant = -1;
  for (size_t i = 1; i < r.checks.size(); ++i) {
    const double change = std::fabs(r.changeOf(i));
    if (change > r.max_change) {
      r.max_change = change;
      if (worst_significant < 0) r.worst_check = i;
    }
    // A relative 1e-9 of slack: 100 ns -> 103 ns is a change of exactly 3%,
    // though it computes as 0.030000000000000027.
    const bool past_threshold = change > std::max(threshold, noise_floor) * (1 + 1e-9);
    const Stats& now = r.checks[i].stats;
    const bool separated = now.ci_low > first.ci_high || now.ci_high < first.ci_low;
    if (past_threshold && (rule == DriftRule::ThresholdOnly || separated) && change > worst_significant) {
      worst_significant = change;
      r.worst_check = i;
      r.unstable = true;
    }
  }
  return r;
}

// ---------------------------------------------------------------- the reference

void DriftReference::deviceRecreated() { gpu_.reset(); }

double driftNoiseFloor(const vk::DeviceInfo* device) { return !device || device->isSoftware() ? 0.25 : 0.0; }

double DriftReference::noiseFloor() const { return driftNoiseFloor(device_ ? &device_->info() : nullptr); }

double DriftReference::targetMs() const {
  return !device_ || device_->info().isSoftware() ? options_.software_target_ms : options_.target_ms;
}

Status DriftReference::warmUp(const std::function<Result<double>()>& runOnce, uint32_t warmup_ms) {
  const auto start = Clock::now();
  for (uint32_t runs = 0; runs < options_.untimed_runs || msSince(start) < warmup_ms; ++runs)
    if (auto t = runOnce(); !t) return t.error();
  // Then until steady: a device still ramping up (or still shared with
  // threads that spin after a verification) drifts between windows.
  SteadyOptions steady;
  steady.window_runs = options_.steady_window;
  steady.tolerance = options_.steady_tolerance;
  steady.max_ms = options_.max_warmup_ms;
  auto runs = warmUntilSteady(runOnce, steady);
  if (!runs) return runs.error();
  return Ok{};
}

struct DriftReference::Gpu {
  const vk::Pipeline* pipeline = nullptr;
  std::optional<vk::Buffer> sink;
  std::unique_ptr<vk::TimedDispatch> dispatch;  // recorded for the current iteration count
  uint32_t groups = 0;
  bool timestamps = false;
};

DriftReference::DriftReference(vk::Device* device) : DriftReference(device, Options{}) {}
DriftReference::DriftReference(vk::Device* device, Options options) : device_(device), options_(options) {}
DriftReference::~DriftReference() = default;

std::string DriftReference::clock() const { return device_ && device_->info().timestamps ? "gpu_timestamp" : "wall"; }

std::string DriftReference::description() const {
  const std::string iterations = iterations_ ? std::to_string(iterations_) + " iterations" : "not calibrated yet";
  if (!device_) return "C++ FMA loop on the host, 8 chains x " + iterations;
  const uint32_t groups = referenceGroups(device_->info());
  return "peak_fma.comp fp32, " + std::to_string(groups) + (groups == 1 ? " workgroup x " : " workgroups x ") +
         iterations;
}

Result<DriftCheck> DriftReference::check(const std::string& when, size_t after_points, uint32_t warmup_ms,
                                         const std::atomic<bool>& cancel) {
  Result<std::vector<double>> samples = makeError("not run");
  try {
    samples = device_ ? runGpu(warmup_ms, cancel) : runCpu(warmup_ms, cancel);
  } catch (const std::exception& e) {
    return makeError(std::string("the reference threw: ") + e.what());
  }
  if (!samples) return samples.error();
  DriftCheck c;
  c.when = when;
  c.after_points = after_points;
  c.samples_ns = std::move(*samples);
  c.stats = computeStats(c.samples_ns);
  return c;
}

Result<std::vector<double>> DriftReference::runGpu(uint32_t warmup_ms, const std::atomic<bool>& cancel) {
  vk::Device& device = *device_;
  if (device.lost()) return makeError("the device was lost");
  device.setDispatchTimeout(10);  // its runs take milliseconds
  if (!gpu_) {
    auto gpu = std::make_unique<Gpu>();
    vk::PipelineDesc desc;
    desc.name = "peak_fma.comp";
    desc.source = shaderSource(desc.name);
    if (desc.source.empty()) return makeError("shader peak_fma.comp is not embedded in this build");
    desc.defines = {{"FP16", "0"}, {"CHAINS", "8"}};
    desc.buffer_count = 1;
    desc.push_constant_bytes = 16;
    auto pipeline = device.pipeline(desc);
    if (!pipeline) return pipeline.error();
    gpu->pipeline = *pipeline;
    gpu->groups = referenceGroups(device.info());
    gpu->timestamps = device.info().timestamps;
    auto sink = device.createBuffer(uint64_t(gpu->groups) * 256 * 4, vk::Placement::DeviceLocal, "the drift sink");
    if (!sink) return sink.error();
    gpu->sink = std::move(*sink);
    gpu_ = std::move(gpu);
  }
  auto record = [&](uint64_t iterations) -> Status {
    struct {
      float mul, add;
      uint32_t iterations, unused;
    } args{0.9990234375f, 0.0009765625f, uint32_t(iterations), 0};
    auto d = device.prepareDispatch(*gpu_->pipeline, {&*gpu_->sink}, &args, {gpu_->groups, 1, 1});
    if (!d) return d.error();
    gpu_->dispatch = std::move(*d);
    return Ok{};
  };
  auto runOnce = [&]() -> Result<double> {
    if (cancel.load()) return makeError("cancelled");
    auto t = gpu_->dispatch->run();
    if (!t) return t.error();
    const double ns = gpu_->timestamps ? t->gpu_ns : t->wall_ns;
    if (!(ns > 0)) return makeError("the timer did not advance over the reference dispatch");
    return ns;
  };

  uint64_t iterations = iterations_ ? iterations_ : 8;
  if (!gpu_->dispatch)
    if (auto st = record(iterations); !st) return st.error();
  if (iterations_ != 0) {
    if (auto st = warmUp(runOnce, warmup_ms); !st) return st.error();
  } else {
    // Before calibrating, a plain warm-up: the run is too short yet to judge steadiness by.
    const auto warm_start = Clock::now();
    for (uint32_t runs = 0; runs < options_.untimed_runs || msSince(warm_start) < warmup_ms; ++runs)
      if (auto t = runOnce(); !t) return t.error();
    // Calibrate once: grow the iteration count until a run takes about the target.
    const double target_ns = targetMs() * 1e6;
    while (true) {
      std::vector<double> probe;
      for (int i = 0; i < 3; ++i) {
        auto t = runOnce();
        if (!t) return t.error();
        probe.push_back(*t);
      }
      const double median = medianOf(probe);
      if (median >= 0.5 * target_ns || iterations >= kMaxIterations) break;
      iterations = grown(iterations, median, target_ns);
      if (auto st = record(iterations); !st) return st.error();
      if (auto t = runOnce(); !t) return t.error();  // the new command buffer's first run is untimed
    }
    iterations_ = iterations;
    if (auto st = warmUp(runOnce, 0); !st) return st.error();
  }
  std::vector<double> samples;
  for (uint32_t i = 0; i < options_.timed_runs; ++i) {
    auto t = runOnce();
    if (!t) return t.error();
    samples.push_back(*t);
  }
  return samples;
}

Result<std::vector<double>> DriftReference::runCpu(uint32_t warmup_ms, const std::atomic<bool>& cancel) {
  if (iterations_ == 0) {
    uint64_t iterations = 1024;
    const auto warm_start = Clock::now();
    for (uint32_t runs = 0; runs < options_.untimed_runs || msSince(warm_start) < warmup_ms; ++runs) {
      if (cancel.load()) return makeError("cancelled");
      timeCpuLoop(iterations);
    }
    const double target_ns = targetMs() * 1e6;
    while (true) {
      if (cancel.load()) return makeError("cancelled");
      const double median = medianOf({timeCpuLoop(iterations), timeCpuLoop(iterations), timeCpuLoop(iterations)});
      if (median >= 0.5 * target_ns || iterations >= kMaxIterations) break;
      iterations = grown(iterations, median, target_ns);
    }
    iterations_ = iterations;
    warmup_ms = 0;
  }
  const uint64_t iterations = iterations_;
  auto runOnce = [&]() -> Result<double> {
    if (cancel.load()) return makeError("cancelled");
    return timeCpuLoop(iterations);
  };
  if (auto st = warmUp(runOnce, warmup_ms); !st) return st.error();
  std::vector<double> samples;
  for (uint32_t i = 0; i < options_.timed_runs; ++i) {
    if (cancel.load()) return makeError("cancelled");
    const double ns = timeCpuLoop(iterations);
    if (!(ns > 0)) return makeError("steady_clock did not advance over the reference loop");
    samples.push_back(ns);
  }
  return samples;
}

}  // namespace ks
