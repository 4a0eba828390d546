#include "engine/bench/compile.h"

namespace ks {

Result<CompileReport> compileKernel(vk::Device& device, const KernelInfo& kernel, const Params& params,
                                    const ProblemSize& size) {
  if (kernel.backend != Backend::Vulkan) return makeError(kernel.id + " runs on the CPU: nothing to compile");
  ProblemSize s = size;
  s.rank = kernel.size_rank;
  if (auto why = checkPoint(kernel, s, params, &device.info())) return makeError(*why);
  CompileReport report;
  report.kernel = kernel.id;
  report.params = params.str(kernel.uses_workgroup);
  report.size = s;
  const uint32_t buffer_count = kernel.buffers ? uint32_t(kernel.buffers(s, params).size()) : 3;
  for (const auto& step : dispatchSteps(kernel, s, params, device.info())) {
    auto desc = pipelineDesc(step, buffer_count);
    if (!desc) return desc.error();
    auto pipeline = device.pipeline(*desc);
    if (!pipeline) return pipeline.error();
    CompiledPass pass;
    for (const auto& [k, v] : step.defines) pass.defines += (pass.defines.empty() ? "" : " ") + k + "=" + v;
    pass.groups = step.groups;
    pass.statistics = (*pipeline)->statistics;
    report.passes.push_back(std::move(pass));
  }
  return report;
}

std::string statisticsText(const std::vector<std::pair<std::string, std::string>>& statistics) {
  std::string out;
  for (const auto& [name, value] : statistics) out += (out.empty() ? "" : "; ") + name + " = " + value;
  return out.empty() ? "the driver reports no statistics" : out;
}

}  // namespace ks
