#include "engine/tune/tune_cache.h"

#include <cstdlib>
#include <filesystem>
#include <memory>

namespace ks {

namespace {

std::string pointKey(const PlanItem& item) { return item.kernel + "|" + item.size.str() + "|" + item.params.str(true); }

// What makes two measurements of one configuration comparable besides the code.
std::string measurementKey(const vk::DeviceInfo& device, const Plan& plan) {
  char settings[256];
  std::snprintf(settings, sizeof settings, "reps=%u warmup=%u/%ums ci=%g max=%u budget=%ums seed=%llu rotate=%d/%llu",
                plan.reps, plan.warmup, plan.warmup_ms, plan.target_ci, plan.max_reps, plan.budget_ms,
                static_cast<unsigned long long>(plan.seed), plan.rotate_inputs ? 1 : 0,
                static_cast<unsigned long long>(plan.cache_bytes));
  return device.name + " | driver " + device.driver_version + " | " + settings;
}

}  // namespace

std::string defaultTuneCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/kernelscope/tune";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/kernelscope/tune";
}

std::string tuneCachePath(const std::string& dir, const vk::DeviceInfo& device, const std::string& kernel,
                          const ProblemSize& size, const Plan& plan) {
  const std::string key = measurementKey(device, plan) + " | " + kernel + " | " + size.str();
  return dir + "/" + kernel + "-" + size.str() + "-" + textHash(key) + ".jsonl";
}

Result<TuneCache> TuneCache::open(const std::string& path, const Session& header) {
  TuneCache cache;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return makeError("cannot create " + parent.string() + ": " + ec.message());
    auto w = JournalWriter::create(path, header);
    if (!w) return w.error();
    cache.writer_ = std::make_shared<JournalWriter>(std::move(*w));
    return cache;
  }
  auto contents = loadJournal(path);
  if (!contents) return makeError("result cache " + contents.error().message);
  const Session& had = contents->session;
  if (!had.device || !header.device ||
      measurementKey(*had.device, had.plan) != measurementKey(*header.device, header.plan))
    return makeError("result cache " + path + " holds measurements of another device, driver or way of measuring (" +
                     (had.device ? measurementKey(*had.device, had.plan) : std::string("no device")) +
                     "); name another file with --cache, or --no-cache");
  for (const auto& m : contents->session.points) cache.points_[pointKey(m.item)] = m;
  auto w = JournalWriter::openForAppend(path);
  if (!w) return w.error();
  cache.writer_ = std::make_shared<JournalWriter>(std::move(*w));
  return cache;
}

std::optional<Measurement> TuneCache::find(const PlanItem& item, const std::string& shader_hash) const {
  auto it = points_.find(pointKey(item));
  if (it == points_.end() || it->second.shader_hash != shader_hash) return std::nullopt;
  return it->second;
}

Status TuneCache::add(const Measurement& m) {
  const bool keep =
      m.status == PointStatus::Ok || (m.status == PointStatus::Failed && m.verification.status == VerifyStatus::Failed);
  if (!keep) return Ok{};
  if (auto st = writer_->append(m); !st) return st;
  points_[pointKey(m.item)] = m;
  return Ok{};
}

}  // namespace ks
