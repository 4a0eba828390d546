#pragma once
// Plain value types shared by the registry, the runner and the session file.
#include <cstdint>
#include <map>
#include <string>

#include "engine/result.h"

namespace ks {

// gemm: C(M x N) = A(M x K) * B(K x N), all row-major.
struct ProblemSize {
  uint64_t m = 0, n = 0, k = 0;
  bool operator==(const ProblemSize&) const = default;
  auto operator<=>(const ProblemSize&) const = default;
  std::string str() const;  // "512" when square, else "MxNxK"
};

struct WorkgroupShape {
  uint32_t x = 1, y = 1, z = 1;
  bool operator==(const WorkgroupShape&) const = default;
  auto operator<=>(const WorkgroupShape&) const = default;
  uint64_t invocations() const { return uint64_t(x) * y * z; }
  std::string str() const;  // "16x16"
  static Result<WorkgroupShape> parse(const std::string& text);
};

struct Params {
  WorkgroupShape wg;  // ignored by kernels that have no workgroup (CPU)
  std::map<std::string, int> values;
  bool operator==(const Params&) const = default;
  int get(const std::string& name, int fallback) const {
    auto it = values.find(name);
    return it == values.end() ? fallback : it->second;
  }
  std::string str(bool with_wg) const;  // "16x16 BK=4 BN=4"
};

}  // namespace ks
