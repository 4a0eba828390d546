#pragma once
// The Vulkan device the engine tests run on: lavapipe where present (CI and
// development machines), else the default device. Opened once per process.
#include <memory>
#include <stdexcept>

#include "engine/kernels/registry.h"
#include "engine/vulkan/context.h"

namespace ks::testing {

inline vk::Device& device() {
  struct Lavapipe {
    std::shared_ptr<vk::Instance> instance;
    std::unique_ptr<vk::Device> device;
  };
  static Lavapipe l = [] {
    Lavapipe out;
    auto inst = vk::Instance::create();
    if (!inst) return out;
    out.instance = *inst;
    auto index = vk::selectDevice(out.instance->devices(), "llvmpipe");
    if (!index) index = vk::selectDevice(out.instance->devices(), "");
    if (!index) return out;
    auto dev = vk::Device::create(out.instance, *index);
    if (dev) out.device = std::move(dev.value());
    return out;
  }();
  if (!l.device) throw std::runtime_error("no Vulkan device (install mesa-vulkan-drivers)");
  return *l.device;
}

// The empty shader (one storage buffer, no push constants): for tests of
// bindings and dispatch mechanics rather than of a kernel.
inline Result<const vk::Pipeline*> emptyPipeline(vk::Device& dev) {
  vk::PipelineDesc desc;
  desc.name = "util_empty.comp";
  desc.source = shaderSource(desc.name);
  desc.buffer_count = 1;
  desc.push_constant_bytes = 0;
  return dev.pipeline(desc);
}

}  // namespace ks::testing
