#pragma once
// Reporters: text lines and tables for terminals, CSV for spreadsheets.
// They read Measurements; they never run anything.
#include <string>
#include <vector>

#include "engine/bench/compare.h"
#include "engine/bench/peaks.h"
#include "engine/bench/runner.h"
#include "engine/vulkan/context.h"

namespace ks {

std::string formatDuration(double ns);  // "812 ns", "12.3 us", "4.56 ms", "1.23 s"
// Widths of the per-point line's leading columns, from the whole plan, so that
// the lines of a sweep align however long a kernel's parameters are.
struct PointLineColumns {
  size_t index = 7, kernel = 26, params = 18, size = 16;
};
PointLineColumns pointLineColumns(const std::vector<PlanItem>& items);
std::string formatPointLine(const Measurement& m, size_t index, size_t total, const PointLineColumns& columns = {});
// With peaks, a "% peak" column: the share of the roof at each point's intensity.
std::string formatSummaryTable(const std::vector<Measurement>& points, const DevicePeaks* peaks = nullptr);
std::string formatPeakFraction(const Measurement& m, const DevicePeaks& peaks);  // "87% mem", "-"
// The interleave experiment per size: each placement's round and its split
// (gpu, cpu, sync), effective GB/s, fastest first, and which one wins ("" without such points).
std::string formatInterleaveTable(const std::vector<Measurement>& points);
std::string formatDeviceTable(const std::vector<vk::DeviceInfo>& devices, int selected);
std::string measurementsToCsv(const std::vector<Measurement>& points);
// Slope of log time vs log size per series (empty when no series has 2+ sizes).
// min_scale > 0: fit only the points at or above that size (see fitComplexity).
std::string formatComplexityTable(const std::vector<Measurement>& points, double min_scale = 0);

// "5 points: 3 ran (2 ok, 1 failed), 2 skipped[, 1 not run][; interrupted ...]".
std::string formatRunTally(size_t planned, size_t ok, size_t failed, size_t skipped, bool interrupted);

// "drift check: stable: ..." or, when unstable, "warning: drift check: UNSTABLE: ...".
std::string formatDriftLine(const DriftReport& drift);

// Measured peaks: value, unit, spread and how each was measured (or why not).
std::string formatPeaksTable(const DevicePeaks& peaks);
std::string formatPeakValue(const PeakResult& r);  // "41.2 TFLOP/s", "3.1 TB/s", "35.2 us", "-"

// Warnings, then one row per matched point (a point that is not ok on a side
// shows its status there, never a number), then the geometric mean of the
// ratios, the significant changes and the points without a partner.
std::string formatComparison(const Comparison& comparison);
// One line per matched point; ratio, speedup and the test are empty unless both sides are ok.
std::string comparisonToCsv(const Comparison& comparison);

// A plain aligned text table.
std::string renderTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

}  // namespace ks
