#pragma once
// The kernel registry: every variant is one record (data) and, for GPU
// kernels, one shader file. Adding a kernel = adding a record + a shader.
#include <array>
#include <deque>
#include <functional>
#include <optional>
#include <shared_mutex>
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
  // Where the best default depends on the device (e.g. a grid sized to its
  // multiprocessors): the value for this device and workgroup, or nullopt to
  // keep default_value. `device_default_help` says how it is chosen.
  std::function<std::optional<int>(const vk::DeviceInfo&, const WorkgroupShape&)> device_default;
  std::string device_default_help;

  // default_value, or the device's own default where there is one.
  int defaultFor(const vk::DeviceInfo* device, const WorkgroupShape& wg) const;
};

// CPU kernels read the workload's inputs and write its output in host memory.
using CpuFn = std::function<void(const std::vector<const void*>& inputs, void* output, const ProblemSize& size,
                                 const Params& params)>;

enum class BufferRole { Input, Output, Scratch };

// A device buffer of a point, bound in list order (binding 0, 1, ...). Inputs
// take the workload's inputs in order; the output is poisoned with NaN before
// the point; `zero_each_run` buffers (accumulators, counters) are cleared
// before every dispatch, outside the timed region.
struct BufferSpec {
  std::string name;
  uint64_t bytes = 0;
  BufferRole role = BufferRole::Input;
  bool zero_each_run = false;
  int input = -1;  // which workload input an Input buffer takes; -1: the next one
  // Where in that input this buffer's bytes start: an input too large for one
  // binding is split over several buffers (e.g. the row blocks of a matrix).
  uint64_t input_offset = 0;
};

// One dispatch of a point. A point with several (two-pass reductions) is
// timed as a whole, with a barrier between the steps.
struct DispatchStep {
  std::string shader;  // file under shaders/, or a kernel file's name
  std::string source;  // GLSL to compile instead of the embedded `shader` (kernel files)
  std::vector<std::pair<std::string, std::string>> defines;
  std::vector<uint32_t> spec_constants;
  std::array<uint32_t, 3> groups{1, 1, 1};
  std::vector<uint32_t> push;  // push-constant words (at most 8)
  // The step's own bindings (buffer numbers, slices); empty: every buffer of
  // the point, whole, in order.
  std::vector<vk::SubBinding> bindings;
  bool after_previous = true;  // false: touches nothing the previous step writes (no barrier)
};

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
  uint32_t size_rank = 3;  // 3: M x N x K (gemm), 2: M x N (gemv), 1: N (dot)
  std::string workload;    // inputs, reference and checks: "gemm", "gemv" or "dot"
  // Bandwidth-bound: its inputs are rotated among buffer sets so that points
  // that fit in a cache do not measure the cache (Plan::rotate_inputs).
  bool memory_bound = false;
  bool uses_workgroup = true;
  uint32_t workgroup_dims = 2;  // shaders read local_size x (and y) only
  WorkgroupShape default_wg{16, 16, 1};
  std::string constraints;  // human summary, e.g. "M, N, K multiples of 4"
  std::vector<std::string> required_extensions;

  // nullopt when the size fits, else the reason it does not.
  std::function<std::optional<std::string>(const ProblemSize&, const Params&)> check_size;
  // Kernel-specific rules on parameters and workgroup shape (e.g. square tiles).
  std::function<std::optional<std::string>(const Params&)> check_params;
  // Device features a point needs beyond extensions (fp64, atomics, subgroup operations).
  std::function<std::optional<std::string>(const Params&, const vk::DeviceInfo&)> check_device;
  // How the point runs on this device, where that depends on it (e.g. which atomic).
  std::function<std::string(const Params&, const vk::DeviceInfo&)> method_note;
  std::function<uint64_t(const Params&)> shared_bytes;
  std::function<std::array<uint32_t, 3>(const ProblemSize&, const Params&)> groups;
  std::function<double(const ProblemSize&)> flops;
  // Bytes moved: each input read once, the output written once.
  std::function<double(const ProblemSize&, const Params&)> bytes;
  // The device buffers of a point, checked against the limits before anything is allocated.
  std::function<std::vector<BufferSpec>(const ProblemSize&, const Params&)> buffers;
  // The dispatches of a point; unset = one dispatch of `shader` with the
  // tunables as defines, the workgroup as specialization constants 0..2,
  // `groups`, and push constants M, N, K.
  std::function<std::vector<DispatchStep>(const ProblemSize&, const Params&, const vk::DeviceInfo&)> steps;
  // Verification tolerance (relative error) of a point.
  std::function<double(const ProblemSize&, const Params&)> tolerance;
  // The reference is this kernel's own library call: check it against a
  // double-precision spot check instead.
  bool reference_is_self = false;
  CpuFn cpu;

  // A kernel brought as a file (kernel_file.h): compiled from its own text,
  // which sessions embed so that they can show and re-run it elsewhere.
  bool user = false;
  std::string source_path;  // where it was read from ("" when it came from a session)
  std::string source;       // the whole file, manifest included

  const Tunable* tunable(const std::string& name) const;
  // Every tunable at its default; with a device, at the device's default
  // where the tunable has one.
  Params defaultParams(const vk::DeviceInfo* device = nullptr) const;
};

// A snapshot of the registry's records, iterated as `const KernelInfo&`.
class KernelList {
 public:
  struct iterator {
    std::vector<const KernelInfo*>::const_iterator it;
    const KernelInfo& operator*() const { return **it; }
    const KernelInfo* operator->() const { return *it; }
    iterator& operator++() {
      ++it;
      return *this;
    }
    bool operator==(const iterator&) const = default;
  };
  explicit KernelList(std::vector<const KernelInfo*> records) : records_(std::move(records)) {}
  iterator begin() const { return {records_.begin()}; }
  iterator end() const { return {records_.end()}; }
  size_t size() const { return records_.size(); }
  const KernelInfo& operator[](size_t i) const { return *records_[i]; }

 private:
  std::vector<const KernelInfo*> records_;
};

// The built-in kernels, then the user's kernel files in the order they were
// added. Thread-safe: the engine thread reads while the UI thread adds.
class Registry {
 public:
  static Registry& instance();
  KernelList all() const;
  const KernelInfo* find(const std::string& id) const;
  // "all", exact ids and globs ("gemm.*", "*openblas"), comma separated.
  Result<std::vector<const KernelInfo*>> match(const std::string& pattern_list) const;
  // Adds a kernel file's kernel, or replaces the one of the same id added
  // before (an edited file). Built-in ids cannot be taken. A replaced record
  // stays alive: a sweep on the engine thread may still hold it.
  Result<const KernelInfo*> addUserKernel(KernelInfo kernel);

 private:
  Registry();
  std::vector<KernelInfo> builtin_;
  mutable std::shared_mutex mutex_;
  std::deque<KernelInfo> user_records_;  // every user record ever added (stable addresses)
  std::vector<const KernelInfo*> user_;  // the current one per id
};

// Why this device cannot run the kernel at all (missing extension/feature).
std::optional<std::string> unsupportedReason(const KernelInfo& kernel, const vk::DeviceInfo* device);

// Why this point (size + params) cannot run on this device: size constraints,
// illegal tunables, workgroup limits, shared memory, buffer limits. nullopt
// when it can. With device == nullptr only the kernel's own rules apply.
std::optional<std::string> checkPoint(const KernelInfo& kernel, const ProblemSize& size, const Params& params,
                                      const vk::DeviceInfo* device);

// The dispatches of a point (the kernel's own, or the single default one).
std::vector<DispatchStep> dispatchSteps(const KernelInfo& kernel, const ProblemSize& size, const Params& params,
                                        const vk::DeviceInfo& device);

// The pipeline of one dispatch: its shader (embedded, or a kernel file's own
// text), defines and specialization constants, `buffer_count` storage buffers
// and 32 bytes of push constants (the step's own bindings, where it has them,
// set the count). Fails when the shader is not in this build.
Result<vk::PipelineDesc> pipelineDesc(const DispatchStep& step, uint32_t buffer_count);

// FNV-1a 64 of a text, 16 hex digits (shader hashes, kernel-file hashes).
std::string textHash(const std::string& text);

// What a dispatch's result depends on: its source and defines, hashed.
std::string dispatchHash(const vk::PipelineDesc& desc);
// Measurement::shader_hash of a point, without running it ("h1;h2" per
// dispatch); "" for CPU kernels or when a shader is not in this build.
std::string pointShaderHash(const KernelInfo& kernel, const ProblemSize& size, const Params& params,
                            const vk::DeviceInfo& device);

// Maps a typed size onto this kernel's problem size, or says why it cannot.
Result<ProblemSize> problemSize(const KernelInfo& kernel, const SizeSpec& spec);

// A workload's sizes, FLOP and byte counts, buffers and tolerance (the family
// files' own, also given to kernel files of that workload).
void useGemmWorkload(KernelInfo& k);
void useGemvWorkload(KernelInfo& k);
void useDotWorkload(KernelInfo& k);  // buffers: x, y, result (not zeroed)

// Registration hooks, one per family file.
void registerGemmKernels(std::vector<KernelInfo>& out);
void registerGemvKernels(std::vector<KernelInfo>& out);
void registerDotKernels(std::vector<KernelInfo>& out);

// Text of a shader embedded at build time (empty if unknown).
const std::string& shaderSource(const std::string& file);

}  // namespace ks
