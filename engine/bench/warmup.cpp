#include "engine/bench/warmup.h"

#include <chrono>
#include <cmath>
#include <vector>

#include "engine/bench/statistics.h"

namespace ks {

Result<uint32_t> warmUntilSteady(const std::function<Result<double>()>& runOnce, const SteadyOptions& options) {
  using Clock = std::chrono::steady_clock;
  auto msSince = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  const auto start = Clock::now();
  uint32_t runs = 0;
  double previous = 0;
  while (msSince(start) < options.max_ms) {
    std::vector<double> window;
    const auto window_start = Clock::now();
    while (window.size() < options.window_runs || msSince(window_start) < options.window_ms) {
      auto t = runOnce();
      if (!t) return t.error();
      window.push_back(*t);
      ++runs;
      if (msSince(start) >= options.max_ms) break;
    }
    const double median = computeStats(std::move(window)).median;
    if (previous > 0 && std::fabs(median / previous - 1) <= options.tolerance) break;
    previous = median;
  }
  return runs;
}

}  // namespace ks
