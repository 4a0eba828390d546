#include "engine/bench/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ks {

Stats computeStats(std::vector<double> samples) {
  Stats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / double(n);
  if (n > 1) {
    double ss = 0;
    for (double x : samples) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / double(n - 1));
  }
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0;
  return s;
}

}  // namespace ks
