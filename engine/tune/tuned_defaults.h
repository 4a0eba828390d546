#pragma once
// Tuned defaults: the best configuration a tune found, per kernel, device and
// size class, kept in $XDG_CONFIG_HOME/kernelscope/tuned.json for `run
// --tuned` and the app. A size class is the problem's scale (N; sqrt(M*N)
// for gemv; cbrt(M*N*K) for gemm) rounded to the nearest power of two.
#include <optional>
#include <string>
#include <vector>

#include "engine/bench/sweep.h"
#include "engine/tune/tune_record.h"

namespace ks {

struct TunedDefault {
  std::string kernel;
  std::string device;       // the device's name
  std::string driver;       // its driver version when tuned (shown, not matched)
  uint64_t size_class = 0;  // a power of two
  ProblemSize size;         // the size tuned at
  Params params;
  std::string objective;
  double score = 0;
  bool decided = false;     // the final round told the winner from the runner-up
  std::string created;      // ISO 8601
  std::string source_hash;  // a kernel file's text hash when tuned ("" for built-in kernels)
  bool operator==(const TunedDefault&) const = default;
};

uint64_t sizeClass(const ProblemSize& size);

// $XDG_CONFIG_HOME/kernelscope/tuned.json (~/.config/kernelscope/tuned.json).
std::string defaultTunedPath();

// A missing file is an empty list; a corrupt one is an error naming the entry.
Result<std::vector<TunedDefault>> loadTunedDefaults(const std::string& path);
// Adds `entry`, replacing one of the same kernel, device and size class; written atomically.
Status saveTunedDefault(const std::string& path, const TunedDefault& entry);

// The entry for this kernel and device at the size's class, else at the
// nearest class tuned (by factor); nullopt when the kernel was never tuned there.
std::optional<TunedDefault> findTunedDefault(const std::vector<TunedDefault>& list, const std::string& kernel,
                                             const std::string& device, const ProblemSize& size);

// The entry a finished tune gives: its winner's parameters on `device`, with
// the score of the final round (or of the best evaluation without one). An
// error when there is nothing to save: the tune was cancelled or nothing won.
Result<TunedDefault> tunedDefaultOf(const TuneRecord& record, const vk::DeviceInfo& device);

// Applies tuned defaults to a plan's items: the parameters named in
// `explicit_names` (given by the user; "wg" for the workgroup) stay; the
// rest come from the tuned entry. Items with no entry keep theirs. Returns a
// line per kernel and size class saying what was used (or why not).
std::vector<std::string> applyTunedDefaults(std::vector<PlanItem>& items, const std::vector<TunedDefault>& list,
                                            const vk::DeviceInfo& device,
                                            const std::vector<std::string>& explicit_names);

}  // namespace ks
