#pragma once
// The tuner's result cache: a journal (journal.h) per device, driver, kernel,
// size and way of measuring, under $XDG_CACHE_HOME/kernelscope/tune. Each
// measured configuration is appended, flushed, as it finishes, so an
// interrupted tune resumes where it stopped and a repeated one measures
// nothing it knows. A cached point is used only while the kernel compiles to
// the same code: its shader hash (source and defines) must match.
#include <map>
#include <optional>
#include <string>

#include "engine/session/journal.h"

namespace ks {

// $XDG_CACHE_HOME/kernelscope/tune, or ~/.cache/kernelscope/tune.
std::string defaultTuneCacheDir();
// The file of a (device, driver, kernel, size, measurement settings) key in `dir`.
std::string tuneCachePath(const std::string& dir, const vk::DeviceInfo& device, const std::string& kernel,
                          const ProblemSize& size, const Plan& plan);

class TuneCache {
 public:
  // Opens the file, or creates it (and its folder) with `header` (the
  // device and the plan's measurement settings). An existing file written for
  // another device, driver or measurement settings is refused.
  static Result<TuneCache> open(const std::string& path, const Session& header);

  // The cached point of this kernel, size and parameters, if its shader hash is `shader_hash`.
  std::optional<Measurement> find(const PlanItem& item, const std::string& shader_hash) const;
  // Keeps a finished point: ok ones and failed verifications (a wrong result
  // stays wrong); other failures may be passing trouble and are measured again.
  Status add(const Measurement& m);
  size_t size() const { return points_.size(); }
  const std::string& path() const { return writer_->path(); }

 private:
  TuneCache() = default;
  std::shared_ptr<JournalWriter> writer_;
  std::map<std::string, Measurement> points_;  // key: kernel, size, params
};

}  // namespace ks
