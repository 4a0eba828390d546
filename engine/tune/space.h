#pragma once
// The space a tune searches: a kernel's tunables x workgroup shapes, pruned
// before anything runs by the kernel's own rules and the device's limits.
#include <map>
#include <string>
#include <vector>

#include "engine/kernels/registry.h"
#include "engine/tune/search.h"
#include "engine/tune/tune_record.h"

namespace ks {

// Workgroup shapes a tune tries when none are given: common shapes of the
// kernel's dimensionality, and its own default.
std::vector<WorkgroupShape> workgroupPresets(const KernelInfo& kernel);

// The dimensions: each tunable with all its legal values (or those `only`
// lists, which must be legal), then "wg" with `shapes` (empty: the presets)
// when the kernel takes a workgroup shape. A space over 1,000,000
// combinations is refused: narrow it with `only`.
Result<std::vector<TuneDimension>> tuneDimensions(const KernelInfo& kernel,
                                                  const std::map<std::string, std::vector<int>>& only,
                                                  const std::vector<WorkgroupShape>& shapes);

struct PrunedSpace {
  SearchSpace search;
  uint64_t total = 0;
  std::vector<TunePruned> pruned;  // by reason, largest group first
};

// Every combination checked with checkPoint (the kernel's constraints, its size
// rules, shared memory, invocations, buffer and grid limits of `device`): what
// fails is pruned with the reason and never reaches the device. Reasons that
// differ only in their numbers are one group, named by its first ("e.g. ...").
PrunedSpace pruneSpace(const std::vector<TuneDimension>& dims, const KernelInfo& kernel, const ProblemSize& size,
                       const vk::DeviceInfo* device);

// The parameters of a configuration (dimensions not in the space keep `base`'s values).
Params configParams(const std::vector<TuneDimension>& dims, const TuneConfig& c, const Params& base);

}  // namespace ks
