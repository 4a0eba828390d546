#include "engine/bench/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

#include "engine/bench/warmup.h"
#include "engine/cpu/cpu_info.h"
#include "engine/cpu/gemm_cpu.h"

namespace ks {

std::string pointStatusName(PointStatus s) {
  switch (s) {
    case PointStatus::Ok:
      return "ok";
    case PointStatus::Failed:
      return "failed";
    case PointStatus::Skipped:
      return "skipped";
    default:
      return "cancelled";
  }
}

Result<PointStatus> parsePointStatus(const std::string& s) {
  for (auto st : {PointStatus::Ok, PointStatus::Failed, PointStatus::Skipped, PointStatus::Cancelled})
    if (pointStatusName(st) == s) return st;
  return makeError("unknown point status '" + s + "'");
}

const TimedPart* Measurement::part(const std::string& name) const {
  for (const auto& p : parts)
    if (p.name == name) return &p;
  return nullptr;
}

double Measurement::partMedian(const std::string& name) const {
  const TimedPart* p = part(name);
  return p ? p->stats.median : 0;
}

bool warmupWanted(const Plan& plan, uint32_t done, std::chrono::steady_clock::time_point start) {
  if (plan.warmup == 0) return false;
  if (done < plan.warmup) return true;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return ms < plan.warmup_ms;
}
std::optional<std::string> samplingDone(const Plan& plan, const std::vector<double>& samples,
                                        std::chrono::steady_clock::time_point start) {
  const size_t n = samples.size();
  if (n < plan.reps) return std::nullopt;
  if (plan.target_ci <= 0) return std::string("reps");
  if (n >= std::max<size_t>(plan.max_reps, plan.reps)) return std::string("max_reps");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (ms >= plan.budget_ms) return std::string("time_budget");
  // Re-sorting every sample is cheap next to a dispatch; still, check every 4th.
  if ((n - plan.reps) % 4 == 0 && computeStats(samples).ciRelative() <= plan.target_ci) return std::string("ci_target");
  return std::nullopt;
}

double dispatchTimeoutSeconds(const KernelInfo& kernel, const PlanItem& item, const Plan& plan,
                              const vk::DeviceInfo& device) {
  if (plan.dispatch_timeout_ms) return plan.dispatch_timeout_ms / 1000.0;
  // Pessimistic rates (a naive kernel on a slow device), so a legitimate run
  // is never stopped: 1 GFLOP/s and 1 GB/s on a CPU device, 50 on a GPU.
  const double rate = device.isSoftware() ? 1e9 : 50e9;
  const double flops = kernel.flops ? kernel.flops(item.size) : 0;
  const double bytes = kernel.bytes ? kernel.bytes(item.size, item.params) : 0;
  return 5.0 + 10.0 * (flops + bytes) / rate;
}

InputRotation inputRotation(bool memory_bound, uint64_t set_bytes, const Plan& plan, uint64_t max_sets) {
  InputRotation r;
  if (!memory_bound || set_bytes == 0) return r;
  if (plan.rotate_inputs && set_bytes < plan.cache_bytes) {
    // (sets - 1) other sets run between two uses of one: together at least cache_bytes.
    const uint64_t wanted = (plan.cache_bytes + set_bytes - 1) / set_bytes + 1;
    r.sets = uint32_t(std::clamp<uint64_t>(std::min({wanted, max_sets, kMaxInputSets}), 1, kMaxInputSets));
  }
  const uint64_t between_reuses = std::max<uint64_t>(1, r.sets - 1) * set_bytes;
  r.cache_resident = between_reuses < plan.cache_bytes;
  return r;
}

Runner::Runner(vk::Device* device) : device_(device) {}
Runner::~Runner() = default;

Workload& Runner::workload(const KernelInfo& kernel, const PlanItem& item, const Plan& plan) {
  const std::string key = workloadKey(kernel, item.size, item.params, plan.seed);
  if (workload_ && workload_->key() == key) {
    workload_->output_precision = outputPrecisionOf(kernel, item.params);  // varies by point, not by inputs
    return *workload_;
  }
  workload_.reset();  // free the old inputs before making the new ones
  workload_ = makeWorkload(kernel, item.size, item.params, plan.seed);
  return *workload_;
}

std::vector<Measurement> Runner::run(const Plan& plan, const RunCallbacks& cb, const std::atomic<bool>& cancel) {
  std::vector<Measurement> out;
  const size_t total = plan.items.size();

  drift_ = DriftReport{};
  drift_.threshold = plan.drift_threshold;
  std::optional<DriftReference> reference;
  if (plan.drift_check) {
    reference.emplace(device_);
    drift_.reference = reference->description();
    drift_.clock = reference->clock();
  }
  auto last_check = std::chrono::steady_clock::now();
  // Whether the reference's device idled since its last work (a CPU point ran
  // while a GPU reference waited): no "between" check is taken there.
  bool reference_idle = true;
  // Every check warms up as long as a point does, then until steady: each
  // follows a CPU verification, during which GPU clocks drop and after which
  // OpenBLAS's threads spin on the cores lavapipe needs. A check taken in
  // other conditions than the points' would measure those, not the machine.
  auto checkDrift = [&](const char* when) {
    if (!reference || !drift_.error.empty() || cancel.load()) return;  // a failed reference is not retried
    auto check = reference->check(when, out.size(), plan.warmup_ms, cancel);
    if (device_ && device_->lost() && device_->recreate()) reference->deviceRecreated();  // hung in the check
    last_check = std::chrono::steady_clock::now();
    reference_idle = false;
    if (!check && cancel.load()) return;  // cancelled, not failed
    std::vector<DriftCheck> checks = std::move(drift_.checks);
    std::string error = drift_.error;
    if (check)
      checks.push_back(std::move(*check));
    else
      error = "check " + std::to_string(checks.size() + 1) + " (" + when + ", after " + std::to_string(out.size()) +
              " points): " + check.error().message;
    drift_ = evaluateDrift(reference->description(), std::move(checks), plan.drift_threshold, DriftRule::ThresholdAndCi,
                           reference->noiseFloor());
    drift_.clock = reference->clock();
    drift_.error = error;
    if (cb.drift) cb.drift(drift_);
  };

  bool recreate_failed = false;
  if (cb.progress) cb.progress(0, total);
  checkDrift("start");
  for (size_t i = 0; i < total; ++i) {
    if (cancel.load()) break;
    if (i > 0 && plan.items[i].kernel != plan.items[i - 1].kernel && !reference_idle &&
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - last_check).count() >=
            plan.drift_interval_ms)
      checkDrift("between");
    out.push_back(runPoint(plan.items[i], plan, cancel));
    if (device_ && device_->lost() && !recreate_failed) {
      if (recoverDevice(out.back())) {
        if (reference) reference->deviceRecreated();
      } else {
        recreate_failed = true;  // not retried after every later point
      }
    }
    if (device_) {
      const KernelInfo* kernel = Registry::instance().find(out.back().item.kernel);
      const bool ran_on_device = kernel && kernel->backend == Backend::Vulkan &&
                                 (out.back().status == PointStatus::Ok || out.back().status == PointStatus::Failed);
      reference_idle = !ran_on_device;
    }
    if (cb.point) cb.point(out.back());
    if (cb.progress) cb.progress(i + 1, total);
    if (out.back().status == PointStatus::Cancelled) break;
  }
  workload_.reset();
  checkDrift("end");
  if (device_) device_->setDispatchTimeout(0);  // the default again, for what runs next (peaks, say)
  return out;
}

bool Runner::recoverDevice(Measurement& m) {
  if (!device_ || !device_->lost()) return true;
  // Lost or hung (the watchdog): a new logical device, and the sweep goes on.
  if (auto st = device_->recreate(); !st) {  // once per loss: a failed recreate leaves the device lost
    m.error += "; " + st.error().message;
    return false;
  }
  m.error += "; the device was recreated and the sweep goes on";
  return true;
}

std::optional<std::string> Runner::whySkipped(const PlanItem& item) const {
  const KernelInfo* kernel = Registry::instance().find(item.kernel);
  if (!kernel) return std::nullopt;  // fails, not skipped
  ProblemSize size = item.size;
  size.rank = kernel->size_rank;
  const vk::DeviceInfo* info = device_ ? &device_->info() : nullptr;
  if (kernel->backend == Backend::Vulkan && !device_) return std::string("unsupported: no Vulkan device");
  if (auto why = checkPoint(*kernel, size, item.params, info)) return why;
  // The inputs, the output and the double-precision reference live in host
  // memory for every point; Linux would rather kill the process than fail an
  // allocation, so refuse what cannot fit.
  if (kernel->bytes) {
    const double need = 2.5 * kernel->bytes(size, item.params);
    const double avail = double(cpu::availableHostMemory());
    if (avail > 0 && need > 0.9 * avail) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "needs about %.1f GiB of host memory for its inputs, output and reference; %.1f GiB available",
                    need / double(1ull << 30), avail / double(1ull << 30));
      return std::string(buf);
    }
  }
  return std::nullopt;
}

Measurement Runner::runPoint(const PlanItem& item, const Plan& plan, const std::atomic<bool>& cancel) {
  Measurement m;
  m.item = item;
  const KernelInfo* kernel = Registry::instance().find(item.kernel);
  if (!kernel) {
    m.status = PointStatus::Failed;
    m.error = "unknown kernel " + item.kernel;
    return m;
  }
  m.item.size.rank = kernel->size_rank;
  if (auto why = whySkipped(item)) {
    m.status = PointStatus::Skipped;
    m.error = *why;
    return m;
  }
  if (plan.reps == 0) {
    m.status = PointStatus::Failed;
    m.error = "reps must be at least 1";
    return m;
  }
  try {
    PlanItem sized = item;
    sized.size = m.item.size;
    if (kernel->workload == "transfer") return runTransfer(*kernel, sized, plan, cancel);
    if (kernel->workload == "interleave") return runInterleave(*kernel, sized, plan, cancel);
    return kernel->backend == Backend::Vulkan ? runGpu(*kernel, sized, plan, cancel)
                                              : runCpu(*kernel, sized, plan, cancel);
  } catch (const std::bad_alloc&) {
    m.status = PointStatus::Failed;
    m.error = "out of host memory for size " + item.size.str();
    workload_.reset();
    return m;
  }
}

void Runner::finish(Measurement& m, const KernelInfo& kernel, Workload& w, const void* output) {
  m.stats = computeStats(m.samples_ns);
  if (m.stats.median > 0) {
    m.gflops = kernel.flops(m.item.size) / m.stats.median;  // FLOP per ns = GFLOP/s
    m.gbps = kernel.bytes(m.item.size, m.item.params) / m.stats.median;
  }
  m.verification = verifyOutput(kernel, w, output, m.item.params);
  if (m.verification.status == VerifyStatus::Failed) {
    m.status = PointStatus::Failed;
    char buf[160];
    std::snprintf(buf, sizeof buf, "verification failed: relative error %.3g, worst element %.3g, tolerance %.3g",
                  m.verification.rel_error, m.verification.max_error, m.verification.tolerance);
    m.error = std::isnan(m.verification.rel_error)
                  ? "verification failed: the output holds NaN or Inf (elements left unwritten?)"
                  : buf;
  }
}

Measurement Runner::runGpu(const KernelInfo& kernel, const PlanItem& item, const Plan& plan,
                           const std::atomic<bool>& cancel) {
  Measurement m;
  m.item = item;
  auto fail = [&](const std::string& why) {
    m.status = PointStatus::Failed;
    m.error = why;
    return m;
  };
  if (!device_) return fail("no Vulkan device");
  if (device_->lost()) return fail("the device was lost earlier in this sweep");
  const auto& dev = device_->info();
  if (kernel.method_note) m.method = kernel.method_note(item.params, dev);
  device_->setDispatchTimeout(dispatchTimeoutSeconds(kernel, item, plan, dev));  // uploads included
  Workload& w = workload(kernel, item, plan);

  // Buffers in binding order: inputs uploaded, the output poisoned with NaN so
  // an element a kernel leaves unwritten fails verification.
  std::vector<vk::Buffer> buffers;
  std::vector<const vk::Buffer*> zero_each_run;
  const auto specs = kernel.buffers(item.size, item.params);
  buffers.reserve(specs.size());

  // Input rotation: each input buffer holds `sets` aligned copies of its data.
  // Slots start on cache lines (and the device's offset alignment): what a set occupies is what it touches.
  const uint64_t align = std::max<uint64_t>(dev.min_storage_offset_alignment, 64);
  std::vector<uint64_t> stride(specs.size(), 0);
  uint64_t set_bytes = 0, max_sets = ~0ull;
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].role == BufferRole::Input) {
      stride[i] = (specs[i].bytes + align - 1) / align * align;
      set_bytes += stride[i];
      if (dev.max_allocation_size) max_sets = std::min(max_sets, dev.max_allocation_size / stride[i]);
    }
  // At most a quarter of device memory (or 4 GiB where unknown) for the copies.
  const uint64_t budget = dev.device_local_bytes ? dev.device_local_bytes / 4 : (4ull << 30);
  if (set_bytes) max_sets = std::min(max_sets, std::max<uint64_t>(1, budget / set_bytes));
  const InputRotation rotation = inputRotation(kernel.memory_bound, set_bytes, plan, max_sets);
  m.input_sets = rotation.sets;
  m.cache_resident = rotation.cache_resident;

  size_t next_input = 0;
  int output_index = -1;
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto& spec = specs[i];
    const bool rotated = spec.role == BufferRole::Input && rotation.sets > 1;
    auto b = device_->createBuffer(rotated ? stride[i] * rotation.sets : spec.bytes, vk::Placement::DeviceLocal,
                                   rotated ? spec.name + " (rotated copies)" : spec.name, !rotated);
    if (!b) return fail(b.error().message);
    buffers.push_back(std::move(b.value()));
    auto& buf = buffers.back();
    Status st = Ok{};
    if (spec.role == BufferRole::Input) {
      const size_t which = spec.input >= 0 ? size_t(spec.input) : next_input++;
      if (which >= w.inputs.size()) return fail("kernel " + kernel.id + " has more inputs than its workload");
      const auto& data = w.inputs[which];
      if (spec.input_offset >= data.size()) return fail(spec.name + " lies outside its workload input");
      st = device_->upload(buf, data.data() + spec.input_offset,
                           std::min<uint64_t>(spec.bytes, data.size() - spec.input_offset));
      if (st && rotated) st = device_->replicate(buf, spec.bytes, stride[i], rotation.sets);
    } else if (spec.role == BufferRole::Output) {
      output_index = int(buffers.size()) - 1;
      // NaN in every element width: a float NaN also reads as a double NaN; halves need their own.
      st = device_->fill(buf, w.output_precision == 16 ? 0x7E007E00u : 0x7FC00000u);
    } else {
      st = device_->fill(buf, 0);
    }
    if (!st) return fail(st.error().message);
  }
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].zero_each_run) zero_each_run.push_back(&buffers[i]);
  if (output_index < 0) return fail("kernel " + kernel.id + " declares no output buffer");
  if (plan.with_transfers) {
    // The same inputs again (into the first set of rotated ones): the kernel
    // then reads what the timed uploads wrote, and its verification checks them.
    // Each buffer takes the workload bytes the first upload put there (its
    // input and offset: a matrix split into row blocks, inputs bound out of order).
    std::vector<UploadTarget> inputs;
    size_t next = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].role != BufferRole::Input) continue;
      const auto& data = w.inputs[specs[i].input >= 0 ? size_t(specs[i].input) : next++];
      inputs.push_back({&buffers[i], data.data() + specs[i].input_offset,
                        std::min<uint64_t>(specs[i].bytes, data.size() - specs[i].input_offset)});
    }
    if (auto st = timeUploads(m, plan, inputs); !st) return fail(st.error().message);
    if (cancel.load()) {
      m.status = PointStatus::Cancelled;
      return m;
    }
  }

  std::vector<vk::Device::RecordedStep> recorded;
  for (const auto& step : dispatchSteps(kernel, item.size, item.params, dev)) {
    auto desc = pipelineDesc(step, uint32_t(buffers.size()));
    if (!desc) return fail(desc.error().message);
    auto pipeline = device_->pipeline(*desc);
    if (!pipeline) return fail(pipeline.error().message);
    recorded.push_back({*pipeline, step.groups, step.push, step.bindings, step.after_previous});
    m.shader_hash += (m.shader_hash.empty() ? "" : ";") + dispatchHash(*desc);
    for (const auto& [name, value] : (*pipeline)->statistics)
      m.pipeline_stats += (m.pipeline_stats.empty() ? "" : "; ") + name + "=" + value;
  }
  // Rotated inputs are bound one set at a time: the buffer of all sets may
  // exceed maxStorageBufferRange, a set never does.
  auto bindingsOfSet = [&](uint64_t set) {
    std::vector<vk::BufferRange> bindings;
    for (size_t i = 0; i < buffers.size(); ++i)
      bindings.push_back(stride[i] && rotation.sets > 1 ? vk::BufferRange{&buffers[i], set * stride[i], specs[i].bytes}
                                                        : vk::BufferRange{&buffers[i]});
    return bindings;
  };
  auto dispatch = device_->prepareDispatch(recorded, bindingsOfSet(0), zero_each_run);
  if (!dispatch) return fail(dispatch.error().message);
  // Each run (warm-up included) reads the next set of inputs.
  uint64_t run_index = 0;
  auto next_run = [&]() -> Result<vk::Timing> {
    if (rotation.sets > 1 && run_index > 0)
      if (auto st = (*dispatch)->rebind(bindingsOfSet(run_index % rotation.sets)); !st) return st.error();
    ++run_index;
    return (*dispatch)->run();
  };

  const bool gpu_clock = dev.timestamps;
  m.clock = gpu_clock ? "gpu_timestamp" : "wall";
  const auto warm_start = std::chrono::steady_clock::now();
  while (warmupWanted(plan, m.warmup_runs, warm_start)) {
    if (cancel.load()) {
      m.status = PointStatus::Cancelled;
      return m;
    }
    auto t = next_run();
    if (!t) return fail(t.error().message);
    ++m.warmup_runs;
  }
  if (plan.warmup > 0 && !dev.isSoftware()) {
    // Then until the run time is steady: a GPU's clocks may still be ramping
    // up after it idled during the previous point's verification (a CPU
    // device has no clocks to ramp, and its noise would only run out the cap).
    SteadyOptions steady;
    steady.max_ms = std::max(1000.0, 2.0 * plan.warmup_ms);
    auto runs = warmUntilSteady(
        [&]() -> Result<double> {
          if (cancel.load()) return makeError("cancelled");
          auto t = next_run();
          if (!t) return t.error();
          return gpu_clock ? t->gpu_ns : t->wall_ns;
        },
        steady);
    if (!runs) {
      if (cancel.load()) {
        m.status = PointStatus::Cancelled;
        return m;
      }
      return fail(runs.error().message);
    }
    m.warmup_runs += *runs;
  }
  const auto timed_start = std::chrono::steady_clock::now();
  while (true) {
    if (auto done = samplingDone(plan, m.samples_ns, timed_start)) {
      m.stop_reason = *done;
      break;
    }
    if (cancel.load()) {
      m.status = PointStatus::Cancelled;
      m.samples_ns.clear();
      m.wall_ns.clear();
      return m;
    }
    auto t = next_run();
    if (!t) return fail(t.error().message);
    const double ns = gpu_clock ? t->gpu_ns : t->wall_ns;
    if (!(ns > 0))
      return fail("the timer did not advance over the dispatch (one tick is " +
                  std::to_string(dev.timestamp_period_ns) + " ns): the kernel is too short to time");
    m.samples_ns.push_back(ns);
    if (gpu_clock) m.wall_ns.push_back(t->wall_ns);
  }
  std::vector<uint8_t> out(w.outputBytes());
  if (plan.with_transfers) {
    if (auto st = timeDownloads(m, plan, buffers[size_t(output_index)], out, w.output_precision); !st)
      return fail(st.error().message);
  } else if (auto st = device_->download(buffers[size_t(output_index)], out.data(), out.size()); !st) {
    return fail(st.error().message);
  }
  finish(m, kernel, w, out.data());
  return m;
}

Measurement Runner::runCpu(const KernelInfo& kernel, const PlanItem& item, const Plan& plan,
                           const std::atomic<bool>& cancel) {
  Measurement m;
  m.item = item;
  m.clock = "wall";
  Workload& w = workload(kernel, item, plan);
  // Input rotation: host copies of every input in one buffer, each in its own
  // cache-line-aligned slot; at most 4 GiB and a quarter of the available memory.
  std::vector<uint64_t> slot;
  uint64_t set_bytes = 0;
  for (const auto& in : w.inputs) {
    slot.push_back((in.size() + 63) / 64 * 64);
    set_bytes += slot.back();
  }
  uint64_t copy_budget = 4ull << 30;
  if (const uint64_t avail = cpu::availableHostMemory()) copy_budget = std::min<uint64_t>(copy_budget, avail / 4);
  const InputRotation rotation = inputRotation(kernel.memory_bound, set_bytes, plan,
                                               set_bytes ? std::max<uint64_t>(1, copy_budget / set_bytes) : 1);
  m.input_sets = rotation.sets;
  m.cache_resident = rotation.cache_resident;
  std::vector<uint8_t> pool(size_t(rotation.sets - 1) * set_bytes + 64);
  uint8_t* base = pool.data() + (64 - reinterpret_cast<uintptr_t>(pool.data()) % 64) % 64;
  std::vector<std::vector<const void*>> input_sets{w.inputPointers()};
  for (uint32_t set = 1; set < rotation.sets; ++set) {
    if (cancel.load()) {
      m.status = PointStatus::Cancelled;
      return m;
    }
    uint8_t* at = base + size_t(set - 1) * set_bytes;
    input_sets.emplace_back();
    for (size_t i = 0; i < w.inputs.size(); ++i) {
      std::memcpy(at, w.inputs[i].data(), w.inputs[i].size());
      input_sets.back().push_back(at);
      at += slot[i];
    }
  }
  uint64_t run_index = 0;
  std::vector<uint8_t> out(w.outputBytes());
  // Poison: NaN in either precision.
  for (size_t i = 0; i + 4 <= out.size(); i += 4) {
    const uint32_t nan = 0x7FC00000u;
    std::memcpy(out.data() + i, &nan, 4);
  }
  const auto warm_start = std::chrono::steady_clock::now();
  bool warming = true;
  auto timed_start = std::chrono::steady_clock::now();
  while (true) {
    if (!warming)
      if (auto done = samplingDone(plan, m.samples_ns, timed_start)) {
        m.stop_reason = *done;
        break;
      }
    if (cancel.load()) {
      m.status = PointStatus::Cancelled;
      m.samples_ns.clear();
      return m;
    }
    const bool was_warming = warming;
    warming = warming && warmupWanted(plan, m.warmup_runs, warm_start);
    if (was_warming && !warming) timed_start = std::chrono::steady_clock::now();
    const auto& inputs = input_sets[run_index++ % input_sets.size()];  // outside the timed region
    const auto t0 = std::chrono::steady_clock::now();
    kernel.cpu(inputs, out.data(), item.size, item.params);
    const auto t1 = std::chrono::steady_clock::now();
    if (warming)
      ++m.warmup_runs;
    else
      m.samples_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  finish(m, kernel, w, out.data());
  return m;
}

std::string waitModeName(vk::Device::WaitMode mode) {
  switch (mode) {
    case vk::Device::WaitMode::Spin:
      return "spin";
    case vk::Device::WaitMode::Timeline:
      return "timeline";
    default:
      return "fence";
  }
}

const DispatchOverhead::Wait& DispatchOverhead::fastest() const {
  return *std::min_element(waits.begin(), waits.end(),
                           [](const Wait& a, const Wait& b) { return a.dispatch.median < b.dispatch.median; });
}

Result<DispatchOverhead> measureDispatchOverhead(vk::Device& device, uint32_t reps) {
  DispatchOverhead out;
  vk::PipelineDesc desc;
  desc.name = "util_empty.comp";
  desc.source = shaderSource(desc.name);
  desc.buffer_count = 1;
  desc.push_constant_bytes = 0;
  auto pipeline = device.pipeline(desc);
  if (!pipeline) return pipeline.error();
  auto buffer = device.createBuffer(64, vk::Placement::DeviceLocal, "a scratch buffer");
  if (!buffer) return buffer.error();
  auto dispatch = device.prepareDispatch(**pipeline, {&*buffer}, nullptr, {1, 1, 1});
  if (!dispatch) return dispatch.error();
  const auto before = device.waitMode();
  using Mode = vk::Device::WaitMode;
  for (Mode mode : {Mode::Fence, Mode::Spin, Mode::Timeline}) {
    if (!device.setWaitMode(mode)) continue;  // no timeline semaphores
    DispatchOverhead::Wait wait{waitModeName(mode), {}, {}};
    std::vector<double> submit, run;
    Status status = Ok{};
    for (uint32_t i = 0; i < reps + 10 && status; ++i) {
      auto t = device.emptySubmitNs();
      if (!t)
        status = t.error();
      else if (i >= 10)
        submit.push_back(*t);
    }
    for (uint32_t i = 0; i < reps + 10 && status; ++i) {
      auto t = (*dispatch)->run();
      if (!t)
        status = t.error();
      else if (i >= 10)
        run.push_back(t->wall_ns);
    }
    if (!status) {
      (void)device.setWaitMode(before);
      return status.error();
    }
    wait.submit = computeStats(submit);
    wait.dispatch = computeStats(run);
    out.waits.push_back(std::move(wait));
  }
  (void)device.setWaitMode(before);
  out.submit = out.waits.front().submit;
  out.dispatch = out.waits.front().dispatch;
  return out;
}

}  // namespace ks
