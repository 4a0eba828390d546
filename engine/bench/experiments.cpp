// The points that are experiments rather than kernels (engine/kernels/
// experiment_kernels.cpp): transfers, the CPU/GPU interleave, and the
// uploads and downloads that Plan::with_transfers adds to any GPU point.
#include "engine/kernels/experiments.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/bench/runner.h"

namespace ks {

namespace {

using Clock = std::chrono::steady_clock;
double nsSince(Clock::time_point t0) { return std::chrono::duration<double, std::nano>(Clock::now() - t0).count(); }

enum class Sampled { Done, Cancelled, Failed };

// Warm-up, then timed runs until the plan's rule says enough (the kernels'
// rule: reps, or adaptive). `run` does one run and returns its time, or fails.
Sampled sampleRuns(Measurement& m, const Plan& plan, const std::atomic<bool>& cancel,
                   const std::function<Result<double>(bool timed)>& run) {
  const auto warm_start = Clock::now();
  while (warmupWanted(plan, m.warmup_runs, warm_start)) {
    if (cancel.load()) return Sampled::Cancelled;
    if (auto t = run(false); !t) {
      m.error = t.error().message;
      return Sampled::Failed;
    }
    ++m.warmup_runs;
  }
  const auto timed_start = Clock::now();
  while (true) {
    if (auto done = samplingDone(plan, m.samples_ns, timed_start)) {
      m.stop_reason = *done;
      return Sampled::Done;
    }
    if (cancel.load()) return Sampled::Cancelled;
    auto t = run(true);
    if (!t) {
      m.error = t.error().message;
      return Sampled::Failed;
    }
    if (!(*t > 0)) {
      m.error = "the clock did not advance over a run: too short to time";
      return Sampled::Failed;
    }
    m.samples_ns.push_back(*t);
  }
}

TimedPart makePart(std::string name, std::vector<double> samples) {
  TimedPart p{std::move(name), std::move(samples), {}};
  p.stats = computeStats(p.samples_ns);
  return p;
}

std::string memoryOf(const vk::Buffer& b) { return vk::memoryFlagsText(b.memoryFlags()); }

}  // namespace

Status Runner::timeUploads(Measurement& m, const Plan& plan, const std::vector<UploadTarget>& inputs) {
  // As an application pays it: from host memory into the input buffers,
  // memcpy into mapped memory where the buffer is mapped, else memcpy into a
  // staging buffer and vkCmdCopyBuffer; host clock around all of it (the
  // submission and the wait included), every input in one sample.
  struct Path {
    vk::Buffer* dst;
    const uint8_t* data;
    uint64_t bytes;
    vk::Buffer staging;
    std::unique_ptr<vk::TimedDispatch> copy;
  };
  std::vector<Path> paths;
  bool staged = false, mapped = false;
  for (const auto& input : inputs) {
    Path p{input.buffer, input.data, std::min<uint64_t>(input.bytes, input.buffer->size()), {}, nullptr};
    if (!p.dst->mapped()) {
      auto staging = device_->createBuffer(p.bytes, vk::Placement::HostVisible, "an upload staging buffer");
      if (!staging) return staging.error();
      p.staging = std::move(*staging);
      auto copy = device_->prepareCopy(p.staging, *p.dst, p.bytes);
      if (!copy) return copy.error();
      p.copy = std::move(*copy);
      staged = true;
    } else {
      mapped = true;
    }
    paths.push_back(std::move(p));
  }
  auto uploadAll = [&]() -> Result<double> {
    const auto t0 = Clock::now();
    for (auto& p : paths) {
      vk::Buffer& into = p.copy ? p.staging : *p.dst;
      std::memcpy(into.mapped(), p.data, p.bytes);
      if (auto st = device_->flushMapped(into); !st) return st.error();
      if (p.copy)
        if (auto t = p.copy->run(); !t) return t.error();
    }
    return nsSince(t0);
  };
  std::vector<double> samples;
  for (uint32_t i = 0; i < std::max<uint32_t>(plan.warmup, 1) + plan.reps; ++i) {
    auto t = uploadAll();
    if (!t) return t.error();
    if (i >= std::max<uint32_t>(plan.warmup, 1)) samples.push_back(*t);
  }
  m.parts.push_back(makePart("upload", std::move(samples)));
  m.transfer_method = std::string("upload: ") +
                      (staged && mapped ? "memcpy into mapped memory or a staging buffer + vkCmdCopyBuffer"
                       : staged         ? "memcpy into a staging buffer + vkCmdCopyBuffer"
                                        : "memcpy into mapped device memory (" + memoryOf(*paths.front().dst) + ")") +
                      "; host clock";
  return Ok{};
}

Status Runner::timeDownloads(Measurement& m, const Plan& plan, const vk::Buffer& output, std::vector<uint8_t>& out,
                             int output_precision) {
  vk::Buffer staging;
  std::unique_ptr<vk::TimedDispatch> copy;
  if (!output.mapped()) {
    auto s = device_->createBuffer(out.size(), vk::Placement::HostCached, "a download staging buffer");
    if (!s) return s.error();
    staging = std::move(*s);
    auto c = device_->prepareCopy(output, staging, out.size());
    if (!c) return c.error();
    copy = std::move(*c);
  }
  const vk::Buffer& from = copy ? staging : output;
  std::vector<double> samples;
  const uint32_t warm = std::max<uint32_t>(plan.warmup, 1);
  for (uint32_t i = 0; i < warm + plan.reps; ++i) {
    // Poisoned before every download (not timed): the last one is what gets verified.
    const uint32_t nan = output_precision == 16 ? 0x7E007E00u : 0x7FC00000u;
    for (size_t b = 0; b + 4 <= out.size(); b += 4) std::memcpy(out.data() + b, &nan, 4);
    const auto t0 = Clock::now();
    if (copy)
      if (auto t = copy->run(); !t) return t.error();
    if (auto st = device_->invalidateMapped(from); !st) return st.error();
    std::memcpy(out.data(), from.mapped(), out.size());
    const double ns = nsSince(t0);
    if (i >= warm) samples.push_back(ns);
  }
  m.parts.push_back(makePart("download", std::move(samples)));
  m.transfer_method += std::string("; download: ") +
                       (copy ? "vkCmdCopyBuffer into a staging buffer + memcpy"
                             : "memcpy from mapped device memory (" + memoryOf(output) + ")") +
                       "; host clock";
  return Ok{};
}

Measurement Runner::runTransfer(const KernelInfo& kernel, const PlanItem& item, const Plan& plan,
                                const std::atomic<bool>& cancel) {
  Measurement m;
  m.item = item;
  auto fail = [&](const std::string& why) {
    m.status = PointStatus::Failed;
    m.error = why;
    m.samples_ns.clear();
    return m;
  };
  if (!device_) return fail("no Vulkan device");
  if (device_->lost()) return fail("the device was lost earlier in this sweep");
  const auto path = transferPathOf(kernel);
  if (!path) return fail("no transfer path for " + kernel.id);
  const auto& dev = device_->info();
  device_->setDispatchTimeout(dispatchTimeoutSeconds(kernel, item, plan, dev));
  Workload& w = workload(kernel, item, plan);
  const std::vector<uint8_t>& data = w.inputs[0];
  const uint64_t bytes = data.size();
  const bool gpu_clock = dev.timestamps;
  auto gpuTime = [&](const vk::Timing& t) { return gpu_clock ? t.gpu_ns : t.wall_ns; };

  vk::Buffer src, dst;
  std::vector<uint8_t> host(bytes);  // the host side of a mapped download
  std::unique_ptr<vk::TimedDispatch> op;
  std::function<Result<double>(bool)> run;
  auto make = [&](vk::Placement placement, const char* what) -> Result<vk::Buffer> {
    return device_->createBuffer(bytes, placement, what);
  };
  // The destination starts as zeros (random source bytes are never all zero);
  // a source in device memory is written by a GPU copy from a staging buffer.
  switch (*path) {
    case TransferPath::UploadStaging:
    case TransferPath::DownloadStaging: {
      const bool up = *path == TransferPath::UploadStaging;
      auto s = make(up ? vk::Placement::HostVisible : vk::Placement::DeviceLocal, "the copy source");
      auto d = make(up ? vk::Placement::DeviceLocal : vk::Placement::HostCached, "the copy destination");
      if (!s) return fail(s.error().message);
      if (!d) return fail(d.error().message);
      src = std::move(*s), dst = std::move(*d);
      if (auto st = device_->upload(src, data.data(), bytes); !st) return fail(st.error().message);
      if (auto st = device_->fill(dst, 0); !st) return fail(st.error().message);
      auto c = device_->prepareCopy(src, dst, bytes);
      if (!c) return fail(c.error().message);
      op = std::move(*c);
      m.clock = gpu_clock ? "gpu_timestamp" : "wall";
      m.method = "vkCmdCopyBuffer " + memoryOf(src) + " -> " + memoryOf(dst) +
                 (gpu_clock ? "; GPU timestamps around the copy" : "; host clock (no timestamps)");
      run = [&](bool) -> Result<double> {
        auto t = op->run();
        if (!t) return t.error();
        return gpuTime(*t);
      };
      break;
    }
    case TransferPath::UploadMapped: {
      auto d = make(vk::Placement::DeviceLocalHostVisible, "the mapped destination");
      if (!d) return fail(d.error().message);
      dst = std::move(*d);
      if (auto st = device_->fill(dst, 0); !st) return fail(st.error().message);
      m.clock = "wall";
      m.method = "memcpy into mapped " + memoryOf(dst) + "; host clock around the memcpy and flush";
      run = [&](bool) -> Result<double> {
        const auto t0 = Clock::now();
        std::memcpy(dst.mapped(), data.data(), bytes);
        if (auto st = device_->flushMapped(dst); !st) return st.error();
        return nsSince(t0);
      };
      break;
    }
    case TransferPath::DownloadMapped: {
      auto s = make(vk::Placement::DeviceLocalHostVisible, "the mapped source");
      auto staging = make(vk::Placement::HostVisible, "a staging buffer");
      if (!s) return fail(s.error().message);
      if (!staging) return fail(staging.error().message);
      src = std::move(*s);
      std::memcpy(staging->mapped(), data.data(), bytes);
      if (auto st = device_->flushMapped(*staging); !st) return fail(st.error().message);
      auto c = device_->prepareCopy(*staging, src, bytes);  // the GPU writes the source
      if (!c) return fail(c.error().message);
      if (auto t = (*c)->run(); !t) return fail(t.error().message);
      m.clock = "wall";
      m.method = "memcpy out of mapped " + memoryOf(src) + "; host clock around the invalidate and memcpy";
      run = [&](bool) -> Result<double> {
        const auto t0 = Clock::now();
        if (auto st = device_->invalidateMapped(src); !st) return st.error();
        std::memcpy(host.data(), src.mapped(), bytes);
        return nsSince(t0);
      };
      break;
    }
    case TransferPath::GpuReadsHost: {
      auto s = make(vk::Placement::HostVisible, "the host source");
      auto d = make(vk::Placement::DeviceLocal, "the device destination");
      if (!s) return fail(s.error().message);
      if (!d) return fail(d.error().message);
      src = std::move(*s), dst = std::move(*d);
      std::memcpy(src.mapped(), data.data(), bytes);
      if (auto st = device_->flushMapped(src); !st) return fail(st.error().message);
      if (auto st = device_->fill(dst, 0); !st) return fail(st.error().message);
      vk::PipelineDesc desc;
      desc.name = "peak_copy.comp";
      desc.source = shaderSource(desc.name);
      desc.buffer_count = 2;
      auto pipeline = device_->pipeline(desc);
      if (!pipeline) return fail(pipeline.error().message);
      m.shader_hash = dispatchHash(desc);
      const uint64_t vec4s = bytes / 16;
      auto d2 = device_->prepareDispatch({{*pipeline, linearGroups(vec4s, dev), {uint32_t(vec4s)}}},
                                         {vk::BufferRange{&src}, vk::BufferRange{&dst}}, {});
      if (!d2) return fail(d2.error().message);
      op = std::move(*d2);
      m.clock = gpu_clock ? "gpu_timestamp" : "wall";
      m.method = "copy shader reads " + memoryOf(src) + ", writes " + memoryOf(dst) +
                 (gpu_clock ? "; GPU timestamps around the dispatch" : "; host clock (no timestamps)");
      run = [&](bool) -> Result<double> {
        auto t = op->run();
        if (!t) return t.error();
        return gpuTime(*t);
      };
      break;
    }
  }
  switch (sampleRuns(m, plan, cancel, run)) {
    case Sampled::Cancelled:
      m.status = PointStatus::Cancelled;
      m.samples_ns.clear();
      return m;
    case Sampled::Failed:
      return fail(m.error);
    case Sampled::Done:
      break;
  }
  // What arrived, read back through the device's own copy where it wrote it.
  std::vector<uint8_t> got(bytes);
  if (*path == TransferPath::DownloadMapped) {
    if (fault_ == InjectedFault::CorruptCopy) host[bytes / 2] ^= 0x40;
    got = host;
  } else {
    if (fault_ == InjectedFault::CorruptCopy)
      if (auto st = device_->fillRange(dst, bytes / 2 / 4 * 4, 4, 0xDEADBEEFu); !st) return fail(st.error().message);
    if (*path == TransferPath::UploadMapped) {
      // Through the GPU, so that the check sees what the device sees.
      auto check = make(vk::Placement::HostCached, "a check buffer");
      if (!check) return fail(check.error().message);
      auto c = device_->prepareCopy(dst, *check, bytes);
      if (!c) return fail(c.error().message);
      if (auto t = (*c)->run(); !t) return fail(t.error().message);
      if (auto st = device_->download(*check, got.data(), bytes); !st) return fail(st.error().message);
    } else if (auto st = device_->download(dst, got.data(), bytes); !st) {
      return fail(st.error().message);
    }
  }
  finish(m, kernel, w, got.data());
  return m;
}

Measurement Runner::runInterleave(const KernelInfo& kernel, const PlanItem& item, const Plan& plan,
                                  const std::atomic<bool>& cancel) {
  Measurement m;
  m.item = item;
  auto fail = [&](const std::string& why) {
    m.status = PointStatus::Failed;
    m.error = why;
    m.samples_ns.clear();
    m.parts.clear();
    return m;
  };
  if (!device_) return fail("no Vulkan device");
  if (device_->lost()) return fail("the device was lost earlier in this sweep");
  const auto placement = interleavePlacementOf(kernel);
  if (!placement) return fail("no placement for " + kernel.id);
  const auto& dev = device_->info();
  device_->setDispatchTimeout(dispatchTimeoutSeconds(kernel, item, plan, dev));
  Workload& w = workload(kernel, item, plan);
  const uint64_t n = item.size.n, bytes = 4 * n;

  auto shared = device_->createBuffer(bytes, *placement, "the shared buffer");
  if (!shared) return fail(shared.error().message);
  // Device-local memory is reached by the CPU through a staging buffer (the
  // discrete-GPU way), even where it happens to be host-visible.
  const bool staged = *placement == vk::Placement::DeviceLocal;
  vk::Buffer staging;
  if (staged) {
    auto s = device_->createBuffer(bytes, vk::Placement::HostCached, "the CPU's staging buffer");
    if (!s) return fail(s.error().message);
    staging = std::move(*s);
  } else if (!shared->mapped()) {
    return fail("the " + vk::placementName(*placement) + " buffer is not host-visible");
  }
  vk::Buffer& cpu_side = staged ? staging : *shared;
  std::memcpy(cpu_side.mapped(), w.inputs[0].data(), bytes);
  if (auto st = device_->flushMapped(cpu_side); !st) return fail(st.error().message);

  vk::PipelineDesc desc;
  desc.name = "interleave_step.comp";
  desc.source = shaderSource(desc.name);
  desc.buffer_count = 1;
  auto pipeline = device_->pipeline(desc);
  if (!pipeline) return fail(pipeline.error().message);
  m.shader_hash = dispatchHash(desc);
  std::vector<vk::CopyRegion> before, after;
  if (staged) {
    before.push_back({&staging, &*shared, bytes});
    after.push_back({&*shared, &staging, bytes});
  }
  auto dispatch = device_->prepareDispatch({{*pipeline, linearGroups(n, dev), {uint32_t(n)}}},
                                           {vk::BufferRange{&*shared}}, {}, before, after);
  if (!dispatch) return fail(dispatch.error().message);

  m.clock = "wall";
  m.method = std::string("buffer in ") + memoryOf(*shared) +
             (staged ? "; the CPU works on a " + memoryOf(staging) + " staging buffer, copied each way in the round"
                     : "; the CPU works on it mapped") +
             (dev.timestamps ? "; GPU part from timestamps" : "; GPU part from the host clock (no timestamps)");
  uint32_t rounds = 0;
  std::vector<double> gpu_ns, cpu_ns, sync_ns;
  auto round = [&](bool timed) -> Result<double> {
    const auto t0 = Clock::now();
    auto t = (*dispatch)->run();
    if (!t) return t.error();
    if (auto st = device_->invalidateMapped(cpu_side); !st) return st.error();
    const auto c0 = Clock::now();
    auto* x = static_cast<uint32_t*>(cpu_side.mapped());
    for (uint64_t i = 0; i < n; ++i) x[i] = uint32_t(interleaveStep(x[i], false, rounds));
    const double cpu = nsSince(c0);
    if (auto st = device_->flushMapped(cpu_side); !st) return st.error();
    const double total = nsSince(t0);
    ++rounds;
    if (timed) {
      const double gpu = dev.timestamps ? t->gpu_ns : t->wall_ns;
      gpu_ns.push_back(gpu);
      cpu_ns.push_back(cpu);
      sync_ns.push_back(std::max(0.0, total - gpu - cpu));
    }
    return total;
  };
  switch (sampleRuns(m, plan, cancel, round)) {
    case Sampled::Cancelled:
      m.status = PointStatus::Cancelled;
      m.samples_ns.clear();
      return m;
    case Sampled::Failed:
      return fail(m.error);
    case Sampled::Done:
      break;
  }
  m.parts.push_back(makePart("gpu", std::move(gpu_ns)));
  m.parts.push_back(makePart("cpu", std::move(cpu_ns)));
  m.parts.push_back(makePart("sync", std::move(sync_ns)));

  // The final buffer against the rounds replayed on the host.
  if (auto st = device_->invalidateMapped(cpu_side); !st) return fail(st.error().message);
  std::vector<uint8_t> got(bytes), want(w.inputs[0]);
  std::memcpy(got.data(), cpu_side.mapped(), bytes);
  if (fault_ == InjectedFault::CorruptInterleave) got[bytes / 2] ^= 0x01;
  auto* e = reinterpret_cast<uint32_t*>(want.data());
  for (uint32_t r = 0; r < rounds; ++r)
    for (uint64_t i = 0; i < n; ++i) e[i] = uint32_t(interleaveStep(interleaveStep(e[i], true, r), false, r));
  m.stats = computeStats(m.samples_ns);
  if (m.stats.median > 0) m.gbps = kernel.bytes(item.size, item.params) / m.stats.median;
  m.verification =
      verifyBytes(want.data(), got.data(), bytes, "the buffer after " + std::to_string(rounds) + " rounds vs a replay");
  if (m.verification.status == VerifyStatus::Failed) {
    m.status = PointStatus::Failed;
    m.error = "verification failed: " + m.verification.note;
  }
  return m;
}

}  // namespace ks
