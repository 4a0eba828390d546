#include "engine/cpu/cpu_info.h"

#include <cblas.h>

#include <fstream>
#include <thread>

namespace ks::cpu {

HostInfo hostInfo() {
  HostInfo h;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) h.cpu_model = line.substr(colon + 2);
      break;
    }
  if (h.cpu_model.empty()) h.cpu_model = "unknown";
  h.logical_cores = std::max(1u, std::thread::hardware_concurrency());
  if (const char* core = openblas_get_corename()) h.openblas_core = core;
  h.openblas_threads = openblas_get_num_threads();
  if (const char* config = openblas_get_config()) h.openblas_config = config;
  return h;
}

}  // namespace ks::cpu
