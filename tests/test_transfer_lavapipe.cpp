// The transfer family (seed 002) and the CPU/GPU interleave (seed 000,
// experiment 5), run for real on lavapipe: every copy and every final buffer
// verified, and a damaged one caught; --with-transfers records its uploads
// and downloads; sessions keep all of it.
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "engine/bench/report.h"
#include "engine/bench/runner.h"
#include "engine/kernels/experiments.h"
#include "engine/session/session.h"
#include "tests/lavapipe.h"

using namespace ks;

namespace {

using ks::testing::device;

Plan quickPlan(uint32_t reps = 3) {
  Plan p;
  p.reps = reps;
  p.warmup = 1;
  p.warmup_ms = 0;
  p.seed = 11;
  p.drift_check = false;
  return p;
}

std::vector<const KernelInfo*> family(const std::string& name) {
  std::vector<const KernelInfo*> out;
  for (const auto& k : Registry::instance().all())
    if (k.family == name) out.push_back(&k);
  return out;
}

PlanItem itemOf(const KernelInfo& k, uint64_t n) {
  PlanItem item{k.id, k.defaultParams(), {}};
  item.size = *problemSize(k, SizeSpec{n});
  return item;
}

Measurement runOne(Runner& runner, const PlanItem& item, const Plan& plan) {
  std::atomic<bool> cancel{false};
  return runner.runPoint(item, plan, cancel);
}

}  // namespace

TEST(Transfer, EveryPathCopiesAndVerifies) {
  const auto kernels = family("transfer");
  ASSERT_EQ(kernels.size(), 5u);
  Runner runner(&device());
  // An odd multiple of 16 bytes: no path may round the size.
  const uint64_t bytes = (1u << 20) + 48;
  for (const KernelInfo* k : kernels) {
    SCOPED_TRACE(k->id);
    const Measurement m = runOne(runner, itemOf(*k, bytes), quickPlan());
    // lavapipe's one memory type is device-local and host-visible: every path runs.
    ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
    EXPECT_EQ(m.verification.status, VerifyStatus::Ok) << m.verification.note;
    EXPECT_NE(m.verification.note.find(std::to_string(bytes) + " bytes compared, 0 differ"), std::string::npos)
        << m.verification.note;
    EXPECT_EQ(m.samples_ns.size(), 3u);
    EXPECT_GT(m.stats.median, 0);
    EXPECT_NEAR(m.gbps, double(bytes) / m.stats.median, 1e-9 * m.gbps);
    EXPECT_FALSE(m.method.empty());
    // The copies on the GPU are timed by it; the memcpys by the host clock.
    const bool host_clock = k->id == "transfer.upload_mapped" || k->id == "transfer.download_mapped";
    EXPECT_EQ(m.clock, host_clock || !device().info().timestamps ? "wall" : "gpu_timestamp");
  }
}

TEST(Transfer, ACorruptedCopyIsCaught) {
  Runner runner(&device());
  runner.injectFault(InjectedFault::CorruptCopy);
  for (const KernelInfo* k : family("transfer")) {
    SCOPED_TRACE(k->id);
    const Measurement m = runOne(runner, itemOf(*k, 1 << 16), quickPlan(2));
    EXPECT_EQ(m.status, PointStatus::Failed);
    EXPECT_EQ(m.verification.status, VerifyStatus::Failed);
    EXPECT_NE(m.error.find("verification failed"), std::string::npos) << m.error;
  }
}

TEST(Transfer, SizesThatAreNotWholeVectorsAreRefused) {
  Runner runner(&device());
  const KernelInfo* k = Registry::instance().find("transfer.gpu_reads_host");
  ASSERT_TRUE(k);
  const Measurement m = runOne(runner, itemOf(*k, 1000), quickPlan());
  EXPECT_EQ(m.status, PointStatus::Skipped);
  EXPECT_NE(m.error.find("not a multiple of 16"), std::string::npos) << m.error;
}

TEST(WithTransfers, RecordsUploadAndDownloadBesideTheKernel) {
  const KernelInfo* k = Registry::instance().find("gemv.row_per_thread");
  ASSERT_TRUE(k);
  Plan plan = quickPlan(4);
  plan.with_transfers = true;
  plan.cache_bytes = 1 << 20;  // rotated inputs: the uploads write the first set
  Runner runner(&device());
  const Measurement m = runOne(runner, itemOf(*k, 512), plan);
  ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
  EXPECT_EQ(m.verification.status, VerifyStatus::Ok);
  ASSERT_TRUE(m.hasTransfers());
  for (const char* name : {"upload", "download"}) {
    SCOPED_TRACE(name);
    const TimedPart* p = m.part(name);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->samples_ns.size(), plan.reps);
    for (double ns : p->samples_ns) EXPECT_GT(ns, 0);
    EXPECT_LT(p->stats.median, 1e9);  // 1 MiB in or 2 KiB out never takes a second
  }
  // The matrix (1 MiB) costs more to move than the 2 KiB result.
  EXPECT_GT(m.partMedian("upload"), m.partMedian("download"));
  EXPECT_DOUBLE_EQ(m.transferNs(), m.partMedian("upload") + m.partMedian("download"));
  EXPECT_DOUBLE_EQ(m.endToEndNs(), m.stats.median + m.transferNs());
  EXPECT_NE(m.transfer_method.find("upload:"), std::string::npos) << m.transfer_method;

  // Without the switch nothing is recorded.
  plan.with_transfers = false;
  const Measurement plain = runOne(runner, itemOf(*k, 512), plan);
  ASSERT_EQ(plain.status, PointStatus::Ok);
  EXPECT_FALSE(plain.hasTransfers());
  EXPECT_TRUE(plain.parts.empty());
}

TEST(WithTransfers, TheSummaryTableShowsKernelTransferAndTotal) {
  const KernelInfo* k = Registry::instance().find("dot.two_pass_shared");
  ASSERT_TRUE(k);
  Plan plan = quickPlan(3);
  plan.with_transfers = true;
  Runner runner(&device());
  const Measurement m = runOne(runner, itemOf(*k, 100000), plan);
  ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
  ASSERT_TRUE(m.hasTransfers());
  const std::string table = formatSummaryTable({m});
  for (const char* column : {"upload", "download", "transfer", "end to end"})
    EXPECT_NE(table.find(column), std::string::npos) << table;
}

TEST(WithTransfers, SessionsKeepThemAndOldSessionsLoad) {
  const KernelInfo* k = Registry::instance().find("gemv.row_per_thread");
  Plan plan = quickPlan(3);
  plan.with_transfers = true;
  Runner runner(&device());
  Session s;
  s.device = device().info();
  s.plan = plan;
  s.plan.items = {itemOf(*k, 256)};
  s.points = {runOne(runner, s.plan.items[0], plan)};
  ASSERT_EQ(s.points[0].status, PointStatus::Ok) << s.points[0].error;
  const std::string text = sessionToJson(s);
  auto back = sessionFromJson(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(back->plan.with_transfers);
  ASSERT_TRUE(back->points[0].hasTransfers());
  EXPECT_DOUBLE_EQ(back->points[0].endToEndNs(), s.points[0].endToEndNs());
  EXPECT_EQ(back->points[0].transfer_method, s.points[0].transfer_method);

  // A session from before: no parts, no with_transfers.
  auto j = nlohmann::json::parse(text);
  j["plan"].erase("with_transfers");
  j["points"][0].erase("parts");
  j["points"][0].erase("transfer_method");
  auto old = sessionFromJson(j.dump());
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_FALSE(old->plan.with_transfers);
  EXPECT_FALSE(old->points[0].hasTransfers());

  // A tampered median is refused with the field's name.
  j = nlohmann::json::parse(text);
  j["points"][0]["parts"]["upload"]["median_ns"] = 1.0;
  auto bad = sessionFromJson(j.dump());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("parts.upload.median_ns"), std::string::npos) << bad.error().message;
  // An upload without its download is refused.
  j = nlohmann::json::parse(text);
  j["points"][0]["parts"].erase("download");
  bad = sessionFromJson(j.dump());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("parts"), std::string::npos) << bad.error().message;
}

TEST(Interleave, FinalBufferIsRightInEveryPlacementTheDeviceOffers) {
  const auto kernels = family("interleave");
  ASSERT_EQ(kernels.size(), 4u);
  Runner runner(&device());
  const uint64_t n = 100003;  // not a multiple of the workgroup: the tail must be updated too
  size_t ran = 0;
  for (const KernelInfo* k : kernels) {
    SCOPED_TRACE(k->id);
    const auto placement = interleavePlacementOf(*k);
    ASSERT_TRUE(placement);
    const Measurement m = runOne(runner, itemOf(*k, n), quickPlan(4));
    if (!vk::hasExactPlacement(device().info(), *placement)) {
      EXPECT_EQ(m.status, PointStatus::Skipped);
      continue;
    }
    ++ran;
    ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
    EXPECT_EQ(m.verification.status, VerifyStatus::Ok) << m.verification.note;
    // Warm-up round(s) and the timed ones all count in the replay.
    const std::string rounds = std::to_string(m.warmup_runs + 4) + " rounds";
    EXPECT_NE(m.verification.note.find(rounds), std::string::npos) << m.verification.note;
    ASSERT_EQ(m.samples_ns.size(), 4u);
    for (const char* name : {"gpu", "cpu", "sync"}) {
      const TimedPart* p = m.part(name);
      ASSERT_TRUE(p) << name;
      EXPECT_EQ(p->samples_ns.size(), 4u);
    }
    // The split never exceeds the round: gpu + cpu + sync is the round where sync >= 0.
    for (size_t i = 0; i < 4; ++i) {
      const double sum = m.part("gpu")->samples_ns[i] + m.part("cpu")->samples_ns[i] + m.part("sync")->samples_ns[i];
      EXPECT_GE(sum, m.samples_ns[i] * 0.999);
    }
    EXPECT_GT(m.part("gpu")->stats.median, 0);
    EXPECT_GT(m.part("cpu")->stats.median, 0);
    EXPECT_NEAR(m.gbps, 16.0 * double(n) / m.stats.median, 1e-9 * m.gbps);
  }
  EXPECT_EQ(ran, 4u);  // lavapipe offers all four
}

TEST(Interleave, ADamagedBufferIsCaught) {
  Runner runner(&device());
  runner.injectFault(InjectedFault::CorruptInterleave);
  const KernelInfo* k = Registry::instance().find("interleave.host_coherent");
  ASSERT_TRUE(k);
  const Measurement m = runOne(runner, itemOf(*k, 4096), quickPlan(2));
  EXPECT_EQ(m.status, PointStatus::Failed);
  EXPECT_EQ(m.verification.status, VerifyStatus::Failed);
  EXPECT_NE(m.verification.note.find("1 differ"), std::string::npos) << m.verification.note;
}

TEST(Interleave, ReplayMatchesTheShadersStep) {
  // The host's replay of the GPU step is the shader's arithmetic, modulo 2^32.
  EXPECT_EQ(interleaveStep(0, true, 0), 1013904223u);
  EXPECT_EQ(interleaveStep(0xFFFFFFFFu, true, 0), uint32_t(0xFFFFFFFFu * 1664525u + 1013904223u));
  EXPECT_EQ(interleaveStep(1u << 13, false, 5), (1u << 13 ^ 1u) + 5);
}

TEST(Interleave, TheTableNamesTheWinner) {
  Runner runner(&device());
  std::vector<Measurement> points;
  for (const KernelInfo* k : family("interleave")) points.push_back(runOne(runner, itemOf(*k, 8192), quickPlan(3)));
  const std::string table = formatInterleaveTable(points);
  EXPECT_NE(table.find("fastest"), std::string::npos) << table;
  EXPECT_NE(table.find("interleave, N = 8192: "), std::string::npos) << table;
  EXPECT_NE(table.find(" wins ("), std::string::npos) << table;
}
