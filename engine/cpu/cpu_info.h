#pragma once
#include <string>

namespace ks::cpu {

struct HostInfo {
  std::string cpu_model;
  unsigned logical_cores = 0;
  std::string openblas_core;     // openblas_get_corename()
  int openblas_threads = 0;      // openblas_get_num_threads()
  std::string openblas_config;   // openblas_get_config()
  std::string cpu_features;      // the SIMD the CPU has: "sse4.2 avx avx2 fma avx512f"
  std::string openblas_warning;  // set when OpenBLAS picked a core far below the CPU
};

HostInfo hostInfo();

// MemAvailable from /proc/meminfo in bytes: what a point may allocate without
// swapping or being killed (Linux overcommits); 0 when unknown.
unsigned long long availableHostMemory();

// The last-level caches of all cores together in bytes (each shared cache
// counted once), from sysfs, else what the C library reads from CPUID; 0 when
// unknown. Under a hypervisor this may be the whole socket's.
unsigned long long lastLevelCacheBytes();

// Hardware threads this process may run on (its affinity mask), at least 1.
unsigned usableHardwareThreads();

// The warning for an OpenBLAS core that is generic for a CPU with these
// features (empty when the core fits), naming the OPENBLAS_CORETYPE to use.
std::string openblasCoreWarning(const std::string& core, const std::string& features);

}  // namespace ks::cpu
