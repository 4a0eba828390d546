#include "engine/bench/peaks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "engine/bench/runner.h"
#include "engine/kernels/registry.h"
#include "engine/session/session.h"

namespace ks {

const PeakResult* DevicePeaks::find(const std::string& id) const {
  for (const auto& r : results)
    if (r.id == id) return &r;
  return nullptr;
}

double DevicePeaks::valueOf(const std::string& id) const {
  const PeakResult* r = find(id);
  return r && r->measured() ? r->value : 0;
}

double DevicePeaks::bandwidthGbps() const { return std::max(valueOf("copy_shader"), valueOf("copy_buffer")); }

double DevicePeaks::cpuBandwidthGbps() const { return std::max(valueOf("cpu_triad"), valueOf("cpu_copy")); }

bool isHostPeak(const std::string& id) { return id.rfind(kHostPeakPrefix, 0) == 0; }

std::string peakUnitOf(const std::string& id) {
  if (id == "fp32_fma" || id == "fp16_fma" || id == "cpu_fp32_fma" || id.rfind("coopmat_", 0) == 0) return "GFLOP/s";
  if (id == "copy_shader" || id == "copy_buffer" || id == "cpu_triad" || id == "cpu_copy") return "GB/s";
  if (id == "dispatch" || id == "submit") return "us";
  return {};
}

double DevicePeaks::coopmatGflops(int acc_bits) const {
  const std::string suffix = acc_bits == 16 ? "_f16_f16" : "_f16_f32";
  double best = 0;
  for (const auto& r : results)
    if (r.measured() && r.id.rfind("coopmat_", 0) == 0 && r.id.size() > suffix.size() &&
        r.id.compare(r.id.size() - suffix.size(), suffix.size(), suffix) == 0)
      best = std::max(best, r.value);
  return best;
}

namespace {

struct Cancelled {};

class PeakMeter {
 public:
  PeakMeter(vk::Device& device, const PeakOptions& options, const std::atomic<bool>& cancel)
      : device_(device), options_(options), cancel_(cancel) {}

  // Median time of `reps` runs after warm-up, GPU timestamps where there are any.
  Result<Stats> time(vk::TimedDispatch& d, uint32_t reps, bool warm) {
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t i = 0; warm; ++i) {
      if (cancel_.load()) throw Cancelled{};
      auto t = d.run();
      if (!t) return t.error();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (i >= 2 && ms >= options_.warmup_ms) break;
    }
    std::vector<double> ns;
    for (uint32_t i = 0; i < reps; ++i) {
      if (cancel_.load()) throw Cancelled{};
      auto t = d.run();
      if (!t) return t.error();
      ns.push_back(t->gpu_ns >= 0 ? t->gpu_ns : t->wall_ns);
    }
    return computeStats(ns);
  }

  Result<const vk::Pipeline*> pipeline(const std::string& shader, std::vector<std::pair<std::string, std::string>> defs,
                                       uint32_t buffers) {
    vk::PipelineDesc desc;
    desc.name = shader;
    desc.source = shaderSource(shader);
    if (desc.source.empty()) return makeError("shader " + shader + " is not embedded in this build");
    desc.defines = std::move(defs);
    desc.buffer_count = buffers;
    desc.push_constant_bytes = 16;
    return device_.pipeline(desc);
  }

  // A compute peak: `flop_per_iteration` of the whole grid per loop step; the
  // iteration count doubles until one run takes about target_ms.
  PeakResult arithmetic(PeakResult r, const vk::Pipeline& p, std::array<uint32_t, 3> groups, uint64_t sink_bytes,
                        double flop_per_iteration, float mul, float add) {
    auto sink = device_.createBuffer(sink_bytes, vk::Placement::DeviceLocal, "the peak sink");
    if (!sink) return failed(r, sink.error().message);
    if (auto st = device_.fill(*sink, 0x7FC00000u); !st) return failed(r, st.error().message);
    uint32_t iterations = 8;
    std::unique_ptr<vk::TimedDispatch> d;
    Stats stats;
    for (bool first = true;; first = false) {
      struct {
        float mul, add;
        uint32_t iterations, unused;
      } args{mul, add, iterations, 0};
      auto prepared = device_.prepareDispatch(p, {&*sink}, &args, groups);
      if (!prepared) return failed(r, prepared.error().message);
      d = std::move(*prepared);
      auto probe = time(*d, 3, first);
      if (!probe) return failed(r, probe.error().message);
      stats = *probe;
      if (stats.median >= options_.target_ms * 1e6 || iterations >= (1u << 22)) break;
      const double grow = options_.target_ms * 1e6 / std::max(stats.median, 1.0);
      iterations = uint32_t(std::min<double>(1u << 22, iterations * std::clamp(grow, 2.0, 64.0)));
    }
    auto timed = time(*d, options_.reps, true);
    if (!timed) return failed(r, timed.error().message);
    float first = NAN;
    if (auto st = device_.download(*sink, &first, sizeof first); !st) return failed(r, st.error().message);
    if (!std::isfinite(first)) return failed(r, "the kernel left its output unwritten (or not finite)");
    r.value = flop_per_iteration * iterations / timed->median;  // FLOP per ns = GFLOP/s
    r.cv = timed->cv;
    r.runs = uint32_t(timed->count);
    r.note = std::to_string(groups[0] * groups[1]) + " workgroups, " + std::to_string(iterations) + " iterations, " +
             fmt(timed->median / 1e6) + " ms per run";
    return r;
  }

  PeakResult fma(bool fp16) {
    PeakResult r;
    r.id = fp16 ? "fp16_fma" : "fp32_fma";
    r.title = fp16 ? "fp16 FMA (f16vec4 / f16vec2 chains)" : "fp32 FMA (vec4 chains)";
    r.unit = "GFLOP/s";
    if (fp16 && !device_.info().float16_storage) return failed(r, "not supported: the device has no shaderFloat16");
    // Enough workgroups to fill any GPU several times over; a CPU device has few cores.
    const uint32_t groups = device_.info().isSoftware() ? 64 : 8192;
    // Halves also as pairs: some compilers pack f16vec2 (HFMA2) but not f16vec4.
    PeakResult best = r;
    for (uint32_t width : fp16 ? std::vector<uint32_t>{4, 2} : std::vector<uint32_t>{4}) {
      const uint32_t chains = width == 4 ? 8 : 16;
      auto p = pipeline(
          "peak_fma.comp",
          {{"FP16", fp16 ? "1" : "0"}, {"WIDTH", std::to_string(width)}, {"CHAINS", std::to_string(chains)}}, 1);
      if (!p) return failed(r, p.error().message);
      const double flop = double(groups) * 256 * 4 * chains * width * 2;  // 4 unrolled steps x chains x lanes x 2
      PeakResult got =
          arithmetic(r, **p, {groups, 1, 1}, uint64_t(groups) * 256 * 4, flop, 0.9990234375f, 0.0009765625f);
      if (fp16) got.note += ", f16vec" + std::to_string(width);
      if (!got.measured()) return got;
      if (got.value > best.value) best = got;
    }
    return best;
  }

  PeakResult coopmat(const vk::DeviceInfo::CoopMatShape& s) {
    PeakResult r;
    r.id = "coopmat_" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + "_" + s.a + "_" +
           s.c;
    r.title = "cooperative matrix " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
              " " + s.a + " x " + s.b + " + " + s.c;
    r.unit = "GFLOP/s";
    if (s.a != "f16" || s.b != "f16" || (s.c != "f16" && s.c != "f32"))
      return failed(r, "not measured: only fp16 inputs with fp16/fp32 accumulators are (this shape is " + s.a + "/" +
                           s.b + "/" + s.c + ")");
    if (device_.info().subgroup_size != 32) return failed(r, "not measured: the shader assumes 32-wide subgroups");
    // The best of 4 and 8 independent accumulators per subgroup: how many
    // keep the tensor cores busy depends on the GPU.
    PeakResult best = r;
    for (uint32_t chains : {4u, 8u}) {
      auto p = pipeline("peak_coopmat.comp",
                        {{"TM", std::to_string(s.m)},
                         {"TN", std::to_string(s.n)},
                         {"TK", std::to_string(s.k)},
                         {"ACC_BITS", s.c == "f16" ? "16" : "32"},
                         {"CHAINS", std::to_string(chains)}},
                        1);
      if (!p) return failed(r, p.error().message);
      const uint32_t groups = 4096, subgroups = groups * 4;
      const double flop = double(subgroups) * chains * 2.0 * s.m * s.n * s.k;
      PeakResult got = arithmetic(r, **p, {groups, 1, 1}, uint64_t(subgroups) * s.m * s.n * 4, flop, 0.00390625f, 0);
      got.note += ", " + std::to_string(chains) + " accumulators per subgroup";
      if (!got.measured()) return got;
      if (got.value > best.value) best = got;
    }
    return best;
  }

  std::vector<PeakResult> bandwidth() {
    PeakResult shader{"copy_shader", "memory bandwidth: copy shader (read + write)", "GB/s"};
    PeakResult copy{"copy_buffer", "memory bandwidth: vkCmdCopyBuffer (read + write)", "GB/s"};
    const auto& info = device_.info();
    uint64_t bytes = options_.copy_bytes;
    if (bytes == 0) {
      bytes = info.isSoftware() ? (64ull << 20) : (1ull << 30);
      bytes = std::min<uint64_t>(bytes, info.max_storage_buffer_range);
      if (info.max_allocation_size) bytes = std::min<uint64_t>(bytes, info.max_allocation_size);
      if (info.device_local_bytes) bytes = std::min<uint64_t>(bytes, info.device_local_bytes / 8);
    }
    bytes = std::min<uint64_t>(bytes, 0xFFFFFFFFull * 16) / 4096 * 4096;  // the shader counts uvec4s in 32 bits
    if (bytes == 0) return {failed(shader, "no room for a copy"), failed(copy, "no room for a copy")};
    auto src = device_.createBuffer(bytes, vk::Placement::DeviceLocal, "the copy source");
    if (!src) return {failed(shader, src.error().message), failed(copy, src.error().message)};
    auto dst = device_.createBuffer(bytes, vk::Placement::DeviceLocal, "the copy destination");
    if (!dst) return {failed(shader, dst.error().message), failed(copy, dst.error().message)};
    // Source 1.0f, destination 0: the check below sees whether the shader copied.
    if (auto st = device_.fill(*src, 0x3F800000u); !st) return {failed(shader, st.error().message), failed(copy, "")};
    if (auto st = device_.fill(*dst, 0); !st) return {failed(shader, st.error().message), failed(copy, "")};
    const std::string size_note = std::to_string(bytes >> 20) + " MiB buffers";

    const uint32_t count = uint32_t(bytes / 16);
    const uint32_t total_groups = (count + 255) / 256;
    const uint32_t gx = std::min(total_groups, info.max_workgroup_count[0]);
    const uint32_t gy = (total_groups + gx - 1) / gx;
    if (auto p = pipeline("peak_copy.comp", {}, 2); !p) {
      shader = failed(shader, p.error().message);
    } else if (auto d = device_.prepareDispatch(**p, {&*src, &*dst}, &count, {gx, gy, 1}); !d) {
      shader = failed(shader, d.error().message);
    } else if (auto t = time(**d, options_.reps, true); !t) {
      shader = failed(shader, t.error().message);
    } else {
      shader.value = 2.0 * double(bytes) / t->median;
      shader.cv = t->cv;
      shader.runs = uint32_t(t->count);
      shader.note = size_note;
      uint32_t last = 0;  // the shader really copied: the destination's first word is the source's
      if (auto st = device_.download(*dst, &last, 4); !st || last != 0x3F800000u)
        shader = failed(shader, "the copy shader did not copy");
    }
    if (auto d = device_.prepareCopy(*src, *dst, bytes); !d) {
      copy = failed(copy, d.error().message);
    } else if (auto t = time(**d, options_.reps, true); !t) {
      copy = failed(copy, t.error().message);
    } else {
      copy.value = 2.0 * double(bytes) / t->median;
      copy.cv = t->cv;
      copy.runs = uint32_t(t->count);
      copy.note = size_note;
    }
    return {shader, copy};
  }

  std::vector<PeakResult> overhead() {
    PeakResult dispatch{"dispatch", "empty dispatch, submit to fence", "us"};
    PeakResult submit{"submit", "empty vkQueueSubmit, submit to fence", "us"};
    auto o = measureDispatchOverhead(device_, options_.overhead_reps);
    if (!o) return {failed(dispatch, o.error().message), failed(submit, o.error().message)};
    dispatch.value = o->dispatch.median / 1e3;
    dispatch.cv = o->dispatch.cv;
    dispatch.runs = uint32_t(o->dispatch.count);
    dispatch.note = "1x1x1 workgroup of an empty shader, host clock, vkWaitForFences";
    if (const auto& best = o->fastest(); best.mode != "fence")
      dispatch.note += "; a " + best.mode + " wait: " + fmt(best.dispatch.median / 1e3) + " us";
    submit.value = o->submit.median / 1e3;
    submit.cv = o->submit.cv;
    submit.runs = uint32_t(o->submit.count);
    submit.note = "no command buffer, host clock";
    return {dispatch, submit};
  }

 private:
  static PeakResult failed(PeakResult r, const std::string& why) {
    r.value = 0;
    r.note = why;
    return r;
  }
  static std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }

  vk::Device& device_;
  const PeakOptions& options_;
  const std::atomic<bool>& cancel_;
};

}  // namespace

Result<DevicePeaks> measurePeaks(vk::Device& device, const PeakOptions& options, const std::atomic<bool>& cancel,
                                 const std::function<void(const PeakResult&)>& each) {
  device.setDispatchTimeout(0);  // the default watchdog: runs here are scaled to about 10 ms
  if (device.lost()) return makeError("the device was lost", VK_ERROR_DEVICE_LOST);
  DevicePeaks peaks;
  peaks.measured_at = nowIso8601();
  PeakMeter meter(device, options, cancel);
  auto add = [&](const PeakResult& r) {
    peaks.results.push_back(r);
    if (each) each(r);
  };
  try {
    add(meter.fma(false));
    add(meter.fma(true));
    for (const auto& shape : device.info().coopmat_shapes) add(meter.coopmat(shape));
    for (const auto& r : meter.bandwidth()) add(r);
    for (const auto& r : meter.overhead()) add(r);
  } catch (const Cancelled&) {
    return makeError("cancelled");
  }
  if (device.lost()) return makeError("the device was lost while measuring peaks", VK_ERROR_DEVICE_LOST);
  // The host CPU last: the device is idle by then (lavapipe runs on the same cores).
  auto host = measureHostPeaks(options, cancel, each);
  if (!host) return host.error();
  peaks.results.insert(peaks.results.end(), host->results.begin(), host->results.end());
  return peaks;
}

}  // namespace ks
