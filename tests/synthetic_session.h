#pragma once
// Sessions with samples chosen by the test, shaped as the Runner leaves them:
// statistics, GFLOPS, GB/s and the verification come from the engine's own
// functions, so the strict session loader accepts them.
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/bench/runner.h"
#include "engine/bench/statistics.h"
#include "engine/bench/verify.h"
#include "engine/kernels/registry.h"
#include "engine/session/session.h"

namespace ks::testing {

inline const KernelInfo& kernelById(const std::string& id) {
  const KernelInfo* k = Registry::instance().find(id);
  if (!k) throw std::invalid_argument("no kernel " + id);
  return *k;
}

inline PlanItem planItem(const std::string& kernel_id, uint64_t n, WorkgroupShape wg = {}) {
  const KernelInfo& k = kernelById(kernel_id);
  PlanItem item;
  item.kernel = kernel_id;
  item.params = k.defaultParams();
  if (k.uses_workgroup && wg != WorkgroupShape{}) item.params.wg = wg;
  item.size = problemSize(k, {n}).value();
  return item;
}

// An ok, verified point with these samples (CPU kernels on the wall clock,
// GPU kernels on timestamps).
inline Measurement okPoint(const PlanItem& item, std::vector<double> samples) {
  const KernelInfo& k = kernelById(item.kernel);
  Measurement m;
  m.item = item;
  m.clock = k.backend == Backend::Cpu ? "wall" : "gpu_timestamp";
  m.samples_ns = std::move(samples);
  m.stop_reason = "reps";
  m.stats = computeStats(m.samples_ns);
  m.gflops = k.flops(item.size) / m.stats.median;
  m.gbps = k.bytes(item.size, item.params) / m.stats.median;
  const double tolerance = k.tolerance ? k.tolerance(item.size, item.params) : 0;
  m.verification = judge(0.5 * tolerance, 0.5 * tolerance, tolerance, "synthetic");
  return m;
}

// A point that failed, as a lost device leaves it: the reason and no samples.
inline Measurement failedPoint(const PlanItem& item, const std::string& error) {
  Measurement m;
  m.item = item;
  m.status = PointStatus::Failed;
  m.error = error;
  m.verification.status = VerifyStatus::Failed;
  return m;
}

inline vk::DeviceInfo syntheticDevice(const std::string& name, const std::string& driver_version) {
  vk::DeviceInfo d;
  d.name = name;
  d.type = "cpu";
  d.driver_name = "llvmpipe";
  d.driver_version = driver_version;
  d.api_version = "1.3.255";
  d.max_shared_memory = 32768;
  d.max_invocations = 1024;
  d.max_workgroup_size = {1024, 1024, 1024};
  d.timestamps = true;
  return d;
}

// A session of these points; plan.reps is the sample count of the first ok point
// (the loader wants every ok point to have that many).
inline Session syntheticSession(const std::vector<Measurement>& points) {
  Session s;
  s.created = "2024-05-06T07:08:09Z";
  s.app_version = "1.0.0-test";
  s.app_commit = "0123456789ab";
  s.glslang_version = "11:14.0.0";
  s.host.cpu_model = "Test CPU";
  s.host.logical_cores = 2;
  s.host.openblas_core = "Haswell";
  s.host.openblas_threads = 2;
  s.device = syntheticDevice("llvmpipe (LLVM 15.0.7, 256 bits)", "23.2.1");
  s.plan.warmup = 0;
  for (const auto& m : points) s.plan.items.push_back(m.item);
  for (const auto& m : points)
    if (m.status == PointStatus::Ok) {
      s.plan.reps = uint32_t(m.samples_ns.size());
      break;
    }
  s.points = points;
  return s;
}

// n different values spaced center / 1000 apart, symmetric about `center`
// (which is the median).
inline std::vector<double> samplesAround(double center, size_t n) {
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) out.push_back(center + (double(i) - double(n - 1) / 2) * center * 1e-3);
  return out;
}

}  // namespace ks::testing
