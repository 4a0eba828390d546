#pragma once
// Search strategies over a pruned space, independent of what a configuration
// is or how it is measured: they choose which configuration to evaluate next
// and read back its score. Seeded and reproducible: the same seed and the same
// scores give the same sequence of evaluations.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "engine/tune/tune_record.h"

namespace ks {

struct SearchSpace {
  std::vector<uint32_t> dim_sizes;  // values per dimension
  std::vector<TuneConfig> valid;    // the configurations that may run (after pruning), in grid order
};

// What the tuner answers for one configuration: its score (higher is better;
// nullopt when it failed), or stop (budget spent, time up, cancelled).
struct Probe {
  bool stop = false;
  std::optional<double> score;
};
// Called with an index into SearchSpace::valid, at most once per index.
using ProbeFn = std::function<Probe(size_t valid_index)>;

// Evaluates configurations until `probe` says stop, `max_evaluations` are done
// or the strategy has nothing new to try. Grid takes them in order, random in a
// seeded shuffle; anneal walks between configurations that differ in one
// dimension, accepting worse ones with a probability that falls as the budget
// is spent; genetic breeds a population by tournament selection, uniform
// crossover and mutation. Neither revisits a configuration.
void searchSpace(SearchStrategy strategy, const SearchSpace& space, uint64_t seed, size_t max_evaluations,
                 const ProbeFn& probe);

}  // namespace ks

namespace ks {

// How well a strategy does on a known landscape: each configuration's score
// (nullopt: failed), e.g. from an exhaustive grid tune, replayed without a
// device. Runs each seed in 1..seeds with a budget of `budget_fraction` of the
// space; the figures are the best found as a fraction of the true best.
struct StrategyReplay {
  SearchStrategy strategy = SearchStrategy::Random;
  size_t budget = 0;
  size_t runs = 0;
  double mean_fraction = 0, worst_fraction = 0;
  size_t found_best = 0;                // runs whose best was the exhaustive best
  double mean_evaluations_to_best = 0;  // evaluations until each run's own best appeared
};
std::vector<StrategyReplay> replayStrategies(const SearchSpace& space, const std::vector<std::optional<double>>& scores,
                                             double budget_fraction, uint64_t seeds);

}  // namespace ks
