#include "engine/tune/tune_record.h"

#include <cmath>
#include <limits>

#include "engine/tune/space.h"

namespace ks {

std::string strategyName(SearchStrategy s) {
  switch (s) {
    case SearchStrategy::Grid:
      return "grid";
    case SearchStrategy::Random:
      return "random";
    case SearchStrategy::Anneal:
      return "anneal";
    default:
      return "genetic";
  }
}

Result<SearchStrategy> parseStrategy(const std::string& name) {
  for (auto s : {SearchStrategy::Grid, SearchStrategy::Random, SearchStrategy::Anneal, SearchStrategy::Genetic})
    if (strategyName(s) == name) return s;
  return makeError("unknown strategy '" + name + "' (grid, random, anneal or genetic)");
}

std::string objectiveName(TuneObjective o) {
  switch (o) {
    case TuneObjective::Gflops:
      return "gflops";
    case TuneObjective::Gbps:
      return "gbps";
    default:
      return "time";
  }
}

Result<TuneObjective> parseObjective(const std::string& name) {
  for (auto o : {TuneObjective::Gflops, TuneObjective::Gbps, TuneObjective::Time})
    if (objectiveName(o) == name) return o;
  return makeError("unknown objective '" + name + "' (gflops, gbps or time)");
}

std::string objectiveUnit(TuneObjective o) {
  switch (o) {
    case TuneObjective::Gflops:
      return "GFLOP/s";
    case TuneObjective::Gbps:
      return "GB/s";
    default:
      return "runs/s";
  }
}

double tuneScore(TuneObjective o, double median_ns, double flops, double bytes) {
  if (!(median_ns > 0)) return 0;
  switch (o) {
    case TuneObjective::Gflops:
      return flops / median_ns;
    case TuneObjective::Gbps:
      return bytes / median_ns;
    default:
      return 1e9 / median_ns;
  }
}

Params TuneRecord::params(const TuneConfig& c, const Params& base) const { return configParams(dimensions, c, base); }

std::optional<TuneConfig> TuneRecord::configOf(const Params& p) const {
  TuneConfig c;
  for (const auto& d : dimensions) {
    bool found = false;
    for (size_t i = 0; i < d.size() && !found; ++i) {
      found = d.isWorkgroup() ? d.shapes[i] == p.wg : p.values.count(d.name) && p.values.at(d.name) == d.values[i];
      if (found) c.push_back(uint32_t(i));
    }
    if (!found) return std::nullopt;
  }
  return c;
}

std::string TuneRecord::configText(const TuneConfig& c) const {
  std::string out;
  for (size_t d = 0; d < dimensions.size() && d < c.size(); ++d)
    out += (out.empty() ? "" : " ") + dimensions[d].name + "=" + dimensions[d].label(c[d]);
  return out;
}

std::vector<double> TuneRecord::bestSoFar() const {
  std::vector<double> out;
  double best = std::numeric_limits<double>::quiet_NaN();
  for (const auto& e : evaluations) {
    if (e.score && (std::isnan(best) || *e.score > best)) best = *e.score;
    out.push_back(best);
  }
  return out;
}

std::optional<size_t> TuneRecord::bestEvaluation() const {
  std::optional<size_t> best;
  for (size_t i = 0; i < evaluations.size(); ++i)
    if (evaluations[i].score && (!best || *evaluations[i].score > *evaluations[*best].score)) best = i;
  return best;
}

}  // namespace ks
