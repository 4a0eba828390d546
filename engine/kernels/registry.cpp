#include "engine/kernels/registry.h"

#include <fnmatch.h>

#include <algorithm>
#include <sstream>

#include "engine/kernels/experiments.h"
#include "engine/kernels/shader_sources.h"

namespace ks {

std::string ProblemSize::str() const {
  if (rank == 1) return std::to_string(n);
  if (rank == 2) return m == n ? std::to_string(m) : std::to_string(m) + "x" + std::to_string(n);
  if (m == n && n == k) return std::to_string(m);
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::string SizeSpec::str() const {
  std::string s;
  for (auto d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

std::string WorkgroupShape::str() const {
  std::string s = std::to_string(x) + "x" + std::to_string(y);
  if (z != 1) s += "x" + std::to_string(z);
  return s;
}

Result<WorkgroupShape> WorkgroupShape::parse(const std::string& text) {
  std::vector<uint32_t> dims;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    if (part.empty() || part.size() > 6 ||
        !std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); }))
      return makeError("malformed workgroup shape '" + text + "' (expected e.g. 16x16 or 64x1x1)");
    const auto v = std::stoul(part);
    if (v == 0) return makeError("workgroup shape '" + text + "' has a zero dimension");
    dims.push_back(static_cast<uint32_t>(v));
  }
  if (!text.empty() && text.back() == 'x')
    return makeError("malformed workgroup shape '" + text + "' (expected e.g. 16x16)");
  if (dims.empty() || dims.size() > 3)
    return makeError("malformed workgroup shape '" + text + "' (expected e.g. 16x16 or 64x1x1)");
  WorkgroupShape s;
  s.x = dims[0];
  s.y = dims.size() > 1 ? dims[1] : 1;
  s.z = dims.size() > 2 ? dims[2] : 1;
  return s;
}

std::string Params::str(bool with_wg) const {
  std::string s = with_wg ? wg.str() : "";
  for (const auto& [k, v] : values) {
    if (!s.empty()) s += ' ';
    s += k + "=" + std::to_string(v);
  }
  return s.empty() ? "-" : s;
}

std::string backendName(Backend b) { return b == Backend::Vulkan ? "vulkan" : "cpu"; }

const Tunable* KernelInfo::tunable(const std::string& name) const {
  for (const auto& t : tunables)
    if (t.name == name) return &t;
  return nullptr;
}

int Tunable::defaultFor(const vk::DeviceInfo* device, const WorkgroupShape& wg) const {
  if (device && device_default)
    if (auto v = device_default(*device, wg); v && std::find(values.begin(), values.end(), *v) != values.end())
      return *v;
  return default_value;
}

Params KernelInfo::defaultParams(const vk::DeviceInfo* device) const {
  Params p;
  p.wg = uses_workgroup ? default_wg : WorkgroupShape{1, 1, 1};
  for (const auto& t : tunables) p.values[t.name] = t.defaultFor(device, p.wg);
  return p;
}

Registry::Registry() {
  registerGemmKernels(builtin_);
  registerGemvKernels(builtin_);
  registerDotKernels(builtin_);
  registerTransferKernels(builtin_);
  registerInterleaveKernels(builtin_);
}

KernelList Registry::all() const {
  std::vector<const KernelInfo*> out;
  for (const auto& k : builtin_) out.push_back(&k);
  std::shared_lock lock(mutex_);
  out.insert(out.end(), user_.begin(), user_.end());
  return KernelList(std::move(out));
}

Result<const KernelInfo*> Registry::addUserKernel(KernelInfo kernel) {
  for (const auto& k : builtin_)
    if (k.id == kernel.id) return makeError("id '" + kernel.id + "' is a built-in kernel's: choose another");
  kernel.user = true;
  std::unique_lock lock(mutex_);
  const KernelInfo* added = &user_records_.emplace_back(std::move(kernel));
  for (auto& current : user_)
    if (current->id == added->id) {
      current = added;
      return added;
    }
  user_.push_back(added);
  return added;
}

std::vector<DispatchStep> dispatchSteps(const KernelInfo& kernel, const ProblemSize& size, const Params& params,
                                        const vk::DeviceInfo& device) {
  if (kernel.steps) return kernel.steps(size, params, device);
  DispatchStep step;
  step.shader = kernel.shader;
  step.source = kernel.source;
  step.defines = kernel.fixed_defines;
  for (const auto& [k, v] : params.values) step.defines.emplace_back(k, std::to_string(v));
  step.spec_constants = {params.wg.x, params.wg.y, params.wg.z};
  step.groups = kernel.groups(size, params);
  step.push = {uint32_t(size.m), uint32_t(size.n), uint32_t(size.k), 0};
  return {step};
}

Result<vk::PipelineDesc> pipelineDesc(const DispatchStep& step, uint32_t buffer_count) {
  vk::PipelineDesc desc;
  desc.name = step.shader;
  desc.source = step.source.empty() ? shaderSource(step.shader) : step.source;
  if (desc.source.empty()) return makeError("shader " + step.shader + " is not embedded in this build");
  desc.defines = step.defines;
  desc.spec_constants = step.spec_constants;
  desc.buffer_count = step.bindings.empty() ? buffer_count : uint32_t(step.bindings.size());
  desc.push_constant_bytes = 32;
  return desc;
}

std::string textHash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

std::string dispatchHash(const vk::PipelineDesc& desc) {
  std::string hashed = desc.source;
  for (const auto& [name, value] : desc.defines) hashed += name + "=" + value + ";";
  return textHash(hashed);
}

std::string pointShaderHash(const KernelInfo& kernel, const ProblemSize& size, const Params& params,
                            const vk::DeviceInfo& device) {
  if (kernel.backend != Backend::Vulkan) return {};
  std::string out;
  for (const auto& step : dispatchSteps(kernel, size, params, device)) {
    auto desc = pipelineDesc(step, 1);
    if (!desc) return {};
    out += (out.empty() ? "" : ";") + dispatchHash(*desc);
  }
  return out;
}

Result<ProblemSize> problemSize(const KernelInfo& kernel, const SizeSpec& spec) {
  const auto& d = spec.dims;
  ProblemSize s;
  s.rank = kernel.size_rank;
  if (kernel.size_rank == 3 && d.size() == 1) {
    s.m = s.n = s.k = d[0];
  } else if (kernel.size_rank == 3 && d.size() == 3) {
    s.m = d[0], s.n = d[1], s.k = d[2];
  } else if (kernel.size_rank == 2 && d.size() == 1) {
    s.m = s.n = d[0], s.k = 1;
  } else if (kernel.size_rank == 2 && d.size() == 2) {
    s.m = d[0], s.n = d[1], s.k = 1;
  } else if (kernel.size_rank == 1 && d.size() == 1) {
    s.m = 1, s.n = d[0], s.k = 1;
  } else {
    static const char* forms[] = {"", "N (elements)", "N or MxN", "N or MxNxK"};
    return makeError(kernel.id + " takes sizes " + forms[kernel.size_rank] + ", not " + spec.str());
  }
  return s;
}

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

const KernelInfo* Registry::find(const std::string& id) const {
  for (const auto& k : builtin_)
    if (k.id == id) return &k;
  std::shared_lock lock(mutex_);
  for (const KernelInfo* k : user_)
    if (k->id == id) return k;
  return nullptr;
}

Result<std::vector<const KernelInfo*>> Registry::match(const std::string& pattern_list) const {
  std::vector<const KernelInfo*> out;
  auto add = [&](const KernelInfo* k) {
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  };
  std::stringstream ss(pattern_list);
  std::string pattern;
  bool any = false;
  while (std::getline(ss, pattern, ',')) {
    pattern.erase(0, pattern.find_first_not_of(" \t"));
    pattern.erase(pattern.find_last_not_of(" \t") + 1);
    if (pattern.empty()) continue;
    any = true;
    const auto kernels = all();
    if (pattern == "all") {
      for (const auto& k : kernels) add(&k);
      continue;
    }
    bool matched = false;
    for (const auto& k : kernels)
      if (fnmatch(pattern.c_str(), k.id.c_str(), 0) == 0) {
        add(&k);
        matched = true;
      }
    if (!matched) return makeError("unknown kernel '" + pattern + "' (see `kernelscope-cli kernels`)");
  }
  if (!any) return makeError("no kernels given");
  return out;
}

std::optional<std::string> unsupportedReason(const KernelInfo& kernel, const vk::DeviceInfo* device) {
  if (kernel.backend == Backend::Cpu) return std::nullopt;
  if (!device) return "no Vulkan device";
  for (const auto& ext : kernel.required_extensions)
    if (!device->hasExtension(ext)) return "no " + ext;
  return std::nullopt;
}

std::optional<std::string> checkPoint(const KernelInfo& kernel, const ProblemSize& size, const Params& params,
                                      const vk::DeviceInfo* device) {
  if (size.m == 0 || size.n == 0 || size.k == 0) return "sizes must be at least 1";
  // Byte counts are 64-bit: refuse operands no memory could hold before they overflow.
  const double most =
      std::max({double(size.m) * double(size.n), double(size.n) * double(size.k), double(size.m) * double(size.k)});
  if (most > double(1ull << 40))
    return "size " + size.str() + " has an operand of " + std::to_string(uint64_t(most)) +
           " elements, more than any device's memory holds";
  // Without a device only the kernel's own rules are checked (e.g. a session
  // file read on another machine); the runner refuses GPU points itself.
  if (device)
    if (auto why = unsupportedReason(kernel, device)) return "unsupported: " + *why;
  for (const auto& [name, value] : params.values) {
    const Tunable* t = kernel.tunable(name);
    if (!t) return kernel.id + " has no tunable " + name;
    if (std::find(t->values.begin(), t->values.end(), value) == t->values.end()) {
      std::string legal;
      for (int v : t->values) legal += (legal.empty() ? "" : ",") + std::to_string(v);
      return name + "=" + std::to_string(value) + " is not a legal value for " + kernel.id + " (" + legal + ")";
    }
  }
  if (kernel.backend == Backend::Vulkan && params.wg.z != 1 && kernel.workgroup_dims < 3)
    return "workgroup " + params.wg.str() + ": " + kernel.id + " uses a 2-D workgroup (z must be 1)";
  if (kernel.backend == Backend::Vulkan && params.wg.y != 1 && kernel.workgroup_dims < 2)
    return "workgroup " + params.wg.str() + ": " + kernel.id + " uses a 1-D workgroup (write e.g. 256x1)";
  if (kernel.backend == Backend::Vulkan && device) {
    const auto& wg = params.wg;
    const std::array<uint32_t, 3> dims{wg.x, wg.y, wg.z};
    for (int i = 0; i < 3; ++i)
      if (dims[i] > device->max_workgroup_size[i])
        return "workgroup " + wg.str() + ": dimension " + "xyz"[i] + std::string(" is ") + std::to_string(dims[i]) +
               ", over maxComputeWorkGroupSize " + std::to_string(device->max_workgroup_size[i]);
    if (wg.invocations() > device->max_invocations)
      return "workgroup " + wg.str() + " has " + std::to_string(wg.invocations()) +
             " invocations, over maxComputeWorkGroupInvocations " + std::to_string(device->max_invocations);
    if (kernel.shared_bytes) {
      const uint64_t shared = kernel.shared_bytes(params);
      if (shared > device->max_shared_memory)
        return "needs " + std::to_string(shared) + " bytes of shared memory with " + params.str(true) +
               ", over maxComputeSharedMemorySize " + std::to_string(device->max_shared_memory);
    }
  }
  if (kernel.check_params)
    if (auto why = kernel.check_params(params)) return why;
  if (kernel.check_device && device)
    if (auto why = kernel.check_device(params, *device)) return "unsupported: " + *why;
  if (kernel.check_size)
    if (auto why = kernel.check_size(size, params)) return why;
  // Buffers over the device's limits are refused before anything is allocated.
  if (kernel.backend == Backend::Vulkan && device && kernel.buffers) {
    auto mib = [](uint64_t b) { return std::to_string((b + (1 << 20) - 1) >> 20) + " MiB"; };
    for (const auto& buffer : kernel.buffers(size, params)) {
      const std::string& name = buffer.name;
      const uint64_t bytes = buffer.bytes;
      if (bytes > device->max_storage_buffer_range)
        return name + " needs " + mib(bytes) + ", over this device's maxStorageBufferRange (" +
               mib(device->max_storage_buffer_range) + ")";
      if (device->max_allocation_size && bytes > device->max_allocation_size)
        return name + " needs " + mib(bytes) + ", over this device's maxMemoryAllocationSize (" +
               mib(device->max_allocation_size) + ")";
    }
  }
  // A grid over the device's limits would be refused by the driver, or worse.
  if (kernel.backend == Backend::Vulkan && device)
    for (const auto& step : dispatchSteps(kernel, size, params, *device))
      for (int i = 0; i < 3; ++i)
        if (step.groups[i] > device->max_workgroup_count[i])
          return "a grid of " + std::to_string(step.groups[0]) + "x" + std::to_string(step.groups[1]) + "x" +
                 std::to_string(step.groups[2]) + " workgroups: dimension " + "xyz"[i] +
                 " is over maxComputeWorkGroupCount " + std::to_string(device->max_workgroup_count[i]);
  return std::nullopt;
}

const std::string& shaderSource(const std::string& file) {
  static const std::string empty;
  const auto& all = embeddedShaders();
  auto it = all.find(file);
  return it == all.end() ? empty : it->second;
}

}  // namespace ks
