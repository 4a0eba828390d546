#include "engine/tune/space.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace ks {

std::vector<WorkgroupShape> workgroupPresets(const KernelInfo& kernel) {
  std::vector<WorkgroupShape> shapes;
  if (kernel.workgroup_dims >= 2)
    shapes = {{8, 8, 1}, {16, 8, 1}, {8, 16, 1}, {16, 16, 1}, {32, 8, 1}, {8, 32, 1}, {32, 16, 1}, {32, 32, 1}};
  else
    shapes = {{32, 1, 1}, {64, 1, 1}, {128, 1, 1}, {256, 1, 1}, {512, 1, 1}, {1024, 1, 1}};
  if (std::find(shapes.begin(), shapes.end(), kernel.default_wg) == shapes.end()) shapes.push_back(kernel.default_wg);
  std::sort(shapes.begin(), shapes.end(), [](const WorkgroupShape& a, const WorkgroupShape& b) {
    return std::make_pair(a.invocations(), a) < std::make_pair(b.invocations(), b);
  });
  return shapes;
}

Result<std::vector<TuneDimension>> tuneDimensions(const KernelInfo& kernel,
                                                  const std::map<std::string, std::vector<int>>& only,
                                                  const std::vector<WorkgroupShape>& shapes) {
  std::vector<TuneDimension> dims;
  for (const auto& [name, values] : only)
    if (!kernel.tunable(name)) {
      std::string names;
      for (const auto& t : kernel.tunables) names += (names.empty() ? "" : ", ") + t.name;
      return makeError(kernel.id + " has no tunable " + name +
                       (names.empty() ? " (it has none)" : " (its tunables: " + names + ")"));
    }
  for (const auto& t : kernel.tunables) {
    TuneDimension d{t.name, t.values, {}};
    if (auto it = only.find(t.name); it != only.end()) {
      for (int v : it->second)
        if (std::find(t.values.begin(), t.values.end(), v) == t.values.end()) {
          std::string legal;
          for (int x : t.values) legal += (legal.empty() ? "" : ", ") + std::to_string(x);
          return makeError(t.name + "=" + std::to_string(v) + " is not a legal value of " + kernel.id + " (" + legal +
                           ")");
        }
      d.values = it->second;
      std::sort(d.values.begin(), d.values.end());
      d.values.erase(std::unique(d.values.begin(), d.values.end()), d.values.end());
    }
    dims.push_back(std::move(d));
  }
  if (kernel.uses_workgroup) {
    TuneDimension wg{"wg", {}, shapes.empty() ? workgroupPresets(kernel) : shapes};
    if (!shapes.empty()) {
      for (const auto& s : shapes)
        if (kernel.workgroup_dims < 2 && (s.y != 1 || s.z != 1))
          return makeError(kernel.id + " takes one-dimensional workgroups (e.g. 256), not " + s.str());
      std::sort(wg.shapes.begin(), wg.shapes.end());
      wg.shapes.erase(std::unique(wg.shapes.begin(), wg.shapes.end()), wg.shapes.end());
    }
    dims.push_back(std::move(wg));
  } else if (!shapes.empty()) {
    return makeError(kernel.id + " has no workgroup shape to tune (its tiles decide it)");
  }
  uint64_t total = 1;
  for (const auto& d : dims) {
    total *= std::max<size_t>(d.size(), 1);
    if (total > 1000000)
      return makeError("the space of " + kernel.id +
                       " has over 1,000,000 configurations; narrow it with --param NAME=V1,V2 or --wg");
  }
  if (dims.empty() || total <= 1)
    return makeError(kernel.id + " has nothing to tune: no tunables" +
                     std::string(kernel.uses_workgroup ? " and one workgroup shape" : " and no workgroup shape"));
  return dims;
}

Params configParams(const std::vector<TuneDimension>& dims, const TuneConfig& c, const Params& base) {
  Params p = base;
  for (size_t d = 0; d < dims.size() && d < c.size(); ++d) {
    if (dims[d].isWorkgroup())
      p.wg = dims[d].shapes[c[d]];
    else
      p.values[dims[d].name] = dims[d].values[c[d]];
  }
  return p;
}

PrunedSpace pruneSpace(const std::vector<TuneDimension>& dims, const KernelInfo& kernel, const ProblemSize& size,
                       const vk::DeviceInfo* device) {
  PrunedSpace out;
  for (const auto& d : dims) out.search.dim_sizes.push_back(uint32_t(d.size()));
  out.total = 1;
  for (uint32_t n : out.search.dim_sizes) out.total *= n;
  // Reasons that differ only in numbers (bytes, parameter values) form one
  // group, shown by its first reason with "e.g.".
  std::map<std::string, size_t> group;  // reason with its numbers as '#' -> index into out.pruned
  std::vector<bool> mixed;
  const auto shape = [](const std::string& reason) {
    std::string key;
    for (char ch : reason)
      if (!std::isdigit(static_cast<unsigned char>(ch)))
        key += ch;
      else if (key.empty() || key.back() != '#')
        key += '#';
    return key;
  };
  const Params base = kernel.defaultParams(device);
  TuneConfig c(dims.size(), 0);
  for (uint64_t i = 0; i < out.total; ++i) {
    if (auto why = checkPoint(kernel, size, configParams(dims, c, base), device)) {
      auto [it, added] = group.emplace(shape(*why), out.pruned.size());
      if (added) {
        out.pruned.push_back({*why, {}});
        mixed.push_back(false);
      } else if (!mixed[it->second] && out.pruned[it->second].reason != *why) {
        mixed[it->second] = true;
        out.pruned[it->second].reason = "e.g. " + out.pruned[it->second].reason;
      }
      out.pruned[it->second].configs.push_back(c);
    } else {
      out.search.valid.push_back(c);
    }
    // The next combination, the last dimension fastest.
    for (size_t d = dims.size(); d-- > 0;) {
      if (++c[d] < out.search.dim_sizes[d]) break;
      c[d] = 0;
    }
  }
  std::stable_sort(out.pruned.begin(), out.pruned.end(),
                   [](const TunePruned& a, const TunePruned& b) { return a.configs.size() > b.configs.size(); });
  return out;
}

}  // namespace ks
