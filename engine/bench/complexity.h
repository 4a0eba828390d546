#pragma once
// Empirical complexity: the slope of log(time) against log(size) per series.
// Expect about 3 for gemm, 2 for gemv and 1 for dot once sizes are large
// enough that fixed costs no longer dominate.
#include <string>
#include <vector>

#include "engine/bench/runner.h"

namespace ks {

// One number per problem: N for squares and vectors, sqrt(M*N) for gemv,
// cbrt(M*N*K) for gemm (the geometric mean of the dimensions that are not 1).
double problemScale(const ProblemSize& s);

// The series a point belongs to: kernel + workgroup (where it has one) + tunables.
std::string seriesKey(const PlanItem& item);

struct ComplexityFit {
  std::string series;
  size_t points = 0;       // points in the fit
  double slope = 0;        // d log(median time) / d log(size)
  double slope_error = 0;  // standard error of the slope (0 with 2 points)
};

// Least squares over each series' verified points whose scale is at least
// `min_scale` (0: the upper half of that series' sizes); series with fewer
// than 2 such points are left out.
std::vector<ComplexityFit> fitComplexity(const std::vector<Measurement>& points, double min_scale = 0);

}  // namespace ks
