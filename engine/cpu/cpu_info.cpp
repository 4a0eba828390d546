#include "engine/cpu/cpu_info.h"

#include <cblas.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
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

unsigned long long lastLevelCacheBytes() {
  // The highest cache level of each CPU; one cache shared by several CPUs lists them all the same way.
  int top_level = 0;
  std::set<std::pair<std::string, unsigned long long>> caches;  // (shared_cpu_list, bytes) of the top level
  for (unsigned cpu = 0; cpu < 4096; ++cpu) {
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/";
    bool any = false;
    for (unsigned index = 0; index < 8; ++index) {
      const std::string base = dir + "index" + std::to_string(index) + "/";
      std::ifstream level_file(base + "level"), size_file(base + "size"), shared_file(base + "shared_cpu_list");
      int level = 0;
      std::string size, shared;
      if (!(level_file >> level) || !(size_file >> size)) break;
      any = true;
      std::getline(shared_file, shared);
      unsigned long long bytes = std::strtoull(size.c_str(), nullptr, 10);
      if (size.back() == 'K') bytes <<= 10;
      if (size.back() == 'M') bytes <<= 20;
      if (level > top_level) top_level = level, caches.clear();
      if (level == top_level) caches.insert({shared.empty() ? std::to_string(cpu) : shared, bytes});
    }
    if (!any) break;
  }
  unsigned long long total = 0;
  for (const auto& [shared, bytes] : caches) total += bytes;
  if (total) return total;
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE})
    if (const long bytes = sysconf(name); bytes > 0) return static_cast<unsigned long long>(bytes);
  return 0;
}

unsigned usableHardwareThreads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return unsigned(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace ks::cpu
