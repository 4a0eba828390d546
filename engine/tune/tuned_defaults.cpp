#include "engine/tune/tuned_defaults.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/bench/sweep.h"
#include "engine/session/durable_file.h"
#include "engine/session/session.h"

namespace ks {

using nlohmann::json;

uint64_t sizeClass(const ProblemSize& s) {
  double scale = double(s.n);
  if (s.rank == 2) scale = std::sqrt(double(s.m) * double(s.n));
  if (s.rank >= 3) scale = std::cbrt(double(s.m) * double(s.n) * double(s.k));
  if (!(scale >= 1)) return 1;
  return uint64_t(1) << std::min<int>(62, int(std::lround(std::log2(scale))));
}

std::string defaultTunedPath() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
    return std::string(xdg) + "/kernelscope/tuned.json";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.config/kernelscope/tuned.json";
}

namespace {

json toJson(const TunedDefault& t) {
  json params = json::object();
  params["wg"] = t.params.wg.str();
  for (const auto& [k, v] : t.params.values) params[k] = v;
  return {{"kernel", t.kernel},
          {"device", t.device},
          {"driver", t.driver},
          {"size_class", t.size_class},
          {"size", {{"m", t.size.m}, {"n", t.size.n}, {"k", t.size.k}, {"rank", t.size.rank}}},
          {"params", params},
          {"objective", t.objective},
          {"score", t.score},
          {"decided", t.decided},
          {"created", t.created},
          {"source_hash", t.source_hash}};
}

Result<TunedDefault> fromJson(const json& j, const std::string& where) {
  try {
    TunedDefault t;
    t.kernel = j.at("kernel").get<std::string>();
    t.device = j.at("device").get<std::string>();
    t.driver = j.value("driver", "");
    t.size_class = j.at("size_class").get<uint64_t>();
    const json& s = j.at("size");
    t.size = {s.at("m").get<uint64_t>(), s.at("n").get<uint64_t>(), s.at("k").get<uint64_t>(),
              s.at("rank").get<uint32_t>()};
    for (const auto& [k, v] : j.at("params").items()) {
      if (k == "wg") {
        auto wg = WorkgroupShape::parse(v.get<std::string>());
        if (!wg) return makeError(where + ".params.wg: " + wg.error().message);
        t.params.wg = *wg;
      } else {
        t.params.values[k] = v.get<int>();
      }
    }
    t.objective = j.value("objective", "");
    t.score = j.value("score", 0.0);
    t.decided = j.value("decided", false);
    t.created = j.value("created", "");
    t.source_hash = j.value("source_hash", "");
    if (t.kernel.empty() || t.device.empty() || t.size_class == 0)
      return makeError(where + ": kernel, device and size_class are required");
    return t;
  } catch (const json::exception& e) {
    return makeError(where + ": " + e.what());
  }
}

}  // namespace

Result<std::vector<TunedDefault>> loadTunedDefaults(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::vector<TunedDefault>{};
  auto text = readWholeFile(path);
  if (!text) return text.error();
  json j;
  try {
    j = json::parse(*text);
  } catch (const json::exception& e) {
    return makeError(path + ": not a valid JSON file: " + e.what());
  }
  if (!j.is_object() || j.value("format", "") != "kernelscope-tuned" || !j.contains("entries") ||
      !j["entries"].is_array())
    return makeError(path + ": not a kernelscope tuned-defaults file (format \"kernelscope-tuned\", \"entries\")");
  std::vector<TunedDefault> out;
  for (size_t i = 0; i < j["entries"].size(); ++i) {
    auto t = fromJson(j["entries"][i], path + ": entries[" + std::to_string(i) + "]");
    if (!t) return t.error();
    out.push_back(std::move(*t));
  }
  return out;
}

Status saveTunedDefault(const std::string& path, const TunedDefault& entry) {
  auto list = loadTunedDefaults(path);
  if (!list) return list.error();
  std::erase_if(*list, [&](const TunedDefault& t) {
    return t.kernel == entry.kernel && t.device == entry.device && t.size_class == entry.size_class;
  });
  list->push_back(entry);
  json j = {{"format", "kernelscope-tuned"}, {"version", 1}, {"entries", json::array()}};
  for (const auto& t : *list) j["entries"].push_back(toJson(t));
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  return writeFileDurably(path, j.dump(2) + "\n");
}

std::optional<TunedDefault> findTunedDefault(const std::vector<TunedDefault>& list, const std::string& kernel,
                                             const std::string& device, const ProblemSize& size) {
  const double want = std::log2(double(sizeClass(size)));
  std::optional<TunedDefault> best;
  double best_distance = 0;
  for (const auto& t : list) {
    if (t.kernel != kernel || t.device != device) continue;
    const double distance = std::fabs(std::log2(double(t.size_class)) - want);
    if (!best || distance < best_distance) {
      best = t;
      best_distance = distance;
    }
  }
  return best;
}

Result<TunedDefault> tunedDefaultOf(const TuneRecord& record, const vk::DeviceInfo& device) {
  if (record.stop_reason == "cancelled") return makeError("the tune was interrupted");
  if (!record.winner) return makeError("no configuration won");
  const KernelInfo* kernel = Registry::instance().find(record.kernel);
  if (!kernel) return makeError("unknown kernel '" + record.kernel + "'");
  TunedDefault t;
  t.kernel = kernel->id;
  t.device = device.name;
  t.driver = device.driver_version;
  t.size = record.size;
  t.size_class = sizeClass(record.size);
  t.params = record.params(*record.winner, kernel->defaultParams(&device));
  t.objective = objectiveName(record.objective);
  const auto best_evaluation = record.bestEvaluation();
  t.score = !record.final.empty() ? record.final.front().score
            : best_evaluation     ? *record.evaluations[*best_evaluation].score
                                  : 0;
  t.decided = record.decided;
  t.created = nowIso8601();
  if (kernel->user) t.source_hash = textHash(kernel->source);
  return t;
}

std::vector<std::string> applyTunedDefaults(std::vector<PlanItem>& items, const std::vector<TunedDefault>& list,
                                            const vk::DeviceInfo& device,
                                            const std::vector<std::string>& explicit_names) {
  std::vector<std::string> lines;
  std::set<std::string> said;
  auto say = [&](const std::string& line) {
    if (said.insert(line).second) lines.push_back(line);
  };
  const auto isExplicit = [&](const std::string& n) {
    return std::find(explicit_names.begin(), explicit_names.end(), n) != explicit_names.end();
  };
  for (auto& item : items) {
    const KernelInfo* k = Registry::instance().find(item.kernel);
    if (!k || (k->tunables.empty() && !k->uses_workgroup)) continue;
    auto t = findTunedDefault(list, k->id, device.name, item.size);
    const std::string cls = std::to_string(sizeClass(item.size));
    if (!t) {
      say(k->id + ": not tuned on " + device.name + "; its own defaults");
      continue;
    }
    Params p = item.params;
    if (k->uses_workgroup && !isExplicit("wg")) p.wg = t->params.wg;
    for (const auto& [name, value] : t->params.values)
      if (k->tunable(name) && !isExplicit(name)) p.values[name] = value;
    if (auto why = checkPoint(*k, item.size, p, &device)) {
      say(k->id + " at " + item.size.str() + ": the tuned " + p.str(k->uses_workgroup) + " cannot run (" + *why +
          "); its own defaults");
      continue;
    }
    item.params = p;
    say(k->id + " (size class " + cls + "): tuned " + t->params.str(k->uses_workgroup) + " from size " + t->size.str() +
        (std::to_string(t->size_class) == cls ? "" : " (the nearest class tuned)") +
        (t->decided ? "" : ", a tie in its final round"));
  }
  return lines;
}

}  // namespace ks
