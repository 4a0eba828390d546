#pragma once
#include <map>
#include <string>

namespace ks {
// Generated at build time from shaders/*.comp (cmake/embed_shaders.cmake).
const std::map<std::string, std::string>& embeddedShaders();
}  // namespace ks
