#include <gtest/gtest.h>

#include <set>

#include "engine/bench/sweep.h"
#include "engine/kernels/registry.h"

using namespace ks;

namespace {
vk::DeviceInfo lavapipeLikeLimits() {
  vk::DeviceInfo d;
  d.name = "test";
  d.type = "cpu";
  d.max_shared_memory = 32768;
  d.max_invocations = 1024;
  d.max_workgroup_size = {1024, 1024, 1024};
  d.max_workgroup_count = {65535, 65535, 65535};
  d.max_storage_buffer_range = 128u << 20;
  d.subgroup_size = 8;
  d.subgroup_ops = VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  d.memory_model = true;
  d.max_allocation_size = 2048u << 20;
  // lavapipe's one memory type: device-local, host-visible, coherent and cached.
  d.memory_types = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT};
  return d;
}
}  // namespace

TEST(Registry, RecordsAreConsistent) {
  const auto& all = Registry::instance().all();
  ASSERT_GE(all.size(), 10u);
  std::set<std::string> ids;
  for (const auto& k : all) {
    SCOPED_TRACE(k.id);
    EXPECT_TRUE(ids.insert(k.id).second) << "duplicate id";
    // ids read family.variant, CPU ones cpu.family.variant
    const std::string prefix = (k.backend == Backend::Cpu ? "cpu." : "") + k.family + ".";
    EXPECT_EQ(k.id.rfind(prefix, 0), 0u);
    EXPECT_FALSE(k.title.empty());
    EXPECT_FALSE(k.description.empty());
    EXPECT_FALSE(k.origin.empty());
    EXPECT_FALSE(k.constraints.empty());
    ASSERT_TRUE(k.flops);
    ASSERT_TRUE(k.bytes);
    for (const auto& t : k.tunables) {
      EXPECT_FALSE(t.values.empty());
      EXPECT_NE(std::find(t.values.begin(), t.values.end(), t.default_value), t.values.end())
          << t.name << " default is not a legal value";
    }
    if (k.backend == Backend::Vulkan) {
      // A transfer that is a vkCmdCopyBuffer or a memcpy runs no shader.
      const bool shaderless = k.workload == "transfer" && k.shader.empty();
      if (!shaderless) EXPECT_FALSE(shaderSource(k.shader).empty());
      EXPECT_TRUE(k.groups || k.steps) << "no dispatch geometry";
      EXPECT_TRUE(k.buffers);
      EXPECT_FALSE(bool(k.cpu));
    } else {
      EXPECT_TRUE(bool(k.cpu));
      EXPECT_FALSE(k.uses_workgroup);
    }
  }
}

TEST(Registry, DefaultsFitTheirOwnConstraints) {
  const auto dev = lavapipeLikeLimits();
  for (const auto& k : Registry::instance().all()) {
    if (!k.required_extensions.empty()) continue;  // e.g. cooperative matrices: not on this fake device
    auto why = checkPoint(k, problemSize(k, {256}).value(), k.defaultParams(), &dev);
    EXPECT_FALSE(why.has_value()) << k.id << ": " << why.value_or("");
  }
}

TEST(Registry, DotGroupsDefaultToOneWaveOfTheDevicesMultiprocessors) {
  const KernelInfo& k = *Registry::instance().find("dot.two_pass_shared");
  vk::DeviceInfo h200;  // what VK_NV_shader_sm_builtins says on an H200
  h200.multiprocessors = 132;
  h200.threads_per_multiprocessor = 64 * 32;
  EXPECT_EQ(k.defaultParams(&h200).get("GROUPS", 0), 1024);  // 132 x 8 workgroups of 256 = 1056
  EXPECT_EQ(k.defaultParams(nullptr).get("GROUPS", 0), 256);
  vk::DeviceInfo unknown;  // lavapipe and drivers that do not say
  EXPECT_EQ(k.defaultParams(&unknown).get("GROUPS", 0), 256);
  EXPECT_EQ(k.tunable("GROUPS")->defaultFor(&h200, {64, 1, 1}), 4096);  // 132 x 32 groups of 64 = 4224
  // A sweep takes the device's default per workgroup shape; a GROUPS the user gives wins.
  SweepSpec spec;
  spec.kernels = {&k};
  spec.sizes = {SizeSpec{1 << 20}};
  spec.shapes = {{256, 1, 1}, {128, 1, 1}};
  spec.device = &h200;
  auto plan = buildPlan(spec);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ((*plan)[0].params.get("GROUPS", 0), 1024);
  EXPECT_EQ((*plan)[1].params.get("GROUPS", 0), 2048);
  spec.params["GROUPS"] = {256};
  plan = buildPlan(spec);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ((*plan)[0].params.get("GROUPS", 0), 256);
  // gemm has no device defaults.
  const KernelInfo& gemm = *Registry::instance().find("gemm.warptile");
  EXPECT_EQ(gemm.defaultParams(&h200), gemm.defaultParams());
}

TEST(Registry, MemoryPlacementsTheDeviceLacksAreRefused) {
  // A discrete GPU without resizable BAR: device-local, and host memory apart.
  auto dev = lavapipeLikeLimits();
  dev.memory_types = {
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT};
  for (const char* id :
       {"transfer.upload_mapped", "transfer.download_mapped", "interleave.device_local_host_visible"}) {
    const auto* k = Registry::instance().find(id);
    ASSERT_NE(k, nullptr) << id;
    auto why = checkPoint(*k, problemSize(*k, {4096}).value(), k->defaultParams(), &dev);
    ASSERT_TRUE(why.has_value()) << id;
    EXPECT_NE(why->find("unsupported: no device-local host-visible memory"), std::string::npos) << *why;
  }
  for (const char* id : {"transfer.upload_staging", "transfer.gpu_reads_host", "interleave.device_local",
                         "interleave.host_coherent", "interleave.host_cached"}) {
    const auto* k = Registry::instance().find(id);
    ASSERT_NE(k, nullptr) << id;
    EXPECT_FALSE(checkPoint(*k, problemSize(*k, {4096}).value(), k->defaultParams(), &dev).has_value()) << id;
  }
}

TEST(Registry, GemmCountsAreTheTextbookOnes) {
  const auto* k = Registry::instance().find("gemm.naive");
  ASSERT_NE(k, nullptr);
  EXPECT_DOUBLE_EQ(k->flops({1024, 768, 512}), 2.0 * 1024 * 768 * 512);
  EXPECT_DOUBLE_EQ(k->bytes({2, 3, 4}, {}), 4.0 * (2 * 4 + 4 * 3 + 2 * 3));
}

TEST(Registry, MatchAcceptsIdsGlobsAndAll) {
  const auto& reg = Registry::instance();
  auto one = reg.match("gemm.naive");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  auto glob = reg.match("gemm.*");
  ASSERT_TRUE(glob.ok());
  size_t gpuGemm = 0;
  for (const auto& k : reg.all()) gpuGemm += k.id.rfind("gemm.", 0) == 0;
  EXPECT_EQ(glob->size(), gpuGemm);
  EXPECT_GE(gpuGemm, 10u);
  auto all = reg.match("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), reg.all().size());
  auto dup = reg.match("gemm.naive,gemm.naive, gemm.naive");
  ASSERT_TRUE(dup.ok());
  EXPECT_EQ(dup->size(), 1u);
  auto bad = reg.match("gemm.naive,gemm.nope");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("unknown kernel 'gemm.nope'"), std::string::npos);
  EXPECT_FALSE(reg.match("").ok());
}

TEST(Registry, RejectsShapesOverDeviceLimitsWithTheLimitNamed) {
  const auto dev = lavapipeLikeLimits();
  const auto* naive = Registry::instance().find("gemm.naive");
  Params p = naive->defaultParams();
  p.wg = {64, 32, 1};
  auto why = checkPoint(*naive, {64, 64, 64}, p, &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("2048 invocations, over maxComputeWorkGroupInvocations 1024"), std::string::npos) << *why;

  p.wg = {2048, 1, 1};
  why = checkPoint(*naive, {64, 64, 64}, p, &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("maxComputeWorkGroupSize"), std::string::npos) << *why;

  const auto* block = Registry::instance().find("gemm.block_tiling");
  Params b = block->defaultParams();
  b.values["BK"] = 16;
  b.values["BN"] = 8;
  b.wg = {64, 16, 1};  // 4 * BK * BN * (64 + 16) = 40960 bytes
  why = checkPoint(*block, {64, 64, 64}, b, &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("needs 40960 bytes of shared memory"), std::string::npos) << *why;
  EXPECT_NE(why->find("maxComputeSharedMemorySize 32768"), std::string::npos) << *why;
}

TEST(Registry, RejectsSizesAndShapesTheKernelCannotTake) {
  const auto dev = lavapipeLikeLimits();
  const auto& reg = Registry::instance();
  const auto* reg4 = reg.find("gemm.reg4x4");
  EXPECT_FALSE(checkPoint(*reg4, {17, 16, 16}, reg4->defaultParams(), &dev).has_value()) << "any M";
  auto why = checkPoint(*reg4, {16, 16, 17}, reg4->defaultParams(), &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("K=17 is not a multiple of 4"), std::string::npos) << *why;
  const auto* reg8 = reg.find("gemm.reg8x4");
  why = checkPoint(*reg8, {12, 18, 16}, reg8->defaultParams(), &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("N=18 is not a multiple of 4"), std::string::npos) << *why;
  EXPECT_EQ(why->find("M="), std::string::npos) << "M is bounds-checked: " << *why;
  EXPECT_FALSE(checkPoint(*reg8, {1000, 1200, 900}, reg8->defaultParams(), &dev).has_value());

  const auto* tiled = reg.find("gemm.tiled_shared");
  Params p = tiled->defaultParams();
  p.wg = {16, 8, 1};
  why = checkPoint(*tiled, {64, 64, 64}, p, &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("not square"), std::string::npos) << *why;

  const auto* unroll = reg.find("gemm.tiled_shared_unroll");
  Params u = unroll->defaultParams();
  u.wg = {4, 4, 1};
  u.values["UNROLL"] = 8;
  why = checkPoint(*unroll, {64, 64, 64}, u, &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("UNROLL=8 does not divide"), std::string::npos) << *why;

  u.values["UNROLL"] = 3;
  why = checkPoint(*unroll, {64, 64, 64}, u, &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("not a legal value"), std::string::npos) << *why;

  why = checkPoint(*tiled, {0, 64, 64}, tiled->defaultParams(), &dev);
  ASSERT_TRUE(why.has_value());

  // Every gemm shader is 2-D: a z dimension would be recorded but not run.
  Params z = reg.find("gemm.naive")->defaultParams();
  z.wg = {8, 8, 2};
  why = checkPoint(*reg.find("gemm.naive"), {64, 64, 64}, z, &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("z must be 1"), std::string::npos) << *why;
}

TEST(Registry, MissingExtensionMakesAKernelUnsupported) {
  KernelInfo k;
  k.id = "gemm.fake";
  k.backend = Backend::Vulkan;
  k.required_extensions = {"VK_NV_cooperative_matrix"};
  auto dev = lavapipeLikeLimits();
  auto why = unsupportedReason(k, &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "no VK_NV_cooperative_matrix");
  dev.extensions = {"VK_NV_cooperative_matrix"};
  EXPECT_FALSE(unsupportedReason(k, &dev).has_value());
}
