// The validation harness itself: the test suite runs every Vulkan test with
// KS_VALIDATION=strict (see tests/CMakeLists.txt), so a validation error ends
// the test. These tests check that the layer really is on and really reports.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "engine/kernels/registry.h"
#include "engine/vulkan/context.h"
#include "tests/lavapipe.h"

using namespace ks;

TEST(Validation, TheSuiteRunsUnderTheStrictValidationLayer) {
  const char* mode = std::getenv("KS_VALIDATION");
  ASSERT_NE(mode, nullptr) << "ctest sets KS_VALIDATION=strict for every test";
  EXPECT_STREQ(mode, "strict");
  EXPECT_EQ(vk::validationMode(), vk::ValidationMode::Strict);
}

TEST(Validation, AnInvalidDescriptorWriteIsReportedByTheMessenger) {
  // Report mode in this process only: count the error instead of aborting.
  ::setenv("KS_VALIDATION", "1", 1);
  auto instance = vk::Instance::create();
  ASSERT_TRUE(instance.ok()) << instance.error().message;
  auto index = vk::selectDevice((*instance)->devices(), "llvmpipe");
  if (!index) index = vk::selectDevice((*instance)->devices(), "");
  ASSERT_TRUE(index.ok());
  auto device = vk::Device::create(*instance, *index);
  ASSERT_TRUE(device.ok()) << device.error().message;
  vk::Device& dev = **device;

  auto pipeline = ks::testing::emptyPipeline(dev);
  ASSERT_TRUE(pipeline.ok()) << pipeline.error().message;
  auto buffer = dev.createBuffer(4096, vk::Placement::DeviceLocal, "a test buffer");
  ASSERT_TRUE(buffer.ok());

  // Past the engine's own checks, straight to Vulkan: a binding that runs past
  // the end of its buffer (VUID-VkDescriptorBufferInfo-range-00342).
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = 1;
  pi.poolSizeCount = 1;
  pi.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateDescriptorPool(dev.handle(), &pi, nullptr, &pool), VK_SUCCESS);
  VkDescriptorSetAllocateInfo si{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  si.descriptorPool = pool;
  si.descriptorSetCount = 1;
  si.pSetLayouts = &(*pipeline)->set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  ASSERT_EQ(vkAllocateDescriptorSets(dev.handle(), &si, &set), VK_SUCCESS);

  const uint64_t before = vk::validationCounts().errors;
  VkDescriptorBufferInfo info{buffer->handle(), 0, 8192};
  VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
  write.dstSet = set;
  write.dstBinding = 0;
  write.descriptorCount = 1;
  write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  write.pBufferInfo = &info;
  vkUpdateDescriptorSets(dev.handle(), 1, &write, 0, nullptr);
  const auto after = vk::validationCounts();
  EXPECT_GT(after.errors, before) << "the layer did not report an out-of-range binding";
  EXPECT_NE(after.last_error.find("range"), std::string::npos) << after.last_error;
  vkDestroyDescriptorPool(dev.handle(), pool, nullptr);
}
