#pragma once
// Plain value types shared by the registry, the runner and the session file.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "engine/result.h"

namespace ks {

// gemm: C(M x N) = A(M x K) * B(K x N), all row-major (rank 3).
// gemv: y = A x with A M x N (rank 2, k = 1). dot: N elements (rank 1, m = k = 1).
struct ProblemSize {
  uint64_t m = 0, n = 0, k = 0;
  uint32_t rank = 3;  // how many of m, n, k the family uses; set from the kernel
  bool operator==(const ProblemSize&) const = default;
  auto operator<=>(const ProblemSize&) const = default;
  std::string str() const;  // "512" when square, else "MxNxK" / "MxN"
};

// A size as typed: "N" (1 dim), "MxN" (2) or "MxNxK" (3); each family maps it
// onto its ProblemSize.
struct SizeSpec {
  std::vector<uint64_t> dims;
  SizeSpec() = default;
  SizeSpec(std::initializer_list<uint64_t> d) : dims(d) {}
  SizeSpec(const ProblemSize& s) : dims{s.m, s.n, s.k} {
    if (s.m == s.n && s.n == s.k) dims = {s.m};
  }
  bool operator==(const SizeSpec&) const = default;
  std::string str() const;
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
