#pragma once
// Compare: a baseline session beside a current one, point by point, with a
// rank test on the raw samples so a difference is told apart from noise.
#include <cstddef>
#include <string>
#include <vector>

#include "engine/kernels/types.h"
#include "engine/session/session.h"

namespace ks {

// ---- Mann-Whitney U (Wilcoxon rank-sum), two-sided.

struct MannWhitney {
  double u = 0;        // U of the first sample: pairs (a_i, b_j) with a_i > b_j, ties counted as 1/2
  double z = 0;        // standardised U (tie and continuity corrected); > 0: `a` tends to be larger
  double p = 1;        // two-sided p-value
  bool exact = false;  // p from the exact null distribution (else the normal approximation)
};

// Up to this many samples on each side, tie-free data get the exact p-value.
inline constexpr size_t kMannWhitneyExactLimit = 25;

enum class MannWhitneyMethod {
  Automatic,  // exact where it is valid (no ties, both samples within kMannWhitneyExactLimit), else normal
  Normal,     // always the normal approximation (tie and continuity corrected)
};

// Two-sided test that the samples come from the same distribution. An empty
// sample gives u = z = 0 and p = 1 (no evidence of a difference); so do
// samples that are all one value.
MannWhitney mannWhitneyU(const std::vector<double>& a, const std::vector<double>& b,
                         MannWhitneyMethod method = MannWhitneyMethod::Automatic);

// A difference with p below this counts as significant in summaries.
inline constexpr double kSignificanceLevel = 0.05;

// "***" p < 0.001, "**" p < 0.01, "*" p < 0.05, "" otherwise (also for NaN).
std::string significanceMark(double p);

// ---- Session comparison.

struct CompareRow {
  std::string kernel;
  std::string params;  // workgroup and tunables as shown in tables, "-" where none
  ProblemSize size;
  // A point is ok when it ran and its result was verified; any other point is
  // shown by its status ("failed: ...", "skipped: ...") and never as a number.
  bool baseline_ok = false, current_ok = false;
  std::string baseline_status, current_status;  // "ok", or the status with its reason
  double baseline_median_ns = 0, current_median_ns = 0;
  size_t baseline_samples = 0, current_samples = 0;
  // current median / baseline median: < 1 is faster now. NaN unless both are ok.
  double ratio = 0;
  double speedup = 0;  // 1 / ratio: > 1 is faster now. NaN unless both are ok.
  // Current samples against baseline samples: z > 0 means the current ones are slower.
  MannWhitney test;

  bool comparable() const { return baseline_ok && current_ok; }
  bool significant() const { return comparable() && test.p < kSignificanceLevel; }
};

struct Comparison {
  // What differs between the two runs besides the kernels (device, driver,
  // app, OpenBLAS, ...): each makes a ratio less trustworthy.
  std::vector<std::string> warnings;
  std::vector<CompareRow> rows;  // matched points, in the current session's order
  // Points without a partner, as "kernel params size".
  std::vector<std::string> only_in_baseline, only_in_current;
  size_t compared = 0;              // rows where both sides are ok
  double geomean_ratio = 0;         // geometric mean of those rows' ratios; NaN when there are none
  size_t significantly_faster = 0;  // compared rows with p < kSignificanceLevel and ratio < 1
  size_t significantly_slower = 0;  // ... and ratio > 1
};

// Points match on kernel id, parameters (workgroup shape where the kernel has
// one, and tunables) and problem size. A point that appears several times in a
// session matches the same occurrence in the other session.
Comparison compareSessions(const Session& baseline, const Session& current);

}  // namespace ks
