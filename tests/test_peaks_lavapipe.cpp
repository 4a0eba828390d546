// Peaks measured on lavapipe: every supported measurement lands with a
// positive, finite value; the session keeps them; bad records are refused.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/bench/peaks.h"
#include "engine/session/session.h"
#include "tests/lavapipe.h"

namespace ks {
namespace {

const DevicePeaks& lavapipePeaks() {
  static DevicePeaks peaks = [] {
    PeakOptions o;
    o.reps = 5;
    o.target_ms = 5;
    o.copy_bytes = 16 << 20;
    o.overhead_reps = 30;
    o.host_reps = 3;
    o.host_target_ms = 5;
    o.host_stream_bytes = 48 << 20;
    std::atomic<bool> cancel{false};
    auto p = measurePeaks(testing::device(), o, cancel);
    if (!p) throw std::runtime_error(p.error().message);
    return *p;
  }();
  return peaks;
}

TEST(PeaksLavapipe, Fp32FmaIsPositiveAndFinite) {
  const auto* r = lavapipePeaks().find("fp32_fma");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->measured()) << r->note;
  EXPECT_TRUE(std::isfinite(r->value));
  EXPECT_EQ(r->unit, "GFLOP/s");
  EXPECT_EQ(r->runs, 5u);
  // A CPU device: more than 0.1 GFLOP/s and less than 10 TFLOP/s.
  EXPECT_GT(r->value, 0.1);
  EXPECT_LT(r->value, 1e4);
  EXPECT_EQ(lavapipePeaks().fp32Gflops(), r->value);
}

TEST(PeaksLavapipe, Fp16IsMeasuredOrSaysWhyNot) {
  const auto* r = lavapipePeaks().find("fp16_fma");
  ASSERT_NE(r, nullptr);
  if (testing::device().info().float16_storage) {
    EXPECT_TRUE(r->measured()) << r->note;
    EXPECT_TRUE(std::isfinite(r->value));
  } else {
    EXPECT_FALSE(r->measured());
    EXPECT_NE(r->note.find("shaderFloat16"), std::string::npos) << r->note;
  }
}

TEST(PeaksLavapipe, BothCopiesGiveBandwidth) {
  for (const char* id : {"copy_shader", "copy_buffer"}) {
    const auto* r = lavapipePeaks().find(id);
    ASSERT_NE(r, nullptr) << id;
    EXPECT_TRUE(r->measured()) << id << ": " << r->note;
    EXPECT_EQ(r->unit, "GB/s");
    EXPECT_GT(r->value, 0.05) << id;
    EXPECT_LT(r->value, 5000) << id;
    EXPECT_NE(r->note.find("16 MiB"), std::string::npos) << r->note;
  }
  EXPECT_EQ(lavapipePeaks().bandwidthGbps(),
            std::max(lavapipePeaks().valueOf("copy_shader"), lavapipePeaks().valueOf("copy_buffer")));
}

TEST(PeaksLavapipe, OverheadInMicroseconds) {
  for (const char* id : {"dispatch", "submit"}) {
    const auto* r = lavapipePeaks().find(id);
    ASSERT_NE(r, nullptr) << id;
    EXPECT_EQ(r->unit, "us");
    EXPECT_GT(r->value, 0.1) << id;  // a round trip through a queue is never free
    EXPECT_LT(r->value, 1e5) << id;  // nor 100 ms
  }
}

TEST(PeaksLavapipe, OneCoopmatEntryPerShapeAndNoneWithoutTheExtension) {
  size_t coopmat = 0;
  for (const auto& r : lavapipePeaks().results) coopmat += r.id.rfind("coopmat_", 0) == 0;
  EXPECT_EQ(coopmat, testing::device().info().coopmat_shapes.size());
  if (testing::device().info().coopmat_shapes.empty()) {
    EXPECT_EQ(lavapipePeaks().coopmatGflops(32), 0);
  }
}

TEST(PeaksLavapipe, TheHostCpuIsMeasuredAfterTheDevice) {
  const auto& results = lavapipePeaks().results;
  ASSERT_GE(results.size(), 3u);
  // The device's first, then the host CPU's three (its own roofs for the CPU kernels).
  EXPECT_EQ(results.front().id, "fp32_fma");
  EXPECT_EQ(results[results.size() - 3].id, "cpu_fp32_fma");
  EXPECT_EQ(results[results.size() - 2].id, "cpu_triad");
  EXPECT_EQ(results.back().id, "cpu_copy");
  for (size_t i = 0; i + 3 < results.size(); ++i) EXPECT_FALSE(isHostPeak(results[i].id)) << results[i].id;
  EXPECT_GT(lavapipePeaks().cpuFp32Gflops(), 0);
  EXPECT_GT(lavapipePeaks().cpuBandwidthGbps(), 0);
  EXPECT_NE(results.back().title.find("host CPU"), std::string::npos);
}

TEST(PeaksLavapipe, CancelStopsWithAnError) {
  std::atomic<bool> cancel{true};
  auto p = measurePeaks(testing::device(), PeakOptions{}, cancel);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, "cancelled");
}

TEST(PeaksSession, RoundTripsInTheDeviceRecord) {
  Session s = newSession();
  s.device = testing::device().info();
  s.peaks = lavapipePeaks();
  auto back = sessionFromJson(sessionToJson(s));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->peaks);
  EXPECT_EQ(back->peaks->measured_at, s.peaks->measured_at);
  ASSERT_EQ(back->peaks->results.size(), s.peaks->results.size());
  for (size_t i = 0; i < s.peaks->results.size(); ++i) {
    EXPECT_EQ(back->peaks->results[i].id, s.peaks->results[i].id);
    EXPECT_DOUBLE_EQ(back->peaks->results[i].value, s.peaks->results[i].value);
    EXPECT_EQ(back->peaks->results[i].note, s.peaks->results[i].note);
  }
  EXPECT_NE(sessionToJson(s).find("\"peaks\""), std::string::npos);
}

TEST(PeaksSession, BadValuesAreRefusedByName) {
  Session s = newSession();
  s.device = testing::device().info();
  DevicePeaks p;
  p.measured_at = "2026-11-21T00:00:00Z";
  p.results.push_back({"fp32_fma", "fp32 FMA", "GFLOP/s", -5, 0, 5, ""});
  s.peaks = p;
  auto back = sessionFromJson(sessionToJson(s));
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message.find("device.peaks.results[0].value"), std::string::npos) << back.error().message;
  s.peaks->results[0] = {"fp32_fma", "fp32 FMA", "FLOPS", 5, 0, 5, ""};
  back = sessionFromJson(sessionToJson(s));
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message.find("device.peaks.results[0].unit"), std::string::npos) << back.error().message;
  s.peaks->results = {{"fp32_fma", "fp32 FMA", "GFLOP/s", 5, 0, 5, ""},
                      {"fp32_fma", "fp32 FMA", "GFLOP/s", 9, 0, 5, ""}};
  back = sessionFromJson(sessionToJson(s));
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message.find("device.peaks.results[1].id: 'fp32_fma' is listed twice"), std::string::npos)
      << back.error().message;
}

}  // namespace
}  // namespace ks
