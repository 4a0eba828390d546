#include "engine/cpu/cpu_info.h"

#include <cblas.h>

#include <algorithm>
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
#if defined(__x86_64__)
  const std::pair<const char*, bool> features[] = {{"sse4.2", __builtin_cpu_supports("sse4.2")},
                                                   {"avx", __builtin_cpu_supports("avx")},
                                                   {"avx2", __builtin_cpu_supports("avx2")},
                                                   {"fma", __builtin_cpu_supports("fma")},
                                                   {"avx512f", __builtin_cpu_supports("avx512f")}};
  for (const auto& [name, has] : features)
    if (has) h.cpu_features += (h.cpu_features.empty() ? "" : " ") + std::string(name);
#endif
  h.openblas_warning = openblasCoreWarning(h.openblas_core, h.cpu_features);
  return h;
}

std::string openblasCoreWarning(const std::string& core, const std::string& features) {
  auto has = [&](const char* f) {
    return (" " + features + " ").find(std::string(" ") + f + " ") != std::string::npos;
  };
  std::string lower = core;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  // Cores without AVX2 kernels: a fallback when the CPU has better.
  static const char* pre_avx2[] = {"prescott",    "core2",     "penryn",  "dunnington", "nehalem",
                                   "sandybridge", "atom",      "nano",    "barcelona",  "opteron",
                                   "bobcat",      "bulldozer", "generic", "katmai"};
  const bool weak = std::any_of(std::begin(pre_avx2), std::end(pre_avx2), [&](const char* c) { return lower == c; });
  if (!weak || !has("avx2")) return {};
  const std::string right = has("avx512f") ? "SkylakeX" : "Haswell";
  return "OpenBLAS picked the generic '" + core + "' core on a CPU with " + (has("avx512f") ? "AVX-512" : "AVX2") +
         ": its BLAS baselines run several times slower than they should. Run with OPENBLAS_CORETYPE=" + right +
         " for a fair baseline.";
}

unsigned long long availableHostMemory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  unsigned long long kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

}  // namespace ks::cpu
