#pragma once
// Run-time GLSL -> SPIR-V through the glslang C++ API. Defines are injected
// right after `#version` (with a #line so messages keep the file's numbering).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/result.h"

namespace ks::vk {

using Defines = std::vector<std::pair<std::string, std::string>>;

std::string injectDefines(const std::string& source, const Defines& defines);
std::string numberedSource(const std::string& source);
std::string glslangVersion();

// On failure the error names the stage (preprocess, parse, link, SPIR-V) and
// carries the log and the source with line numbers.
Result<std::vector<uint32_t>> compileGlsl(const std::string& name, const std::string& source, const Defines& defines);

}  // namespace ks::vk
