#pragma once
// Vulkan: instance, device probe and selection, buffers, compute pipelines
// (cached), and timed dispatches with GPU timestamps.
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/result.h"

namespace ks::vk {

std::string resultName(VkResult r);
std::string vendorName(uint32_t vendor_id);
Error vkError(VkResult r, const std::string& what);

struct DeviceInfo {
  uint32_t index = 0;
  std::string name;
  std::string type;  // discrete, integrated, virtual, cpu, other
  uint32_t vendor_id = 0;
  std::string vendor;  // from vendor_id: NVIDIA, AMD, Intel, Mesa, ...
  uint32_t device_id = 0;
  std::string driver_name;
  std::string driver_info;
  std::string driver_version;
  std::string api_version;
  uint32_t subgroup_size = 0;
  uint32_t max_shared_memory = 0;
  uint32_t max_invocations = 0;
  std::array<uint32_t, 3> max_workgroup_size{};
  std::array<uint32_t, 3> max_workgroup_count{};
  uint64_t max_storage_buffer_range = 0;
  uint64_t min_storage_offset_alignment = 256;  // of a storage buffer binding's offset
  uint64_t max_allocation_size = 0;
  uint64_t device_local_bytes = 0;
  std::vector<uint32_t> memory_types;  // VkMemoryPropertyFlags of each memory type, in the driver's order
  bool timestamps = false;             // the compute queue can write timestamps
  uint32_t timestamp_valid_bits = 0;
  double timestamp_period_ns = 0;
  bool shader_float64 = false;
  bool shader_int64 = false;
  bool float32_atomic_add = false;  // VK_EXT_shader_atomic_float, storage buffers
  bool float64_atomic_add = false;
  bool int64_atomics = false;  // shaderBufferInt64Atomics (compare-and-swap on doubles)
  bool memory_model = false;
  bool executable_properties = false;  // VK_KHR_pipeline_executable_properties   // vulkanMemoryModel + device scope
  uint32_t subgroup_ops = 0;           // VkSubgroupFeatureFlags usable in compute
  bool float16_storage = false;        // storageBuffer16BitAccess + shaderFloat16
  struct CoopMatShape {
    uint32_t m = 0, n = 0, k = 0;
    std::string a, b, c;  // component types: "f16", "f32", ...
  };
  std::vector<CoopMatShape> coopmat_shapes;  // VK_NV_cooperative_matrix properties (empty: none)
  uint32_t multiprocessors = 0;              // SMs / CUs where the driver says (0: unknown)
  uint32_t threads_per_multiprocessor = 0;   // resident invocations per multiprocessor (0: unknown)
  std::string multiprocessor_source;         // the extension that said it
  bool timeline_semaphore = false;
  std::vector<std::string> extensions;

  bool hasSubgroupArithmetic() const { return subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT; }
  bool hasSubgroupShuffle() const { return subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT; }

  bool hasExtension(const std::string& ext) const;
  bool isSoftware() const { return type == "cpu"; }
};

// Validation, from the environment: KS_VALIDATION=1 enables the Khronos
// validation layer with synchronization validation and prints its messages;
// KS_VALIDATION=strict also aborts at the first error (the test suite's mode).
enum class ValidationMode { Off, Report, Strict };
ValidationMode validationMode();
struct ValidationCounts {
  uint64_t errors = 0;
  uint64_t warnings = 0;
  std::string last_error;
};
// Messages the layer reported so far, over every instance of this process.
ValidationCounts validationCounts();

class Instance {
 public:
  static Result<std::shared_ptr<Instance>> create();
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  const std::vector<DeviceInfo>& devices() const { return devices_; }
  VkInstance handle() const { return instance_; }
  VkPhysicalDevice physical(uint32_t index) const { return physical_.at(index); }

 private:
  Instance() = default;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::vector<VkPhysicalDevice> physical_;
  std::vector<DeviceInfo> devices_;
};

// The default device: a discrete GPU, else integrated, else virtual, else a CPU
// implementation (lavapipe). `spec` may be empty, an index or a name substring.
Result<uint32_t> selectDevice(const std::vector<DeviceInfo>& devices, const std::string& spec);

enum class Placement { DeviceLocal, HostVisible, HostCached, DeviceLocalHostVisible };
std::string placementName(Placement p);  // "device_local", "host_coherent", "host_cached", "device_local_host_visible"
// Whether the device has a memory type with every property the placement asks
// for (createBuffer falls back to another type where it has none).
bool hasExactPlacement(const DeviceInfo& device, Placement p);
std::string memoryFlagsText(uint32_t flags);  // "DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT"

class Device;

class Buffer {
 public:
  Buffer() = default;
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  uint64_t size() const { return size_; }
  void* mapped() const { return mapped_; }
  bool hostCoherent() const { return coherent_; }
  uint32_t memoryFlags() const { return flags_; }  // of the memory type it was given
  bool dedicated() const { return dedicated_; }    // a VkMemoryDedicatedAllocateInfo allocation

 private:
  friend class Device;
  void release();
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  uint64_t size_ = 0;
  void* mapped_ = nullptr;
  bool coherent_ = true;
  uint32_t flags_ = 0;
  bool dedicated_ = false;
};

struct PipelineDesc {
  std::string name;    // for messages: the shader file
  std::string source;  // GLSL
  std::vector<std::pair<std::string, std::string>> defines;
  std::vector<uint32_t> spec_constants;  // constant_id 0..n-1
  uint32_t buffer_count = 3;             // storage buffers at bindings 0..n-1
  uint32_t push_constant_bytes = 16;
};

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  uint32_t buffer_count = 0;
  uint32_t push_constant_bytes = 0;
  // What the driver reports about the compiled code (VK_KHR_pipeline_executable_properties),
  // e.g. "Register Count = 128"; empty where the device does not say.
  std::vector<std::pair<std::string, std::string>> statistics;
};

// A binding: a whole buffer, or `range` bytes of it from `offset`.
struct BufferRange {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t range = VK_WHOLE_SIZE;
};

// A step's own binding: `bytes` (0: the rest) of the point's buffer number
// `buffer`, from `offset` within that buffer's own range. Steps that bind
// slices let one point use several buffers, or parts of one, per dispatch.
struct SubBinding {
  uint32_t buffer = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  bool operator==(const SubBinding&) const = default;
};

struct Timing {
  double gpu_ns = -1;  // < 0 where timestamps are unsupported
  double wall_ns = 0;  // host submit-to-fence
};

// A recorded dispatch that can be submitted many times and timed each time.
// A buffer-to-buffer copy recorded around a timed dispatch (not timed itself).
struct CopyRegion {
  const Buffer* src = nullptr;
  const Buffer* dst = nullptr;
  uint64_t bytes = 0;
};

class TimedDispatch {
 public:
  ~TimedDispatch();
  Result<Timing> run();
  // Points the dispatches at other buffers (same count, same order) and
  // re-records; used to rotate inputs between runs. Only between runs.
  Status rebind(const std::vector<BufferRange>& bindings);

 private:
  friend class Device;
  TimedDispatch() = default;
  Status record();
  Device* device_ = nullptr;
  Status writeSets(const std::vector<BufferRange>& buffers);
  std::vector<std::pair<const Pipeline*, std::array<uint32_t, 3>>> steps_;
  std::vector<std::vector<uint32_t>> push_;
  std::vector<std::vector<SubBinding>> bindings_;  // per step; empty: every buffer whole, in order
  std::vector<bool> barrier_before_;
  std::vector<VkDescriptorSet> sets_;
  std::vector<VkBuffer> zero_before_;
  std::vector<CopyRegion> copies_before_, copies_after_;
  VkDevice owner_ = VK_NULL_HANDLE;  // the logical device it was made on (recreate() makes another)
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
};

class Device {
 public:
  static Result<std::unique_ptr<Device>> create(std::shared_ptr<Instance> instance, uint32_t index);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const { return info_; }
  VkDevice handle() const { return device_; }
  bool lost() const { return lost_; }

  // The watchdog: how long a submission may run before it is reported as hung
  // and the device treated as lost (0: the default).
  static constexpr double kDefaultDispatchTimeoutS = 60;
  void setDispatchTimeout(double seconds);
  // How the host waits for a submission: blocked in vkWaitForFences (the
  // default: no core spent), polling vkGetFenceStatus, or blocked on a
  // timeline semaphore (where the device has them). The waits differ only
  // in the host's round trip (`overhead` compares them), not in GPU time.
  enum class WaitMode { Fence, Spin, Timeline };
  Status setWaitMode(WaitMode mode);
  WaitMode waitMode() const { return wait_mode_; }
  double dispatchTimeout() const { return dispatch_timeout_s_; }
  // After a loss or a hang: a new logical device on the same physical one. The
  // old one is abandoned, not destroyed (a hung dispatch may still run on it);
  // buffers, pipelines and dispatches made before must be made again.
  Status recreate();
  uint32_t generation() const { return generation_; }  // how many times recreated

  // `bound_whole`: the buffer is bound whole, so it must fit maxStorageBufferRange
  // (not so for buffers bound in slices, e.g. rotated input copies).
  Result<Buffer> createBuffer(uint64_t bytes, Placement placement, const std::string& what, bool bound_whole = true);
  Status upload(Buffer& dst, const void* data, uint64_t bytes);
  Status download(const Buffer& src, void* data, uint64_t bytes);
  Status fill(Buffer& dst, uint32_t pattern);  // vkCmdFillBuffer over the whole buffer
  // vkCmdFillBuffer over `bytes` (a multiple of 4) from `offset` (tests corrupt a copy with it).
  Status fillRange(Buffer& dst, uint64_t offset, uint64_t bytes, uint32_t pattern);
  // For memory that is not host-coherent: makes host writes visible to the
  // device (flush) and device writes visible to the host (invalidate).
  Status flushMapped(const Buffer& buffer);
  Status invalidateMapped(const Buffer& buffer);
  // Copies the first `bytes` of `buffer` to offsets stride, 2 stride, ... (count - 1) stride.
  Status replicate(Buffer& buffer, uint64_t bytes, uint64_t stride, uint32_t count);

  // Compiles (cached on source + defines) and builds (cached on specialization).
  Result<const Pipeline*> pipeline(const PipelineDesc& desc);

  Result<std::unique_ptr<TimedDispatch>> prepareDispatch(const Pipeline& pipeline,
                                                         const std::vector<const Buffer*>& buffers,
                                                         const void* push_constants, std::array<uint32_t, 3> groups);
  // Several dispatches timed as one point, with a barrier between them;
  // `zero_before` buffers are cleared before every run, outside the timing.
  struct RecordedStep {
    const Pipeline* pipeline = nullptr;
    std::array<uint32_t, 3> groups{1, 1, 1};
    std::vector<uint32_t> push;
    std::vector<SubBinding> bindings;  // empty: the point's buffers, whole, in order
    bool after_previous = true;        // false: independent of the previous step (no barrier between)
  };
  // Each binding is checked against maxStorageBufferRange and
  // minStorageBufferOffsetAlignment, and bound with an explicit range.
  Result<std::unique_ptr<TimedDispatch>> prepareDispatch(const std::vector<RecordedStep>& steps,
                                                         const std::vector<BufferRange>& buffers,
                                                         const std::vector<const Buffer*>& zero_before,
                                                         const std::vector<CopyRegion>& copies_before = {},
                                                         const std::vector<CopyRegion>& copies_after = {});
  Result<VkDescriptorBufferInfo> descriptorInfo(const BufferRange& binding) const;
  // vkCmdCopyBuffer of `bytes` from src to dst between two timestamps.
  Result<std::unique_ptr<TimedDispatch>> prepareCopy(const Buffer& src, const Buffer& dst, uint64_t bytes);
  // Submit-to-fence of an empty command buffer, for overhead measurement.
  Result<double> emptySubmitNs();

 private:
  friend class TimedDispatch;
  Device() = default;
  Status open();
  void abandon();
  Status submitAndWait(VkCommandBuffer cmd, VkFence fence, double* wall_ns);
  Status oneShot(const std::function<void(VkCommandBuffer)>& record);
  Status allocateTiming(TimedDispatch& d);
  Status check(VkResult r, const std::string& what);
  Error fail(VkResult r, const std::string& what);

  std::shared_ptr<Instance> instance_;
  DeviceInfo info_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint32_t physicalApi_ = 0;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  bool lost_ = false;
  double dispatch_timeout_s_ = kDefaultDispatchTimeoutS;
  WaitMode wait_mode_ = WaitMode::Fence;
  VkSemaphore timeline_ = VK_NULL_HANDLE;  // WaitMode::Timeline's
  uint64_t timeline_value_ = 0;
  uint32_t generation_ = 0;
  std::map<std::string, std::vector<uint32_t>> spirv_cache_;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::vector<std::unique_ptr<Pipeline>> abandoned_pipelines_;  // of devices given up; never destroyed
  std::vector<std::shared_ptr<Instance>> abandoned_instances_;  // the instances of devices given up
};

}  // namespace ks::vk
