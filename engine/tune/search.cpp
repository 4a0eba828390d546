#include "engine/tune/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>

namespace ks {

namespace {

// The shared book-keeping of a search: which configurations were evaluated,
// their scores, and whether to go on.
class Search {
 public:
  Search(const SearchSpace& space, uint64_t seed, size_t max_evaluations, const ProbeFn& probe)
      : space_(space),
        rng_(seed),
        max_(max_evaluations),
        probe_(probe),
        scores_(space.valid.size()),
        seen_(space.valid.size(), false) {
    for (size_t i = 0; i < space.valid.size(); ++i) index_.emplace(space.valid[i], i);
  }

  bool done() const { return stopped_ || evaluations_ >= max_ || evaluations_ >= space_.valid.size(); }
  bool seen(size_t i) const { return seen_[i]; }
  // The score of a configuration; evaluates it the first time. -inf: failed.
  double score(size_t i) {
    if (!seen_[i]) {
      if (done()) return -std::numeric_limits<double>::infinity();
      const Probe p = probe_(i);
      if (p.stop) {
        stopped_ = true;
        return -std::numeric_limits<double>::infinity();
      }
      seen_[i] = true;
      ++evaluations_;
      scores_[i] = p.score ? *p.score : -std::numeric_limits<double>::infinity();
      if (scores_[i] > best_) best_ = scores_[i];
    }
    return scores_[i];
  }
  double best() const { return best_; }
  size_t evaluations() const { return evaluations_; }
  std::mt19937_64& rng() { return rng_; }
  const SearchSpace& space() const { return space_; }
  std::optional<size_t> find(const TuneConfig& c) const {
    auto it = index_.find(c);
    return it == index_.end() ? std::nullopt : std::optional<size_t>(it->second);
  }
  size_t uniform(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  double unit() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  // A configuration not evaluated yet, chosen at random; nullopt when none is left.
  std::optional<size_t> randomUnseen() {
    const size_t n = space_.valid.size();
    if (evaluations_ >= n) return std::nullopt;
    for (int tries = 0; tries < 64; ++tries)
      if (size_t i = uniform(n); !seen_[i]) return i;
    std::vector<size_t> left;
    for (size_t i = 0; i < n; ++i)
      if (!seen_[i]) left.push_back(i);
    return left[uniform(left.size())];
  }
  // Valid configurations that differ from `i` in exactly one dimension: by one
  // step of its value list (`near`), or by more.
  std::vector<size_t> neighbours(size_t i, bool near) {
    std::vector<size_t> out;
    TuneConfig c = space_.valid[i];
    for (size_t d = 0; d < c.size(); ++d) {
      const uint32_t own = c[d];
      for (uint32_t v = 0; v < space_.dim_sizes[d]; ++v) {
        const uint32_t step = v > own ? v - own : own - v;
        if (step == 0 || (step == 1) != near) continue;
        c[d] = v;
        if (auto j = find(c)) out.push_back(*j);
      }
      c[d] = own;
    }
    return out;
  }
  // An unseen neighbour of `i`, mostly a near one; nullopt when all are known.
  std::optional<size_t> unseenNeighbour(size_t i) {
    const bool near_first = unit() < 0.8;
    for (bool near : {near_first, !near_first}) {
      std::vector<size_t> fresh;
      for (size_t j : neighbours(i, near))
        if (!seen(j)) fresh.push_back(j);
      if (!fresh.empty()) return fresh[uniform(fresh.size())];
    }
    return std::nullopt;
  }

 private:
  const SearchSpace& space_;
  std::mt19937_64 rng_;
  size_t max_;
  const ProbeFn& probe_;
  std::vector<double> scores_;
  std::vector<bool> seen_;
  std::map<TuneConfig, size_t> index_;
  size_t evaluations_ = 0;
  bool stopped_ = false;
  double best_ = -std::numeric_limits<double>::infinity();
};

void grid(Search& s) {
  for (size_t i = 0; i < s.space().valid.size() && !s.done(); ++i) s.score(i);
}

void randomSampling(Search& s) {
  std::vector<size_t> order(s.space().valid.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::shuffle(order.begin(), order.end(), s.rng());
  for (size_t i : order) {
    if (s.done()) break;
    s.score(i);
  }
}

// Simulated annealing over one-dimension moves, mostly to the next or previous
// value of a tunable. Scores are compared relative to the best so far, so the
// temperature means the same on every objective. When every neighbour of the
// current configuration is known, the walk goes back to the best one, and
// from there (all known too) to an unseen configuration anywhere.
void anneal(Search& s, size_t budget) {
  auto start = s.randomUnseen();
  if (!start) return;
  size_t current = *start;
  double current_score = s.score(current);
  size_t best = current;
  const double t_start = 0.1, t_end = 0.002;
  while (!s.done()) {
    std::optional<size_t> candidate = s.unseenNeighbour(current);
    if (!candidate && current != best) {
      current = best;
      current_score = s.score(best);
      continue;
    }
    if (!candidate) {
      candidate = s.randomUnseen();
      if (!candidate) return;
      current = *candidate;
      current_score = s.score(current);
      if (current_score > s.score(best)) best = current;
      continue;
    }
    const double candidate_score = s.score(*candidate);
    if (candidate_score > s.score(best)) best = *candidate;
    if (!std::isfinite(candidate_score)) continue;  // failed: never moved to
    const double progress = std::min(1.0, double(s.evaluations()) / double(std::max<size_t>(budget, 1)));
    const double t = t_start * std::pow(t_end / t_start, progress);
    const double scale = std::isfinite(s.best()) && s.best() > 0 ? s.best() : 1.0;
    const double delta = (candidate_score - current_score) / scale;
    if (!std::isfinite(current_score) || delta >= 0 || s.unit() < std::exp(delta / t)) {
      current = *candidate;
      current_score = candidate_score;
    }
  }
}

// A generational genetic algorithm with elitism: the two best survive, the
// rest of each generation are children of tournament winners. A child that
// is invalid or already known is mutated again (a few tries), else replaced
// by an unseen configuration, so each generation spends its evaluations on
// new configurations.
void genetic(Search& s, size_t budget) {
  const auto& valid = s.space().valid;
  const auto& sizes = s.space().dim_sizes;
  const size_t population_size = std::clamp<size_t>(budget / 5, 4, 24);
  std::vector<size_t> population;
  while (population.size() < population_size && !s.done()) {
    auto i = s.randomUnseen();
    if (!i) break;
    s.score(*i);
    population.push_back(*i);
  }
  auto tournament = [&]() {
    size_t winner = population[s.uniform(population.size())];
    for (int k = 1; k < 3; ++k) {
      const size_t other = population[s.uniform(population.size())];
      if (s.score(other) > s.score(winner)) winner = other;
    }
    return winner;
  };
  const double mutation = sizes.empty() ? 0 : 1.0 / double(sizes.size());
  while (!s.done() && !population.empty()) {
    std::sort(population.begin(), population.end(), [&](size_t a, size_t b) { return s.score(a) > s.score(b); });
    std::vector<size_t> next(population.begin(), population.begin() + std::min<size_t>(2, population.size()));
    while (next.size() < population_size && !s.done()) {
      const TuneConfig& a = valid[tournament()];
      const TuneConfig& b = valid[tournament()];
      std::optional<size_t> child;
      for (int tries = 0; tries < 32 && !child; ++tries) {
        TuneConfig c(a.size());
        for (size_t d = 0; d < c.size(); ++d) {
          c[d] = s.unit() < 0.5 ? a[d] : b[d];
          if (s.unit() < mutation) {
            // Mostly a step to a neighbouring value (ordered tunables), sometimes any value.
            if (s.unit() < 0.7 && sizes[d] > 1) {
              const int step = s.unit() < 0.5 ? -1 : 1;
              c[d] = uint32_t(std::clamp<int>(int(c[d]) + step, 0, int(sizes[d]) - 1));
            } else {
              c[d] = uint32_t(s.uniform(sizes[d]));
            }
          }
        }
        if (auto j = s.find(c); j && !s.seen(*j)) child = j;
      }
      if (!child) child = s.randomUnseen();
      if (!child) return;
      s.score(*child);
      next.push_back(*child);
    }
    population = std::move(next);
  }
}

}  // namespace

void searchSpace(SearchStrategy strategy, const SearchSpace& space, uint64_t seed, size_t max_evaluations,
                 const ProbeFn& probe) {
  Search s(space, seed, max_evaluations, probe);
  switch (strategy) {
    case SearchStrategy::Grid:
      grid(s);
      break;
    case SearchStrategy::Random:
      randomSampling(s);
      break;
    case SearchStrategy::Anneal:
      anneal(s, max_evaluations);
      break;
    case SearchStrategy::Genetic:
      genetic(s, max_evaluations);
      break;
  }
}

}  // namespace ks

namespace ks {

std::vector<StrategyReplay> replayStrategies(const SearchSpace& space, const std::vector<std::optional<double>>& scores,
                                             double budget_fraction, uint64_t seeds) {
  double truth = 0;
  for (const auto& s : scores)
    if (s) truth = std::max(truth, *s);
  const size_t budget = std::max<size_t>(1, size_t(std::ceil(budget_fraction * double(space.valid.size()) - 1e-9)));
  std::vector<StrategyReplay> out;
  for (auto strategy : {SearchStrategy::Random, SearchStrategy::Anneal, SearchStrategy::Genetic}) {
    StrategyReplay r;
    r.strategy = strategy;
    r.budget = budget;
    r.worst_fraction = 1;
    double sum = 0, sum_to_best = 0;
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
      double best = 0;
      size_t evaluations = 0, at_best = 0;
      searchSpace(strategy, space, seed, budget, [&](size_t i) {
        ++evaluations;
        if (scores[i] && *scores[i] > best) {
          best = *scores[i];
          at_best = evaluations;
        }
        return Probe{false, scores[i]};
      });
      const double fraction = truth > 0 ? best / truth : 0;
      sum += fraction;
      sum_to_best += double(at_best);
      r.worst_fraction = std::min(r.worst_fraction, fraction);
      r.found_best += best == truth;
      ++r.runs;
    }
    r.mean_fraction = r.runs ? sum / double(r.runs) : 0;
    r.mean_evaluations_to_best = r.runs ? sum_to_best / double(r.runs) : 0;
    out.push_back(r);
  }
  return out;
}

}  // namespace ks
