#include "engine/bench/runner.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

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

void fillRandom(std::vector<float>& v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> mag(1.0f / 64, 1.0f);
  for (auto& x : v) x = (rng() & 1) ? mag(rng) : -mag(rng);
}

namespace {
// Warm-up runs `plan.warmup` times and for at least `plan.warmup_ms`; a
// warm-up of 0 turns both off.
bool warmupWanted(const Plan& plan, uint32_t done, std::chrono::steady_clock::time_point start) {
  if (plan.warmup == 0) return false;
  if (done < plan.warmup) return true;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return ms < plan.warmup_ms;
}
}  // namespace

struct Runner::Problem {
  ProblemSize size;
  uint64_t seed = 0;
  std::vector<float> a, b, ref;
  bool has_ref = false;
};

Runner::Runner(vk::Device* device) : device_(device) {}
Runner::~Runner() = default;

const Runner::Problem& Runner::problem(const ProblemSize& size, uint64_t seed) {
  if (problem_ && problem_->size == size && problem_->seed == seed) return *problem_;
  problem_.reset();  // free the old inputs before allocating the new ones
  auto p = std::make_unique<Problem>();
  p->size = size;
  p->seed = seed;
  p->a.resize(size.m * size.k);
  p->b.resize(size.k * size.n);
  // Each matrix gets its own stream, derived from the plan seed and the size.
  const uint64_t base = seed * 0x9E3779B97F4A7C15ull ^ (size.m << 40) ^ (size.n << 20) ^ size.k;
  fillRandom(p->a, base ^ 0xA);
  fillRandom(p->b, base ^ 0xB);
  problem_ = std::move(p);
  return *problem_;
}

const std::vector<float>& Runner::reference(const Problem& p) {
  auto& mp = const_cast<Problem&>(p);
  if (!mp.has_ref) {
    mp.ref.assign(p.size.m * p.size.n, 0.0f);
    cpu::gemmOpenBlas(p.a.data(), p.b.data(), mp.ref.data(), p.size, Params{});
    mp.has_ref = true;
  }
  return mp.ref;
}

std::vector<Measurement> Runner::run(const Plan& plan, const RunCallbacks& cb, const std::atomic<bool>& cancel) {
  std::vector<Measurement> out;
  const size_t total = plan.items.size();
  if (cb.progress) cb.progress(0, total);
  for (size_t i = 0; i < total; ++i) {
    if (cancel.load()) break;
    out.push_back(runPoint(plan.items[i], plan, cancel));
    if (cb.point) cb.point(out.back());
    if (cb.progress) cb.progress(i + 1, total);
    if (out.back().status == PointStatus::Cancelled) break;
  }
  problem_.reset();
  return out;
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
  const vk::DeviceInfo* info = device_ ? &device_->info() : nullptr;
  if (kernel->backend == Backend::Vulkan && !device_) {
    m.status = PointStatus::Skipped;
    m.error = "unsupported: no Vulkan device";
    return m;
  }
  if (auto why = checkPoint(*kernel, item.size, item.params, info)) {
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
    return kernel->backend == Backend::Vulkan ? runGpu(*kernel, item, plan, cancel)
                                              : runCpu(*kernel, item, plan, cancel);
  } catch (const std::bad_alloc&) {
    m.status = PointStatus::Failed;
    m.error = "out of host memory for size " + item.size.str();
    problem_.reset();
    return m;
  }
}

void Runner::finish(Measurement& m, const KernelInfo& kernel, const std::vector<float>& c) {
  m.stats = computeStats(m.samples_ns);
  if (m.stats.median > 0) {
    m.gflops = kernel.flops(m.item.size) / m.stats.median;  // FLOP per ns = GFLOP/s
    m.gbps = kernel.bytes(m.item.size) / m.stats.median;
  }
  const Problem& p = problem(m.item.size, problem_->seed);
  const double tol = kernel.tolerance(m.item.size);
  auto maxAbs = [](const std::vector<float>& v) {
    float x = 0;
    for (float f : v) x = std::max(x, std::fabs(f));
    return double(x);
  };
  const double scale = std::sqrt(double(p.size.k)) * maxAbs(p.a) * maxAbs(p.b);
  if (kernel.id == "cpu.gemm.openblas") {
    // The reference cannot check itself: compare sampled entries with a
    // double-precision dot product instead.
    std::mt19937_64 rng(p.seed ^ 0x5EED);
    const size_t samples = std::min<size_t>(256, c.size());
    std::vector<float> got(samples), want(samples);
    for (size_t s = 0; s < samples; ++s) {
      const uint64_t idx = samples == c.size() ? s : rng() % c.size();
      got[s] = c[idx];
      want[s] = float(cpu::gemmEntryDouble(p.a.data(), p.b.data(), p.size, idx / p.size.n, idx % p.size.n));
    }
    m.verification = judge(relativeFrobeniusError(got.data(), want.data(), samples),
                           maxScaledError(got.data(), want.data(), samples, scale), tol,
                           std::to_string(samples) + " sampled entries vs a double-precision dot product");
  } else {
    const auto& ref = reference(p);
    m.verification = judge(relativeFrobeniusError(c.data(), ref.data(), c.size()),
                           maxScaledError(c.data(), ref.data(), c.size(), scale), tol, "all entries vs OpenBLAS sgemm");
  }
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
  const auto& s = item.size;
  const Problem& p = problem(s, plan.seed);

  auto a = device_->createBuffer(p.a.size() * 4, vk::Placement::DeviceLocal, "matrix A");
  if (!a) return fail(a.error().message);
  auto b = device_->createBuffer(p.b.size() * 4, vk::Placement::DeviceLocal, "matrix B");
  if (!b) return fail(b.error().message);
  auto c = device_->createBuffer(s.m * s.n * 4, vk::Placement::DeviceLocal, "matrix C");
  if (!c) return fail(c.error().message);
  if (auto st = device_->upload(*a, p.a.data(), p.a.size() * 4); !st) return fail(st.error().message);
  if (auto st = device_->upload(*b, p.b.data(), p.b.size() * 4); !st) return fail(st.error().message);
  // Poison: a kernel that leaves an element unwritten fails verification.
  if (auto st = device_->fill(*c, 0x7FC00000u); !st) return fail(st.error().message);

  vk::PipelineDesc desc;
  desc.name = kernel.shader;
  desc.source = shaderSource(kernel.shader);
  if (desc.source.empty()) return fail("shader " + kernel.shader + " is not embedded in this build");
  desc.defines = kernel.fixed_defines;
  for (const auto& [k, v] : item.params.values) desc.defines.emplace_back(k, std::to_string(v));
  desc.spec_constants = {item.params.wg.x, item.params.wg.y};
  desc.buffer_count = 3;
  desc.push_constant_bytes = 16;
  auto pipeline = device_->pipeline(desc);
  if (!pipeline) return fail(pipeline.error().message);

  const uint32_t push[4] = {uint32_t(s.m), uint32_t(s.n), uint32_t(s.k), 0};
  auto dispatch = device_->prepareDispatch(**pipeline, {&*a, &*b, &*c}, push, kernel.groups(s, item.params));
  if (!dispatch) return fail(dispatch.error().message);

  const bool gpu_clock = device_->info().timestamps;
  m.clock = gpu_clock ? "gpu_timestamp" : "wall";
  const auto warm_start = std::chrono::steady_clock::now();
  while (warmupWanted(plan, m.warmup_runs, warm_start)) {
    if (cancel.load()) {
      m.status = PointStatus::Cancelled;
      return m;
    }
    auto t = (*dispatch)->run();
    if (!t) return fail(t.error().message);
    ++m.warmup_runs;
  }
  for (uint32_t i = 0; i < plan.reps; ++i) {
    if (cancel.load()) {
      m.status = PointStatus::Cancelled;
      m.samples_ns.clear();
      m.wall_ns.clear();
      return m;
    }
    auto t = (*dispatch)->run();
    if (!t) return fail(t.error().message);
    const double ns = gpu_clock ? t->gpu_ns : t->wall_ns;
    if (!(ns > 0))
      return fail("the timer did not advance over the dispatch (one tick is " +
                  std::to_string(device_->info().timestamp_period_ns) + " ns): the kernel is too short to time");
    m.samples_ns.push_back(ns);
    if (gpu_clock) m.wall_ns.push_back(t->wall_ns);
  }
  std::vector<float> out(s.m * s.n);
  if (auto st = device_->download(*c, out.data(), out.size() * 4); !st) return fail(st.error().message);
  finish(m, kernel, out);
  return m;
}

Measurement Runner::runCpu(const KernelInfo& kernel, const PlanItem& item, const Plan& plan,
                           const std::atomic<bool>& cancel) {
  Measurement m;
  m.item = item;
  m.clock = "wall";
  const Problem& p = problem(item.size, plan.seed);
  std::vector<float> c(item.size.m * item.size.n, std::numeric_limits<float>::quiet_NaN());
  const auto warm_start = std::chrono::steady_clock::now();
  bool warming = true;
  while (m.samples_ns.size() < plan.reps) {
    if (cancel.load()) {
      m.status = PointStatus::Cancelled;
      m.samples_ns.clear();
      return m;
    }
    warming = warming && warmupWanted(plan, m.warmup_runs, warm_start);
    const auto t0 = std::chrono::steady_clock::now();
    kernel.cpu(p.a.data(), p.b.data(), c.data(), item.size, item.params);
    const auto t1 = std::chrono::steady_clock::now();
    if (warming)
      ++m.warmup_runs;
    else
      m.samples_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  finish(m, kernel, c);
  return m;
}

Result<DispatchOverhead> measureDispatchOverhead(vk::Device& device, uint32_t reps) {
  DispatchOverhead out;
  std::vector<double> ns;
  for (uint32_t i = 0; i < reps + 10; ++i) {
    auto t = device.emptySubmitNs();
    if (!t) return t.error();
    if (i >= 10) ns.push_back(*t);
  }
  out.submit = computeStats(ns);

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
  ns.clear();
  for (uint32_t i = 0; i < reps + 10; ++i) {
    auto t = (*dispatch)->run();
    if (!t) return t.error();
    if (i >= 10) ns.push_back(t->wall_ns);
  }
  out.dispatch = computeStats(ns);
  return out;
}

}  // namespace ks
