#pragma once
// The tuner: chooses configurations of one kernel at one size (search.h),
// has the Runner measure each as an ordinary point (or takes it from the
// result cache), and ends by measuring the best few again, interleaved, to
// say whether the winner really beats the runner-up. It times nothing itself.
#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/bench/runner.h"
#include "engine/tune/tune_cache.h"
#include "engine/tune/tune_record.h"

namespace ks {

struct TuneRequest {
  std::string kernel;
  ProblemSize size;
  std::map<std::string, std::vector<int>> only;  // tunables limited to these values
  std::vector<WorkgroupShape> shapes;            // empty: the presets (workgroupPresets)
  SearchStrategy strategy = SearchStrategy::Grid;
  TuneObjective objective = TuneObjective::Gflops;
  uint64_t seed = 1;         // of the search (the inputs' seed is plan.seed)
  size_t budget = 0;         // evaluations; 0: grid all, the others a quarter of the valid space
  double time_budget_s = 0;  // 0: none; the evaluation in flight finishes
  Plan plan;                 // how each point is measured (its items are ignored)
  size_t final_top = 5;      // re-measured at the end (0: none)
  uint32_t final_rounds = 5;
  double tie_margin = 0.01;
  std::string cache_path;  // "" : no cache
};

// The budget a request gets for a space of `valid` configurations.
size_t tuneBudget(const TuneRequest& request, size_t valid);

struct TuneProgress {
  std::string phase;  // "search" or "final"
  size_t done = 0, total = 0;
  double elapsed_s = 0;
  double eta_s = -1;  // -1: unknown
  double best = 0;    // best score so far (0 before the first success)
};

struct TuneCallbacks {
  // Each evaluation as it finishes, with its point (cached ones too) and the
  // record so far (the evaluation is its last).
  std::function<void(const TuneRecord&, const Measurement&, const TuneEvaluation&)> evaluation;
  std::function<void(const TuneProgress&)> progress;
  std::function<void(const std::string&)> note;  // the space, pruning, cache use
};

struct TuneOutcome {
  TuneRecord record;
  std::vector<Measurement> points;  // one per evaluation, in order
  std::string cache_error;          // the cache could not be used or written: the tune went on without it
};

// Fails only on a bad request (unknown kernel, nothing to tune, nothing
// valid); points that fail are evaluations with no score.
Result<TuneOutcome> runTune(Runner& runner, const vk::DeviceInfo* device, const TuneRequest& request,
                            const TuneCallbacks& callbacks, const std::atomic<bool>& cancel);

// The final ranking from every finalist's samples: sorted by score, each
// tested against the next (Mann-Whitney U), and the verdict on #1 vs #2.
// `score` turns a median time (ns) of a finalist into its score.
void rankFinalists(TuneRecord& record, const std::function<double(const TuneConfig&, double median_ns)>& score);

}  // namespace ks
