#include "engine/vulkan/shader_compiler.h"

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>
#include <glslang/build_info.h>

#include <mutex>
#include <regex>
#include <sstream>

namespace ks::vk {

namespace {
std::once_flag g_init;
std::mutex g_compile_mutex;  // glslang's process-wide state is not reentrant everywhere

// Line numbers follow the file (the injected defines sit under a #line), so
// the listing shows the file itself and the defines separately.
Error stageError(const std::string& stage, const std::string& name, const std::string& log, const std::string& source,
                 const Defines& defines) {
  std::string defs;
  for (const auto& [k, v] : defines) defs += (defs.empty() ? "" : " ") + k + "=" + v;
  // The first error's line and message go in the headline: tables show only that line.
  std::string first;
  static const std::regex error_line(R"(ERROR: [^:\s]*:(\d+): ([^\n]*))");
  if (std::smatch m; std::regex_search(log, m, error_line)) first = ": line " + m[1].str() + ": " + m[2].str();
  return makeError("GLSL " + stage + " failed for " + name + (defs.empty() ? "" : " (" + defs + ")") + first + "\n" +
                   log + "\n--- " + name + " ---\n" + numberedSource(source));
}
}  // namespace

std::string injectDefines(const std::string& source, const Defines& defines) {
  std::string block;
  for (const auto& [key, value] : defines) block += "#define " + key + " " + value + "\n";
  // The #version directive: the first line that starts with it (a comment
  // block before it, such as a kernel file's manifest, may mention it).
  size_t version = std::string::npos;
  for (size_t at = 0; at < source.size();) {
    const size_t text = source.find_first_not_of(" \t", at);
    if (text != std::string::npos && source.compare(text, 8, "#version") == 0) {
      version = text;
      break;
    }
    const size_t eol = source.find('\n', at);
    if (eol == std::string::npos) break;
    at = eol + 1;
  }
  if (version == std::string::npos) return block + "#line 1\n" + source;
  const auto eol = source.find('\n', version);
  if (eol == std::string::npos) return source + "\n" + block;  // #version was the last line
  // Count the lines up to and including #version so #line restores numbering.
  int line = 1;
  for (size_t i = 0; i <= eol; ++i)
    if (source[i] == '\n') ++line;
  return source.substr(0, eol + 1) + block + "#line " + std::to_string(line) + "\n" + source.substr(eol + 1);
}

std::string numberedSource(const std::string& source) {
  std::istringstream in(source);
  std::ostringstream out;
  std::string line;
  int n = 1;
  while (std::getline(in, line)) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%4d: ", n++);
    out << prefix << line << '\n';
  }
  return out.str();
}

std::string glslangVersion() {
  return std::to_string(GLSLANG_VERSION_MAJOR) + "." + std::to_string(GLSLANG_VERSION_MINOR) + "." +
         std::to_string(GLSLANG_VERSION_PATCH);
}

Result<std::vector<uint32_t>> compileGlsl(const std::string& name, const std::string& source, const Defines& defines) {
  std::call_once(g_init, [] { glslang::InitializeProcess(); });
  std::lock_guard lock(g_compile_mutex);

  const std::string full = injectDefines(source, defines);
  const char* text = full.c_str();
  const char* names = name.c_str();
  glslang::TShader shader(EShLangCompute);
  shader.setStringsWithLengthsAndNames(&text, nullptr, &names, 1);
  shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_1);
  shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_3);
  const auto messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);
  const TBuiltInResource* resources = GetDefaultResources();

  std::string preprocessed;
  glslang::TShader::ForbidIncluder includer;
  if (!shader.preprocess(resources, 100, ENoProfile, false, false, messages, &preprocessed, includer))
    return stageError("preprocess", name, shader.getInfoLog(), source, defines);
  if (!shader.parse(resources, 100, false, messages))
    return stageError("parse", name, shader.getInfoLog(), source, defines);

  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(messages)) return stageError("link", name, program.getInfoLog(), source, defines);

  std::vector<uint32_t> spirv;
  spv::SpvBuildLogger logger;
  glslang::SpvOptions options;
  options.disableOptimizer = false;
  options.validate = false;
  glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), spirv, &logger, &options);
  const std::string log = logger.getAllMessages();
  if (spirv.empty()) return stageError("SPIR-V generation", name, log, source, defines);
  return spirv;
}

}  // namespace ks::vk
