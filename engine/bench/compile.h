#pragma once
// Compiling a kernel without running it: the editor's Compile button and
// `kernelscope-cli compile`. Same pipelines as a sweep would build.
#include <string>
#include <utility>
#include <vector>

#include "engine/kernels/registry.h"
#include "engine/vulkan/context.h"

namespace ks {

struct CompiledPass {
  std::string defines;  // "TILE=16 PASS=1"
  std::array<uint32_t, 3> groups{1, 1, 1};
  // The driver's statistics (VK_KHR_pipeline_executable_properties): registers,
  // shared memory, spills where it reports them; empty where it says nothing.
  std::vector<std::pair<std::string, std::string>> statistics;
};

struct CompileReport {
  std::string kernel;
  std::string params;  // "16x16 TILE=16"
  ProblemSize size;    // the size the grid was worked out for
  std::vector<CompiledPass> passes;
};

// Compiles every dispatch of `kernel` at `size` with `params` (checked as a
// point would be first). The error is the compiler's (with the line in the
// kernel's file) or why the point could not run.
Result<CompileReport> compileKernel(vk::Device& device, const KernelInfo& kernel, const Params& params,
                                    const ProblemSize& size);

// "Register Count = 40; Shared Memory = 2048; ..." in one line.
std::string statisticsText(const std::vector<std::pair<std::string, std::string>>& statistics);

}  // namespace ks
