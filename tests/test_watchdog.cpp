// The dispatch watchdog: a dispatch that never finishes is stopped after the
// timeout, its point fails with the reason, the device is recreated and the
// sweep goes on.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>

#include "engine/bench/runner.h"
#include "engine/kernels/registry.h"
#include "tests/lavapipe.h"

using namespace ks;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Each invocation spins until the first word of its buffer becomes non-zero,
// which nothing ever writes (an atomic read each time round, so no compiler
// may drop the loop). lavapipe ends any loop after 65535 iterations, so the
// dispatch is 65535 x 65535 workgroups of such loops: days of work.
const char* kEndlessShader = R"(#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Flag { uint v[]; } flag;
void main() {
  uint spins = 0u;
  while (atomicOr(flag.v[0], 0u) == 0u) spins++;
  atomicAdd(flag.v[1], spins);
}
)";

}  // namespace

TEST(Watchdog, AnEndlessDispatchIsStoppedAndTheDeviceRecreated) {
  vk::Device& dev = ks::testing::device();
  vk::PipelineDesc desc;
  desc.name = "endless.comp";
  desc.source = kEndlessShader;
  desc.buffer_count = 1;
  desc.push_constant_bytes = 0;
  auto pipeline = dev.pipeline(desc);
  ASSERT_TRUE(pipeline.ok()) << pipeline.error().message;
  auto flag = dev.createBuffer(64, vk::Placement::DeviceLocal, "the flag");
  ASSERT_TRUE(flag.ok());
  ASSERT_TRUE(dev.fill(*flag, 0).ok());
  const auto& limit = dev.info().max_workgroup_count;
  auto dispatch = dev.prepareDispatch(**pipeline, {&*flag}, nullptr, {limit[0], std::min(limit[1], 65535u), 1});
  ASSERT_TRUE(dispatch.ok()) << dispatch.error().message;

  const uint32_t generation = dev.generation();
  dev.setDispatchTimeout(0.5);
  const auto t0 = std::chrono::steady_clock::now();
  auto run = (*dispatch)->run();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(run.ok()) << "an endless loop cannot finish";
  EXPECT_TRUE(contains(run.error().message, "did not finish within 0.5 s")) << run.error().message;
  EXPECT_TRUE(contains(run.error().message, "watchdog")) << run.error().message;
  EXPECT_GE(waited, 0.45);
  EXPECT_LT(waited, 10) << "the watchdog, not the default timeout, ended the wait";
  EXPECT_TRUE(dev.lost());
  // Everything made on the hung device refuses politely instead of touching it.
  EXPECT_FALSE(dev.createBuffer(64, vk::Placement::DeviceLocal, "another").ok());

  ASSERT_TRUE(dev.recreate().ok());
  EXPECT_FALSE(dev.lost());
  EXPECT_EQ(dev.generation(), generation + 1);
  auto stale = (*dispatch)->run();
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(contains(stale.error().message, "recreated")) << stale.error().message;
  dispatch->reset();  // made on the hung device: released without touching it
  flag = Result<vk::Buffer>(makeError("released"));

  // The new device measures and verifies as before.
  dev.setDispatchTimeout(0);
  EXPECT_DOUBLE_EQ(dev.dispatchTimeout(), vk::Device::kDefaultDispatchTimeoutS);
  Runner runner(&dev);
  Plan plan;
  plan.reps = 2;
  plan.warmup = 1;
  plan.warmup_ms = 0;
  const KernelInfo& k = *Registry::instance().find("gemm.naive");
  std::atomic<bool> cancel{false};
  Measurement m = runner.runPoint({k.id, k.defaultParams(), ProblemSize{32, 32, 32, 3}}, plan, cancel);
  EXPECT_TRUE(m.trustworthy()) << m.error;
}

TEST(Watchdog, ASweepFailsTheHungPointAndGoesOn) {
  // A 1 ms watchdog stops gemm.naive at 512 (hundreds of ms a run on
  // lavapipe); the sweep recreates the device and the next points run.
  vk::Device& dev = ks::testing::device();
  Runner runner(&dev);
  Plan plan;
  plan.reps = 2;
  plan.warmup = 1;
  plan.warmup_ms = 0;
  plan.dispatch_timeout_ms = 1;
  const KernelInfo& gemm = *Registry::instance().find("gemm.naive");
  const KernelInfo& cpu = *Registry::instance().find("cpu.gemm.naive");
  plan.items = {{gemm.id, gemm.defaultParams(), ProblemSize{512, 512, 512, 3}},
                {cpu.id, cpu.defaultParams(), ProblemSize{16, 16, 16, 3}}};
  std::atomic<bool> cancel{false};
  auto points = runner.run(plan, {}, cancel);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].status, PointStatus::Failed);
  EXPECT_TRUE(contains(points[0].error, "watchdog")) << points[0].error;
  EXPECT_TRUE(contains(points[0].error, "the device was recreated and the sweep goes on")) << points[0].error;
  EXPECT_TRUE(points[1].trustworthy()) << points[1].error;
  EXPECT_FALSE(dev.lost());
  // The drift reference follows the recreated device.
  EXPECT_EQ(runner.drift().error, "") << runner.drift().summary();
  EXPECT_GE(runner.drift().checks.size(), 2u);
}

TEST(Watchdog, TheAutomaticTimeoutGrowsWithThePointsWork) {
  Plan plan;
  const KernelInfo& gemm = *Registry::instance().find("gemm.naive");
  vk::DeviceInfo cpu_device;
  cpu_device.type = "cpu";
  vk::DeviceInfo gpu;
  gpu.type = "discrete";
  const PlanItem small{gemm.id, gemm.defaultParams(), ProblemSize{64, 64, 64, 3}};
  const PlanItem large{gemm.id, gemm.defaultParams(), ProblemSize{4096, 4096, 4096, 3}};
  EXPECT_NEAR(dispatchTimeoutSeconds(gemm, small, plan, gpu), 5, 0.01);
  // 137 GFLOP at a pessimistic 1 GFLOP/s on lavapipe: minutes, not the 5 s floor.
  EXPECT_GT(dispatchTimeoutSeconds(gemm, large, plan, cpu_device), 1000);
  EXPECT_LT(dispatchTimeoutSeconds(gemm, large, plan, gpu), dispatchTimeoutSeconds(gemm, large, plan, cpu_device));
  plan.dispatch_timeout_ms = 2500;
  EXPECT_DOUBLE_EQ(dispatchTimeoutSeconds(gemm, large, plan, gpu), 2.5);
}
