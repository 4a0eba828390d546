#include "engine/session/session.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/kernels/kernel_file.h"
#include "engine/session/durable_file.h"
#include "engine/session/session_json.h"
#include "engine/vulkan/shader_compiler.h"

namespace ks {

using nlohmann::json;

std::string nowIso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::map<std::string, std::string> relevantEnvironment() {
  std::map<std::string, std::string> out;
  static const char* prefixes[] = {"OPENBLAS_", "MESA_", "LP_", "GALLIUM_", "VK_", "OMP_", "GOTO_"};
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    for (const char* p : prefixes)
      if (kv.rfind(p, 0) == 0) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

Session newSession() {
  Session s;
  s.created = nowIso8601();
  s.host = cpu::hostInfo();
  s.glslang_version = vk::glslangVersion();
  s.environment = relevantEnvironment();
  return s;
}

namespace {

json paramsToJson(const Params& p, bool with_wg) {
  json j = json::object();
  if (with_wg) j["wg"] = p.wg.str();
  for (const auto& [k, v] : p.values) j[k] = v;
  return j;
}

json sizeToJson(const ProblemSize& s) { return {{"m", s.m}, {"n", s.n}, {"k", s.k}}; }

json numberOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json deviceToJson(const vk::DeviceInfo& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"type", d.type},
          {"vendor", d.vendor},
          {"vendor_id", d.vendor_id},
          {"device_id", d.device_id},
          {"driver_name", d.driver_name},
          {"driver_info", d.driver_info},
          {"driver_version", d.driver_version},
          {"api_version", d.api_version},
          {"limits",
           {{"subgroup_size", d.subgroup_size},
            {"max_shared_memory", d.max_shared_memory},
            {"max_invocations", d.max_invocations},
            {"max_workgroup_size", d.max_workgroup_size},
            {"max_workgroup_count", d.max_workgroup_count},
            {"max_storage_buffer_range", d.max_storage_buffer_range},
            {"max_allocation_size", d.max_allocation_size},
            {"device_local_bytes", d.device_local_bytes},
            {"timestamps", d.timestamps},
            {"timestamp_valid_bits", d.timestamp_valid_bits},
            {"timestamp_period_ns", d.timestamp_period_ns},
            {"shader_float64", d.shader_float64},
            {"multiprocessors", d.multiprocessors},
            {"threads_per_multiprocessor", d.threads_per_multiprocessor},
            {"multiprocessor_source", d.multiprocessor_source}}}};
}

json peaksToJson(const DevicePeaks& p) {
  json results = json::array();
  for (const auto& r : p.results)
    results.push_back({{"id", r.id},
                       {"title", r.title},
                       {"unit", r.unit},
                       {"value", r.value},
                       {"cv", r.cv},
                       {"runs", r.runs},
                       {"note", r.note}});
  return {{"measured_at", p.measured_at}, {"results", results}};
}

}  // namespace

json driftToJson(const DriftReport& d) {
  json checks = json::array();
  for (const auto& c : d.checks)
    checks.push_back({{"when", c.when},
                      {"after_points", c.after_points},
                      {"samples_ns", c.samples_ns},
                      {"median_ns", c.stats.median},
                      {"ci_low_ns", c.stats.ci_low},
                      {"ci_high_ns", c.stats.ci_high},
                      {"cv", c.stats.cv},
                      {"count", c.stats.count}});
  return {{"reference", d.reference},
          {"clock", d.clock},
          {"threshold", d.threshold},
          {"rule", driftRuleName(d.rule)},
          {"noise_floor", d.noise_floor},
          {"checks", checks},
          {"max_change", d.max_change},
          {"unstable", d.unstable},
          {"error", d.error}};
}

namespace {

// ---- validation helpers: every failure names the field path.
struct Reader {
  std::string error;
  bool failed() const { return !error.empty(); }
  void fail(const std::string& path, const std::string& what) {
    if (error.empty()) error = path + ": " + what;
  }
  const json* field(const json& obj, const std::string& path, const char* key, bool required = true) {
    if (!obj.is_object()) {
      fail(path, "expected an object");
      return nullptr;
    }
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(path + "." + key, "missing");
      return nullptr;
    }
    return &*it;
  }
  std::string str(const json& obj, const std::string& path, const char* key, bool required = true) {
    const json* v = field(obj, path, key, required);
    if (!v) return {};
    if (!v->is_string()) {
      fail(path + "." + key, "expected a string");
      return {};
    }
    return v->get<std::string>();
  }
  uint64_t uint(const json& obj, const std::string& path, const char* key, bool required = true) {
    const json* v = field(obj, path, key, required);
    if (!v) return 0;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0)) {
      fail(path + "." + key, "expected a non-negative integer");
      return 0;
    }
    return v->get<uint64_t>();
  }
  // null reads as NaN (JSON has no NaN; a non-finite rel_error is written as null).
  double num(const json& obj, const std::string& path, const char* key, bool required = true, bool allow_null = false) {
    const json* v = field(obj, path, key, required);
    if (!v) return 0;
    if (allow_null && v->is_null()) return std::nan("");
    if (!v->is_number()) {
      fail(path + "." + key, "expected a number");
      return 0;
    }
    return v->get<double>();
  }
  bool boolean(const json& obj, const std::string& path, const char* key) {
    const json* v = field(obj, path, key, false);
    if (!v) return false;
    if (!v->is_boolean()) {
      fail(path + "." + key, "expected true or false");
      return false;
    }
    return v->get<bool>();
  }
};

// The device record ("device" of a session, an entry of devices --json).
vk::DeviceInfo readDevice(Reader& r, const json& dj, const std::string& path) {
  vk::DeviceInfo info;
  info.index = static_cast<uint32_t>(r.uint(dj, path, "index", false));
  info.name = r.str(dj, path, "name");
  info.type = r.str(dj, path, "type", false);
  info.vendor_id = static_cast<uint32_t>(r.uint(dj, path, "vendor_id", false));
  info.vendor = r.str(dj, path, "vendor", false);
  info.device_id = static_cast<uint32_t>(r.uint(dj, path, "device_id", false));
  info.driver_name = r.str(dj, path, "driver_name", false);
  info.driver_info = r.str(dj, path, "driver_info", false);
  info.driver_version = r.str(dj, path, "driver_version");
  info.api_version = r.str(dj, path, "api_version");
  if (const json* l = r.field(dj, path, "limits")) {
    const std::string lp = path + ".limits";
    info.subgroup_size = static_cast<uint32_t>(r.uint(*l, lp, "subgroup_size", false));
    info.max_shared_memory = static_cast<uint32_t>(r.uint(*l, lp, "max_shared_memory"));
    info.max_invocations = static_cast<uint32_t>(r.uint(*l, lp, "max_invocations"));
    info.max_storage_buffer_range = r.uint(*l, lp, "max_storage_buffer_range", false);
    info.max_allocation_size = r.uint(*l, lp, "max_allocation_size", false);
    info.device_local_bytes = r.uint(*l, lp, "device_local_bytes", false);
    info.timestamps = r.boolean(*l, lp, "timestamps");
    info.timestamp_valid_bits = static_cast<uint32_t>(r.uint(*l, lp, "timestamp_valid_bits", false));
    info.timestamp_period_ns = r.num(*l, lp, "timestamp_period_ns", false);
    info.shader_float64 = r.boolean(*l, lp, "shader_float64");
    // Sessions before issue 13 do not have these.
    info.multiprocessors = static_cast<uint32_t>(r.uint(*l, lp, "multiprocessors", false));
    info.threads_per_multiprocessor = static_cast<uint32_t>(r.uint(*l, lp, "threads_per_multiprocessor", false));
    info.multiprocessor_source = r.str(*l, lp, "multiprocessor_source", false);
    for (const char* key : {"max_workgroup_size", "max_workgroup_count"}) {
      const json* a = r.field(*l, lp, key, false);
      if (!a) continue;
      if (!a->is_array() || a->size() != 3 ||
          !std::all_of(a->begin(), a->end(), [](const json& x) { return x.is_number_unsigned(); })) {
        r.fail(lp + "." + key, "expected three non-negative integers");
        continue;
      }
      auto& dst = std::string(key) == "max_workgroup_size" ? info.max_workgroup_size : info.max_workgroup_count;
      for (int i = 0; i < 3; ++i) dst[i] = (*a)[i].get<uint32_t>();
    }
  }
  return info;
}

// Peaks in the device record, or (a session without a device) the host CPU's
// alone at the top level. Ids are unique, and a known id has its own unit.
DevicePeaks readPeaks(Reader& r, const json& pk, const std::string& path, bool host_only) {
  DevicePeaks peaks;
  peaks.measured_at = r.str(pk, path, "measured_at");
  const json* results = r.field(pk, path, "results");
  if (results && !results->is_array()) r.fail(path + ".results", "expected an array");
  for (size_t i = 0; results && results->is_array() && i < results->size() && !r.failed(); ++i) {
    const std::string rp = path + ".results[" + std::to_string(i) + "]";
    const json& x = (*results)[i];
    PeakResult pr;
    pr.id = r.str(x, rp, "id");
    pr.title = r.str(x, rp, "title", false);
    pr.unit = r.str(x, rp, "unit");
    pr.value = r.num(x, rp, "value");
    pr.cv = r.num(x, rp, "cv", false);
    pr.runs = static_cast<uint32_t>(r.uint(x, rp, "runs", false));
    pr.note = r.str(x, rp, "note", false);
    if (r.failed()) break;
    const std::string unit = peakUnitOf(pr.id);
    if (peaks.find(pr.id))
      r.fail(rp + ".id", "'" + pr.id + "' is listed twice");
    else if (host_only && !isHostPeak(pr.id))
      r.fail(rp + ".id", "'" + pr.id + "' is a device's peak, but the session has no device (only " + kHostPeakPrefix +
                             "* peaks of the host CPU can be kept without one)");
    else if (pr.unit != "GFLOP/s" && pr.unit != "GB/s" && pr.unit != "us")
      r.fail(rp + ".unit", "expected GFLOP/s, GB/s or us, not '" + pr.unit + "'");
    else if (!unit.empty() && pr.unit != unit)
      r.fail(rp + ".unit", "'" + pr.id + "' is measured in " + unit + ", not '" + pr.unit + "'");
    else if (!std::isfinite(pr.value) || pr.value < 0)
      r.fail(rp + ".value", "expected a finite non-negative number");
    peaks.results.push_back(std::move(pr));
  }
  return peaks;
}

Params readParams(Reader& r, const json& j, const std::string& path, const KernelInfo* kernel) {
  Params p;
  if (!j.is_object()) {
    r.fail(path, "expected an object");
    return p;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "wg") {
      if (!it->is_string()) {
        r.fail(path + ".wg", "expected a string like \"16x16\"");
        return p;
      }
      auto wg = WorkgroupShape::parse(it->get<std::string>());
      if (!wg) {
        r.fail(path + ".wg", wg.error().message);
        return p;
      }
      p.wg = *wg;
    } else {
      if (!it->is_number_integer()) {
        r.fail(path + "." + it.key(), "expected an integer");
        return p;
      }
      if (kernel && !kernel->tunable(it.key())) {
        r.fail(path + "." + it.key(), kernel->id + " has no tunable named " + it.key());
        return p;
      }
      p.values[it.key()] = it->get<int>();
    }
  }
  if (kernel && kernel->uses_workgroup && !j.contains("wg")) r.fail(path + ".wg", "missing");
  return p;
}

PlanItem readItem(Reader& r, const json& j, const std::string& path, const KernelInfo** kernel_out) {
  PlanItem item;
  item.kernel = r.str(j, path, "kernel");
  if (r.failed()) return item;
  const KernelInfo* kernel = Registry::instance().find(item.kernel);
  if (!kernel) {
    r.fail(path + ".kernel", "unknown kernel '" + item.kernel + "' (written by a newer kernelscope?)");
    return item;
  }
  if (kernel_out) *kernel_out = kernel;
  if (const json* pj = r.field(j, path, "params")) item.params = readParams(r, *pj, path + ".params", kernel);
  item.size.rank = kernel->size_rank;
  if (const json* sj = r.field(j, path, "size")) {
    item.size.m = r.uint(*sj, path + ".size", "m");
    item.size.n = r.uint(*sj, path + ".size", "n");
    item.size.k = r.uint(*sj, path + ".size", "k");
    if (!r.failed() && (item.size.m == 0 || item.size.n == 0 || item.size.k == 0))
      r.fail(path + ".size", "sizes must be at least 1");
  }
  return item;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), std::fabs(b)) + 1e-9; }

}  // namespace

// The "drift" object. Statistics come from the raw samples, and the verdict
// (max_change, unstable) from the checks: a file cannot call itself stable
// when its own checks moved past the threshold.
Result<DriftReport> driftFromJson(const json& d, const Plan& plan, const vk::DeviceInfo* device) {
  Reader r;
  const std::string reference = r.str(d, "drift", "reference");
  const std::string clock = r.str(d, "drift", "clock");
  const double threshold = r.num(d, "drift", "threshold");
  const std::string error = r.str(d, "drift", "error", false);
  const double stored_max_change = r.num(d, "drift", "max_change");
  const json* unstable = r.field(d, "drift", "unstable");
  const json* checks_json = r.field(d, "drift", "checks");
  if (r.failed()) return makeError(r.error);
  if (!plan.drift_check) return makeError("drift: present, but plan.drift_check is false");
  if (clock != "gpu_timestamp" && clock != "wall")
    return makeError("drift.clock: expected \"gpu_timestamp\" or \"wall\", not '" + clock + "'");
  if (!(std::isfinite(threshold) && threshold >= 0))
    return makeError("drift.threshold: expected a non-negative number");
  if (!near(threshold, plan.drift_threshold))
    return makeError("drift.threshold: " + std::to_string(threshold) + " is not plan.drift_threshold (" +
                     std::to_string(plan.drift_threshold) + ")");
  if (!unstable->is_boolean()) return makeError("drift.unstable: expected true or false");
  // Files written before the CI rule were judged on the threshold alone.
  DriftRule rule = DriftRule::ThresholdOnly;
  if (d.contains("rule")) {
    if (!d["rule"].is_string()) return makeError("drift.rule: expected \"threshold+ci\" or \"threshold\"");
    auto parsed = parseDriftRule(d["rule"].get<std::string>());
    if (!parsed) return makeError("drift.rule: " + parsed.error().message);
    rule = *parsed;
  }
  double noise_floor = 0;  // absent before the floor existed
  if (d.contains("noise_floor")) {
    if (!d["noise_floor"].is_number() || !std::isfinite(d["noise_floor"].get<double>()) ||
        d["noise_floor"].get<double>() < 0 || d["noise_floor"].get<double>() >= 1)
      return makeError("drift.noise_floor: expected a fraction from 0 to below 1");
    noise_floor = d["noise_floor"].get<double>();
    // A lower floor only judges more strictly; a higher one would hide drift.
    const double expected = driftNoiseFloor(device);
    if (noise_floor > expected && !near(noise_floor, expected))
      return makeError("drift.noise_floor: " + std::to_string(noise_floor) + " is above the noise floor of " +
                       (device ? device->name : std::string("the host")) + "'s reference (" + std::to_string(expected) +
                       ")");
  }
  if (!checks_json->is_array()) return makeError("drift.checks: expected an array");

  std::vector<DriftCheck> checks;
  for (size_t i = 0; i < checks_json->size(); ++i) {
    const std::string path = "drift.checks[" + std::to_string(i) + "]";
    const json& cj = (*checks_json)[i];
    DriftCheck c;
    c.when = r.str(cj, path, "when");
    c.after_points = r.uint(cj, path, "after_points");
    const double median = r.num(cj, path, "median_ns");
    const json* samples = r.field(cj, path, "samples_ns");
    if (r.failed()) return makeError(r.error);
    if (!isDriftWhen(c.when)) return makeError(path + ".when: expected start, between or end, not '" + c.when + "'");
    if (c.after_points > plan.items.size())
      return makeError(path + ".after_points: " + std::to_string(c.after_points) + " is more than the plan's " +
                       std::to_string(plan.items.size()) + " points");
    if (!checks.empty() && c.after_points < checks.back().after_points)
      return makeError(path + ".after_points: the checks are out of order");
    if (!samples->is_array() || samples->empty())
      return makeError(path + ".samples_ns: expected a non-empty array of numbers");
    for (size_t k = 0; k < samples->size(); ++k) {
      const json& x = (*samples)[k];
      if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < 0)
        return makeError(path + ".samples_ns[" + std::to_string(k) + "]: expected a non-negative number");
      c.samples_ns.push_back(x.get<double>());
    }
    c.stats = computeStats(c.samples_ns);
    if (!(c.stats.median > 0)) return makeError(path + ".samples_ns: a check must have a positive median");
    if (!near(median, c.stats.median))
      return makeError(path + ".median_ns: " + std::to_string(median) + " does not match the median of samples_ns (" +
                       std::to_string(c.stats.median) + ")");
    checks.push_back(std::move(c));
  }

  DriftReport report = evaluateDrift(reference, std::move(checks), threshold, rule, noise_floor);
  report.clock = clock;
  report.error = error;
  if (unstable->get<bool>() != report.unstable)
    return makeError(std::string("drift.unstable: the file says ") + (report.unstable ? "false" : "true") +
                     ", but its checks say " + report.summary());
  if (!near(stored_max_change, report.max_change))
    return makeError("drift.max_change: " + std::to_string(stored_max_change) + " does not match the checks (" +
                     std::to_string(report.max_change) + ")");
  return report;
}

std::vector<EmbeddedKernel> kernelFilesOf(const Session& s) {
  std::vector<EmbeddedKernel> files = s.kernel_files;
  for (const auto& item : s.plan.items) {
    const KernelInfo* k = Registry::instance().find(item.kernel);
    if (!k || !k->user) continue;
    if (std::none_of(files.begin(), files.end(), [&](const EmbeddedKernel& e) { return e.id == k->id; }))
      files.push_back({k->id, k->source_path, k->source});
  }
  return files;
}

void embedKernelFiles(Session& s) { s.kernel_files = kernelFilesOf(s); }

namespace {

// Registers a session's kernel files before its plan is read, so that its
// points refer to exactly what was measured (replacing another version of
// the same id that was loaded before).
Status registerEmbeddedKernels(const json& j, Session& s) {
  const json* files = j.contains("kernel_files") ? &j["kernel_files"] : nullptr;
  if (!files) return Ok{};
  if (!files->is_array()) return makeError("kernel_files: expected an array");
  for (size_t i = 0; i < files->size(); ++i) {
    const std::string path = "kernel_files[" + std::to_string(i) + "]";
    const json& f = (*files)[i];
    if (!f.is_object() || !f.contains("id") || !f["id"].is_string() || !f.contains("source") ||
        !f["source"].is_string())
      return makeError(path + ": expected an object with id, path, hash and source");
    EmbeddedKernel e{f["id"].get<std::string>(), f.value("path", std::string()), f["source"].get<std::string>()};
    if (f.contains("hash") && f["hash"] != textHash(e.source))
      return makeError(path + ".hash: does not match the embedded source (edited by hand?)");
    auto kernel = parseKernelFile(e.source, e.path.empty() ? e.id + ".comp" : e.path);
    if (!kernel) return makeError(path + ".source: " + kernel.error().message);
    if (kernel->id != e.id) return makeError(path + ".id: '" + e.id + "' but the source says '" + kernel->id + "'");
    kernel->source_path = e.path;
    const KernelInfo* current = Registry::instance().find(e.id);
    if (!current || current->source != e.source)
      if (auto added = Registry::instance().addUserKernel(std::move(*kernel)); !added)
        return makeError(path + ".id: " + added.error().message);
    s.kernel_files.push_back(std::move(e));
  }
  return Ok{};
}

}  // namespace

json sessionHeaderToJson(const Session& s) {
  json j;
  j["format"] = kSessionFormat;
  j["version"] = kSessionVersion;
  j["app"] = {{"name", "kernelscope"}, {"version", s.app_version}, {"commit", s.app_commit}};
  j["created"] = s.created;
  j["provenance"] = {{"glslang", s.glslang_version}, {"environment", s.environment}};
  j["device"] = s.device ? deviceToJson(*s.device) : json(nullptr);
  // Peaks belong to the device's record; without a device only the host CPU's can be there.
  if (s.device && s.peaks) j["device"]["peaks"] = peaksToJson(*s.peaks);
  if (!s.device && s.peaks) {
    DevicePeaks host = *s.peaks;
    std::erase_if(host.results, [](const PeakResult& r) { return !isHostPeak(r.id); });
    j["peaks"] = peaksToJson(host);
  }
  j["host"] = {{"cpu_model", s.host.cpu_model},
               {"logical_cores", s.host.logical_cores},
               {"openblas_core", s.host.openblas_core},
               {"openblas_threads", s.host.openblas_threads},
               {"openblas_config", s.host.openblas_config},
               {"cpu_features", s.host.cpu_features},
               {"openblas_warning", s.host.openblas_warning}};
  json items = json::array();
  for (const auto& it : s.plan.items) {
    const KernelInfo* k = Registry::instance().find(it.kernel);
    items.push_back({{"kernel", it.kernel},
                     {"params", paramsToJson(it.params, !k || k->uses_workgroup)},
                     {"size", sizeToJson(it.size)}});
  }
  j["plan"] = {{"reps", s.plan.reps},
               {"warmup", s.plan.warmup},
               {"warmup_ms", s.plan.warmup_ms},
               {"target_ci", s.plan.target_ci},
               {"max_reps", s.plan.max_reps},
               {"budget_ms", s.plan.budget_ms},
               {"seed", s.plan.seed},
               {"drift_check", s.plan.drift_check},
               {"drift_threshold", s.plan.drift_threshold},
               {"drift_interval_ms", s.plan.drift_interval_ms},
               {"items", items}};
  j["plan"]["rotate_inputs"] = s.plan.rotate_inputs;
  j["plan"]["cache_bytes"] = s.plan.cache_bytes;
  j["plan"]["dispatch_timeout_ms"] = s.plan.dispatch_timeout_ms;
  if (s.plan.with_transfers) j["plan"]["with_transfers"] = true;
  j["notes"] = s.notes;
  if (s.remote) j["remote"] = {{"target", s.remote->target}, {"cli", s.remote->cli}};
  if (const auto kernel_files = kernelFilesOf(s); !kernel_files.empty()) {
    json files = json::array();
    for (const auto& e : kernel_files)
      files.push_back({{"id", e.id}, {"path", e.path}, {"hash", textHash(e.source)}, {"source", e.source}});
    j["kernel_files"] = files;
  }
  return j;
}

json pointToJson(const Measurement& m) {
  const KernelInfo* k = Registry::instance().find(m.item.kernel);
  json p;
  p["kernel"] = m.item.kernel;
  p["params"] = paramsToJson(m.item.params, !k || k->uses_workgroup);
  p["size"] = sizeToJson(m.item.size);
  p["status"] = pointStatusName(m.status);
  if (!m.error.empty()) p["error"] = m.error;
  p["clock"] = m.clock.empty() ? json(nullptr) : json(m.clock);
  p["warmup_runs"] = m.warmup_runs;
  if (!m.stop_reason.empty()) p["stop_reason"] = m.stop_reason;
  if (m.input_sets > 1) p["input_sets"] = m.input_sets;
  if (m.cache_resident) p["cache_resident"] = true;
  p["samples_ns"] = m.samples_ns;
  if (!m.wall_ns.empty()) p["wall_ns"] = m.wall_ns;
  p["stats"] = {{"count", m.stats.count},
                {"min_ns", m.stats.min},
                {"median_ns", m.stats.median},
                {"mean_ns", m.stats.mean},
                {"max_ns", m.stats.max},
                {"stddev_ns", m.stats.stddev},
                {"cv", m.stats.cv},
                {"q1_ns", m.stats.q1},
                {"q3_ns", m.stats.q3},
                {"ci_low_ns", m.stats.ci_low},
                {"ci_high_ns", m.stats.ci_high},
                {"outliers", m.stats.outliers}};
  p["gflops"] = m.gflops;
  p["gbps"] = m.gbps;
  if (k && k->bytes) p["bytes"] = k->bytes(m.item.size, m.item.params);
  if (!m.method.empty()) p["method"] = m.method;
  if (!m.shader_hash.empty()) p["shader_hash"] = m.shader_hash;
  if (!m.pipeline_stats.empty()) p["pipeline_stats"] = m.pipeline_stats;
  if (!m.parts.empty()) {
    json parts = json::object();
    for (const auto& part : m.parts)
      parts[part.name] = {{"samples_ns", part.samples_ns}, {"median_ns", part.stats.median}};
    p["parts"] = parts;
  }
  if (!m.transfer_method.empty()) p["transfer_method"] = m.transfer_method;
  p["verification"] = {{"status", verifyStatusName(m.verification.status)},
                       {"rel_error", numberOrNull(m.verification.rel_error)},
                       {"max_error", numberOrNull(m.verification.max_error)},
                       {"tolerance", m.verification.tolerance},
                       {"note", m.verification.note}};
  return p;
}

namespace {

json configToJson(const TuneConfig& c) { return json(c); }

json tuneToJson(const TuneRecord& t) {
  json dims = json::array();
  for (const auto& d : t.dimensions) {
    json values = json::array();
    for (size_t i = 0; i < d.size(); ++i) values.push_back(d.isWorkgroup() ? json(d.label(i)) : json(d.values[i]));
    dims.push_back({{"name", d.name}, {"values", values}});
  }
  json pruned = json::array();
  for (const auto& p : t.pruned) {
    json configs = json::array();
    for (const auto& c : p.configs) configs.push_back(configToJson(c));
    pruned.push_back({{"reason", p.reason}, {"configs", configs}});
  }
  json evaluations = json::array();
  for (const auto& e : t.evaluations)
    evaluations.push_back({{"point", e.point},
                           {"config", configToJson(e.config)},
                           {"cached", e.cached},
                           {"score", e.score ? json(*e.score) : json(nullptr)},
                           {"elapsed_s", e.elapsed_s}});
  json final = json::array();
  for (const auto& f : t.final) {
    json x = {
        {"config", configToJson(f.config)}, {"samples_ns", f.samples_ns}, {"round_medians_ns", f.round_medians_ns},
        {"median_ns", f.stats.median},      {"score", f.score},           {"p_vs_next", f.p_vs_next}};
    if (!f.error.empty()) x["error"] = f.error;
    final.push_back(x);
  }
  return {{"kernel", t.kernel},
          {"size", sizeToJson(t.size)},
          {"strategy", strategyName(t.strategy)},
          {"objective", objectiveName(t.objective)},
          {"seed", t.seed},
          {"budget", t.budget},
          {"time_budget_s", t.time_budget_s},
          {"dimensions", dims},
          {"space_size", t.space_size},
          {"valid", t.valid},
          {"pruned", pruned},
          {"evaluations", evaluations},
          {"stop_reason", t.stop_reason},
          {"final_rounds", t.final_rounds},
          {"tie_margin", t.tie_margin},
          {"final", final},
          {"decided", t.decided},
          {"verdict", t.verdict},
          {"winner", t.winner ? configToJson(*t.winner) : json(nullptr)}};
}

// Checks the tune against the session's points: each evaluation names a point
// with the configuration's parameters and the score its median gives.
Result<TuneRecord> tuneFromJson(const json& j, const Session& s) {
  const std::string path = "tune";
  Reader r;
  TuneRecord t;
  t.kernel = r.str(j, path, "kernel");
  if (r.failed()) return makeError(r.error);
  const KernelInfo* kernel = Registry::instance().find(t.kernel);
  if (!kernel) return makeError(path + ".kernel: unknown kernel '" + t.kernel + "'");
  if (const json* size = r.field(j, path, "size")) {
    t.size = {r.uint(*size, path + ".size", "m"), r.uint(*size, path + ".size", "n"),
              r.uint(*size, path + ".size", "k"), kernel->size_rank};
  }
  auto strategy = parseStrategy(r.str(j, path, "strategy"));
  auto objective = parseObjective(r.str(j, path, "objective"));
  if (r.failed()) return makeError(r.error);
  if (!strategy) return makeError(path + ".strategy: " + strategy.error().message);
  if (!objective) return makeError(path + ".objective: " + objective.error().message);
  t.strategy = *strategy;
  t.objective = *objective;
  t.seed = r.uint(j, path, "seed");
  t.budget = r.uint(j, path, "budget");
  t.time_budget_s = r.num(j, path, "time_budget_s");
  t.space_size = r.uint(j, path, "space_size");
  t.valid = r.uint(j, path, "valid");
  t.stop_reason = r.str(j, path, "stop_reason");
  t.final_rounds = static_cast<uint32_t>(r.uint(j, path, "final_rounds"));
  t.tie_margin = r.num(j, path, "tie_margin");
  t.verdict = r.str(j, path, "verdict");
  t.decided = r.boolean(j, path, "decided");
  if (r.failed()) return makeError(r.error);
  const json* dims = r.field(j, path, "dimensions");
  if (!dims || !dims->is_array() || dims->empty()) return makeError(path + ".dimensions: expected a non-empty array");
  for (size_t i = 0; i < dims->size(); ++i) {
    const std::string dp = path + ".dimensions[" + std::to_string(i) + "]";
    TuneDimension d;
    d.name = r.str((*dims)[i], dp, "name");
    const json* values = r.field((*dims)[i], dp, "values");
    if (r.failed()) return makeError(r.error);
    if (!values->is_array() || values->empty()) return makeError(dp + ".values: expected a non-empty array");
    for (const auto& v : *values) {
      if (d.isWorkgroup()) {
        auto shape = v.is_string() ? WorkgroupShape::parse(v.get<std::string>())
                                   : Result<WorkgroupShape>(makeError("expected a shape like \"16x16\""));
        if (!shape) return makeError(dp + ".values: " + shape.error().message);
        d.shapes.push_back(*shape);
      } else {
        if (!v.is_number_integer()) return makeError(dp + ".values: expected integers");
        d.values.push_back(v.get<int>());
        if (!kernel->tunable(d.name)) return makeError(dp + ".name: " + kernel->id + " has no tunable " + d.name);
      }
    }
    t.dimensions.push_back(std::move(d));
  }
  auto readConfig = [&](const json& c, const std::string& cp) -> std::optional<TuneConfig> {
    if (!c.is_array() || c.size() != t.dimensions.size()) {
      r.fail(cp, "expected " + std::to_string(t.dimensions.size()) + " value indices");
      return std::nullopt;
    }
    TuneConfig out;
    for (size_t d = 0; d < c.size(); ++d) {
      if (!c[d].is_number_unsigned() || c[d].get<uint64_t>() >= t.dimensions[d].size()) {
        r.fail(cp + "[" + std::to_string(d) + "]", "not an index into dimension " + t.dimensions[d].name);
        return std::nullopt;
      }
      out.push_back(c[d].get<uint32_t>());
    }
    return out;
  };
  if (const json* pruned = r.field(j, path, "pruned"); pruned && pruned->is_array()) {
    for (size_t i = 0; i < pruned->size() && !r.failed(); ++i) {
      const std::string pp = path + ".pruned[" + std::to_string(i) + "]";
      TunePruned p;
      p.reason = r.str((*pruned)[i], pp, "reason");
      const json* configs = r.field((*pruned)[i], pp, "configs");
      if (configs && configs->is_array())
        for (size_t k = 0; k < configs->size() && !r.failed(); ++k)
          if (auto c = readConfig((*configs)[k], pp + ".configs[" + std::to_string(k) + "]")) p.configs.push_back(*c);
      t.pruned.push_back(std::move(p));
    }
  }
  if (r.failed()) return makeError(r.error);
  const json* evaluations = r.field(j, path, "evaluations");
  if (!evaluations || !evaluations->is_array()) return makeError(path + ".evaluations: expected an array");
  // What the tune held fixed is what its first point ran with: defaults
  // change and tunables are added between versions (so not defaultParams()).
  Params base = kernel->defaultParams(s.device ? &*s.device : nullptr);
  if (!evaluations->empty())
    if (const json* p0 = (*evaluations)[0].is_object() ? &(*evaluations)[0] : nullptr;
        p0 && p0->contains("point") && (*p0)["point"].is_number_unsigned() &&
        (*p0)["point"].get<uint64_t>() < s.points.size())
      base = s.points[(*p0)["point"].get<uint64_t>()].item.params;
  for (size_t i = 0; i < evaluations->size(); ++i) {
    const std::string ep = path + ".evaluations[" + std::to_string(i) + "]";
    const json& ej = (*evaluations)[i];
    TuneEvaluation e;
    e.point = r.uint(ej, ep, "point");
    const json* cj = r.field(ej, ep, "config");
    if (r.failed()) return makeError(r.error);
    auto c = readConfig(*cj, ep + ".config");
    if (!c) return makeError(r.error);
    e.config = *c;
    e.cached = r.boolean(ej, ep, "cached");
    e.elapsed_s = r.num(ej, ep, "elapsed_s");
    const json* score = r.field(ej, ep, "score");
    if (r.failed()) return makeError(r.error);
    if (e.point >= s.points.size())
      return makeError(ep + ".point: " + std::to_string(e.point) + " is not a point of this session");
    const Measurement& m = s.points[e.point];
    if (m.item.kernel != t.kernel || !(m.item.params == t.params(e.config, base)))
      return makeError(ep + ": the configuration " + t.configText(e.config) + " is not point " +
                       std::to_string(e.point) + "'s (" + m.item.kernel + " " + m.item.params.str(true) + ")");
    if (!score->is_null()) {
      if (!score->is_number()) return makeError(ep + ".score: expected a number or null");
      e.score = score->get<double>();
    }
    if (e.score.has_value() != m.timed())
      return makeError(ep + ".score: " +
                       std::string(m.timed() ? "missing for a timed point" : "given for a point that was not timed"));
    if (e.score) {
      const double expect =
          tuneScore(t.objective, m.stats.median, kernel->flops(m.item.size), kernel->bytes(m.item.size, m.item.params));
      if (!near(*e.score, expect))
        return makeError(ep + ".score: " + std::to_string(*e.score) + " does not match the point's median (" +
                         std::to_string(expect) + ")");
    }
    t.evaluations.push_back(std::move(e));
  }
  if (const json* final = r.field(j, path, "final"); final && final->is_array()) {
    for (size_t i = 0; i < final->size(); ++i) {
      const std::string fp = path + ".final[" + std::to_string(i) + "]";
      const json& fj = (*final)[i];
      TuneFinalist f;
      const json* cj = r.field(fj, fp, "config");
      const json* samples = r.field(fj, fp, "samples_ns");
      if (r.failed()) return makeError(r.error);
      auto c = readConfig(*cj, fp + ".config");
      if (!c) return makeError(r.error);
      f.config = *c;
      if (!samples->is_array()) return makeError(fp + ".samples_ns: expected an array of numbers");
      for (const auto& x : *samples) {
        if (!x.is_number() || !(x.get<double>() >= 0))
          return makeError(fp + ".samples_ns: expected non-negative numbers");
        f.samples_ns.push_back(x.get<double>());
      }
      if (const json* rm = r.field(fj, fp, "round_medians_ns"); rm && rm->is_array())
        for (const auto& x : *rm) {
          if (!x.is_number() || !(x.get<double>() > 0))
            return makeError(fp + ".round_medians_ns: expected positive numbers");
          f.round_medians_ns.push_back(x.get<double>());
        }
      f.error = r.str(fj, fp, "error", false);
      f.score = r.num(fj, fp, "score");
      f.p_vs_next = r.num(fj, fp, "p_vs_next");
      if (r.failed()) return makeError(r.error);
      f.stats = computeStats(f.samples_ns);
      if (f.error.empty()) {
        if (f.samples_ns.empty()) return makeError(fp + ".samples_ns: a finalist without an error must have samples");
        if (f.round_medians_ns.empty() || f.round_medians_ns.size() > t.final_rounds)
          return makeError(fp + ".round_medians_ns: " + std::to_string(f.round_medians_ns.size()) +
                           " rounds, but the final round had " + std::to_string(t.final_rounds));
        for (double m : f.round_medians_ns)
          if (m < f.stats.min || m > f.stats.max)
            return makeError(fp + ".round_medians_ns: a round's median lies outside the samples");
        const double expect = tuneScore(t.objective, f.stats.median, kernel->flops(t.size),
                                        kernel->bytes(t.size, t.params(f.config, base)));
        if (!near(f.score, expect))
          return makeError(fp + ".score: " + std::to_string(f.score) + " does not match its samples' median (" +
                           std::to_string(expect) + ")");
      }
      t.final.push_back(std::move(f));
    }
  }
  if (const json* w = r.field(j, path, "winner", false); w && !w->is_null()) {
    auto c = readConfig(*w, path + ".winner");
    if (!c) return makeError(r.error);
    t.winner = *c;
  }
  if (r.failed()) return makeError(r.error);
  return t;
}

}  // namespace

std::string dumpJson(const json& j, int indent) {
  // Driver strings and error texts are not guaranteed UTF-8: replace, never throw.
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string sessionToJson(const Session& s) {
  json j = sessionHeaderToJson(s);
  json points = json::array();
  for (const auto& m : s.points) points.push_back(pointToJson(m));
  j["points"] = std::move(points);
  if (s.drift) j["drift"] = driftToJson(*s.drift);
  if (s.tune) j["tune"] = tuneToJson(*s.tune);
  return dumpJson(j, 1);
}

Result<Session> sessionHeaderFromJson(const json& j) {
  Reader r;
  Session s;
  if (!j.is_object()) return makeError("not a kernelscope session: the top level is not an object");
  const std::string format = r.str(j, "", "format");
  if (r.failed()) return makeError("not a kernelscope session: " + r.error.substr(1));
  if (format != kSessionFormat)
    return makeError("format: '" + format + "' is not a kernelscope session (expected '" + kSessionFormat + "')");
  const json* version = r.field(j, "", "version");
  if (!version || !version->is_number_integer()) return makeError("version: missing or not an integer");
  if (version->get<int64_t>() != kSessionVersion)
    return makeError("version: " + std::to_string(version->get<int64_t>()) +
                     " is not supported; this build reads version " + std::to_string(kSessionVersion) +
                     (version->get<int64_t>() > kSessionVersion ? " (written by a newer kernelscope)" : ""));

  if (const json* app = r.field(j, "", "app")) {
    s.app_version = r.str(*app, "app", "version");
    s.app_commit = r.str(*app, "app", "commit");
  }
  s.created = r.str(j, "", "created");
  if (const json* pv = r.field(j, "", "provenance", false)) {
    s.glslang_version = r.str(*pv, "provenance", "glslang", false);
    if (const json* env = r.field(*pv, "provenance", "environment", false)) {
      if (!env->is_object()) return makeError("provenance.environment: expected an object of strings");
      for (auto it = env->begin(); it != env->end(); ++it) {
        if (!it->is_string()) return makeError("provenance.environment." + it.key() + ": expected a string");
        s.environment[it.key()] = it->get<std::string>();
      }
    }
  }

  if (const json* d = r.field(j, "", "device"); d && !d->is_null()) {
    vk::DeviceInfo info = readDevice(r, *d, "device");
    s.device = info;
    if (const json* pk = r.field(*d, "device", "peaks", false); pk && !pk->is_null())
      s.peaks = readPeaks(r, *pk, "device.peaks", false);
  }
  if (const json* pk = r.field(j, "", "peaks", false); pk && !pk->is_null()) {
    if (s.device)
      r.fail("peaks", "a session with a device keeps its peaks in device.peaks");
    else
      s.peaks = readPeaks(r, *pk, "peaks", true);
  }
  if (const json* h = r.field(j, "", "host", false)) {
    s.host.cpu_model = r.str(*h, "host", "cpu_model", false);
    s.host.logical_cores = static_cast<unsigned>(r.uint(*h, "host", "logical_cores", false));
    s.host.openblas_core = r.str(*h, "host", "openblas_core", false);
    s.host.openblas_threads = static_cast<int>(r.uint(*h, "host", "openblas_threads", false));
    s.host.openblas_config = r.str(*h, "host", "openblas_config", false);
    s.host.cpu_features = r.str(*h, "host", "cpu_features", false);
    s.host.openblas_warning = r.str(*h, "host", "openblas_warning", false);
  }
  if (r.failed()) return makeError(r.error);
  if (auto st = registerEmbeddedKernels(j, s); !st) return st.error();

  const json* plan = r.field(j, "", "plan");
  if (!plan) return makeError(r.error.substr(1));
  const uint64_t reps = r.uint(*plan, "plan", "reps");
  const uint64_t warmup = r.uint(*plan, "plan", "warmup");
  if (!r.failed() && (reps == 0 || reps > 1000000)) r.fail("plan.reps", "expected 1 to 1000000");
  if (!r.failed() && warmup > 1000000) r.fail("plan.warmup", "expected at most 1000000");
  s.plan.reps = static_cast<uint32_t>(reps);
  s.plan.warmup = static_cast<uint32_t>(warmup);
  s.plan.warmup_ms = static_cast<uint32_t>(r.uint(*plan, "plan", "warmup_ms", false));
  s.plan.target_ci = r.num(*plan, "plan", "target_ci", false);
  if (plan->contains("max_reps")) s.plan.max_reps = static_cast<uint32_t>(r.uint(*plan, "plan", "max_reps", false));
  if (plan->contains("budget_ms")) s.plan.budget_ms = static_cast<uint32_t>(r.uint(*plan, "plan", "budget_ms", false));
  s.plan.seed = r.uint(*plan, "plan", "seed");
  // Sessions from before input rotation did not rotate.
  s.plan.rotate_inputs = r.boolean(*plan, "plan", "rotate_inputs");
  if (plan->contains("cache_bytes")) s.plan.cache_bytes = r.uint(*plan, "plan", "cache_bytes", false);
  // Sessions from before transfers were measured have no with_transfers: off.
  if (plan->contains("with_transfers")) s.plan.with_transfers = r.boolean(*plan, "plan", "with_transfers");
  // Files from before drift detection were not checked.
  s.plan.drift_check = r.boolean(*plan, "plan", "drift_check");
  if (plan->contains("drift_threshold")) {
    s.plan.drift_threshold = r.num(*plan, "plan", "drift_threshold");
    if (!r.failed() && !(std::isfinite(s.plan.drift_threshold) && s.plan.drift_threshold >= 0))
      r.fail("plan.drift_threshold", "expected a non-negative number (a fraction: 0.03 is 3%)");
  }
  if (plan->contains("drift_interval_ms")) {
    const uint64_t interval = r.uint(*plan, "plan", "drift_interval_ms");
    if (!r.failed() && interval > 0xFFFFFFFFull) r.fail("plan.drift_interval_ms", "too large");
    s.plan.drift_interval_ms = static_cast<uint32_t>(interval);
  }
  if (plan->contains("dispatch_timeout_ms")) {  // 0 (automatic) in files from before the watchdog
    const uint64_t timeout = r.uint(*plan, "plan", "dispatch_timeout_ms");
    if (!r.failed() && timeout > 0xFFFFFFFFull) r.fail("plan.dispatch_timeout_ms", "too large");
    s.plan.dispatch_timeout_ms = static_cast<uint32_t>(timeout);
  }
  if (const json* items = r.field(*plan, "plan", "items")) {
    if (!items->is_array())
      r.fail("plan.items", "expected an array");
    else
      for (size_t i = 0; i < items->size() && !r.failed(); ++i)
        s.plan.items.push_back(readItem(r, (*items)[i], "plan.items[" + std::to_string(i) + "]", nullptr));
  }
  if (r.failed()) return makeError(r.error);
  if (const json* n = r.field(j, "", "notes", false); n && n->is_string()) s.notes = n->get<std::string>();
  if (const json* rm = r.field(j, "", "remote", false); rm && !rm->is_null()) {
    RemoteOrigin origin;
    origin.target = r.str(*rm, "remote", "target");
    origin.cli = r.str(*rm, "remote", "cli", false);
    if (r.failed()) return makeError(r.error);
    if (origin.target.empty()) return makeError("remote.target: empty");
    s.remote = origin;
  }
  return s;
}

Result<Measurement> pointFromJson(const json& pj, const Plan& plan, const std::string& path) {
  Reader r;
  const KernelInfo* kernel = nullptr;
  Measurement m;
  m.item = readItem(r, pj, path, &kernel);
  if (r.failed()) return makeError(r.error);
  auto status = parsePointStatus(r.str(pj, path, "status"));
  if (r.failed()) return makeError(r.error);
  if (!status) return makeError(path + ".status: " + status.error().message);
  m.status = *status;
  m.error = r.str(pj, path, "error", false);
  m.warmup_runs = static_cast<uint32_t>(r.uint(pj, path, "warmup_runs", false));
  m.method = r.str(pj, path, "method", false);
  m.shader_hash = r.str(pj, path, "shader_hash", false);
  m.stop_reason = r.str(pj, path, "stop_reason", false);
  if (pj.contains("input_sets")) m.input_sets = static_cast<uint32_t>(r.uint(pj, path, "input_sets", false));
  if (m.input_sets == 0) r.fail(path + ".input_sets", "expected at least 1");
  m.cache_resident = r.boolean(pj, path, "cache_resident");
  if (!r.failed() && m.input_sets > 1 && !plan.rotate_inputs)
    r.fail(path + ".input_sets", std::to_string(m.input_sets) + " sets, but plan.rotate_inputs is false");
  if (!r.failed() && (m.input_sets > 1 || m.cache_resident) && kernel && !kernel->memory_bound)
    r.fail(path + (m.cache_resident ? ".cache_resident" : ".input_sets"),
           "only bandwidth-bound kernels rotate their inputs, not " + kernel->id);
  m.pipeline_stats = r.str(pj, path, "pipeline_stats", false);
  if (const json* clock = r.field(pj, path, "clock"); clock && !clock->is_null()) {
    if (!clock->is_string() || (*clock != "gpu_timestamp" && *clock != "wall"))
      return makeError(path + ".clock: expected \"gpu_timestamp\" or \"wall\"");
    m.clock = clock->get<std::string>();
  }
  for (const char* key : {"samples_ns", "wall_ns"}) {
    const json* arr = r.field(pj, path, key, std::string(key) == "samples_ns");
    if (!arr) continue;
    if (!arr->is_array()) return makeError(path + "." + key + ": expected an array of numbers");
    auto& dst = std::string(key) == "samples_ns" ? m.samples_ns : m.wall_ns;
    for (size_t k = 0; k < arr->size(); ++k) {
      const json& x = (*arr)[k];
      if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < 0)
        return makeError(path + "." + key + "[" + std::to_string(k) + "]: expected a non-negative number");
      dst.push_back(x.get<double>());
    }
  }
  if (r.failed()) return makeError(r.error);
  m.transfer_method = r.str(pj, path, "transfer_method", false);
  if (const json* parts = r.field(pj, path, "parts", false)) {
    if (!parts->is_object()) return makeError(path + ".parts: expected an object of named timings");
    for (const auto& [name, pv] : parts->items()) {
      const std::string pp = path + ".parts." + name;
      if (name != "upload" && name != "download" && name != "gpu" && name != "cpu" && name != "sync")
        return makeError(pp + ": unknown timing (expected upload, download, gpu, cpu or sync)");
      const json* arr = pv.is_object() ? r.field(pv, pp, "samples_ns") : nullptr;
      if (!arr || !arr->is_array() || arr->empty())
        return makeError(pp + ".samples_ns: expected a non-empty array of numbers");
      TimedPart part{name, {}, {}};
      for (size_t k = 0; k < arr->size(); ++k) {
        const json& x = (*arr)[k];
        if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < 0)
          return makeError(pp + ".samples_ns[" + std::to_string(k) + "]: expected a non-negative number");
        part.samples_ns.push_back(x.get<double>());
      }
      part.stats = computeStats(part.samples_ns);
      if (pv.contains("median_ns")) {
        const double median = r.num(pv, pp, "median_ns");
        if (r.failed()) return makeError(r.error);
        if (!near(median, part.stats.median))
          return makeError(pp + ".median_ns: " + std::to_string(median) + " does not match the median of samples_ns (" +
                           std::to_string(part.stats.median) + ")");
      }
      m.parts.push_back(std::move(part));
    }
    if (m.status == PointStatus::Ok && bool(m.part("upload")) != bool(m.part("download")))
      return makeError(path + ".parts: an upload needs its download and the other way round");
  }
  if (m.status == PointStatus::Ok && m.samples_ns.empty())
    return makeError(path + ".samples_ns: an ok point must have samples");
  if (m.status == PointStatus::Ok && m.clock.empty())
    return makeError(path + ".clock: an ok point must name its clock");
  // Statistics are recomputed from the raw samples; stored ones must agree.
  m.stats = computeStats(m.samples_ns);
  if (const json* st = r.field(pj, path, "stats")) {
    const double median = r.num(*st, path + ".stats", "median_ns");
    if (r.failed()) return makeError(r.error);
    if (!m.samples_ns.empty() && !near(median, m.stats.median))
      return makeError(path + ".stats.median_ns: " + std::to_string(median) +
                       " does not match the median of samples_ns (" + std::to_string(m.stats.median) + ")");
  }
  m.gflops = r.num(pj, path, "gflops");
  m.gbps = r.num(pj, path, "gbps", false);
  if (r.failed()) return makeError(r.error);
  if (m.stats.median > 0) {
    const double expect = kernel->flops(m.item.size) / m.stats.median;
    if (!near(m.gflops, expect))
      return makeError(path + ".gflops: " + std::to_string(m.gflops) + " does not match the size and median time (" +
                       std::to_string(expect) + ")");
    m.gbps = kernel->bytes(m.item.size, m.item.params) / m.stats.median;
  }
  if (const json* v = r.field(pj, path, "verification")) {
    const std::string vp = path + ".verification";
    const std::string vs = r.str(*v, vp, "status");
    if (vs == "ok")
      m.verification.status = VerifyStatus::Ok;
    else if (vs == "failed")
      m.verification.status = VerifyStatus::Failed;
    else if (vs == "skipped")
      m.verification.status = VerifyStatus::Skipped;
    else if (vs == "unverified")
      m.verification.status = VerifyStatus::Unverified;
    else if (!r.failed())
      r.fail(vp + ".status", "expected ok, failed, skipped or unverified");
    m.verification.rel_error = r.num(*v, vp, "rel_error", false, true);
    m.verification.max_error = r.num(*v, vp, "max_error", false, true);
    m.verification.tolerance = r.num(*v, vp, "tolerance", false);
    m.verification.note = r.str(*v, vp, "note", false);
  }
  if (r.failed()) return makeError(r.error);
  if (m.status == PointStatus::Ok) {
    const bool adaptive = plan.target_ci > 0;
    const size_t most = adaptive ? std::max<size_t>(plan.max_reps, plan.reps) : plan.reps;
    if (m.samples_ns.size() < plan.reps || m.samples_ns.size() > most)
      return makeError(path + ".samples_ns: " + std::to_string(m.samples_ns.size()) + " samples, but plan.reps is " +
                       std::to_string(plan.reps) + (adaptive ? " (max " + std::to_string(most) + ")" : ""));
    if (m.stats.median <= 0) return makeError(path + ".samples_ns: an ok point must have a positive median");
    if (!m.wall_ns.empty() && m.wall_ns.size() != m.samples_ns.size())
      return makeError(path + ".wall_ns: " + std::to_string(m.wall_ns.size()) + " values for " +
                       std::to_string(m.samples_ns.size()) + " samples");
    // The kernel's own rules (tunable values, shapes, size constraints).
    if (auto why = checkPoint(*kernel, m.item.size, m.item.params, nullptr))
      return makeError(path + ".params: " + *why);
    if (m.verification.status == VerifyStatus::Ok && kernel->tolerance &&
        !near(m.verification.tolerance, kernel->tolerance(m.item.size, m.item.params)))
      return makeError(path + ".verification.tolerance: " + std::to_string(m.verification.tolerance) +
                       " is not this kernel's tolerance for the size (" +
                       std::to_string(kernel->tolerance(m.item.size, m.item.params)) + ")");
    if (m.clock == "gpu_timestamp" && kernel->backend == Backend::Cpu)
      return makeError(path + ".clock: a CPU kernel cannot be timed with GPU timestamps");
  }
  // A custom workload has no reference: its points are ok and unverified, and only they may be.
  const bool custom = kernel && kernel->workload == "custom";
  if (m.verification.status == VerifyStatus::Unverified && !custom)
    return makeError(path + ".verification.status: only a custom workload's points can be unverified");
  if (m.status == PointStatus::Ok && m.verification.status != VerifyStatus::Ok &&
      !(custom && m.verification.status == VerifyStatus::Unverified))
    return makeError(path + ".verification.status: an ok point must be verified ok, not " +
                     verifyStatusName(m.verification.status));
  if (m.verification.status == VerifyStatus::Ok &&
      !(std::isfinite(m.verification.rel_error) && m.verification.rel_error <= m.verification.tolerance &&
        std::isfinite(m.verification.max_error) && m.verification.max_error <= m.verification.tolerance))
    return makeError(path + ".verification: status ok but an error exceeds the tolerance");
  return m;
}

json deviceInfoToJson(const vk::DeviceInfo& device) { return deviceToJson(device); }

Result<vk::DeviceInfo> deviceInfoFromJson(const json& device, const std::string& path) {
  Reader r;
  vk::DeviceInfo info = readDevice(r, device, path);
  if (r.failed()) return makeError(r.error);
  return info;
}

Result<Session> sessionFromJson(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    return makeError(std::string("not a valid JSON file: ") + e.what());
  }
  auto s = sessionHeaderFromJson(j);
  if (!s) return s;
  Reader r;
  const json* points = r.field(j, "", "points");
  if (!points) return makeError(r.error.substr(1));
  if (!points->is_array()) return makeError("points: expected an array");
  for (size_t i = 0; i < points->size(); ++i) {
    auto m = pointFromJson((*points)[i], s->plan, "points[" + std::to_string(i) + "]");
    if (!m) return m.error();
    s->points.push_back(std::move(*m));
  }
  if (const json* d = r.field(j, "", "drift", false); d && !d->is_null()) {
    auto drift = driftFromJson(*d, s->plan, s->device ? &*s->device : nullptr);
    if (!drift) return drift.error();
    s->drift = std::move(*drift);
  }
  if (const json* t = r.field(j, "", "tune", false); t && !t->is_null()) {
    auto tune = tuneFromJson(*t, *s);
    if (!tune) return tune.error();
    s->tune = std::move(*tune);
  }
  return s;
}

Status saveSession(const Session& session, const std::string& path) {
  // On the disk before it returns: callers delete the run's journal next.
  return writeFileDurably(path, sessionToJson(session) + '\n');
}

Result<Session> loadSession(const std::string& path) {
  auto text = readWholeFile(path);
  if (!text) return text.error();
  auto s = sessionFromJson(*text);
  if (!s) return makeError(path + ": " + s.error().message);
  return s;
}

}  // namespace ks
