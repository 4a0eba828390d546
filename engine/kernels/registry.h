#pragma once
// The kernel registry: every variant is one record (data) and, for GPU
// kernels, one shader file. Adding a kernel = adding a record + a shader.
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/kernels/types.h"
#include "engine/vulkan/context.h"

namespace ks {

enum class Backend { Vulkan, Cpu };
std::string backendName(Backend b);

struct Tunable {
  std::string name;
  std::vector<int> values;  // legal values
  int default_value = 0;
  std::string help;
};

// CPU kernels compute C = A * B on host memory.
using CpuGemmFn = void (*)(const float* a, const float* b, float* c, const ProblemSize& size, const Params& params);

struct KernelInfo {
  std::string id;  // family.variant, e.g. gemm.tiled_shared
  std::string family;
  Backend backend = Backend::Vulkan;
  std::string title;
  std::string description;
  std::string origin;                                              // where the variant comes from
  std::string shader;                                              // file under shaders/ (Vulkan only)
  std::vector<std::pair<std::string, std::string>> fixed_defines;  // a shader shared by variants
  std::vector<Tunable> tunables;
  bool uses_workgroup = true;
  uint32_t workgroup_dims = 2;  // shaders read local_size x and y only
  WorkgroupShape default_wg{16, 16, 1};
  std::string constraints;  // human summary, e.g. "M, N, K multiples of 4"
  std::vector<std::string> required_extensions;

  // nullopt when the size fits, else the reason it does not.
  std::function<std::optional<std::string>(const ProblemSize&, const Params&)> check_size;
  // Kernel-specific rules on parameters and workgroup shape (e.g. square tiles).
  std::function<std::optional<std::string>(const Params&)> check_params;
  std::function<uint64_t(const Params&)> shared_bytes;
  std::function<std::array<uint32_t, 3>(const ProblemSize&, const Params&)> groups;
  std::function<double(const ProblemSize&)> flops;
  std::function<double(const ProblemSize&)> bytes;  // each input read once, output written once
  // The device buffers a point needs (name, bytes), checked against the limits.
  std::function<std::vector<std::pair<std::string, uint64_t>>(const ProblemSize&)> buffers;
  // Verification tolerance for a size (relative error).
  std::function<double(const ProblemSize&)> tolerance;
  CpuGemmFn cpu = nullptr;

  const Tunable* tunable(const std::string& name) const;
  Params defaultParams() const;
};

class Registry {
 public:
  static const Registry& instance();
  const std::vector<KernelInfo>& all() const { return kernels_; }
  const KernelInfo* find(const std::string& id) const;
  // "all", exact ids and globs ("gemm.*", "*openblas"), comma separated.
  Result<std::vector<const KernelInfo*>> match(const std::string& pattern_list) const;

 private:
  Registry();
  std::vector<KernelInfo> kernels_;
};

// Why this device cannot run the kernel at all (missing extension/feature).
std::optional<std::string> unsupportedReason(const KernelInfo& kernel, const vk::DeviceInfo* device);

// Why this point (size + params) cannot run on this device: size constraints,
// illegal tunables, workgroup limits, shared memory, buffer limits. nullopt
// when it can. With device == nullptr only the kernel's own rules apply.
std::optional<std::string> checkPoint(const KernelInfo& kernel, const ProblemSize& size, const Params& params,
                                      const vk::DeviceInfo* device);

// Registration hooks, one per family file.
void registerGemmKernels(std::vector<KernelInfo>& out);

// Text of a shader embedded at build time (empty if unknown).
const std::string& shaderSource(const std::string& file);

}  // namespace ks
