#pragma once
#include <cstddef>
#include <vector>

namespace ks {

struct Stats {
  size_t count = 0;
  double min = 0, median = 0, mean = 0, max = 0;
  double stddev = 0;  // sample standard deviation (n - 1)
  double cv = 0;      // stddev / mean
};

Stats computeStats(std::vector<double> samples);

}  // namespace ks
