#include <gtest/gtest.h>

#include "engine/kernels/registry.h"
#include "engine/vulkan/shader_compiler.h"

using namespace ks;

TEST(ShaderCompiler, DefinesGoAfterVersionAndKeepLineNumbers) {
  const std::string src = "#version 450\nvoid main() {}\n";
  const std::string out = vk::injectDefines(src, {{"BK", "4"}, {"BN", "8"}});
  EXPECT_EQ(out.rfind("#version 450\n#define BK 4\n#define BN 8\n#line 2\n", 0), 0u) << out;
}

TEST(ShaderCompiler, CompilesAndDefinesReachTheShader) {
  const std::string src =
      "#version 450\nlayout(local_size_x = 1) in;\n"
      "layout(std430, binding = 0) buffer B { float x[]; };\n"
      "void main() { x[0] = float(VALUE); }\n";
  auto spirv = vk::compileGlsl("t.comp", src, {{"VALUE", "3"}});
  ASSERT_TRUE(spirv.ok()) << spirv.error().message;
  ASSERT_GT(spirv->size(), 5u);
  EXPECT_EQ((*spirv)[0], 0x07230203u);  // SPIR-V magic
  auto missing = vk::compileGlsl("t.comp", src, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("VALUE"), std::string::npos) << missing.error().message;
}

TEST(ShaderCompiler, ParseErrorNamesStageAndShowsNumberedSource) {
  const std::string src = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undeclared = 1; }\n";
  auto r = vk::compileGlsl("broken.comp", src, {{"X", "1"}});
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.error().message;
  EXPECT_NE(msg.find("GLSL parse failed for broken.comp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("undeclared"), std::string::npos) << msg;
  EXPECT_NE(msg.find("   3: void main() { undeclared = 1; }"), std::string::npos) << msg;
  // The error points at line 3 of the file, not of the define-injected text.
  EXPECT_NE(msg.find(":3:"), std::string::npos) << msg;
}

TEST(ShaderCompiler, PreprocessErrorIsItsOwnStage) {
  auto r = vk::compileGlsl("pp.comp", "#version 450\n#error boom\nvoid main() {}\n", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("GLSL preprocess failed"), std::string::npos) << r.error().message;
}

TEST(ShaderCompiler, EveryKernelsDispatchesCompileWithEachLegalTunable) {
  // A device that has everything, so every variant's shader path is compiled.
  vk::DeviceInfo dev;
  dev.subgroup_size = 32;
  dev.subgroup_ops = VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  dev.shader_float64 = dev.int64_atomics = dev.memory_model = true;
  const ProblemSize sizes[] = {{}, {1, 64, 1, 1}, {64, 64, 1, 2}, {256, 256, 256, 3}};
  for (const auto& k : Registry::instance().all()) {
    if (k.backend != Backend::Vulkan) continue;
    std::vector<Params> variants{k.defaultParams()};
    for (const auto& t : k.tunables)
      for (int v : t.values) {
        Params p = k.defaultParams();
        p.values[t.name] = v;
        variants.push_back(p);
      }
    for (bool atomics : {false, true}) {
      dev.float32_atomic_add = dev.float64_atomic_add = atomics;
      for (const Params& p : variants) {
        if (checkPoint(k, sizes[k.size_rank], p, nullptr)) continue;  // a combination the kernel refuses anyway
        for (const auto& step : dispatchSteps(k, sizes[k.size_rank], p, dev)) {
          ASSERT_FALSE(shaderSource(step.shader).empty()) << k.id << ": " << step.shader << " is not embedded";
          auto r = vk::compileGlsl(step.shader, shaderSource(step.shader), step.defines);
          EXPECT_TRUE(r.ok()) << k.id << " " << p.str(true) << ": " << (r.ok() ? "" : r.error().message);
        }
      }
    }
  }
}
