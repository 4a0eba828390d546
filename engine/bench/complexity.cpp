#include "engine/bench/complexity.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace ks {

double problemScale(const ProblemSize& s) {
  if (s.m == s.n && s.n == s.k) return double(s.n);
  double product = 1;
  int dims = 0;
  for (uint64_t d : {s.m, s.n, s.k})
    if (d != 1) product *= double(d), ++dims;
  if (dims == 1) return product;
  if (dims == 2) return std::sqrt(product);
  return dims == 3 ? std::cbrt(product) : 1.0;
}

std::string seriesKey(const PlanItem& item) {
  const KernelInfo* k = Registry::instance().find(item.kernel);
  const std::string params = item.params.str(!k || k->uses_workgroup);
  return params == "-" ? item.kernel : item.kernel + " " + params;
}

std::vector<ComplexityFit> fitComplexity(const std::vector<Measurement>& points, double min_scale) {
  std::map<std::string, std::vector<std::pair<double, double>>> bySeries;  // (log size, log time), in order seen
  std::vector<std::string> order;
  for (const auto& m : points) {
    if (!m.timed() || m.stats.median <= 0) continue;
    const std::string key = seriesKey(m.item);
    if (!bySeries.count(key)) order.push_back(key);
    bySeries[key].emplace_back(std::log(problemScale(m.item.size)), std::log(m.stats.median));
  }
  std::vector<ComplexityFit> out;
  for (const auto& key : order) {
    auto pts = bySeries[key];
    std::sort(pts.begin(), pts.end());
    // Default: the upper half of the sizes, but always at least two of them.
    const size_t from = pts.size() >= 2 ? std::min(pts.size() / 2, pts.size() - 2) : 0;
    const double cutoff = min_scale > 0 ? std::log(min_scale) : pts[from].first;
    std::vector<std::pair<double, double>> used;
    for (const auto& p : pts)
      if (p.first >= cutoff) used.push_back(p);
    if (used.size() < 2) continue;
    const double n = double(used.size());
    double sx = 0, sy = 0;
    for (const auto& [x, y] : used) sx += x, sy += y;
    const double mx = sx / n, my = sy / n;
    double sxx = 0, sxy = 0;
    for (const auto& [x, y] : used) sxx += (x - mx) * (x - mx), sxy += (x - mx) * (y - my);
    if (sxx <= 0) continue;  // one size only
    ComplexityFit f;
    f.series = key;
    f.points = used.size();
    f.slope = sxy / sxx;
    if (used.size() > 2) {
      double sse = 0;
      for (const auto& [x, y] : used) sse += std::pow(y - (my + f.slope * (x - mx)), 2);
      f.slope_error = std::sqrt(sse / (n - 2) / sxx);
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace ks
