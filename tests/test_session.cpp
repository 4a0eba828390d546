// The session file: a lossless round trip, and validation that names the bad field.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine/bench/runner.h"
#include "engine/bench/statistics.h"
#include "engine/bench/sweep.h"
#include "engine/bench/verify.h"
#include "engine/cpu/cpu_info.h"
#include "engine/kernels/registry.h"
#include "engine/session/session.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const ks::KernelInfo* kernel(const std::string& id) {
  const ks::KernelInfo* k = ks::Registry::instance().find(id);
  EXPECT_NE(k, nullptr) << id;
  return k;
}

// A session with real CPU measurements from the Runner, one point the Runner
// skipped (a GPU kernel without a device), one failed point, and one GPU-style
// point with wall-clock samples beside its timestamps.
ks::Session makeSession() {
  ks::Session s;
  s.created = "2024-05-06T07:08:09Z";
  s.app_version = "9.8.7-test";
  s.app_commit = "0123456789ab";
  s.host = ks::cpu::hostInfo();
  s.notes = "line one\nline \"two\", with a comma and unicode: \xc2\xb5s";

  ks::SweepSpec spec;
  spec.kernels = {kernel("cpu.gemm.openblas"), kernel("cpu.gemm.naive"), kernel("gemm.naive")};
  spec.sizes = {{16, 16, 16}};
  auto items = ks::buildPlan(spec);
  EXPECT_TRUE(items.ok()) << items.error().message;
  s.plan.items = *items;
  s.plan.reps = 3;
  s.plan.warmup = 1;
  s.plan.warmup_ms = 5;
  s.plan.seed = 1234567890123456789ull;  // beyond 2^53: must survive as an integer

  ks::Runner runner(nullptr);
  std::atomic<bool> cancel{false};
  s.points = runner.run(s.plan, {}, cancel);

  // A failed point, as a lost device would leave it: an error, no samples.
  ks::PlanItem failed_item;
  failed_item.kernel = "gemm.tiled_shared";
  failed_item.size = {24, 20, 12};
  failed_item.params.wg = {16, 16, 1};
  s.plan.items.push_back(failed_item);
  ks::Measurement failed;
  failed.item = failed_item;
  failed.status = ks::PointStatus::Failed;
  failed.error = "vkQueueSubmit: VK_ERROR_DEVICE_LOST (the device was lost)";
  failed.clock = "gpu_timestamp";
  failed.verification.status = ks::VerifyStatus::Failed;
  failed.verification.rel_error = std::numeric_limits<double>::quiet_NaN();
  failed.verification.tolerance = ks::gemmTolerance(12);
  failed.verification.note = "all entries vs OpenBLAS sgemm";
  s.points.push_back(failed);

  // A GPU-style ok point with tunables, a workgroup and wall_ns.
  ks::PlanItem gpu_item;
  gpu_item.kernel = "gemm.block_tiling";
  gpu_item.size = {64, 48, 32};
  gpu_item.params.wg = {8, 16, 1};
  gpu_item.params.values = {{"BK", 8}, {"BN", 2}};
  s.plan.items.push_back(gpu_item);
  ks::Measurement gpu;
  gpu.item = gpu_item;
  gpu.clock = "gpu_timestamp";
  gpu.samples_ns = {1500.5, 1200.25, 0.1 + 0.2};  // plan.reps samples
  gpu.wall_ns = {9000.75, 8000.5, 1e-3};
  gpu.stats = ks::computeStats(gpu.samples_ns);
  gpu.gflops = kernel("gemm.block_tiling")->flops(gpu_item.size) / gpu.stats.median;
  gpu.gbps = kernel("gemm.block_tiling")->bytes(gpu_item.size, gpu_item.params) / gpu.stats.median;
  gpu.verification = ks::judge(1.0 / 3.0 * 1e-7, 2e-7, ks::gemmTolerance(32), "all entries vs OpenBLAS sgemm");
  s.points.push_back(gpu);
  return s;
}

const ks::Session& goodSession() {
  static const ks::Session s = makeSession();
  return s;
}

void expectSameDouble(double a, double b, const std::string& what) {
  if (std::isnan(a) || std::isnan(b)) {
    EXPECT_TRUE(std::isnan(a) && std::isnan(b)) << what << ": " << a << " vs " << b;
  } else {
    EXPECT_EQ(a, b) << what;
  }
}

void expectSameMeasurement(const ks::Measurement& a, const ks::Measurement& b, const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(a.item.kernel, b.item.kernel);
  EXPECT_EQ(a.item.size, b.item.size);
  EXPECT_EQ(a.item.params.wg, b.item.params.wg);
  EXPECT_EQ(a.item.params.values, b.item.params.values);
  EXPECT_EQ(a.item, b.item);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.clock, b.clock);
  EXPECT_EQ(a.samples_ns, b.samples_ns);  // exactly, bit for bit
  EXPECT_EQ(a.warmup_runs, b.warmup_runs);
  EXPECT_EQ(a.wall_ns, b.wall_ns);
  EXPECT_EQ(a.stats.count, b.stats.count);
  EXPECT_EQ(a.stats.min, b.stats.min);
  EXPECT_EQ(a.stats.median, b.stats.median);
  EXPECT_EQ(a.stats.mean, b.stats.mean);
  EXPECT_EQ(a.stats.max, b.stats.max);
  EXPECT_EQ(a.stats.stddev, b.stats.stddev);
  EXPECT_EQ(a.stats.cv, b.stats.cv);
  EXPECT_EQ(a.gflops, b.gflops);
  EXPECT_EQ(a.gbps, b.gbps);
  EXPECT_EQ(a.verification.status, b.verification.status);
  expectSameDouble(a.verification.rel_error, b.verification.rel_error, "verification.rel_error");
  EXPECT_EQ(a.verification.tolerance, b.verification.tolerance);
  EXPECT_EQ(a.verification.note, b.verification.note);
  EXPECT_EQ(a.trustworthy(), b.trustworthy());
}

void expectSameDevice(const ks::vk::DeviceInfo& a, const ks::vk::DeviceInfo& b) {
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.vendor_id, b.vendor_id);
  EXPECT_EQ(a.vendor, b.vendor);
  EXPECT_EQ(a.device_id, b.device_id);
  EXPECT_EQ(a.driver_name, b.driver_name);
  EXPECT_EQ(a.driver_info, b.driver_info);
  EXPECT_EQ(a.driver_version, b.driver_version);
  EXPECT_EQ(a.api_version, b.api_version);
  EXPECT_EQ(a.subgroup_size, b.subgroup_size);
  EXPECT_EQ(a.max_shared_memory, b.max_shared_memory);
  EXPECT_EQ(a.max_invocations, b.max_invocations);
  EXPECT_EQ(a.max_workgroup_size, b.max_workgroup_size);
  EXPECT_EQ(a.max_workgroup_count, b.max_workgroup_count);
  EXPECT_EQ(a.max_storage_buffer_range, b.max_storage_buffer_range);
  EXPECT_EQ(a.max_allocation_size, b.max_allocation_size);
  EXPECT_EQ(a.device_local_bytes, b.device_local_bytes);
  EXPECT_EQ(a.timestamps, b.timestamps);
  EXPECT_EQ(a.timestamp_valid_bits, b.timestamp_valid_bits);
  EXPECT_EQ(a.timestamp_period_ns, b.timestamp_period_ns);
  EXPECT_EQ(a.shader_float64, b.shader_float64);
  EXPECT_EQ(a.multiprocessors, b.multiprocessors);
  EXPECT_EQ(a.threads_per_multiprocessor, b.threads_per_multiprocessor);
  EXPECT_EQ(a.multiprocessor_source, b.multiprocessor_source);
}

void expectSameSession(const ks::Session& a, const ks::Session& b) {
  EXPECT_EQ(a.app_version, b.app_version);
  EXPECT_EQ(a.app_commit, b.app_commit);
  EXPECT_EQ(a.created, b.created);
  ASSERT_EQ(a.device.has_value(), b.device.has_value());
  if (a.device) expectSameDevice(*a.device, *b.device);
  EXPECT_EQ(a.host.cpu_model, b.host.cpu_model);
  EXPECT_EQ(a.host.logical_cores, b.host.logical_cores);
  EXPECT_EQ(a.host.openblas_core, b.host.openblas_core);
  EXPECT_EQ(a.host.openblas_threads, b.host.openblas_threads);
  EXPECT_EQ(a.host.openblas_config, b.host.openblas_config);
  EXPECT_EQ(a.plan.reps, b.plan.reps);
  EXPECT_EQ(a.plan.warmup, b.plan.warmup);
  EXPECT_EQ(a.plan.warmup_ms, b.plan.warmup_ms);
  EXPECT_EQ(a.plan.seed, b.plan.seed);
  EXPECT_EQ(a.plan.drift_check, b.plan.drift_check);
  EXPECT_EQ(a.plan.drift_threshold, b.plan.drift_threshold);
  EXPECT_EQ(a.plan.drift_interval_ms, b.plan.drift_interval_ms);
  EXPECT_EQ(a.plan.items, b.plan.items);
  ASSERT_EQ(a.drift.has_value(), b.drift.has_value());
  if (a.drift) {
    EXPECT_EQ(a.drift->summary(), b.drift->summary());
  }
  EXPECT_EQ(a.notes, b.notes);
  ASSERT_EQ(a.peaks.has_value(), b.peaks.has_value());
  if (a.peaks) {
    EXPECT_EQ(a.peaks->measured_at, b.peaks->measured_at);
    ASSERT_EQ(a.peaks->results.size(), b.peaks->results.size());
    for (size_t i = 0; i < a.peaks->results.size(); ++i) {
      const auto &x = a.peaks->results[i], &y = b.peaks->results[i];
      EXPECT_EQ(x.id, y.id);
      EXPECT_EQ(x.title, y.title);
      EXPECT_EQ(x.unit, y.unit);
      EXPECT_DOUBLE_EQ(x.value, y.value);
      EXPECT_DOUBLE_EQ(x.cv, y.cv);
      EXPECT_EQ(x.runs, y.runs);
      EXPECT_EQ(x.note, y.note);
    }
  }
  ASSERT_EQ(a.points.size(), b.points.size());
  for (size_t i = 0; i < a.points.size(); ++i)
    expectSameMeasurement(a.points[i], b.points[i], "points[" + std::to_string(i) + "]");
}

// A fresh temporary directory, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ks_test_session_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// ---------------------------------------------------------------- the session itself

TEST(Session, FixtureHasRealMeasurements) {
  const ks::Session& s = goodSession();
  ASSERT_EQ(s.points.size(), 5u);
  ASSERT_EQ(s.plan.items.size(), 5u);
  for (int i : {0, 1}) {
    const auto& m = s.points[i];
    EXPECT_EQ(m.status, ks::PointStatus::Ok) << m.item.kernel << ": " << m.error;
    EXPECT_EQ(m.clock, "wall");
    EXPECT_EQ(m.samples_ns.size(), 3u);
    EXPECT_EQ(m.stats.count, 3u);
    EXPECT_GT(m.stats.median, 0);
    EXPECT_GT(m.gflops, 0);
    EXPECT_EQ(m.verification.status, ks::VerifyStatus::Ok) << m.verification.note;
    EXPECT_EQ(m.item.params.wg, (ks::WorkgroupShape{1, 1, 1}));
  }
  EXPECT_EQ(s.points[0].item.kernel, "cpu.gemm.openblas");
  EXPECT_EQ(s.points[1].item.kernel, "cpu.gemm.naive");
  EXPECT_EQ(s.points[2].item.kernel, "gemm.naive");
  EXPECT_EQ(s.points[2].status, ks::PointStatus::Skipped);
  EXPECT_NE(s.points[2].error.find("no Vulkan device"), std::string::npos) << s.points[2].error;
  EXPECT_TRUE(s.points[2].samples_ns.empty());
}

TEST(Session, JsonRoundTripKeepsEveryField) {
  const ks::Session& s = goodSession();
  const std::string text = ks::sessionToJson(s);
  auto back = ks::sessionFromJson(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  expectSameSession(s, *back);
  // Serializing the parsed session gives the same document again.
  EXPECT_EQ(ks::sessionToJson(*back), text);
}

TEST(Session, JsonHasTheDocumentedTopLevel) {
  const json j = json::parse(ks::sessionToJson(goodSession()));
  EXPECT_EQ(j.at("format"), ks::kSessionFormat);
  EXPECT_EQ(j.at("version"), ks::kSessionVersion);
  EXPECT_TRUE(j.at("device").is_null()) << "a CPU-only session has no device";
  EXPECT_EQ(j.at("plan").at("seed").get<uint64_t>(), 1234567890123456789ull);
  ASSERT_EQ(j.at("points").size(), 5u);
  // The failed point's NaN rel_error is written as null (JSON has no NaN).
  EXPECT_TRUE(j.at("points")[3].at("verification").at("rel_error").is_null());
  // CPU kernels have no workgroup: none is written.
  EXPECT_FALSE(j.at("points")[0].at("params").contains("wg"));
  EXPECT_EQ(j.at("points")[4].at("params").at("wg"), "8x16");
  EXPECT_EQ(j.at("points")[4].at("params").at("BK"), 8);
}

TEST(Session, RoundTripWithADevice) {
  ks::Session s = goodSession();
  ks::vk::DeviceInfo d;
  d.index = 2;
  d.name = "Test GPU \"X\" 9000";
  d.type = "discrete";
  d.vendor_id = 0x10de;
  d.vendor = "NVIDIA";
  d.device_id = 0x2330;
  d.driver_name = "testdrv";
  d.driver_info = "build 42";
  d.driver_version = "550.54.15";
  d.api_version = "1.3.277";
  d.subgroup_size = 32;
  d.max_shared_memory = 49152;
  d.max_invocations = 1024;
  d.max_workgroup_size = {1024, 1024, 64};
  d.max_workgroup_count = {2147483647u, 65535, 65535};
  d.max_storage_buffer_range = 4294967295ull;
  d.max_allocation_size = 85899345920ull;
  d.device_local_bytes = 85899345920ull;
  d.multiprocessors = 132;
  d.threads_per_multiprocessor = 2048;
  d.multiprocessor_source = "VK_NV_shader_sm_builtins";
  d.timestamps = true;
  d.timestamp_valid_bits = 64;
  d.timestamp_period_ns = 1.0 / 3.0;
  d.shader_float64 = true;
  s.device = d;
  auto back = ks::sessionFromJson(ks::sessionToJson(s));
  ASSERT_TRUE(back.ok()) << back.error().message;
  expectSameSession(s, *back);
}

// The host CPU's peaks as `measureHostPeaks` lists them.
std::vector<ks::PeakResult> hostPeakResults() {
  return {{"cpu_fp32_fma", "host CPU fp32 FMA (Test CPU)", "GFLOP/s", 190.5, 0.02, 9, "AVX-512F, 2 threads"},
          {"cpu_triad", "host CPU memory bandwidth: STREAM triad (Test CPU)", "GB/s", 21.25, 0.03, 9, "3 arrays"},
          {"cpu_copy", "host CPU memory bandwidth: STREAM copy (Test CPU)", "GB/s", 19.5, 0.03, 9, "3 arrays"}};
}

ks::vk::DeviceInfo testDevice() {
  ks::vk::DeviceInfo d;
  d.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  d.driver_version = "23.2.1";
  d.api_version = "1.3.255";
  d.max_shared_memory = 32768;
  d.max_invocations = 1024;
  return d;
}

TEST(Session, HostCpuPeaksRoundTripInTheDeviceRecord) {
  ks::Session s = goodSession();
  s.device = testDevice();
  ks::DevicePeaks p;
  p.measured_at = "2026-11-22T10:00:00Z";
  p.results = {{"fp32_fma", "fp32 FMA (vec4 chains)", "GFLOP/s", 58, 0.01, 15, "64 workgroups"},
               {"copy_buffer", "memory bandwidth: vkCmdCopyBuffer", "GB/s", 12, 0.01, 15, "64 MiB buffers"}};
  for (const auto& r : hostPeakResults()) p.results.push_back(r);
  s.peaks = p;
  const json j = json::parse(ks::sessionToJson(s));
  EXPECT_EQ(j.at("device").at("peaks").at("results").size(), 5u);
  EXPECT_FALSE(j.contains("peaks"));
  auto back = ks::sessionFromJson(j.dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  expectSameSession(s, *back);
  EXPECT_EQ(back->peaks->cpuFp32Gflops(), 190.5);
  EXPECT_EQ(back->peaks->cpuBandwidthGbps(), 21.25);
  EXPECT_EQ(back->peaks->fp32Gflops(), 58);
}

TEST(Session, HostCpuPeaksWithoutADeviceRoundTripAtTheTopLevel) {
  ks::Session s = goodSession();  // CPU kernels only, no device
  ASSERT_FALSE(s.device);
  s.peaks = ks::DevicePeaks{"2026-11-22T10:00:00Z", hostPeakResults()};
  const json j = json::parse(ks::sessionToJson(s));
  EXPECT_TRUE(j.at("device").is_null());
  ASSERT_TRUE(j.contains("peaks"));
  EXPECT_EQ(j.at("peaks").at("results").size(), 3u);
  auto back = ks::sessionFromJson(j.dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  expectSameSession(s, *back);
  EXPECT_EQ(back->peaks->cpuFp32Gflops(), 190.5);
}

TEST(Session, EmptySessionRoundTrips) {
  ks::Session s;
  s.created = ks::nowIso8601();
  auto back = ks::sessionFromJson(ks::sessionToJson(s));
  ASSERT_TRUE(back.ok()) << back.error().message;
  expectSameSession(s, *back);
  EXPECT_TRUE(back->points.empty());
}

TEST(Session, NowIso8601IsUtc) {
  const std::string t = ks::nowIso8601();
  ASSERT_EQ(t.size(), 20u) << t;
  EXPECT_EQ(t[4], '-');
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t.back(), 'Z');
}

// ---------------------------------------------------------------- files

TEST(SessionFile, SaveAndLoad) {
  TempDir dir;
  const std::string path = (dir / "run.json").string();
  auto st = ks::saveSession(goodSession(), path);
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp")) << "the temporary file is left behind";
  auto back = ks::loadSession(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  expectSameSession(goodSession(), *back);
}

TEST(SessionFile, SaveReplacesAnExistingFile) {
  TempDir dir;
  const std::string path = (dir / "run.json").string();
  { std::ofstream(path) << "old contents that are not a session"; }
  ks::Session s = goodSession();
  s.notes = "second";
  ASSERT_TRUE(ks::saveSession(s, path).ok());
  auto back = ks::loadSession(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->notes, "second");
  EXPECT_EQ(back->points.size(), s.points.size());
}

TEST(SessionFile, SaveIntoAMissingDirectoryFails) {
  TempDir dir;
  const std::string path = (dir / "no" / "such" / "dir" / "run.json").string();
  auto st = ks::saveSession(goodSession(), path);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find(path), std::string::npos) << st.error().message;
}

TEST(SessionFile, LoadMissingFileNamesThePath) {
  TempDir dir;
  const std::string path = (dir / "missing.json").string();
  auto r = ks::loadSession(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(path), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("cannot open"), std::string::npos) << r.error().message;
}

TEST(SessionFile, LoadBrokenFileNamesThePathAndTheField) {
  TempDir dir;
  const std::string path = (dir / "broken.json").string();
  json j = json::parse(ks::sessionToJson(goodSession()));
  j["points"][1]["size"]["k"] = 0;
  { std::ofstream(path) << j.dump(); }
  auto r = ks::loadSession(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(path), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("points[1].size"), std::string::npos) << r.error().message;
}

// ---------------------------------------------------------------- rejection

class SessionReject : public ::testing::Test {
 protected:
  static json good() { return json::parse(ks::sessionToJson(goodSession())); }
  // Parses `text`, expects a failure whose message contains every needle.
  static void expectRejected(const std::string& text, std::initializer_list<std::string> needles) {
    auto r = ks::sessionFromJson(text);
    ASSERT_FALSE(r.ok()) << "accepted a broken session";
    for (const auto& n : needles)
      EXPECT_NE(r.error().message.find(n), std::string::npos)
          << "error \"" << r.error().message << "\" does not mention \"" << n << "\"";
  }
  static void expectRejected(const json& j, std::initializer_list<std::string> needles) {
    expectRejected(j.dump(), needles);
  }
};

TEST_F(SessionReject, GoodDocumentIsAccepted) {
  // Guards the tests below: each breaks exactly one thing of this document.
  auto r = ks::sessionFromJson(good().dump());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->points.size(), 5u);
}

TEST_F(SessionReject, HostPeaksAreCheckedLikeTheDevices) {
  ks::Session s = goodSession();
  s.peaks = ks::DevicePeaks{"2026-11-22T10:00:00Z", hostPeakResults()};
  const json with_peaks = json::parse(ks::sessionToJson(s));
  ASSERT_TRUE(ks::sessionFromJson(with_peaks.dump()).ok());
  json j = with_peaks;
  j["peaks"]["results"][2]["id"] = "cpu_triad";
  expectRejected(j, {"peaks.results[2].id", "'cpu_triad' is listed twice"});
  j = with_peaks;
  j["peaks"]["results"][1]["unit"] = "GFLOP/s";
  expectRejected(j, {"peaks.results[1].unit", "'cpu_triad' is measured in GB/s"});
  j = with_peaks;
  j["peaks"]["results"][0]["value"] = -1;
  expectRejected(j, {"peaks.results[0].value"});
  // Without a device, a device's peak has nothing to belong to.
  j = with_peaks;
  j["peaks"]["results"][0]["id"] = "fp32_fma";
  expectRejected(j, {"peaks.results[0].id", "'fp32_fma' is a device's peak", "no device"});
  // With a device, peaks belong in its record.
  j = with_peaks;
  j["device"] = json::parse(ks::sessionToJson([] {
    ks::Session d = goodSession();
    d.device = testDevice();
    return d;
  }()))["device"];
  expectRejected(j, {"peaks", "device.peaks"});
}

TEST_F(SessionReject, DevicePeakInTheWrongUnit) {
  ks::Session s = goodSession();
  s.device = testDevice();
  s.peaks = ks::DevicePeaks{"2026-11-22T10:00:00Z", hostPeakResults()};
  json j = json::parse(ks::sessionToJson(s));
  ASSERT_TRUE(ks::sessionFromJson(j.dump()).ok());
  j["device"]["peaks"]["results"][0]["unit"] = "GB/s";
  expectRejected(j, {"device.peaks.results[0].unit", "'cpu_fp32_fma' is measured in GFLOP/s"});
}

TEST_F(SessionReject, NotJson) {
  expectRejected(std::string("{\"format\": \"kernelscope-session\", "), {"not a valid JSON"});
  expectRejected(std::string("hello"), {"not a valid JSON"});
  expectRejected(std::string(""), {"not a valid JSON"});
}

TEST_F(SessionReject, TopLevelArray) {
  json j = json::array({good()});
  expectRejected(j, {"top level", "not an object"});
}

TEST_F(SessionReject, WrongFormat) {
  json j = good();
  j["format"] = "some-other-tool";
  expectRejected(j, {"format", "some-other-tool"});
  j.erase("format");
  expectRejected(j, {"format", "missing"});
}

TEST_F(SessionReject, NewerVersion) {
  json j = good();
  j["version"] = 2;
  expectRejected(j, {"version", "2", "newer"});
}

TEST_F(SessionReject, VersionNotAnInteger) {
  json j = good();
  j["version"] = "1";
  expectRejected(j, {"version"});
}

TEST_F(SessionReject, MissingPoints) {
  json j = good();
  j.erase("points");
  expectRejected(j, {"points", "missing"});
}

TEST_F(SessionReject, PointsNotAnArray) {
  json j = good();
  j["points"] = json::object();
  expectRejected(j, {"points", "array"});
}

TEST_F(SessionReject, SampleIsAString) {
  json j = good();
  j["points"][0]["samples_ns"][1] = "fast";
  expectRejected(j, {"points[0].samples_ns[1]"});
}

TEST_F(SessionReject, SampleIsNegative) {
  json j = good();
  j["points"][0]["samples_ns"][2] = -5.0;
  expectRejected(j, {"points[0].samples_ns[2]", "non-negative"});
}

TEST_F(SessionReject, WallSampleIsNegative) {
  json j = good();
  j["points"][4]["wall_ns"][0] = -1.0;
  expectRejected(j, {"points[4].wall_ns[0]"});
}

TEST_F(SessionReject, SamplesNotAnArray) {
  json j = good();
  j["points"][1]["samples_ns"] = 12.5;
  expectRejected(j, {"points[1].samples_ns"});
}

TEST_F(SessionReject, OkPointWithoutSamples) {
  json j = good();
  j["points"][0]["samples_ns"] = json::array();
  expectRejected(j, {"points[0].samples_ns"});
}

TEST_F(SessionReject, MedianDoesNotMatchSamples) {
  json j = good();
  const double median = j["points"][0]["stats"]["median_ns"].get<double>();
  j["points"][0]["stats"]["median_ns"] = median * 2 + 1;
  expectRejected(j, {"points[0].stats.median_ns"});
}

TEST_F(SessionReject, EditedSampleNoLongerMatchesStoredMedian) {
  json j = good();
  auto& samples = j["points"][4]["samples_ns"];
  for (auto& x : samples) x = x.get<double>() * 10;  // the stored median is now stale
  expectRejected(j, {"points[4].stats.median_ns"});
}

TEST_F(SessionReject, GflopsInconsistent) {
  json j = good();
  j["points"][0]["gflops"] = j["points"][0]["gflops"].get<double>() * 1.5;
  expectRejected(j, {"points[0].gflops"});
}

TEST_F(SessionReject, SizeChangedUnderTheGflops) {
  json j = good();
  j["points"][4]["size"]["k"] = 64;  // twice the flops for the same time
  expectRejected(j, {"points[4].gflops"});
}

TEST_F(SessionReject, UnknownKernel) {
  json j = good();
  j["points"][0]["kernel"] = "gemm.from_the_future";
  expectRejected(j, {"points[0].kernel", "gemm.from_the_future"});
}

TEST_F(SessionReject, UnknownKernelInPlan) {
  json j = good();
  j["plan"]["items"][1]["kernel"] = "gemm.from_the_future";
  expectRejected(j, {"plan.items[1].kernel", "gemm.from_the_future"});
}

TEST_F(SessionReject, UnknownStatus) {
  json j = good();
  j["points"][0]["status"] = "great";
  expectRejected(j, {"points[0].status", "great"});
}

TEST_F(SessionReject, UnknownClock) {
  json j = good();
  j["points"][0]["clock"] = "sundial";
  expectRejected(j, {"points[0].clock"});
}

TEST_F(SessionReject, OkStatusWithFailedVerification) {
  json j = good();
  j["points"][0]["verification"]["status"] = "failed";
  expectRejected(j, {"points[0].verification.status", "failed"});
}

TEST_F(SessionReject, OkVerificationOverTolerance) {
  json j = good();
  j["points"][1]["verification"]["rel_error"] = 0.5;
  expectRejected(j, {"points[1].verification", "tolerance"});
}

TEST_F(SessionReject, ParamsWithAnUnknownTunable) {
  json j = good();
  j["points"][0]["params"]["FOO"] = 4;
  expectRejected(j, {"points[0].params.FOO", "FOO"});
}

TEST_F(SessionReject, ParamsWithAMalformedWorkgroup) {
  json j = good();
  j["points"][4]["params"]["wg"] = "8xx";
  expectRejected(j, {"points[4].params.wg"});
}

TEST_F(SessionReject, GpuPointWithoutWorkgroup) {
  json j = good();
  j["points"][4]["params"].erase("wg");
  expectRejected(j, {"points[4].params.wg", "missing"});
}

TEST_F(SessionReject, SizeZero) {
  json j = good();
  j["points"][0]["size"]["m"] = 0;
  expectRejected(j, {"points[0].size", "at least 1"});
}

TEST_F(SessionReject, SizeNegative) {
  json j = good();
  j["points"][0]["size"]["n"] = -16;
  expectRejected(j, {"points[0].size.n"});
}

TEST_F(SessionReject, PlanRepsNotANumber) {
  json j = good();
  j["plan"]["reps"] = "three";
  expectRejected(j, {"plan.reps"});
}

// ---------------------------------------------------------------- drift

// goodSession() with a drift report: three checks of 15 runs, the last `moved`
// (0.10 is 10% slower) against the first, judged at the plan's 3% threshold.
ks::Session sessionWithDrift(double moved) {
  ks::Session s = goodSession();
  std::vector<ks::DriftCheck> checks;
  const char* when[] = {"start", "between", "end"};
  const size_t after[] = {0, 2, 5};
  const double center[] = {500e3, 501e3, 500e3 * (1 + moved)};
  for (int i = 0; i < 3; ++i) {
    ks::DriftCheck c;
    c.when = when[i];
    c.after_points = after[i];
    for (int k = 0; k < 15; ++k) c.samples_ns.push_back(center[i] + (k - 7) * 100.0);
    c.stats = ks::computeStats(c.samples_ns);
    checks.push_back(std::move(c));
  }
  s.drift = ks::evaluateDrift("peak_fma.comp fp32, 16 workgroups x 23 iterations", checks, s.plan.drift_threshold);
  s.drift->clock = "gpu_timestamp";
  return s;
}

TEST(SessionDrift, ANoiseFloorAboveTheDevicesIsRejected) {
  // A file cannot hide a move behind a floor its device does not have; a
  // lower floor (a stricter verdict) is fine.
  const ks::Session s = sessionWithDrift(0.10);
  json j = json::parse(ks::sessionToJson(s));
  j["drift"]["noise_floor"] = 0.5;  // the synthetic device is a CPU device: 0.25
  auto bad = ks::sessionFromJson(j.dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("drift.noise_floor: 0.500000 is above the noise floor"), std::string::npos)
      << bad.error().message;
  j["drift"]["noise_floor"] = 0.0;
  EXPECT_TRUE(ks::sessionFromJson(j.dump()).ok());
}

TEST(SessionDrift, RoundTripsWithTheVerdict) {
  for (double moved : {0.0, 0.10}) {
    const ks::Session s = sessionWithDrift(moved);
    ASSERT_EQ(s.drift->unstable, moved > 0);
    const std::string text = ks::sessionToJson(s);
    auto back = ks::sessionFromJson(text);
    ASSERT_TRUE(back.ok()) << back.error().message;
    ASSERT_TRUE(back->drift.has_value());
    EXPECT_EQ(back->drift->unstable, s.drift->unstable);
    EXPECT_EQ(back->drift->max_change, s.drift->max_change);
    EXPECT_EQ(back->drift->summary(), s.drift->summary());
    EXPECT_EQ(back->drift->checks.size(), 3u);
    EXPECT_EQ(back->drift->checks[2].samples_ns, s.drift->checks[2].samples_ns);
    EXPECT_EQ(ks::sessionToJson(*back), text);
    const json j = json::parse(text);
    EXPECT_EQ(j.at("drift").at("checks")[2].at("median_ns"), s.drift->checks[2].stats.median);
    EXPECT_EQ(j.at("drift").at("unstable"), moved > 0);
    EXPECT_EQ(j.at("plan").at("drift_threshold"), 0.03);
    EXPECT_EQ(j.at("plan").at("drift_check"), true);
  }
}

TEST(SessionDrift, FilesFromBeforeDriftChecksLoadAsNotChecked) {
  json j = json::parse(ks::sessionToJson(goodSession()));
  for (const char* key : {"drift_check", "drift_threshold", "drift_interval_ms"}) j["plan"].erase(key);
  j.erase("drift");
  auto s = ks::sessionFromJson(j.dump());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_FALSE(s->plan.drift_check);
  EXPECT_FALSE(s->drift.has_value());
  // Checked but not stored (drift absent) also loads.
  EXPECT_TRUE(ks::sessionFromJson(ks::sessionToJson(goodSession())).ok());
}

class SessionRejectDrift : public SessionReject {
 protected:
  static json stable() { return json::parse(ks::sessionToJson(sessionWithDrift(0))); }
  static json unstable() { return json::parse(ks::sessionToJson(sessionWithDrift(0.10))); }
};

TEST_F(SessionRejectDrift, GoodDocumentsAreAccepted) {
  for (const json& j : {stable(), unstable()}) {
    auto r = ks::sessionFromJson(j.dump());
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
}

TEST_F(SessionRejectDrift, StableClaimWhenTheChecksMovedTenPercent) {
  json j = unstable();
  j["drift"]["unstable"] = false;
  expectRejected(j, {"drift.unstable", "says false", "UNSTABLE", "+10.0%", "by check 3"});
}

TEST_F(SessionRejectDrift, StableClaimWithTheChecksEditedInstead) {
  // The file says stable, but someone slowed the last check by 10%: the
  // samples no longer match the stored median, or (all edited) the verdict.
  json j = stable();
  for (auto& x : j["drift"]["checks"][2]["samples_ns"]) x = x.get<double>() * 1.1;
  expectRejected(j, {"drift.checks[2].median_ns", "does not match"});
  j["drift"]["checks"][2]["median_ns"] = j["drift"]["checks"][2]["samples_ns"][7];
  expectRejected(j, {"drift.unstable", "says false"});
}

TEST_F(SessionRejectDrift, UnstableClaimWhenTheChecksAreStable) {
  json j = stable();
  j["drift"]["unstable"] = true;
  expectRejected(j, {"drift.unstable", "says true", "stable: reference time within"});
}

TEST_F(SessionRejectDrift, MaxChangeThatDoesNotMatchTheChecks) {
  json j = unstable();
  j["drift"]["max_change"] = 0.01;
  expectRejected(j, {"drift.max_change", "does not match"});
}

TEST_F(SessionRejectDrift, ThresholdRaisedToHideTheDrift) {
  json j = unstable();
  j["drift"]["threshold"] = 0.5;
  expectRejected(j, {"drift.threshold", "plan.drift_threshold"});
  j["plan"]["drift_threshold"] = 0.5;
  expectRejected(j, {"drift.unstable", "says true"});
}

TEST_F(SessionRejectDrift, MalformedChecks) {
  json j = stable();
  j["drift"]["checks"][1]["when"] = "sometime";
  expectRejected(j, {"drift.checks[1].when", "sometime"});
  j = stable();
  j["drift"]["checks"][2]["after_points"] = 6;
  expectRejected(j, {"drift.checks[2].after_points", "6", "5 points"});
  j = stable();
  j["drift"]["checks"][1]["after_points"] = 0;
  j["drift"]["checks"][0]["after_points"] = 1;
  expectRejected(j, {"drift.checks[1].after_points", "out of order"});
  j = stable();
  j["drift"]["checks"][0]["samples_ns"][3] = -1;
  expectRejected(j, {"drift.checks[0].samples_ns[3]"});
  j = stable();
  j["drift"]["checks"][0]["samples_ns"] = json::array();
  expectRejected(j, {"drift.checks[0].samples_ns", "non-empty"});
  j = stable();
  j["drift"]["clock"] = "sundial";
  expectRejected(j, {"drift.clock", "sundial"});
  j = stable();
  j["drift"].erase("unstable");
  expectRejected(j, {"drift.unstable", "missing"});
  j = stable();
  j["plan"]["drift_check"] = false;
  expectRejected(j, {"drift", "plan.drift_check is false"});
  j = stable();
  j["plan"]["drift_threshold"] = -0.03;
  expectRejected(j, {"plan.drift_threshold", "non-negative"});
}

}  // namespace

// The measured sessions shipped in docs/ (lavapipe, H200) keep loading as the format grows.
TEST(ShippedSessions, EveryFileInDocsLoads) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(KS_DOCS_SESSIONS_DIR)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    auto s = ks::loadSession(entry.path().string());
    ASSERT_TRUE(s.ok()) << s.error().message;
    // Points, or (kernelscope-cli peaks -o) the device's measured peaks.
    EXPECT_TRUE(!s->points.empty() || (s->peaks && s->peaks->fp32Gflops() > 0)) << entry.path();
  }
  EXPECT_GE(files, 10u);
}
