#include "engine/bench/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
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

  auto quantile = [&](double q) {
    const double pos = q * double(n - 1);
    const size_t lo = size_t(pos);
    const double frac = pos - double(lo);
    return lo + 1 < n ? samples[lo] + frac * (samples[lo + 1] - samples[lo]) : samples[lo];
  };
  s.q1 = quantile(0.25);
  s.q3 = quantile(0.75);
  s.iqr = s.q3 - s.q1;
  const double lowFence = s.q1 - 1.5 * s.iqr, highFence = s.q3 + 1.5 * s.iqr;
  for (double x : samples) s.outliers += x < lowFence || x > highFence;

  // The median lies between the order statistics x(j) and x(n-j+1) with at
  // least 95% probability when P(Binomial(n, 1/2) < j) <= 2.5% (distribution
  // free; exact binomial tails).
  if (n >= 6) {
    size_t j = 0;
    double cdf = 0;
    const double logHalfN = double(n) * std::log(0.5);
    for (size_t i = 0; i < n / 2; ++i) {
      cdf +=
          std::exp(std::lgamma(double(n) + 1) - std::lgamma(double(i) + 1) - std::lgamma(double(n - i) + 1) + logHalfN);
      if (cdf > 0.025) break;
      j = i + 1;
    }
    s.ci_low = samples[j > 0 ? j - 1 : 0];
    s.ci_high = samples[j > 0 ? n - j : n - 1];
  } else {
    s.ci_low = s.min;
    s.ci_high = s.max;
  }
  return s;
}

}  // namespace ks
