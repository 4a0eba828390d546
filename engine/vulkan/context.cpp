#include "engine/vulkan/context.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/vulkan/shader_compiler.h"

namespace ks::vk {

std::string resultName(VkResult r) {
  switch (r) {
#define KS_CASE(x) \
  case x:          \
    return #x;
    KS_CASE(VK_SUCCESS)
    KS_CASE(VK_NOT_READY)
    KS_CASE(VK_TIMEOUT)
    KS_CASE(VK_INCOMPLETE)
    KS_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    KS_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    KS_CASE(VK_ERROR_INITIALIZATION_FAILED)
    KS_CASE(VK_ERROR_DEVICE_LOST)
    KS_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    KS_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    KS_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    KS_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    KS_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    KS_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    KS_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    KS_CASE(VK_ERROR_FRAGMENTED_POOL)
    KS_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    KS_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef KS_CASE
    default:
      return "VkResult(" + std::to_string(static_cast<int>(r)) + ")";
  }
}

Error vkError(VkResult r, const std::string& what) {
  std::string reason;
  switch (r) {
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      reason = "out of device memory";
      break;
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      reason = "out of host memory";
      break;
    case VK_ERROR_DEVICE_LOST:
      reason = "the device was lost (driver reset, hang or crash)";
      break;
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      reason = "no compatible Vulkan driver";
      break;
    default:
      reason = resultName(r);
  }
  return makeError(what + ": " + reason + " (" + resultName(r) + ")", static_cast<int32_t>(r));
}

std::string placementName(Placement p) {
  switch (p) {
    case Placement::DeviceLocal:
      return "device_local";
    case Placement::HostVisible:
      return "host_coherent";
    case Placement::HostCached:
      return "host_cached";
    default:
      return "device_local_host_visible";
  }
}

namespace {
VkMemoryPropertyFlags wantedFlags(Placement placement) {
  switch (placement) {
    case Placement::DeviceLocal:
      return VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    case Placement::HostVisible:
      return VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    case Placement::HostCached:
      return VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    default:
      return VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  }
}
}  // namespace

bool hasExactPlacement(const DeviceInfo& device, Placement p) {
  const uint32_t want = wantedFlags(p);
  for (uint32_t flags : device.memory_types)
    if ((flags & want) == want) return true;
  return false;
}

std::string memoryFlagsText(uint32_t flags) {
  std::string s;
  const std::pair<uint32_t, const char*> names[] = {{VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL"},
                                                    {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE"},
                                                    {VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT"},
                                                    {VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED"}};
  for (const auto& [bit, name] : names)
    if (flags & bit) s += (s.empty() ? "" : "|") + std::string(name);
  return s.empty() ? "none" : s;
}

std::string vendorName(uint32_t id) {
  switch (id) {
    case 0x10DE:
      return "NVIDIA";
    case 0x1002:
      return "AMD";
    case 0x8086:
      return "Intel";
    case 0x13B5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x106B:
      return "Apple";
    case 0x10005:
      return "Mesa";
    default: {
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%04X", id);
      return buf;
    }
  }
}

bool DeviceInfo::hasExtension(const std::string& ext) const {
  return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

namespace {

std::string versionString(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

std::string driverVersionString(uint32_t vendor, uint32_t v) {
  if (vendor == 0x10DE)  // NVIDIA packs 10.8.8.6 bits
    return std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xff) + "." + std::to_string((v >> 6) & 0xff);
  return versionString(v);
}

std::string typeName(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

int typeRank(const std::string& type) {
  if (type == "discrete") return 0;
  if (type == "integrated") return 1;
  if (type == "virtual") return 2;
  if (type == "cpu") return 3;
  return 4;
}

uint32_t computeQueueFamily(VkPhysicalDevice pd, uint32_t* timestamp_bits) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, families.data());
  // Prefer a compute queue that can write timestamps.
  uint32_t best = UINT32_MAX;
  for (uint32_t i = 0; i < count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (best == UINT32_MAX || (families[i].timestampValidBits > 0 && families[best].timestampValidBits == 0)) best = i;
  }
  if (best != UINT32_MAX && timestamp_bits) *timestamp_bits = families[best].timestampValidBits;
  return best;
}

DeviceInfo probe(VkInstance instance, VkPhysicalDevice pd, uint32_t index) {
  DeviceInfo info;
  info.index = index;

  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties basic{};
  vkGetPhysicalDeviceProperties(pd, &basic);
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  if (basic.apiVersion >= VK_API_VERSION_1_2) subgroup.pNext = &driver;
  vkGetPhysicalDeviceProperties2(pd, &props);
  const auto& p = props.properties;
  const auto& l = p.limits;

  info.name = p.deviceName;
  info.type = typeName(p.deviceType);
  info.vendor_id = p.vendorID;
  info.vendor = vendorName(p.vendorID);
  info.device_id = p.deviceID;
  info.api_version = versionString(p.apiVersion);
  info.driver_version = driverVersionString(p.vendorID, p.driverVersion);
  if (basic.apiVersion >= VK_API_VERSION_1_2) {
    info.driver_name = driver.driverName;
    info.driver_info = driver.driverInfo;
  }
  info.subgroup_size = subgroup.subgroupSize;
  info.max_shared_memory = l.maxComputeSharedMemorySize;
  info.max_invocations = l.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    info.max_workgroup_size[i] = l.maxComputeWorkGroupSize[i];
    info.max_workgroup_count[i] = l.maxComputeWorkGroupCount[i];
  }
  info.max_storage_buffer_range = l.maxStorageBufferRange;
  info.min_storage_offset_alignment = std::max<uint64_t>(1, l.minStorageBufferOffsetAlignment);

  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceProperties2 props_m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props_m3.pNext = &m3;
  vkGetPhysicalDeviceProperties2(pd, &props_m3);
  info.max_allocation_size = m3.maxMemoryAllocationSize;

  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info.device_local_bytes = std::max<uint64_t>(info.device_local_bytes, mem.memoryHeaps[i].size);
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) info.memory_types.push_back(mem.memoryTypes[i].propertyFlags);

  uint32_t ts_bits = 0;
  computeQueueFamily(pd, &ts_bits);
  info.timestamp_valid_bits = ts_bits;
  info.timestamp_period_ns = l.timestampPeriod;
  // The compute queue's own timestampValidBits decides, whatever
  // timestampComputeAndGraphics says about the other queues.
  info.timestamps = ts_bits > 0 && l.timestampPeriod > 0;

  VkPhysicalDeviceFeatures features{};
  vkGetPhysicalDeviceFeatures(pd, &features);
  info.shader_float64 = features.shaderFloat64;
  info.shader_int64 = features.shaderInt64;
  if (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) info.subgroup_ops = subgroup.supportedOperations;
  if (basic.apiVersion >= VK_API_VERSION_1_2) {
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &v12;
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    info.int64_atomics = v12.shaderBufferInt64Atomics;
    info.memory_model = v12.vulkanMemoryModel && v12.vulkanMemoryModelDeviceScope;
    VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceFeatures2 f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f11.pNext = &v11;
    vkGetPhysicalDeviceFeatures2(pd, &f11);
    info.float16_storage = v11.storageBuffer16BitAccess && v12.shaderFloat16;
  }

  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, exts.data());
  for (const auto& e : exts) info.extensions.emplace_back(e.extensionName);
  std::sort(info.extensions.begin(), info.extensions.end());
  info.executable_properties = info.hasExtension(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  if (info.hasExtension(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME)) {
    auto getProps = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    uint32_t n = 0;
    if (getProps && getProps(pd, &n, nullptr) == VK_SUCCESS && n) {
      std::vector<VkCooperativeMatrixPropertiesNV> props(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
      getProps(pd, &n, props.data());
      auto type = [](VkComponentTypeNV t) -> std::string {
        switch (t) {
          case VK_COMPONENT_TYPE_FLOAT16_NV:
            return "f16";
          case VK_COMPONENT_TYPE_FLOAT32_NV:
            return "f32";
          case VK_COMPONENT_TYPE_FLOAT64_NV:
            return "f64";
          case VK_COMPONENT_TYPE_SINT8_NV:
            return "s8";
          case VK_COMPONENT_TYPE_UINT8_NV:
            return "u8";
          case VK_COMPONENT_TYPE_SINT32_NV:
            return "s32";
          default:
            return "other";
        }
      };
      for (const auto& p : props)
        if (p.scope == VK_SCOPE_SUBGROUP_NV)
          info.coopmat_shapes.push_back({p.MSize, p.NSize, p.KSize, type(p.AType), type(p.BType), type(p.CType)});
    }
  }
  // How many multiprocessors run workgroups, where the driver says (bandwidth
  // kernels size their grids from it).
  if (info.hasExtension(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &sm;
    vkGetPhysicalDeviceProperties2(pd, &p2);
    info.multiprocessors = sm.shaderSMCount;
    info.threads_per_multiprocessor = sm.shaderWarpsPerSM * std::max(1u, info.subgroup_size);
    info.multiprocessor_source = "VK_NV_shader_sm_builtins";
  } else if (info.hasExtension(VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderCorePropertiesAMD core{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &core;
    vkGetPhysicalDeviceProperties2(pd, &p2);
    info.multiprocessors = core.shaderEngineCount * core.shaderArraysPerEngineCount * core.computeUnitsPerShaderArray;
    info.threads_per_multiprocessor = core.simdPerComputeUnit * core.wavefrontsPerSimd * core.wavefrontSize;
    info.multiprocessor_source = "VK_AMD_shader_core_properties";
  }
  if (basic.apiVersion >= VK_API_VERSION_1_2) {
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &v12;
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    info.timeline_semaphore = v12.timelineSemaphore;
  }
  if (info.hasExtension(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &af;
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    info.float32_atomic_add = af.shaderBufferFloat32AtomicAdd;
    info.float64_atomic_add = af.shaderBufferFloat64AtomicAdd;
  }
  return info;
}

// Devices given up after a hang: nothing made on them is destroyed (see recreate()).
std::mutex g_abandoned_mutex;
std::vector<VkDevice> g_abandoned;

void abandonDevice(VkDevice d) {
  std::lock_guard<std::mutex> lock(g_abandoned_mutex);
  if (std::find(g_abandoned.begin(), g_abandoned.end(), d) == g_abandoned.end()) g_abandoned.push_back(d);
}

bool isAbandoned(VkDevice d) {
  std::lock_guard<std::mutex> lock(g_abandoned_mutex);
  return std::find(g_abandoned.begin(), g_abandoned.end(), d) != g_abandoned.end();
}

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::atomic<uint64_t> g_validation_errors{0};
std::atomic<uint64_t> g_validation_warnings{0};
std::mutex g_validation_mutex;
std::string g_last_validation_error;

ValidationMode validationModeFromEnvironment() {
  const char* v = std::getenv("KS_VALIDATION");
  if (!v || !*v || std::strcmp(v, "0") == 0) return ValidationMode::Off;
  return std::strcmp(v, "strict") == 0 ? ValidationMode::Strict : ValidationMode::Report;
}

bool hasInstanceLayer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  return std::any_of(layers.begin(), layers.end(), [&](const auto& l) { return std::strcmp(l.layerName, name) == 0; });
}

VKAPI_ATTR VkBool32 VKAPI_CALL onValidationMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  const bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  const char* text = data && data->pMessage ? data->pMessage : "(no message)";
  std::fprintf(stderr, "kernelscope: Vulkan validation %s: %s\n", error ? "error" : "warning", text);
  if (!error) {
    ++g_validation_warnings;
    return VK_FALSE;
  }
  {
    std::lock_guard<std::mutex> lock(g_validation_mutex);
    g_last_validation_error = text;
  }
  ++g_validation_errors;
  // Strict (the test suite): the first error ends the process, so a test or a
  // CLI run under test cannot pass over it.
  if (validationModeFromEnvironment() == ValidationMode::Strict) {
    std::fprintf(stderr, "kernelscope: KS_VALIDATION=strict: aborting on the first validation error\n");
    std::fflush(stderr);
    std::abort();
  }
  return VK_FALSE;
}

}  // namespace

// ---------------------------------------------------------------- Instance

ValidationCounts validationCounts() {
  ValidationCounts c;
  c.errors = g_validation_errors.load();
  c.warnings = g_validation_warnings.load();
  std::lock_guard<std::mutex> lock(g_validation_mutex);
  c.last_error = g_last_validation_error;
  return c;
}

ValidationMode validationMode() { return validationModeFromEnvironment(); }

Result<std::shared_ptr<Instance>> Instance::create() {
  std::shared_ptr<Instance> self(new Instance());
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "kernelscope";
  app.applicationVersion = VK_MAKE_API_VERSION(0, 0, 1, 0);
  app.pEngineName = "kernelscope";
  app.apiVersion = VK_API_VERSION_1_2;
  uint32_t loader_version = VK_API_VERSION_1_0;
  vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_1)
    return makeError("the Vulkan loader supports only Vulkan " + versionString(loader_version) +
                     "; kernelscope needs 1.1 or newer");
  app.apiVersion = std::min<uint32_t>(loader_version, VK_API_VERSION_1_2);

  std::vector<const char*> extensions;
  VkInstanceCreateFlags flags = 0;
  uint32_t count = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> available(count);
  vkEnumerateInstanceExtensionProperties(nullptr, &count, available.data());
  for (const auto& e : available)
    if (std::strcmp(e.extensionName, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME) == 0) {
      extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
      flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }

  // Validation (KS_VALIDATION=1 or strict): the Khronos layer with
  // synchronization validation, its errors counted by a debug messenger.
  const ValidationMode validation = validationModeFromEnvironment();
  std::vector<const char*> layers;
  VkDebugUtilsMessengerCreateInfoEXT messenger{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  const VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  if (validation != ValidationMode::Off) {
    if (!hasInstanceLayer(kValidationLayer))
      return makeError(std::string("KS_VALIDATION is set but ") + kValidationLayer +
                       " is not installed (on Debian: apt-get install vulkan-validationlayers)");
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    messenger.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
    messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger.pfnUserCallback = onValidationMessage;
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = enables;
    features.pNext = &messenger;  // also reports what vkCreateInstance itself gets wrong
  }

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pNext = validation != ValidationMode::Off ? &features : nullptr;
  info.flags = flags;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkResult r = vkCreateInstance(&info, nullptr, &self->instance_);
  if (r != VK_SUCCESS)
    return vkError(r,
                   "cannot create a Vulkan instance (is a Vulkan driver installed? on Debian: "
                   "apt-get install mesa-vulkan-drivers)");

  if (validation != ValidationMode::Off) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(self->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create || create(self->instance_, &messenger, nullptr, &self->messenger_) != VK_SUCCESS)
      return makeError("KS_VALIDATION is set but the debug messenger could not be created");
  }

  count = 0;
  vkEnumeratePhysicalDevices(self->instance_, &count, nullptr);
  self->physical_.resize(count);
  vkEnumeratePhysicalDevices(self->instance_, &count, self->physical_.data());
  for (uint32_t i = 0; i < count; ++i) {
    VkPhysicalDeviceProperties p{};
    vkGetPhysicalDeviceProperties(self->physical_[i], &p);
    if (p.apiVersion < VK_API_VERSION_1_1) continue;  // subgroup queries need 1.1
    self->devices_.push_back(probe(self->instance_, self->physical_[i], i));
  }
  if (self->devices_.empty())
    return makeError(
        "no Vulkan 1.1 device found (on Debian: apt-get install mesa-vulkan-drivers "
        "for lavapipe)");
  return self;
}

Instance::~Instance() {
  {
    // A device given up after a hang is never destroyed, so neither is its
    // instance (destroying it would report the device as leaked).
    std::lock_guard<std::mutex> lock(g_abandoned_mutex);
    if (!g_abandoned.empty()) return;
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

Result<uint32_t> selectDevice(const std::vector<DeviceInfo>& devices, const std::string& spec) {
  if (devices.empty()) return makeError("no Vulkan devices");
  if (spec.empty()) {
    auto best = std::min_element(devices.begin(), devices.end(),
                                 [](const auto& a, const auto& b) { return typeRank(a.type) < typeRank(b.type); });
    return best->index;
  }
  const bool numeric =
      std::all_of(spec.begin(), spec.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  if (numeric) {
    if (spec.size() > 6) return makeError("no device with index " + spec);
    const unsigned long index = std::stoul(spec);
    for (const auto& d : devices)
      if (d.index == index) return d.index;
    return makeError("no device with index " + spec + " (there are " + std::to_string(devices.size()) +
                     "; see `kernelscope-cli devices`)");
  }
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  for (const auto& d : devices)
    if (lower(d.name).find(lower(spec)) != std::string::npos) return d.index;
  return makeError("no device whose name contains '" + spec + "' (see `kernelscope-cli devices`)");
}

// ---------------------------------------------------------------- Buffer

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& o) noexcept { *this = std::move(o); }

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    device_ = std::exchange(o.device_, VK_NULL_HANDLE);
    buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(o.memory_, VK_NULL_HANDLE);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, nullptr);
    coherent_ = o.coherent_;
    flags_ = o.flags_;
    dedicated_ = o.dedicated_;
  }
  return *this;
}

void Buffer::release() {
  if (!device_) return;
  if (isAbandoned(device_)) {  // its device hung: leave it to the process's end
    device_ = VK_NULL_HANDLE;
    return;
  }
  if (mapped_) vkUnmapMemory(device_, memory_);
  if (buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
  if (memory_) vkFreeMemory(device_, memory_, nullptr);
  device_ = VK_NULL_HANDLE;
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
}

// ---------------------------------------------------------------- Device

Result<std::unique_ptr<Device>> Device::create(std::shared_ptr<Instance> instance, uint32_t index) {
  std::unique_ptr<Device> self(new Device());
  self->instance_ = instance;
  const auto& devices = instance->devices();
  auto it = std::find_if(devices.begin(), devices.end(), [&](const auto& d) { return d.index == index; });
  if (it == devices.end()) return makeError("no device with index " + std::to_string(index));
  self->info_ = *it;
  self->physical_ = instance->physical(index);
  vkGetPhysicalDeviceMemoryProperties(self->physical_, &self->memory_);
  {
    VkPhysicalDeviceProperties p{};
    vkGetPhysicalDeviceProperties(self->physical_, &p);
    self->physicalApi_ = p.apiVersion;
  }
  self->queue_family_ = computeQueueFamily(self->physical_, nullptr);
  if (self->queue_family_ == UINT32_MAX) return makeError(self->info_.name + " has no compute queue");
  if (auto st = self->open(); !st) return st.error();
  return self;
}

// The logical device and what hangs off it; again by recreate() after a loss.
Status Device::open() {
  Device* self = this;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = self->queue_family_;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;

  VkPhysicalDeviceFeatures supported{};
  vkGetPhysicalDeviceFeatures(self->physical_, &supported);
  // Enable what the kernels can use and the device has; the probe recorded it.
  const auto& di = self->info_;
  VkPhysicalDeviceFeatures2 enabled{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  enabled.features.shaderFloat64 = supported.shaderFloat64;
  enabled.features.shaderInt64 = supported.shaderInt64;
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  v12.shaderFloat16 = di.float16_storage;
  v12.shaderBufferInt64Atomics = di.int64_atomics;
  v12.timelineSemaphore = di.timeline_semaphore;
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  v11.storageBuffer16BitAccess = di.float16_storage;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  coopmat.cooperativeMatrix = !di.coopmat_shapes.empty();
  v12.vulkanMemoryModel = di.memory_model;
  v12.vulkanMemoryModelDeviceScope = di.memory_model;
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomicFloat{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  atomicFloat.shaderBufferFloat32AtomicAdd = di.float32_atomic_add;
  atomicFloat.shaderBufferFloat64AtomicAdd = di.float64_atomic_add;
  std::vector<const char*> extensions;
  void** tail = &enabled.pNext;
  if (VK_API_VERSION_MINOR(self->physicalApi_) >= 2 || VK_API_VERSION_MAJOR(self->physicalApi_) > 1) {
    *tail = &v12;
    tail = &v12.pNext;
    *tail = &v11;
    tail = &v11.pNext;
  }
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  exec.pipelineExecutableInfo = VK_TRUE;
  if (di.executable_properties) {
    extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    *tail = &exec;
    tail = &exec.pNext;
  }
  if (!di.coopmat_shapes.empty()) {
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    *tail = &coopmat;
    tail = &coopmat.pNext;
  }
  if (di.float32_atomic_add || di.float64_atomic_add) {
    extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
    *tail = &atomicFloat;
    tail = &atomicFloat.pNext;
  }

  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &enabled;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  info.enabledExtensionCount = uint32_t(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkResult r = vkCreateDevice(self->physical_, &info, nullptr, &self->device_);
  if (r != VK_SUCCESS) return vkError(r, "cannot create a logical device on " + self->info_.name);
  vkGetDeviceQueue(self->device_, self->queue_family_, 0, &self->queue_);

  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = self->queue_family_;
  r = vkCreateCommandPool(self->device_, &pool, nullptr, &self->command_pool_);
  if (r != VK_SUCCESS) return vkError(r, "cannot create a command pool");
  if (di.timeline_semaphore) {
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    si.pNext = &type;
    self->timeline_value_ = 0;
    r = vkCreateSemaphore(self->device_, &si, nullptr, &self->timeline_);
    if (r != VK_SUCCESS) return vkError(r, "cannot create a timeline semaphore");
  }

  VkPipelineCacheCreateInfo cache{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  r = vkCreatePipelineCache(self->device_, &cache, nullptr, &self->pipeline_cache_);
  if (r != VK_SUCCESS) return vkError(r, "cannot create a pipeline cache");
  return Ok{};
}

void Device::abandon() {
  lost_ = true;
  if (device_) abandonDevice(device_);
}

Status Device::recreate() {
  if (!lost_) return Ok{};
  abandon();
  // Nothing of the old device is destroyed: a hung dispatch may still be
  // running on it, and destroying what it uses could crash the process. Its
  // pipelines stay allocated (pointers to them may still be held) but unused.
  for (auto& [key, p] : pipelines_) abandoned_pipelines_.push_back(std::move(p));
  pipelines_.clear();
  device_ = VK_NULL_HANDLE;
  queue_ = VK_NULL_HANDLE;
  command_pool_ = VK_NULL_HANDLE;
  pipeline_cache_ = VK_NULL_HANDLE;
  timeline_ = VK_NULL_HANDLE;
  // A fresh instance too: a CPU implementation (lavapipe) runs the dispatches
  // of every logical device of one physical device on the same threads, and
  // the hung dispatch still holds them; a new instance brings new ones.
  auto instance = Instance::create();
  if (!instance) return makeError("the device was lost and could not be recreated: " + instance.error().message);
  const auto& devices = (*instance)->devices();
  auto same = std::find_if(devices.begin(), devices.end(),
                           [&](const DeviceInfo& d) { return d.index == info_.index && d.name == info_.name; });
  if (same == devices.end())
    return makeError("the device was lost and could not be recreated: " + info_.name + " is no longer listed");
  abandoned_instances_.push_back(std::move(instance_));  // owns the abandoned device: kept, never destroyed
  instance_ = *instance;
  physical_ = instance_->physical(info_.index);
  if (auto st = open(); !st) return makeError("the device was lost and could not be recreated: " + st.error().message);
  lost_ = false;
  ++generation_;
  return Ok{};
}

void Device::setDispatchTimeout(double seconds) {
  dispatch_timeout_s_ = seconds > 0 ? seconds : kDefaultDispatchTimeoutS;
}

Device::~Device() {
  if (!device_ || isAbandoned(device_)) return;  // a hung device is left as it is
  if (!lost_) vkDeviceWaitIdle(device_);
  for (auto& [key, p] : pipelines_) {
    vkDestroyPipeline(device_, p->pipeline, nullptr);
    vkDestroyPipelineLayout(device_, p->layout, nullptr);
    vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
  }
  if (pipeline_cache_) vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  if (command_pool_) vkDestroyCommandPool(device_, command_pool_, nullptr);
  if (timeline_) vkDestroySemaphore(device_, timeline_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

Error Device::fail(VkResult r, const std::string& what) {
  if (r == VK_ERROR_DEVICE_LOST) abandon();
  return vkError(r, what);
}

Status Device::check(VkResult r, const std::string& what) {
  if (r == VK_SUCCESS) return Ok{};
  return fail(r, what);
}

Result<Buffer> Device::createBuffer(uint64_t bytes, Placement placement, const std::string& what, bool bound_whole) {
  if (lost_) return makeError("the device was lost", VK_ERROR_DEVICE_LOST);
  bytes = std::max<uint64_t>(bytes, 4);
  auto mib = [](uint64_t b) { return std::to_string((b + (1 << 20) - 1) >> 20) + " MiB"; };
  if (bound_whole && bytes > info_.max_storage_buffer_range)
    return makeError(what + " needs " + mib(bytes) + ", over this device's maxStorageBufferRange (" +
                     mib(info_.max_storage_buffer_range) + ")");
  if (info_.max_allocation_size && bytes > info_.max_allocation_size)
    return makeError(what + " needs " + mib(bytes) + ", over this device's maxMemoryAllocationSize (" +
                     mib(info_.max_allocation_size) + ")");

  Buffer buf;
  buf.device_ = device_;
  buf.size_ = bytes;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = bytes;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vkCreateBuffer(device_, &bi, nullptr, &buf.buffer_);
  if (r != VK_SUCCESS) return fail(r, "cannot create " + what);

  VkMemoryDedicatedRequirements dedicated_req{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
  VkMemoryRequirements2 req2{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
  req2.pNext = &dedicated_req;
  VkBufferMemoryRequirementsInfo2 req_info{VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2};
  req_info.buffer = buf.buffer_;
  vkGetBufferMemoryRequirements2(device_, &req_info, &req2);
  const VkMemoryRequirements& req = req2.memoryRequirements;

  const VkMemoryPropertyFlags want = wantedFlags(placement);
  uint32_t type = UINT32_MAX;
  for (int pass = 0; pass < 2 && type == UINT32_MAX; ++pass)
    for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
      if (!(req.memoryTypeBits & (1u << i))) continue;
      const auto flags = memory_.memoryTypes[i].propertyFlags;
      // First pass: exactly what was asked; second: anything host-visible for
      // host placements, anything at all for device-local.
      const bool fits = pass == 0
                            ? (flags & want) == want
                            : (placement == Placement::DeviceLocal || (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT));
      if (fits) {
        type = i;
        break;
      }
    }
  if (type == UINT32_MAX) return makeError("no memory type fits " + what);

  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  // Every buffer has an allocation of its own anyway; saying so (a dedicated
  // allocation) lets the driver place it as one object, with large pages.
  // KS_DEDICATED_ALLOCATION=0 turns it off where the driver does not require
  // it, to compare (docs/PERFORMANCE.md, gemv on the H200).
  VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
  dedicated.buffer = buf.buffer_;
  const char* dedicated_env = std::getenv("KS_DEDICATED_ALLOCATION");
  buf.dedicated_ = dedicated_req.requiresDedicatedAllocation || !dedicated_env || std::string(dedicated_env) != "0";
  if (buf.dedicated_) ai.pNext = &dedicated;
  r = vkAllocateMemory(device_, &ai, nullptr, &buf.memory_);
  if (r != VK_SUCCESS) return fail(r, "cannot allocate " + mib(bytes) + " for " + what);
  r = vkBindBufferMemory(device_, buf.buffer_, buf.memory_, 0);
  if (r != VK_SUCCESS) return fail(r, "cannot bind memory for " + what);

  const auto flags = memory_.memoryTypes[type].propertyFlags;
  if (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    r = vkMapMemory(device_, buf.memory_, 0, VK_WHOLE_SIZE, 0, &buf.mapped_);
    if (r != VK_SUCCESS) return fail(r, "cannot map " + what);
    buf.coherent_ = flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  }
  buf.flags_ = flags;
  return buf;
}

Status Device::setWaitMode(WaitMode mode) {
  if (mode == WaitMode::Timeline && !timeline_)
    return makeError(info_.name + " has no timeline semaphores (Vulkan 1.2 timelineSemaphore)");
  wait_mode_ = mode;
  return Ok{};
}

Status Device::submitAndWait(VkCommandBuffer cmd, VkFence fence, double* wall_ns) {
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = cmd ? 1 : 0;
  submit.pCommandBuffers = &cmd;
  const bool timeline = wait_mode_ == WaitMode::Timeline && timeline_;
  VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  const uint64_t signal = timeline_value_ + 1;
  if (timeline) {
    values.signalSemaphoreValueCount = 1;
    values.pSignalSemaphoreValues = &signal;
    submit.pNext = &values;
    submit.signalSemaphoreCount = 1;
    submit.pSignalSemaphores = &timeline_;
  }
  const uint64_t timeout_ns = uint64_t(dispatch_timeout_s_ * 1e9);
  const auto t0 = std::chrono::steady_clock::now();
  VkResult r = vkQueueSubmit(queue_, 1, &submit, timeline ? VK_NULL_HANDLE : fence);
  if (r != VK_SUCCESS) return fail(r, "vkQueueSubmit");
  if (timeline) timeline_value_ = signal;
  // The watchdog: a dispatch that does not finish in time (an endless loop, a
  // hung device) is reported instead of waited on forever.
  if (timeline) {
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.semaphoreCount = 1;
    wait.pSemaphores = &timeline_;
    wait.pValues = &signal;
    r = vkWaitSemaphores(device_, &wait, timeout_ns);
  } else if (wait_mode_ == WaitMode::Spin) {
    // Polling answers within a microsecond of the fence signalling; a blocking
    // wait may first put the thread to sleep.
    for (uint64_t spins = 0;; ++spins) {
      r = vkGetFenceStatus(device_, fence);
      if (r != VK_NOT_READY) break;
      if ((spins & 1023) == 1023 &&
          std::chrono::steady_clock::now() - t0 > std::chrono::nanoseconds(int64_t(timeout_ns))) {
        r = VK_TIMEOUT;
        break;
      }
    }
  } else {
    r = vkWaitForFences(device_, 1, &fence, VK_TRUE, timeout_ns);
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (r == VK_TIMEOUT) {
    abandon();  // a hung queue is as good as lost: nothing more is submitted to it
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "the submission (a dispatch or a copy) did not finish within %.3g s (the dispatch timeout); "
                  "stopped by the watchdog, "
                  "the device is treated as lost",
                  dispatch_timeout_s_);
    return makeError(buf, r);
  }
  if (r != VK_SUCCESS) return fail(r, timeline ? "vkWaitSemaphores" : "waiting for a fence");
  if (wall_ns) *wall_ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
  if (timeline) return Ok{};
  return check(vkResetFences(device_, 1, &fence), "vkResetFences");
}

Status Device::oneShot(const std::function<void(VkCommandBuffer)>& record) {
  if (lost_) return makeError("the device was lost", VK_ERROR_DEVICE_LOST);
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = command_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkResult r = vkAllocateCommandBuffers(device_, &ai, &cmd);
  if (r != VK_SUCCESS) return fail(r, "vkAllocateCommandBuffers");
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  r = vkCreateFence(device_, &fi, nullptr, &fence);
  if (r != VK_SUCCESS) {
    vkFreeCommandBuffers(device_, command_pool_, 1, &cmd);
    return fail(r, "vkCreateFence");
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cmd, &bi);
  record(cmd);
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  // Later transfers (a copy reading what was uploaded or filled) count too.
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(
      cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
      VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
      &barrier, 0, nullptr, 0, nullptr);
  vkEndCommandBuffer(cmd);
  Status s = submitAndWait(cmd, fence, nullptr);
  if (!lost_) {  // a hung submission still uses them
    vkDestroyFence(device_, fence, nullptr);
    vkFreeCommandBuffers(device_, command_pool_, 1, &cmd);
  }
  return s;
}

Status Device::upload(Buffer& dst, const void* data, uint64_t bytes) {
  bytes = std::min(bytes, dst.size());
  if (dst.mapped()) {
    std::memcpy(dst.mapped(), data, bytes);
    if (!dst.hostCoherent()) {
      VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
      range.memory = dst.memory_;
      range.size = VK_WHOLE_SIZE;
      return check(vkFlushMappedMemoryRanges(device_, 1, &range), "vkFlushMappedMemoryRanges");
    }
    return Ok{};
  }
  auto staging = createBuffer(bytes, Placement::HostVisible, "a staging buffer");
  if (!staging) return staging.error();
  std::memcpy(staging->mapped(), data, bytes);
  VkBuffer src = staging->handle(), to = dst.handle();
  return oneShot([&](VkCommandBuffer cmd) {
    VkBufferCopy region{0, 0, bytes};
    vkCmdCopyBuffer(cmd, src, to, 1, &region);
  });
}

Status Device::download(const Buffer& src, void* data, uint64_t bytes) {
  bytes = std::min(bytes, src.size());
  if (src.mapped()) {
    if (!src.hostCoherent()) {
      VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
      range.memory = src.memory_;
      range.size = VK_WHOLE_SIZE;
      auto s = check(vkInvalidateMappedMemoryRanges(device_, 1, &range), "vkInvalidateMappedMemoryRanges");
      if (!s) return s;
    }
    std::memcpy(data, src.mapped(), bytes);
    return Ok{};
  }
  auto staging = createBuffer(bytes, Placement::HostCached, "a staging buffer");
  if (!staging) return staging.error();
  VkBuffer from = src.handle(), to = staging->handle();
  auto s = oneShot([&](VkCommandBuffer cmd) {
    VkBufferCopy region{0, 0, bytes};
    vkCmdCopyBuffer(cmd, from, to, 1, &region);
  });
  if (!s) return s;
  return download(*staging, data, bytes);
}

Status Device::fillRange(Buffer& dst, uint64_t offset, uint64_t bytes, uint32_t pattern) {
  if (offset % 4 || bytes % 4 || offset + bytes > dst.size()) return makeError("fillRange: outside the buffer");
  VkBuffer b = dst.handle();
  return oneShot([&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, b, offset, bytes, pattern); });
}

Status Device::flushMapped(const Buffer& buffer) {
  if (!buffer.mapped() || buffer.hostCoherent()) return Ok{};
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = buffer.memory_;
  range.size = VK_WHOLE_SIZE;
  return check(vkFlushMappedMemoryRanges(device_, 1, &range), "vkFlushMappedMemoryRanges");
}

Status Device::invalidateMapped(const Buffer& buffer) {
  if (!buffer.mapped() || buffer.hostCoherent()) return Ok{};
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = buffer.memory_;
  range.size = VK_WHOLE_SIZE;
  return check(vkInvalidateMappedMemoryRanges(device_, 1, &range), "vkInvalidateMappedMemoryRanges");
}

Status Device::fill(Buffer& dst, uint32_t pattern) {
  VkBuffer b = dst.handle();
  return oneShot([&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, b, 0, VK_WHOLE_SIZE, pattern); });
}

Status Device::replicate(Buffer& buffer, uint64_t bytes, uint64_t stride, uint32_t count) {
  if (count <= 1) return Ok{};
  if (stride < bytes || stride * count > buffer.size()) return makeError("replicate: the copies do not fit the buffer");
  VkBuffer b = buffer.handle();
  // Doubling: copies 1, 2, 4, ... slots at a time, each step one region from
  // the slots already filled (padding between slots included): a handful of
  // copies however many sets, where one region per slot would be thousands.
  return oneShot([&](VkCommandBuffer cmd) {
    for (uint32_t have = 1; have < count;) {
      const uint32_t n = std::min(have, count - have);
      const VkBufferCopy region{0, have * stride, (n - 1) * stride + bytes};
      vkCmdCopyBuffer(cmd, b, b, 1, &region);
      VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
      vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &barrier, 0,
                           nullptr, 0, nullptr);
      have += n;
    }
  });
}

Result<const Pipeline*> Device::pipeline(const PipelineDesc& desc) {
  if (lost_) return makeError("the device was lost", VK_ERROR_DEVICE_LOST);
  std::string source_key = desc.name + '\n' + desc.source;
  for (const auto& [k, v] : desc.defines) source_key += '\n' + k + '=' + v;
  std::string key = source_key + "\nspec:";
  for (uint32_t v : desc.spec_constants) key += std::to_string(v) + ',';
  key += "\nbuffers:" + std::to_string(desc.buffer_count) + "\npush:" + std::to_string(desc.push_constant_bytes);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second.get();

  auto spirv_it = spirv_cache_.find(source_key);
  if (spirv_it == spirv_cache_.end()) {
    auto spirv = compileGlsl(desc.name, desc.source, desc.defines);
    if (!spirv) return spirv.error();
    spirv_it = spirv_cache_.emplace(source_key, std::move(spirv.value())).first;
  }
  const auto& code = spirv_it->second;

  auto p = std::make_unique<Pipeline>();
  p->buffer_count = desc.buffer_count;
  p->push_constant_bytes = desc.push_constant_bytes;
  std::vector<VkDescriptorSetLayoutBinding> bindings(desc.buffer_count);
  for (uint32_t i = 0; i < desc.buffer_count; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dl.bindingCount = desc.buffer_count;
  dl.pBindings = bindings.data();
  VkResult r = vkCreateDescriptorSetLayout(device_, &dl, nullptr, &p->set_layout);
  if (r != VK_SUCCESS) return fail(r, "vkCreateDescriptorSetLayout");

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, desc.push_constant_bytes};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &p->set_layout;
  pl.pushConstantRangeCount = desc.push_constant_bytes ? 1 : 0;
  pl.pPushConstantRanges = &range;
  r = vkCreatePipelineLayout(device_, &pl, nullptr, &p->layout);
  if (r != VK_SUCCESS) {
    vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
    return fail(r, "vkCreatePipelineLayout");
  }

  VkShaderModuleCreateInfo sm{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  sm.codeSize = code.size() * sizeof(uint32_t);
  sm.pCode = code.data();
  VkShaderModule module = VK_NULL_HANDLE;
  r = vkCreateShaderModule(device_, &sm, nullptr, &module);
  if (r != VK_SUCCESS) {
    vkDestroyPipelineLayout(device_, p->layout, nullptr);
    vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
    return fail(r, "vkCreateShaderModule for " + desc.name);
  }

  std::vector<VkSpecializationMapEntry> entries(desc.spec_constants.size());
  for (uint32_t i = 0; i < entries.size(); ++i) entries[i] = {i, i * 4u, 4};
  VkSpecializationInfo spec{};
  spec.mapEntryCount = static_cast<uint32_t>(entries.size());
  spec.pMapEntries = entries.data();
  spec.dataSize = desc.spec_constants.size() * sizeof(uint32_t);
  spec.pData = desc.spec_constants.data();

  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
  ci.layout = p->layout;
  if (info_.executable_properties) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  r = vkCreateComputePipelines(device_, pipeline_cache_, 1, &ci, nullptr, &p->pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  if (r != VK_SUCCESS) {
    vkDestroyPipelineLayout(device_, p->layout, nullptr);
    vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
    return fail(r, "vkCreateComputePipelines for " + desc.name);
  }
  if (info_.executable_properties) {
    // Registers, shared memory and spills as the driver reports them.
    auto getExecs = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
        vkGetDeviceProcAddr(device_, "vkGetPipelineExecutablePropertiesKHR"));
    auto getStats = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
        vkGetDeviceProcAddr(device_, "vkGetPipelineExecutableStatisticsKHR"));
    VkPipelineInfoKHR pinfo{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    pinfo.pipeline = p->pipeline;
    uint32_t execs = 0;
    if (getExecs && getStats && getExecs(device_, &pinfo, &execs, nullptr) == VK_SUCCESS && execs > 0) {
      VkPipelineExecutableInfoKHR einfo{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
      einfo.pipeline = p->pipeline;
      einfo.executableIndex = 0;
      uint32_t n = 0;
      getStats(device_, &einfo, &n, nullptr);
      std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
      if (n && getStats(device_, &einfo, &n, stats.data()) == VK_SUCCESS)
        for (const auto& st : stats) {
          std::string v;
          switch (st.format) {
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
              v = st.value.b32 ? "true" : "false";
              break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
              v = std::to_string(st.value.i64);
              break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
              v = std::to_string(st.value.u64);
              break;
            default:
              v = std::to_string(st.value.f64);
          }
          p->statistics.emplace_back(st.name, v);
        }
    }
  }
  const Pipeline* raw = p.get();
  pipelines_.emplace(key, std::move(p));
  return raw;
}

Result<std::unique_ptr<TimedDispatch>> Device::prepareDispatch(const Pipeline& pipeline,
                                                               const std::vector<const Buffer*>& buffers,
                                                               const void* push_constants,
                                                               std::array<uint32_t, 3> groups) {
  RecordedStep step{&pipeline, groups, {}};
  if (push_constants && pipeline.push_constant_bytes) {
    step.push.resize(pipeline.push_constant_bytes / 4);
    std::memcpy(step.push.data(), push_constants, pipeline.push_constant_bytes);
  }
  std::vector<BufferRange> bindings;
  for (const Buffer* b : buffers) bindings.push_back({b});
  return prepareDispatch({step}, bindings, {});
}

Result<VkDescriptorBufferInfo> Device::descriptorInfo(const BufferRange& binding) const {
  const Buffer& b = *binding.buffer;
  const uint64_t range = binding.range == VK_WHOLE_SIZE ? b.size() - std::min(binding.offset, b.size()) : binding.range;
  auto mib = [](uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; };
  if (range == 0) return makeError("an empty binding at offset " + std::to_string(binding.offset));
  if (binding.offset + range > b.size())
    return makeError("a binding of " + std::to_string(range) + " bytes at offset " + std::to_string(binding.offset) +
                     " runs past its buffer of " + std::to_string(b.size()) + " bytes");
  if (binding.offset % info_.min_storage_offset_alignment)
    return makeError("a binding at offset " + std::to_string(binding.offset) +
                     " is not a multiple of this device's minStorageBufferOffsetAlignment (" +
                     std::to_string(info_.min_storage_offset_alignment) + ")");
  if (range > info_.max_storage_buffer_range)
    return makeError("a binding of " + mib(range) + " is over this device's maxStorageBufferRange (" +
                     mib(info_.max_storage_buffer_range) + ")");
  // An explicit range, never VK_WHOLE_SIZE: what is bound is what was checked.
  return VkDescriptorBufferInfo{b.handle(), binding.offset, range};
}

Result<std::unique_ptr<TimedDispatch>> Device::prepareDispatch(const std::vector<RecordedStep>& steps,
                                                               const std::vector<BufferRange>& buffers,
                                                               const std::vector<const Buffer*>& zero_before,
                                                               const std::vector<CopyRegion>& copies_before,
                                                               const std::vector<CopyRegion>& copies_after) {
  if (lost_) return makeError("the device was lost", VK_ERROR_DEVICE_LOST);
  if (steps.empty()) return makeError("nothing to dispatch");
  for (const auto* copies : {&copies_before, &copies_after})
    for (const auto& c : *copies)
      if (!c.src || !c.dst || c.bytes > c.src->size() || c.bytes > c.dst->size())
        return makeError("a copy around the dispatch is larger than its buffers");
  for (const auto& step : steps) {
    for (int i = 0; i < 3; ++i)
      if (step.groups[i] == 0 || step.groups[i] > info_.max_workgroup_count[i])
        return makeError("dispatch of " + std::to_string(step.groups[i]) + " workgroups in dimension " + "xyz"[i] +
                         std::string(" is outside this device's maxComputeWorkGroupCount (") +
                         std::to_string(info_.max_workgroup_count[i]) + ")");
    const size_t bound = step.bindings.empty() ? buffers.size() : step.bindings.size();
    if (bound != step.pipeline->buffer_count) return makeError("buffer count does not match the pipeline");
    for (const auto& b : step.bindings)
      if (b.buffer >= buffers.size()) return makeError("a step binds a buffer the point does not have");
  }

  std::unique_ptr<TimedDispatch> d(new TimedDispatch());
  d->device_ = this;
  d->owner_ = device_;
  d->command_pool_ = command_pool_;
  const uint32_t sets = uint32_t(steps.size());
  uint32_t descriptors = 0;
  for (const auto& step : steps) descriptors += step.pipeline->buffer_count;
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(1u, descriptors)};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = sets;
  pi.poolSizeCount = 1;
  pi.pPoolSizes = &size;
  VkResult r = vkCreateDescriptorPool(device_, &pi, nullptr, &d->pool_);
  if (r != VK_SUCCESS) return fail(r, "vkCreateDescriptorPool");
  // One set per step: each pipeline has its own set layout.
  d->sets_.resize(sets);
  for (uint32_t s = 0; s < sets; ++s) {
    VkDescriptorSetAllocateInfo si{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    si.descriptorPool = d->pool_;
    si.descriptorSetCount = 1;
    si.pSetLayouts = &steps[s].pipeline->set_layout;
    r = vkAllocateDescriptorSets(device_, &si, &d->sets_[s]);
    if (r != VK_SUCCESS) return fail(r, "vkAllocateDescriptorSets");
    d->bindings_.push_back(steps[s].bindings);
    d->barrier_before_.push_back(steps[s].after_previous);
  }
  if (auto st = d->writeSets(buffers); !st) return st.error();

  if (auto st = allocateTiming(*d); !st) return st.error();
  for (const auto& step : steps) {
    d->steps_.push_back({step.pipeline, step.groups});
    d->push_.push_back(step.push);
  }
  for (const Buffer* b : zero_before) d->zero_before_.push_back(b->handle());
  d->copies_before_ = copies_before;
  d->copies_after_ = copies_after;
  if (auto st = d->record(); !st) return st.error();
  return d;
}

// What every timed submission needs: two timestamp queries (where the device
// has them), a fence and a command buffer.
Status Device::allocateTiming(TimedDispatch& d) {
  d.owner_ = device_;
  d.command_pool_ = command_pool_;
  VkResult r;
  if (info_.timestamps) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = 2;
    r = vkCreateQueryPool(device_, &qi, nullptr, &d.queries_);
    if (r != VK_SUCCESS) return fail(r, "vkCreateQueryPool");
  }
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = vkCreateFence(device_, &fi, nullptr, &d.fence_);
  if (r != VK_SUCCESS) return fail(r, "vkCreateFence");
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = command_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  r = vkAllocateCommandBuffers(device_, &ai, &d.cmd_);
  if (r != VK_SUCCESS) return fail(r, "vkAllocateCommandBuffers");
  return Ok{};
}

Result<std::unique_ptr<TimedDispatch>> Device::prepareCopy(const Buffer& src, const Buffer& dst, uint64_t bytes) {
  if (lost_) return makeError("the device was lost", VK_ERROR_DEVICE_LOST);
  if (bytes > src.size() || bytes > dst.size()) return makeError("copy larger than its buffers");
  std::unique_ptr<TimedDispatch> d(new TimedDispatch());
  d->device_ = this;
  if (auto st = allocateTiming(*d); !st) return st.error();
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(d->cmd_, &bi);
  if (d->queries_) {
    vkCmdResetQueryPool(d->cmd_, d->queries_, 0, 2);
    vkCmdWriteTimestamp(d->cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, d->queries_, 0);
  }
  VkBufferCopy region{0, 0, bytes};
  vkCmdCopyBuffer(d->cmd_, src.handle(), dst.handle(), 1, &region);
  if (d->queries_) vkCmdWriteTimestamp(d->cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, d->queries_, 1);
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};  // the next copy writes what this one wrote
  b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(d->cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &b, 0, nullptr, 0,
                       nullptr);
  VkResult r = vkEndCommandBuffer(d->cmd_);
  if (r != VK_SUCCESS) return fail(r, "vkEndCommandBuffer");
  return d;
}

Result<double> Device::emptySubmitNs() {
  if (lost_) return makeError("the device was lost", VK_ERROR_DEVICE_LOST);
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  VkResult r = vkCreateFence(device_, &fi, nullptr, &fence);
  if (r != VK_SUCCESS) return fail(r, "vkCreateFence");
  double ns = 0;
  Status s = submitAndWait(VK_NULL_HANDLE, fence, &ns);
  if (!lost_) vkDestroyFence(device_, fence, nullptr);
  if (!s) return s.error();
  return ns;
}

Status TimedDispatch::record() {
  VkResult reset = vkResetCommandBuffer(cmd_, 0);
  if (reset != VK_SUCCESS) return device_->fail(reset, "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(cmd_, &bi);
  auto barrier = [&](VkAccessFlags src, VkAccessFlags dst, VkPipelineStageFlags from, VkPipelineStageFlags to) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = src;
    b.dstAccessMask = dst;
    vkCmdPipelineBarrier(cmd_, from, to, 0, 1, &b, 0, nullptr, 0, nullptr);
  };
  // Accumulators and counters start from zero every run; not timed.
  if (!zero_before_.empty()) {
    barrier(VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    for (VkBuffer b : zero_before_) vkCmdFillBuffer(cmd_, b, 0, VK_WHOLE_SIZE, 0);
    barrier(VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
  }
  // Copies into the dispatch's buffers (a staging round trip), outside the timing.
  if (!copies_before_.empty()) {
    barrier(VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    for (const auto& c : copies_before_) {
      VkBufferCopy region{0, 0, c.bytes};
      vkCmdCopyBuffer(cmd_, c.src->handle(), c.dst->handle(), 1, &region);
    }
    barrier(VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
  }
  if (queries_) {
    vkCmdResetQueryPool(cmd_, queries_, 0, 2);
    vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
  }
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Pipeline& p = *steps_[s].first;
    if (s > 0 && barrier_before_[s])  // the next pass reads what the previous one wrote
      barrier(VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &sets_[s], 0, nullptr);
    if (p.push_constant_bytes) {
      std::vector<uint32_t> words(p.push_constant_bytes / 4, 0);
      std::copy_n(push_[s].begin(), std::min(words.size(), push_[s].size()), words.begin());
      vkCmdPushConstants(cmd_, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p.push_constant_bytes, words.data());
    }
    vkCmdDispatch(cmd_, steps_[s].second[0], steps_[s].second[1], steps_[s].second[2]);
  }
  if (queries_) vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
  // Make the results visible to the host and to the next repetition.
  barrier(
      VK_ACCESS_SHADER_WRITE_BIT,
      VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
      VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
  if (!copies_after_.empty()) {
    for (const auto& c : copies_after_) {
      VkBufferCopy region{0, 0, c.bytes};
      vkCmdCopyBuffer(cmd_, c.src->handle(), c.dst->handle(), 1, &region);
    }
    barrier(VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT);
  }
  VkResult r = vkEndCommandBuffer(cmd_);
  if (r != VK_SUCCESS) return device_->fail(r, "vkEndCommandBuffer");
  return Ok{};
}

// Points each step's set at `buffers` (the point's buffers in order), or at
// the slices of them the step binds.
Status TimedDispatch::writeSets(const std::vector<BufferRange>& buffers) {
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkWriteDescriptorSet> writes;
  size_t total = 0;
  for (const auto& b : bindings_) total += b.empty() ? buffers.size() : b.size();
  infos.reserve(total);  // writes point into it
  for (size_t s = 0; s < sets_.size(); ++s) {
    std::vector<BufferRange> ranges;
    if (bindings_[s].empty()) ranges = buffers;
    for (const auto& sub : bindings_[s]) {
      const BufferRange& whole = buffers[sub.buffer];
      const uint64_t base = whole.range == VK_WHOLE_SIZE ? whole.buffer->size() - whole.offset : whole.range;
      if (sub.offset >= base) return makeError("a step binds past the end of buffer " + std::to_string(sub.buffer));
      ranges.push_back({whole.buffer, whole.offset + sub.offset, sub.bytes ? sub.bytes : base - sub.offset});
    }
    for (size_t i = 0; i < ranges.size(); ++i) {
      auto info = device_->descriptorInfo(ranges[i]);
      if (!info) return makeError("binding " + std::to_string(i) + ": " + info.error().message);
      infos.push_back(*info);
      VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w.dstSet = sets_[s];
      w.dstBinding = static_cast<uint32_t>(i);
      w.descriptorCount = 1;
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w.pBufferInfo = &infos.back();
      writes.push_back(w);
    }
  }
  vkUpdateDescriptorSets(device_->handle(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return Ok{};
}

Status TimedDispatch::rebind(const std::vector<BufferRange>& bindings) {
  if (device_->lost()) return makeError("the device was lost", VK_ERROR_DEVICE_LOST);
  if (owner_ != device_->handle()) return makeError("the device was recreated since this dispatch was prepared");
  // The previous run has finished (run() waits on its fence), so the sets are not in use.
  if (auto st = writeSets(bindings); !st) return st;
  return record();
}

TimedDispatch::~TimedDispatch() {
  VkDevice dev = owner_;
  if (!dev || isAbandoned(dev)) return;  // recorded on a device that hung: left alone
  if (cmd_) vkFreeCommandBuffers(dev, command_pool_, 1, &cmd_);
  if (queries_) vkDestroyQueryPool(dev, queries_, nullptr);
  if (fence_) vkDestroyFence(dev, fence_, nullptr);
  if (pool_) vkDestroyDescriptorPool(dev, pool_, nullptr);
}

Result<Timing> TimedDispatch::run() {
  if (device_->lost()) return makeError("the device was lost", VK_ERROR_DEVICE_LOST);
  if (owner_ != device_->handle()) return makeError("the device was recreated since this dispatch was prepared");
  Timing t;
  Status s = device_->submitAndWait(cmd_, fence_, &t.wall_ns);
  if (!s) return s.error();
  if (queries_) {
    uint64_t stamps[2] = {0, 0};
    VkResult r = vkGetQueryPoolResults(device_->handle(), queries_, 0, 2, sizeof stamps, stamps, sizeof(uint64_t),
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) return device_->fail(r, "vkGetQueryPoolResults");
    const uint32_t bits = device_->info().timestamp_valid_bits;
    const uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
    const uint64_t ticks = (stamps[1] - stamps[0]) & mask;  // wraps correctly within validBits
    t.gpu_ns = static_cast<double>(ticks) * device_->info().timestamp_period_ns;
  }
  return t;
}

}  // namespace ks::vk
