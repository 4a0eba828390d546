#pragma once
// Warming a device until its run time is steady. GPU clocks step down within
// half a second of idling (during a CPU verification, say) and come back at a
// pace of the driver's choosing; a fixed warm-up can end mid-ramp, and then a
// point or a drift check measures the ramp instead of the machine.
#include <cstdint>
#include <functional>

#include "engine/result.h"

namespace ks {

struct SteadyOptions {
  uint32_t window_runs = 5;  // at least this many runs per window...
  double window_ms = 50;     // ...spanning at least this long (a clock step is ~200 ms)
  double tolerance = 0.02;   // two consecutive windows' medians within this: steady
  double max_ms = 1000;      // give up after this long (measuring then goes on anyway)
};

// Calls `runOnce` (untimed runs; it returns the run's time in ns) until two
// consecutive windows agree, or max_ms has passed. Returns how many runs it did.
Result<uint32_t> warmUntilSteady(const std::function<Result<double>()>& runOnce, const SteadyOptions& options = {});

}  // namespace ks
