#pragma once
// What a tune did and concluded, as the session file keeps it ("tune"): the
// searched space, what was pruned before running and why, every evaluation in
// order (each one a point of the session), and the final re-measurement of
// the best configurations with its verdict. Plain values: the UI draws its
// heatmap and best-so-far curve from this and the session's points alone.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/bench/statistics.h"
#include "engine/kernels/types.h"

namespace ks {

enum class SearchStrategy { Grid, Random, Anneal, Genetic };
std::string strategyName(SearchStrategy s);
Result<SearchStrategy> parseStrategy(const std::string& name);

// What a tune maximises. Time is scored as runs per second (1e9 / median ns),
// so every objective is "higher is better".
enum class TuneObjective { Gflops, Gbps, Time };
std::string objectiveName(TuneObjective o);
Result<TuneObjective> parseObjective(const std::string& name);
std::string objectiveUnit(TuneObjective o);  // "GFLOP/s", "GB/s", "runs/s"

// A configuration: one value index per dimension of the space.
using TuneConfig = std::vector<uint32_t>;

// One dimension: a tunable's values, or the workgroup shapes ("wg").
struct TuneDimension {
  std::string name;
  std::vector<int> values;             // a tunable's
  std::vector<WorkgroupShape> shapes;  // the workgroup's
  bool isWorkgroup() const { return name == "wg"; }
  size_t size() const { return isWorkgroup() ? shapes.size() : values.size(); }
  std::string label(size_t i) const { return isWorkgroup() ? shapes[i].str() : std::to_string(values[i]); }
  bool operator==(const TuneDimension&) const = default;
};

struct TunePruned {
  std::string reason;               // the first rule the configurations break
  std::vector<TuneConfig> configs;  // every configuration pruned for it
  bool operator==(const TunePruned&) const = default;
};

struct TuneEvaluation {
  size_t point = 0;  // index into the session's points
  TuneConfig config;
  bool cached = false;          // taken from the result cache, not measured by this tune
  std::optional<double> score;  // nullopt: failed (compile, verification, device); never a winner
  double elapsed_s = 0;         // since the tune started, when it finished
  bool operator==(const TuneEvaluation&) const = default;
};

// A configuration of the final round: measured again, interleaved with the others.
struct TuneFinalist {
  TuneConfig config;
  std::vector<double> samples_ns;  // every round's samples together
  // Each round's median: the units of the test. Samples within one run share
  // its conditions (clocks, neighbours, placement) and are not independent;
  // rounds, interleaved with the other finalists, are much closer to it.
  std::vector<double> round_medians_ns;
  std::string error;     // why a re-measurement failed ("" when all ran)
  Stats stats;           // of samples_ns (recomputed on load)
  double score = 0;      // from the median
  double p_vs_next = 1;  // Mann-Whitney U of round medians against the next one in the ranking
  bool operator==(const TuneFinalist& o) const {
    return config == o.config && samples_ns == o.samples_ns && round_medians_ns == o.round_medians_ns &&
           error == o.error && score == o.score && p_vs_next == o.p_vs_next;
  }
};

struct TuneRecord {
  std::string kernel;
  ProblemSize size;
  SearchStrategy strategy = SearchStrategy::Grid;
  TuneObjective objective = TuneObjective::Gflops;
  uint64_t seed = 1;
  size_t budget = 0;         // evaluations allowed
  double time_budget_s = 0;  // 0: none
  std::vector<TuneDimension> dimensions;
  uint64_t space_size = 0;  // every combination of the dimensions
  size_t valid = 0;         // those left after pruning
  std::vector<TunePruned> pruned;
  std::vector<TuneEvaluation> evaluations;
  // budget, time_budget, space_exhausted (every valid configuration evaluated), cancelled
  std::string stop_reason;
  std::vector<TuneFinalist> final;  // ranked, best first
  uint32_t final_rounds = 0;
  double tie_margin = 0.01;  // a smaller difference of medians is a tie even when significant
  bool decided = false;      // #1 beats #2 significantly and by more than tie_margin
  std::string verdict;       // the sentence shown to the user
  std::optional<TuneConfig> winner;

  Params params(const TuneConfig& c, const Params& base) const;
  // The configuration of these parameters, when every dimension's value is in the space.
  std::optional<TuneConfig> configOf(const Params& p) const;
  std::string configText(const TuneConfig& c) const;  // "BK=4 BN=8 wg=16x16"
  // Best score so far after each evaluation (NaN until one succeeds).
  std::vector<double> bestSoFar() const;
  // The best evaluation's index into `evaluations`, if any succeeded.
  std::optional<size_t> bestEvaluation() const;
};

// Score of a median time (ns) for an objective, given the point's FLOP and byte counts.
double tuneScore(TuneObjective o, double median_ns, double flops, double bytes);

}  // namespace ks
