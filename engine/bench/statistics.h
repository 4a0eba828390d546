#pragma once
#include <cstddef>
#include <vector>

namespace ks {

struct Stats {
  size_t count = 0;
  double min = 0, median = 0, mean = 0, max = 0;
  double stddev = 0;               // sample standard deviation (n - 1)
  double cv = 0;                   // stddev / mean
  double q1 = 0, q3 = 0, iqr = 0;  // quartiles (linear interpolation)
  // 95% confidence interval of the median from order statistics (distribution
  // free); equal to min/max below 6 samples, where no interval is meaningful.
  double ci_low = 0, ci_high = 0;
  size_t outliers = 0;  // outside Tukey's fences q1 - 1.5 IQR .. q3 + 1.5 IQR (kept, only counted)

  // Half-width of the median's confidence interval relative to the median.
  double ciRelative() const { return median > 0 ? 0.5 * (ci_high - ci_low) / median : 0; }
};

Stats computeStats(std::vector<double> samples);

}  // namespace ks
