#pragma once
#include <string>

namespace ks::cpu {

struct HostInfo {
  std::string cpu_model;
  unsigned logical_cores = 0;
  std::string openblas_core;    // openblas_get_corename()
  int openblas_threads = 0;     // openblas_get_num_threads()
  std::string openblas_config;  // openblas_get_config()
};

HostInfo hostInfo();

}  // namespace ks::cpu
