#pragma once
// Text reports of a tune for the CLI (and `show`): one line per evaluation,
// and the summary: space and pruning, the final ranking, the verdict.
#include <string>

#include "engine/bench/runner.h"
#include "engine/tune/tune_record.h"

namespace ks {

// "[ 12/ 25] BK=4 BN=8 wg=16x16   1234.5 GFLOP/s   best 1300.1"  (+ "cached", the failure)
std::string formatTuneEvaluation(const TuneRecord& record, const TuneEvaluation& e, const Measurement& m);

// The space, the largest pruned groups, how the search stopped, the final
// ranking (score, median, samples, p against the next) and the verdict.
std::string formatTuneSummary(const TuneRecord& record);

}  // namespace ks
