// ChartPanel: series, points, failed markers, log axes, legend toggling, export.
#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPointer>
#include <QScatterSeries>
#include <QSet>
#include <QTemporaryDir>
#include <QToolTip>
#include <QValueAxis>
#include <QtTest>
#include <cmath>

#include "engine/bench/statistics.h"
#include "engine/bench/verify.h"
#include "engine/kernels/registry.h"
#include "ui/chart_panel.h"

using ks::ui::ChartKind;
using ks::ui::ChartPanel;
using ks::ui::Metric;

namespace {

const QString kGpu = QStringLiteral("gemm.block_tiling 16x16 BK=4 BN=4");
const QString kCpu = QStringLiteral("cpu.gemm.openblas");
const QString kFailed = QStringLiteral("failed / unverified");

ks::Params gpuParams() {
  ks::Params p;
  p.wg = {16, 16, 1};
  p.values = {{"BK", 4}, {"BN", 4}};
  return p;
}

ks::Params cpuParams() { return ks::Registry::instance().find("cpu.gemm.openblas")->defaultParams(); }

double flops(const ks::ProblemSize& s) { return 2.0 * double(s.m) * double(s.n) * double(s.k); }

// A verified point whose samples spread +-`spread` around `median_ns`.
ks::Measurement point(const std::string& kernel, const ks::Params& params, ks::ProblemSize size, double median_ns,
                      double spread = 0.1) {
  ks::Measurement m;
  m.item.kernel = kernel;
  m.item.params = params;
  m.item.size = size;
  m.status = ks::PointStatus::Ok;
  m.clock = "gpu_timestamp";
  m.samples_ns = {median_ns * (1 - spread), median_ns * (1 - spread / 3), median_ns, median_ns * (1 + spread / 4),
                  median_ns * (1 + spread)};
  m.warmup_runs = 3;
  m.stats = ks::computeStats(m.samples_ns);
  m.gflops = flops(size) / m.stats.median;
  m.gbps = 3.0 * 4.0 * double(size.n) * double(size.n) / m.stats.median;
  m.verification = ks::judge(2e-7, 5e-7, ks::gemmTolerance(size.k), "vs cpu.gemm.openblas");
  return m;
}

ks::ProblemSize square(uint64_t n) { return {n, n, n}; }

// Two kernels x three sizes, one failed verification (wrong results, but fast) and one skipped point.
std::vector<ks::Measurement> sessionData() {
  std::vector<ks::Measurement> ms;
  const double gpu_gflops[] = {180, 620, 1450};
  const double cpu_gflops[] = {90, 160, 210};
  const uint64_t sizes[] = {256, 512, 1024};
  for (int i = 0; i < 3; ++i) {
    const auto s = square(sizes[i]);
    ms.push_back(point("gemm.block_tiling", gpuParams(), s, flops(s) / gpu_gflops[i], 0.08));
    ms.push_back(point("cpu.gemm.openblas", cpuParams(), s, flops(s) / cpu_gflops[i], 0.15));
  }
  auto bad = point("gemm.block_tiling", gpuParams(), square(2048), 0.9e6);  // would be 19 TFLOPS
  bad.verification = ks::judge(0.71, 3.2, ks::gemmTolerance(2048), "vs cpu.gemm.openblas");
  ms.push_back(bad);
  ks::Measurement skipped;
  skipped.item = {"gemm.block_tiling", gpuParams(), square(4096)};
  skipped.status = ks::PointStatus::Skipped;
  skipped.error = "needs 5 GiB of buffers";
  ms.push_back(skipped);
  return ms;
}

// --- bandwidth-bound families: dot products {1, N, 1} and GEMV {M, N, 1} ---

ks::Params wgParams(uint32_t x) {
  ks::Params p;
  p.wg = {x, 1, 1};
  return p;
}

ks::ProblemSize dotSize(uint64_t n) { return {1, n, 1}; }

// A verified bandwidth-bound point: `bytes` moved in `median_ns`, samples spread +-`spread`.
ks::Measurement bwPoint(const std::string& kernel, const ks::Params& params, ks::ProblemSize size, double median_ns,
                        double bytes, double spread = 0.1) {
  ks::Measurement m = point(kernel, params, size, median_ns, spread);
  m.gflops = 2.0 * double(size.m) * double(size.n) / m.stats.median;
  m.gbps = bytes / m.stats.median;
  m.verification = ks::judge(1e-7, 2e-7, 1e-5, "vs double-precision reference");
  return m;
}

double dotBytes(uint64_t n) { return 2.0 * 4.0 * double(n) + 4.0; }  // x and y read, one float written

const std::string kDotTwoPass = "dot.two_pass_shared";
const std::string kDotSimd = "dot.simd_sum";
const std::string kDotAtomic = "dot.atomic";
const std::string kDotCpu = "cpu.dot.openblas";

QString nameOf(const std::string& kernel, const ks::Params& params) {
  return ks::ui::seriesName({kernel, params, dotSize(1024)});
}

// A dot time model: fixed launch cost + bytes at a bandwidth, per kernel.
double dotTimeNs(const std::string& kernel, uint64_t n) {
  const double b = dotBytes(n);
  if (kernel == kDotCpu) return 300 + b / 18.0;       // ~18 GB/s from cache/DRAM, no launch cost
  if (kernel == kDotTwoPass) return 22000 + b / 600;  // two dispatches
  if (kernel == kDotSimd) return 11000 + b / 1400;
  return 12000 + b / 1100;  // atomic
}

// Four dot kernels over N = 2^12 .. 2^24. The atomic one lacks 2^16; the two-pass one (the usual
// baseline) lacks 2^24, and its 2^20 point failed verification.
std::vector<ks::Measurement> dotData() {
  std::vector<ks::Measurement> ms;
  for (int e = 12; e <= 24; e += 2) {
    const uint64_t n = uint64_t(1) << e;
    for (const std::string& k : {kDotCpu, kDotTwoPass, kDotSimd, kDotAtomic}) {
      if (k == kDotAtomic && e == 16) continue;
      if (k == kDotTwoPass && e == 24) continue;
      const ks::Params params = k == kDotCpu ? ks::Params{} : wgParams(256);
      auto m = bwPoint(k, params, dotSize(n), dotTimeNs(k, n), dotBytes(n), k == kDotCpu ? 0.2 : 0.06);
      if (k == kDotTwoPass && e == 20) m.verification = ks::judge(0.3, 2.0, 1e-5, "vs double-precision reference");
      ms.push_back(m);
    }
  }
  return ms;
}

const ks::Measurement& findPoint(const std::vector<ks::Measurement>& ms, const std::string& kernel, uint64_t n) {
  for (const auto& m : ms)
    if (m.item.kernel == kernel && m.item.size.n == n) return m;
  static const ks::Measurement none;
  return none;
}

// GEMM on a CPU device (llvmpipe): OpenBLAS near 200 GFLOPS, the GPU kernels at 0.3 .. 12.
std::vector<ks::Measurement> magnitudeData() {
  std::vector<ks::Measurement> ms;
  const uint64_t sizes[] = {128, 256, 512, 1024};
  const double blas[] = {70, 187, 150, 205};
  const double naive[] = {0.31, 0.42, 0.38, 0.35};
  const double tiled[] = {1.4, 1.7, 1.6, 1.5};
  const double reg[] = {9.8, 11.5, 12.1, 10.7};
  ks::Params naive_p;
  naive_p.wg = {8, 8, 1};
  ks::Params reg_p;
  reg_p.wg = {8, 8, 1};
  for (int i = 0; i < 4; ++i) {
    const auto s = square(sizes[i]);
    ms.push_back(point("gemm.naive", naive_p, s, flops(s) / naive[i], 0.05));
    ms.push_back(point("gemm.tiled_shared", gpuParams(), s, flops(s) / tiled[i], 0.05));
    ms.push_back(point("gemm.reg4x4", reg_p, s, flops(s) / reg[i], 0.08));
    ms.push_back(point("cpu.gemm.openblas", cpuParams(), s, flops(s) / blas[i], 0.15));
  }
  return ms;
}

QLineSeries* referenceLine(ChartPanel& panel) {
  // The one line series that is not a data series (not in seriesNames()).
  const QStringList names = panel.seriesNames();
  for (QAbstractSeries* s : panel.chart()->series())
    if (auto* l = qobject_cast<QLineSeries*>(s); l && !names.contains(l->name()) && !qobject_cast<QScatterSeries*>(s))
      return l;
  return nullptr;
}

QLegendMarker* markerFor(ChartPanel& panel, const QString& name) {
  for (QLegendMarker* mk : panel.chart()->legend()->markers())
    if (mk->series() && mk->series()->name() == name && mk->series()->type() != QAbstractSeries::SeriesTypeArea)
      return mk;
  return nullptr;
}

QAbstractSeries* seriesFor(ChartPanel& panel, const QString& name) {
  for (QAbstractSeries* s : panel.chart()->series())
    if (s->name() == name) return s;
  return nullptr;
}

QList<QAreaSeries*> bands(ChartPanel& panel) {
  QList<QAreaSeries*> out;
  for (QAbstractSeries* s : panel.chart()->series())
    if (auto* a = qobject_cast<QAreaSeries*>(s)) out << a;
  return out;
}

// Shows the panel so the legend is laid out (marker visibility is that of its graphics item).
bool showPanel(ChartPanel& panel) {
  panel.resize(1000, 620);
  panel.show();
  if (!QTest::qWaitForWindowExposed(&panel)) return false;
  QCoreApplication::processEvents();
  return true;
}

bool near(double a, double b, double rel = 1e-9) { return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)); }

}  // namespace

class TestChartPanel : public QObject {
  Q_OBJECT

 private slots:
  void endToEndSeriesIsDottedBesideTheKernelOnly() {
    ChartPanel panel(Metric::Time);
    std::vector<ks::Measurement> ms;
    for (uint64_t n : {256, 512, 1024}) {
      auto m = point("gemm.block_tiling", gpuParams(), square(n), 1e6 * double(n) / 256);
      // Transfers: 2 ms up, 0.5 ms down, whatever the size.
      m.parts.push_back({"upload", {2e6, 2e6, 2e6}, ks::computeStats({2e6, 2e6, 2e6})});
      m.parts.push_back({"download", {5e5, 5e5, 5e5}, ks::computeStats({5e5, 5e5, 5e5})});
      ms.push_back(m);
    }
    ms.push_back(point("cpu.gemm.openblas", cpuParams(), square(256), 3e6));  // none: no end-to-end series
    panel.setMeasurements(ms);
    QVERIFY(showPanel(panel));
    const QString e2e = kGpu + ChartPanel::endToEndSuffix();
    QCOMPARE(panel.seriesNames(), (QStringList{kGpu, e2e, kCpu}));
    const auto kernel = panel.seriesPoints(kGpu), total = panel.seriesPoints(e2e);
    QCOMPARE(total.size(), 3);
    for (int i = 0; i < 3; ++i) {
      QCOMPARE(total[i].x(), kernel[i].x());
      QVERIFY(near(total[i].y(), kernel[i].y() + 2.5, 1e-9));  // ms
    }
    QLineSeries* line = nullptr;
    QLineSeries* cur = nullptr;
    for (QAbstractSeries* sr : panel.chart()->series()) {
      if (sr->name() == e2e) line = qobject_cast<QLineSeries*>(sr);
      if (sr->name() == kGpu) cur = qobject_cast<QLineSeries*>(sr);
    }
    QVERIFY(line && cur);
    QCOMPARE(line->pen().style(), Qt::DotLine);
    QCOMPARE(line->pen().color(), cur->pen().color());
    // In GFLOPS the end-to-end rate is the work over the longer time.
    panel.setMetric(Metric::Gflops);
    const auto rate = panel.seriesPoints(e2e);
    QVERIFY(near(rate[0].y(), flops(square(256)) / (1e6 + 2.5e6), 1e-9));
  }

  void baselineOverlayIsDashedAndMatchesSeries() {
    ChartPanel panel(Metric::Gflops);
    const auto current = sessionData();
    std::vector<ks::Measurement> baseline;
    for (uint64_t n : {256, 512, 1024})  // the GPU kernel was half as fast before
      baseline.push_back(point("gemm.block_tiling", gpuParams(), square(n), 2 * flops(square(n)) / 1000));
    baseline.push_back(point("gemm.naive", gpuParams(), square(256), 1e6));  // not in the current data
    panel.setMeasurements(current);
    panel.setOverlay(baseline);
    QVERIFY(showPanel(panel));
    const QString over = kGpu + ChartPanel::overlaySuffix();
    QCOMPARE(panel.overlayNames(), QStringList{over});
    const auto pts = panel.seriesPoints(over);
    QCOMPARE(pts.size(), 3);
    for (const QPointF& p : pts) QVERIFY(near(p.y(), 500, 1e-9));  // 2 flops / (4 flops / 1000 ns) GFLOPS
    QLineSeries* line = nullptr;
    QLineSeries* cur = nullptr;
    for (QAbstractSeries* sr : panel.chart()->series()) {
      if (sr->name() == over) line = qobject_cast<QLineSeries*>(sr);
      if (sr->name() == kGpu) cur = qobject_cast<QLineSeries*>(sr);
    }
    QVERIFY(line && cur);
    QCOMPARE(line->pen().style(), Qt::DashLine);
    QCOMPARE(line->pen().color(), cur->pen().color());
    // Kept across a clear and a live run: the baseline comes back with its series.
    panel.clear();
    QVERIFY(panel.overlayNames().isEmpty());
    panel.addMeasurement(current[0]);
    QCOMPARE(panel.overlayNames(), QStringList{over});
    QCOMPARE(panel.seriesPoints(kGpu).size(), 1);
    // Relative time compares within a session: no overlay there.
    panel.setMetric(Metric::RelativeTime);
    QVERIFY(panel.overlayNames().isEmpty());
    panel.setMetric(Metric::Time);
    QCOMPARE(panel.overlayNames(), QStringList{over});
    panel.clearOverlay();
    QVERIFY(panel.overlayNames().isEmpty());
  }

  void errorBarsShowTheMediansConfidenceInterval() {
    ChartPanel panel(Metric::Gflops);
    // 30 samples: the median's 95% CI is a pair of order statistics, narrower than min..max.
    auto m = point("gemm.block_tiling", gpuParams(), square(512), 1e6);
    m.samples_ns.clear();
    for (int i = 0; i < 30; ++i) m.samples_ns.push_back(1e6 * (1 + 0.002 * i));
    m.stats = ks::computeStats(m.samples_ns);
    m.gflops = flops(square(512)) / m.stats.median;
    auto few = point("gemm.block_tiling", gpuParams(), square(256), 2e5);  // 5 samples: no bar
    panel.setMeasurements({few, m});
    QVERIFY(showPanel(panel));
    auto bars = panel.errorBars(kGpu);
    QCOMPARE(bars.size(), 1);
    // GFLOPS bar: flops / ci_high .. flops / ci_low, around the median, inside the min..max band.
    QVERIFY(near(bars[0].x(), flops(square(512)) / m.stats.ci_high, 1e-9));
    QVERIFY(near(bars[0].y(), flops(square(512)) / m.stats.ci_low, 1e-9));
    QVERIFY(bars[0].x() < m.gflops && m.gflops < bars[0].y());
    QVERIFY(bars[0].x() > flops(square(512)) / m.stats.max);
    // Time: the interval itself, in ms; the bars are not legend entries.
    panel.setMetric(Metric::Time);
    bars = panel.errorBars(kGpu);
    QCOMPARE(bars.size(), 1);
    QVERIFY(near(bars[0].x(), m.stats.ci_low / 1e6, 1e-9));
    QVERIFY(near(bars[0].y(), m.stats.ci_high / 1e6, 1e-9));
    QCOMPARE(panel.seriesNames(), QStringList{kGpu});
    // Hiding the series from the legend hides its bars.
    for (QLegendMarker* mk : panel.chart()->legend()->markers())
      if (mk->series()->name() == kGpu) emit mk->clicked();
    for (QAbstractSeries* s : panel.chart()->series())
      if (s->name().contains(QStringLiteral("95% CI"))) QVERIFY(!s->isVisible());
  }

  void sizeAxisValueAndNames() {
    QCOMPARE(ks::ui::sizeAxisValue(square(512)), 512.0);
    QVERIFY(near(ks::ui::sizeAxisValue({512, 1024, 2048}), 1024.0, 1e-12));
    QVERIFY(near(ks::ui::sizeAxisValue({1000, 2000, 4000}), 2000.0, 1e-12));
    QCOMPARE(ks::ui::seriesName({"gemm.block_tiling", gpuParams(), square(64)}), kGpu);
    QCOMPARE(ks::ui::seriesName({"cpu.gemm.openblas", cpuParams(), square(64)}), kCpu);
    const auto blocked = ks::Registry::instance().find("cpu.gemm.blocked")->defaultParams();
    QCOMPARE(ks::ui::seriesName({"cpu.gemm.blocked", blocked, square(64)}),
             QStringLiteral("cpu.gemm.blocked BLOCK=64"));
    ks::Params naive;
    naive.wg = {16, 16, 1};
    QCOMPARE(ks::ui::seriesName({"gemm.naive", naive, square(64)}), QStringLiteral("gemm.naive 16x16"));
  }

  void gflopsSeriesAndPoints() {
    ChartPanel panel(ChartKind::Gflops);
    QCOMPARE(panel.kind(), ChartKind::Gflops);
    const auto ms = sessionData();
    panel.setMeasurements(ms);
    QVERIFY(showPanel(panel));

    QCOMPARE(panel.seriesNames(), (QStringList{kGpu, kCpu, kFailed}));
    const auto gpu = panel.seriesPoints(kGpu);
    const auto cpu = panel.seriesPoints(kCpu);
    QCOMPARE(gpu.size(), 3);
    QCOMPARE(cpu.size(), 3);
    const double xs[] = {256, 512, 1024};
    for (int i = 0; i < 3; ++i) {
      QCOMPARE(gpu[i].x(), xs[i]);
      QCOMPARE(cpu[i].x(), xs[i]);
      QVERIFY2(near(gpu[i].y(), ms[size_t(2 * i)].gflops), qPrintable(QString::number(gpu[i].y())));
      QVERIFY(near(cpu[i].y(), ms[size_t(2 * i + 1)].gflops));
    }
    QVERIFY(near(gpu[2].y(), 1450, 1e-9));

    // Linear y starting at 0, log2 x.
    auto* y = qobject_cast<QValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0));
    auto* x = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(y);
    QVERIFY(x);
    QCOMPARE(x->base(), 2.0);
    QCOMPARE(y->min(), 0.0);
    QVERIFY(x->min() > 0 && x->min() < 256);
    QVERIFY(x->max() > 2048 && x->max() < 4096);  // the failed point counts, the skipped one does not

    // One band per series, without a legend entry, spanning flops/max_ns .. flops/min_ns around the curve.
    const auto bs = bands(panel);
    QCOMPARE(bs.size(), 2);
    QVERIFY(markerFor(panel, kGpu)->isVisible());
    for (QAreaSeries* b : bs) {
      for (QLegendMarker* mk : panel.chart()->legend()->markers(b)) QVERIFY(!mk->isVisible());
      QVERIFY(b->upperSeries() && b->lowerSeries());
      QCOMPARE(b->upperSeries()->count(), 3);
    }
    QAreaSeries* gpu_band = bs[0];
    const auto& m1024 = ms[4];
    QVERIFY(near(gpu_band->upperSeries()->at(2).y(), flops(square(1024)) / m1024.stats.min));
    QVERIFY(near(gpu_band->lowerSeries()->at(2).y(), flops(square(1024)) / m1024.stats.max));
    QVERIFY(gpu_band->lowerSeries()->at(2).y() < gpu[2].y() && gpu[2].y() < gpu_band->upperSeries()->at(2).y());
    QVERIFY(y->max() >= gpu_band->upperSeries()->at(2).y());
    // The band has the colour of its line, translucent.
    auto* gpu_line = qobject_cast<QLineSeries*>(seriesFor(panel, kGpu));
    QVERIFY(gpu_line);
    QVERIFY(gpu_line->pointsVisible());
    QCOMPARE(gpu_band->brush().color().rgb(), gpu_line->pen().color().rgb());
    QVERIFY(gpu_band->brush().color().alpha() < 128);
  }

  void timeChartIsLogLog() {
    ChartPanel panel(ChartKind::Time);
    const auto ms = sessionData();
    panel.setMeasurements(ms);
    auto* x = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Horizontal).value(0));
    auto* y = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0));
    QVERIFY(x);
    QVERIFY(y);
    QVERIFY(x->min() > 0);
    QVERIFY(y->min() > 0);
    QVERIFY(y->labelFormat().contains("g"));  // %g-style: 0.25, 1, 16, not 2.500000e-01
    QVERIFY(y->minorTickCount() > 0);
    QVERIFY(!y->titleText().isEmpty() && y->titleText().contains("ms"));
    QVERIFY(x->titleText().contains("Problem size"));

    const auto gpu = panel.seriesPoints(kGpu);
    QCOMPARE(gpu.size(), 3);
    for (int i = 0; i < 3; ++i) {
      const auto& m = ms[size_t(2 * i)];
      QVERIFY(near(gpu[i].y(), m.stats.median / 1e6));  // milliseconds
      QVERIFY(y->min() < m.stats.min / 1e6);
      QVERIFY(y->max() > m.stats.max / 1e6);
    }
    // The slowest point: CPU at 1024 takes ~10 ms.
    QVERIFY(near(panel.seriesPoints(kCpu)[2].y(), flops(square(1024)) / 210 / 1e6));
  }

  void failedPointsAreMarkedNotPlotted() {
    for (ChartKind kind : {ChartKind::Gflops, ChartKind::Time}) {
      ChartPanel panel(kind);
      panel.setMeasurements(sessionData());
      QCOMPARE(panel.failedPointCount(), 1);
      const auto failed = panel.seriesPoints(kFailed);
      QCOMPARE(failed.size(), 1);
      QCOMPARE(failed[0].x(), 2048.0);
      // In a row at the bottom of the y range (within its lowest 5%, above the axis line so the marker is
      // not clipped), below every normal point, in its own red scatter series.
      auto* y = panel.chart()->axes(Qt::Vertical).value(0);
      double frac = 0;
      if (kind == ChartKind::Gflops) {
        auto* ya = qobject_cast<QValueAxis*>(y);
        frac = (failed[0].y() - ya->min()) / (ya->max() - ya->min());
      } else {
        auto* ya = qobject_cast<QLogValueAxis*>(y);
        frac = std::log(failed[0].y() / ya->min()) / std::log(ya->max() / ya->min());
      }
      QVERIFY2(frac > 0 && frac < 0.05, qPrintable(QString::number(frac)));
      if (kind == ChartKind::Time)
        for (const QString& name : {kGpu, kCpu})
          for (const QPointF& p : panel.seriesPoints(name)) QVERIFY(p.y() > failed[0].y());
      auto* scatter = qobject_cast<QScatterSeries*>(seriesFor(panel, kFailed));
      QVERIFY(scatter);
      QVERIFY(scatter->color().red() > 180 && scatter->color().green() < 80);
      // Never a normal point; the skipped 4096 point is nowhere.
      for (const QString& name : {kGpu, kCpu})
        for (const QPointF& p : panel.seriesPoints(name)) {
          QVERIFY(p.x() != 2048.0);
          QVERIFY(p.x() != 4096.0);
        }
    }
  }

  void unverifiedAndFailedStatusGoToFailedSeries() {
    ChartPanel panel(ChartKind::Gflops);
    auto ok = point("gemm.block_tiling", gpuParams(), square(512), 1e6);
    auto unverified = point("gemm.block_tiling", gpuParams(), square(1024), 1e6);
    unverified.verification = ks::Verification{};  // Skipped: no reference compared
    ks::Measurement crashed;
    crashed.item = {"gemm.block_tiling", gpuParams(), square(256)};
    crashed.status = ks::PointStatus::Failed;
    crashed.error = "VK_ERROR_DEVICE_LOST";
    ks::Measurement cancelled;
    cancelled.item = {"gemm.block_tiling", gpuParams(), square(128)};
    cancelled.status = ks::PointStatus::Cancelled;
    panel.setMeasurements({ok, unverified, crashed, cancelled});
    QCOMPARE(panel.failedPointCount(), 2);
    QCOMPARE(panel.seriesPoints(kGpu).size(), 1);
    QCOMPARE(panel.seriesPoints(kFailed).size(), 2);
    QCOMPARE(panel.seriesPoints(kFailed)[0].x(), 256.0);  // x order
    QCOMPARE(panel.seriesPoints(kFailed)[1].x(), 1024.0);
    // A series created after the failed one still leaves "failed / unverified" last in the legend.
    panel.addMeasurement(point("cpu.gemm.openblas", cpuParams(), square(512), 5e6));
    QCOMPARE(panel.seriesNames(), (QStringList{kGpu, kCpu, kFailed}));
    QCOMPARE(panel.seriesPoints(kFailed).size(), 2);
  }

  void nonSquareSizeUsesCubeRoot() {
    ChartPanel panel(ChartKind::Time);
    const ks::ProblemSize s{512, 1024, 2048};
    panel.addMeasurement(point("gemm.block_tiling", gpuParams(), s, 2e6));
    const auto pts = panel.seriesPoints(kGpu);
    QCOMPARE(pts.size(), 1);
    QVERIFY(near(pts[0].x(), std::cbrt(512.0 * 1024.0 * 2048.0), 1e-12));
    QVERIFY(near(pts[0].x(), 1024.0, 1e-9));
    QVERIFY(near(pts[0].y(), 2.0));
  }

  void liveUpdatesRescaleAndKeepXOrder() {
    ChartPanel panel(ChartKind::Time);
    auto* x = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Horizontal).value(0));
    auto* y = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0));
    QVERIFY(x && y && x->min() > 0 && y->min() > 0);  // empty chart: still a valid log range
    panel.addMeasurement(point("gemm.block_tiling", gpuParams(), square(1024), 3e6));
    QVERIFY(x->min() < 1024 && x->max() > 1024);
    QVERIFY(y->min() > 0 && y->min() < 3.0 * 0.9 && y->max() > 3.0 * 1.1);
    panel.addMeasurement(point("gemm.block_tiling", gpuParams(), square(128), 0.004e6));
    QVERIFY(x->min() < 128 && y->min() > 0 && y->min() < 0.004 * 0.9);
    panel.addMeasurement(point("gemm.block_tiling", gpuParams(), square(512), 0.5e6));
    const auto pts = panel.seriesPoints(kGpu);
    QCOMPARE(pts.size(), 3);
    QCOMPARE(pts[0].x(), 128.0);
    QCOMPARE(pts[1].x(), 512.0);
    QCOMPARE(pts[2].x(), 1024.0);
    // A re-measured point replaces the old one.
    panel.addMeasurement(point("gemm.block_tiling", gpuParams(), square(512), 0.25e6));
    QCOMPARE(panel.seriesPoints(kGpu).size(), 3);
    QVERIFY(near(panel.seriesPoints(kGpu)[1].y(), 0.25));

    panel.clear();
    QVERIFY(panel.seriesNames().isEmpty());
    QCOMPARE(panel.failedPointCount(), 0);
    panel.setMeasurements(sessionData());
    panel.setMeasurements(sessionData());  // replaces, no duplicates
    QCOMPARE(panel.seriesNames().size(), 3);
    QCOMPARE(panel.seriesPoints(kCpu).size(), 3);
    QCOMPARE(panel.failedPointCount(), 1);
  }

  void legendClickTogglesSeriesAndBand() {
    ChartPanel panel(ChartKind::Gflops);
    QVERIFY(showPanel(panel));
    panel.setMeasurements(sessionData());
    QCoreApplication::processEvents();
    QLegendMarker* mk = markerFor(panel, kCpu);
    QVERIFY(mk);
    QVERIFY(mk->isVisible());
    QAbstractSeries* line = mk->series();
    QAreaSeries* band = bands(panel).value(1);
    QVERIFY(band && band->name().startsWith(kCpu));
    QVERIFY(line->isVisible() && band->isVisible());
    const QColor label_before = mk->labelBrush().color();

    emit mk->clicked();
    QCoreApplication::processEvents();
    QVERIFY(!line->isVisible());
    QVERIFY(!band->isVisible());
    QVERIFY(mk->isVisible());  // stays in the legend to be clicked back on
    QVERIFY(mk->labelBrush().color() != label_before);
    for (QLegendMarker* b : panel.chart()->legend()->markers(band)) QVERIFY(!b->isVisible());

    emit mk->clicked();
    QCoreApplication::processEvents();
    QVERIFY(mk->isVisible());
    QVERIFY(line->isVisible());
    QVERIFY(band->isVisible());
    QCOMPARE(mk->labelBrush().color(), label_before);
    for (QLegendMarker* b : panel.chart()->legend()->markers(band)) QVERIFY(!b->isVisible());

    // The failed series toggles too.
    QLegendMarker* fm = markerFor(panel, kFailed);
    QVERIFY(fm);
    emit fm->clicked();
    QVERIFY(!seriesFor(panel, kFailed)->isVisible());
    emit fm->clicked();
    QVERIFY(seriesFor(panel, kFailed)->isVisible());
  }

  void legendDoesNotCoverData() {
    ChartPanel panel(ChartKind::Gflops);
    panel.setMeasurements(sessionData());
    const auto a = panel.chart()->legend()->alignment();
    QVERIFY(a == Qt::AlignBottom || a == Qt::AlignRight);
    QVERIFY(panel.chart()->legend()->isAttachedToChart());
    QVERIFY(!panel.chart()->title().isEmpty());
    QVERIFY(panel.view()->renderHints().testFlag(QPainter::Antialiasing));
  }

  void toolTipText() {
    const auto ms = sessionData();
    const QString t = ks::ui::measurementToolTip(ms[4]);
    QVERIFY(t.contains("gemm.block_tiling"));
    QVERIFY(t.contains("16x16 BK=4 BN=4"));
    QVERIFY(t.contains("1024x1024x1024"));
    QVERIFY(t.contains("median"));
    QVERIFY(t.contains("min"));
    QVERIFY(t.contains("max"));
    QVERIFY(t.contains("GFLOPS 1450.0"));
    QVERIFY(t.contains("CV"));
    QVERIFY(t.contains("verification: ok"));
    QVERIFY(t.contains("rel error 2e-07"));
    const QString bad = ks::ui::measurementToolTip(ms[6]);
    QVERIFY(bad.contains("verification: failed"));
    QVERIFY(bad.contains("rel error 0.71"));
  }

  void hoverShowsToolTip() {
    ChartPanel panel(ChartKind::Gflops);
    QVERIFY(showPanel(panel));
    panel.setMeasurements(sessionData());
    QCoreApplication::processEvents();
    auto* line = qobject_cast<QLineSeries*>(seriesFor(panel, kGpu));
    QVERIFY(line);
    emit line->hovered(line->at(1), true);
    QTRY_VERIFY(QToolTip::isVisible());
    QVERIFY(QToolTip::text().contains("512x512x512"));
    QVERIFY(QToolTip::text().contains("GFLOPS 620.0"));
    emit line->hovered(line->at(1), false);
    QTRY_VERIFY(!QToolTip::isVisible());
  }

  void exportPngIsCrispAndNotBlank() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ChartPanel panel(ChartKind::Gflops);
    panel.resize(700, 450);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setMeasurements(sessionData());
    const QSize view_before = panel.view()->size();
    const QRectF chart_before = panel.chart()->geometry();

    const QString path = dir.filePath("chart.png");
    QCOMPARE(panel.exportPng(path, QSize(800, 500), 2.0), QString());
    QImage img(path);
    QVERIFY(!img.isNull());
    QCOMPARE(img.size(), QSize(1600, 1000));
    QSet<QRgb> colours;
    qint64 non_white = 0;
    for (int y = 0; y < img.height(); y += 2)
      for (int x = 0; x < img.width(); x += 2) {
        const QRgb c = img.pixel(x, y);
        colours.insert(c);
        if (qRed(c) < 245 || qGreen(c) < 245 || qBlue(c) < 245) ++non_white;
      }
    QVERIFY2(colours.size() > 50, qPrintable(QString::number(colours.size())));
    QVERIFY2(non_white > 20000, qPrintable(QString::number(non_white)));
    QVERIFY2(non_white < 400000, qPrintable(QString::number(non_white)));  // white background
    QCOMPARE(QColor(img.pixel(2, 2)), QColor(Qt::white));
    // Something red (the failed marker) and the series colours are drawn.
    bool red = false;
    for (int y = 0; y < img.height() && !red; ++y)
      for (int x = 0; x < img.width() && !red; ++x) {
        const QColor c(img.pixel(x, y));
        red = c.red() > 190 && c.green() < 70 && c.blue() < 70;
      }
    QVERIFY(red);
    // The on-screen view is untouched.
    QCOMPARE(panel.view()->size(), view_before);
    QCOMPARE(panel.chart()->geometry(), chart_before);

    // Scale 1 gives the logical size.
    QCOMPARE(panel.exportPng(dir.filePath("small.png"), QSize(640, 400), 1.0), QString());
    QCOMPARE(QImage(dir.filePath("small.png")).size(), QSize(640, 400));
  }

  void exportSvgWritesSvg() {
    QTemporaryDir dir;
    ChartPanel panel(ChartKind::Time);
    panel.setMeasurements(sessionData());
    const QString path = dir.filePath("chart.svg");
    QCOMPARE(panel.exportSvg(path, QSize(800, 500)), QString());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray svg = f.readAll();
    QVERIFY(svg.contains("<svg"));
    QVERIFY(svg.contains("viewBox=\"0 0 800 500\""));
    QVERIFY(svg.contains("Median time"));
    QVERIFY(svg.size() > 5000);
  }

  void exportErrorsAreReported() {
    ChartPanel panel(ChartKind::Gflops);
    panel.setMeasurements(sessionData());
    QTemporaryDir dir;
    QVERIFY(!panel.exportPng("/nonexistent-kernelscope-dir/chart.png", QSize(800, 500), 2).isEmpty());
    QVERIFY(!panel.exportPng(dir.path(), QSize(800, 500), 2).isEmpty());  // a folder
    QVERIFY(!panel.exportPng(dir.filePath("a.png"), QSize(0, 500), 2).isEmpty());
    QVERIFY(!panel.exportPng(dir.filePath("a.png"), QSize(800, 500), 0).isEmpty());
    QVERIFY(!panel.exportSvg("/nonexistent-kernelscope-dir/chart.svg", QSize(800, 500)).isEmpty());
    QVERIFY(!QFile::exists(dir.filePath("a.png")));
  }

  // --- metrics for bandwidth-bound kernels ---

  void sizeAxisValueForEveryFamily() {
    QCOMPARE(ks::ui::sizeAxisValue(dotSize(1 << 20)), double(1 << 20));  // dot: N
    QCOMPARE(ks::ui::sizeAxisValue(dotSize(1000)), 1000.0);
    QVERIFY(near(ks::ui::sizeAxisValue({1024, 4096, 1}), 2048.0, 1e-12));  // gemv: sqrt(M*N)
    QVERIFY(near(ks::ui::sizeAxisValue({1000, 3000, 1}), std::sqrt(3e6), 1e-12));
    QCOMPARE(ks::ui::sizeAxisValue({4096, 4096, 1}), 4096.0);
    QCOMPARE(ks::ui::sizeAxisValue(square(2048)), 2048.0);                   // gemm
    QVERIFY(near(ks::ui::sizeAxisValue({512, 1024, 2048}), 1024.0, 1e-12));  // cbrt(M*N*K)
  }

  void constructorsAndKindMapping() {
    ChartPanel a(ChartKind::Gflops), b(ChartKind::Time), c(Metric::Gbps), d(Metric::RelativeTime);
    QCOMPARE(a.metric(), Metric::Gflops);
    QCOMPARE(b.metric(), Metric::Time);
    QCOMPARE(c.metric(), Metric::Gbps);
    QCOMPARE(c.kind(), ChartKind::Gflops);
    QCOMPARE(b.kind(), ChartKind::Time);
    a.setMetric(Metric::Time);
    QCOMPARE(a.kind(), ChartKind::Time);
    QVERIFY(!c.logY());
    QVERIFY(d.baseline().isEmpty());
  }

  void gbpsValuesArePlotted() {
    ChartPanel panel(Metric::Gbps);
    const auto ms = dotData();
    panel.setMeasurements(ms);
    const QString simd = nameOf(kDotSimd, wgParams(256));
    QCOMPARE(panel.seriesNames(), (QStringList{nameOf(kDotCpu, {}), nameOf(kDotTwoPass, wgParams(256)), simd,
                                               nameOf(kDotAtomic, wgParams(256)), kFailed}));
    const auto pts = panel.seriesPoints(simd);
    QCOMPARE(pts.size(), 7);
    for (const QPointF& p : pts) {
      const auto& m = findPoint(ms, kDotSimd, uint64_t(p.x()));
      QCOMPARE(p.x(), double(m.item.size.n));  // x of a dot product is its N
      QVERIFY2(near(p.y(), m.gbps), qPrintable(QString::number(p.y())));
      QVERIFY(near(p.y(), dotBytes(m.item.size.n) / m.stats.median));
    }
    QVERIFY(pts.last().y() > 1000 && pts.last().y() < 1400);  // approaches its 1400 GB/s at 2^24

    auto* y = qobject_cast<QValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0));
    QVERIFY(y);
    QCOMPARE(y->titleText(), QStringLiteral("GB/s (each input read once, output written once)"));
    QCOMPARE(y->min(), 0.0);
    auto* x = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(x && x->base() == 2.0);
    QVERIFY(x->titleText().contains("vector length"));
    QVERIFY(panel.chart()->title().contains("Bandwidth"));

    // The band spans bytes/max_ns .. bytes/min_ns and the axis holds it.
    const auto& m = findPoint(ms, kDotSimd, 1 << 24);
    QAreaSeries* band = nullptr;
    for (QAreaSeries* b : bands(panel))
      if (b->name().startsWith(simd)) band = b;
    QVERIFY(band);
    QVERIFY(near(band->upperSeries()->at(6).y(), dotBytes(1 << 24) / m.stats.min));
    QVERIFY(near(band->lowerSeries()->at(6).y(), dotBytes(1 << 24) / m.stats.max));
    QVERIFY(y->max() >= band->upperSeries()->at(6).y());

    // A point without GB/s (a session from before it was recorded) is left out, not drawn at 0.
    auto old = bwPoint(kDotSimd, wgParams(256), dotSize(1 << 26), 60e6, dotBytes(1 << 26));
    old.gbps = 0;
    panel.addMeasurement(old);
    QCOMPARE(panel.seriesPoints(simd).size(), 7);
    panel.setMetric(Metric::Gflops);
    QCOMPARE(panel.seriesPoints(simd).size(), 8);  // it has GFLOPS
  }

  void xLabelsArePowersOfTwoThatFit() {
    auto labelAxis = [](ChartPanel& panel) -> QCategoryAxis* {
      for (QAbstractAxis* a : panel.chart()->axes(Qt::Horizontal))
        if (auto* c = qobject_cast<QCategoryAxis*>(a)) return c;
      return nullptr;
    };
    // GEMM sizes: plain numbers under every power of two, as before.
    ChartPanel gemm(ChartKind::Gflops);
    gemm.setMeasurements(sessionData());
    QVERIFY(showPanel(gemm));
    QCategoryAxis* labels = labelAxis(gemm);
    QVERIFY(labels);
    QCOMPARE(labels->categoriesLabels(), (QStringList{"256", "512", "1024", "2048"}));
    QCOMPARE(labels->endValue("1024"), 10.0);
    auto* x = qobject_cast<QLogValueAxis*>(gemm.chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(near(labels->min(), std::log2(x->min())) && near(labels->max(), std::log2(x->max())));
    QVERIFY(labels->titleText().contains("Problem size"));

    // 2^12 .. 2^24 elements: 4K .. 16M, thinned out to every 2nd, 3rd... power when narrow.
    ChartPanel dot(Metric::Gbps);
    dot.setMeasurements(dotData());
    QVERIFY(showPanel(dot));
    const QStringList all{"4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M", "2M", "4M", "8M", "16M"};
    auto check = [&](int width, int* count) {
      dot.resize(width, 620);
      QCoreApplication::processEvents();
      QCategoryAxis* l = labelAxis(dot);
      const QStringList got = l->categoriesLabels();
      QVERIFY2(got.size() >= 3, qPrintable(got.join(' ')));
      int step = 0;
      for (int i = 0; i < got.size(); ++i) {
        QVERIFY2(all.contains(got[i]), qPrintable(got[i]));
        QCOMPARE(l->endValue(got[i]), 12.0 + all.indexOf(got[i]));  // at log2 of its value
        if (i > 0) {
          const int s = all.indexOf(got[i]) - all.indexOf(got[i - 1]);
          QVERIFY(step == 0 || s == step);  // evenly spaced
          step = s;
        }
      }
      // No two labels closer than the widest label.
      const QFontMetricsF fm(l->labelsFont());
      double widest = 0;
      for (const QString& t : got) widest = std::max(widest, fm.horizontalAdvance(t));
      const double px_per_octave = dot.chart()->plotArea().width() / (l->max() - l->min());
      QVERIFY2(step * px_per_octave > widest, qPrintable(QStringLiteral("%1 %2").arg(step).arg(px_per_octave)));
      *count = int(got.size());
    };
    int wide = 0, narrow = 0;
    check(1400, &wide);
    QVERIFY(!QTest::currentTestFailed());
    check(480, &narrow);
    QVERIFY(!QTest::currentTestFailed());
    QVERIFY2(narrow < wide, qPrintable(QStringLiteral("%1 vs %2").arg(narrow).arg(wide)));
  }

  void gemvAndMixedSizesOnTheXAxis() {
    ChartPanel panel(Metric::Gbps);
    ks::Params p = wgParams(64);
    panel.addMeasurement(bwPoint("gemv.rows", p, {1024, 4096, 1}, 40e3, 4.0 * (1024 * 4096 + 4096 + 1024)));
    panel.addMeasurement(bwPoint("gemv.rows", p, {4096, 4096, 1}, 120e3, 4.0 * (4096 * 4096 + 2 * 4096)));
    const auto pts = panel.seriesPoints(ks::ui::seriesName({"gemv.rows", p, {1024, 4096, 1}}));
    QCOMPARE(pts.size(), 2);
    QVERIFY(near(pts[0].x(), 2048.0, 1e-12));
    QCOMPARE(pts[1].x(), 4096.0);
    auto* x = panel.chart()->axes(Qt::Horizontal).value(0);
    QVERIFY2(x->titleText().contains(QString::fromUtf8("\u221a(M\u00b7N)")), qPrintable(x->titleText()));
    // Dot and gemm points join: the title explains each family present, nothing else.
    panel.addMeasurement(bwPoint(kDotSimd, wgParams(256), dotSize(1 << 20), 20e3, dotBytes(1 << 20)));
    panel.addMeasurement(point("gemm.block_tiling", gpuParams(), square(512), 1e6));
    QVERIFY(x->titleText().contains("N for dot"));
    QVERIFY(x->titleText().contains("gemv"));
    QVERIFY(x->titleText().contains("gemm"));
    // The tool tip of a GEMV point gives its x; a dot product's is its N, not repeated.
    QVERIFY(ks::ui::measurementToolTip(bwPoint("gemv.rows", p, {1024, 4096, 1}, 40e3, 1e6)).contains("x = 2048.0"));
    QVERIFY(!ks::ui::measurementToolTip(bwPoint(kDotSimd, p, dotSize(4096), 4e3, 1e6)).contains("x = "));
  }

  void relativeTimeIsRatioOfMedians() {
    ChartPanel panel(Metric::RelativeTime);
    const auto ms = dotData();
    panel.setMeasurements(ms);
    const QString base = nameOf(kDotTwoPass, wgParams(256));
    panel.setBaseline(base);
    QCOMPARE(panel.baseline(), base);

    // The baseline has trustworthy points at 2^12..2^18 and 2^22 (2^20 failed, 2^24 not measured).
    const QList<double> base_sizes{1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 22};
    const auto self = panel.seriesPoints(base);
    QCOMPARE(self.size(), base_sizes.size());
    for (int i = 0; i < self.size(); ++i) {
      QCOMPARE(self[i].x(), base_sizes[i]);
      QCOMPARE(self[i].y(), 1.0);
    }
    for (const std::string& k : {kDotCpu, kDotSimd, kDotAtomic}) {
      const QString name = nameOf(k, k == kDotCpu ? ks::Params{} : wgParams(256));
      const auto pts = panel.seriesPoints(name);
      QCOMPARE(pts.size(), k == kDotAtomic ? 4 : 5);  // the atomic kernel also lacks 2^16
      for (const QPointF& p : pts) {
        QVERIFY2(base_sizes.contains(p.x()), qPrintable(QString::number(p.x())));
        const uint64_t n = uint64_t(p.x());
        const double want = findPoint(ms, k, n).stats.median / findPoint(ms, kDotTwoPass, n).stats.median;
        QVERIFY2(near(p.y(), want),
                 qPrintable(QStringLiteral("%1 at %2: %3 vs %4").arg(name).arg(n).arg(p.y()).arg(want)));
      }
    }
    // The CPU is 50x faster than the GPU at 4096 elements and 30x slower at 4M.
    const auto cpu = panel.seriesPoints(nameOf(kDotCpu, {}));
    QVERIFY(cpu.first().y() < 0.1);
    QVERIFY(cpu.last().y() > 10);

    // Log-lin: linear y from 0, log2 x; titles name the baseline.
    auto* y = qobject_cast<QValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0));
    auto* x = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(y && x);
    QCOMPARE(x->base(), 2.0);
    QCOMPARE(y->min(), 0.0);
    QVERIFY(y->max() >= cpu.last().y());
    QCOMPARE(y->titleText(), QStringLiteral("time relative to ") + base);
    QVERIFY(panel.chart()->title().contains(base));

    // A dashed reference line at 1 across the whole x range, not in the legend.
    QLineSeries* ref = referenceLine(panel);
    QVERIFY(ref);
    QCOMPARE(ref->count(), 2);
    QCOMPARE(ref->at(0).y(), 1.0);
    QCOMPARE(ref->at(1).y(), 1.0);
    QCOMPARE(ref->at(0).x(), x->min());
    QCOMPARE(ref->at(1).x(), x->max());
    QVERIFY(ref->pen().style() != Qt::SolidLine);
    QVERIFY(ref->isVisible());
    QVERIFY(showPanel(panel));
    for (QLegendMarker* mk : panel.chart()->legend()->markers(ref)) QVERIFY(!mk->isVisible());
    QCOMPARE(panel.seriesNames().size(), 5);  // four kernels + failed

    // Another baseline: its own points become 1, the old baseline's become their inverse ratio.
    const QString simd = nameOf(kDotSimd, wgParams(256));
    panel.setBaseline(simd);
    for (const QPointF& p : panel.seriesPoints(simd)) QCOMPARE(p.y(), 1.0);
    QCOMPARE(panel.seriesPoints(simd).size(), 7);
    const auto two_pass = panel.seriesPoints(base);
    QCOMPARE(two_pass.size(), 5);
    QVERIFY(near(two_pass[0].y(), dotTimeNs(kDotTwoPass, 4096) / dotTimeNs(kDotSimd, 4096), 1e-9));
    QCOMPARE(panel.seriesPoints(nameOf(kDotAtomic, wgParams(256))).size(), 6);
  }

  void relativeTimeWithoutBaseline() {
    ChartPanel panel(Metric::RelativeTime);
    panel.setMeasurements(dotData());
    QVERIFY(panel.chart()->title().contains("choose a baseline series"));
    QCOMPARE(panel.seriesNames().size(), 5);  // the legend still lists what can be chosen
    for (const QString& name : panel.seriesNames())
      if (name != kFailed) QVERIFY(panel.seriesPoints(name).isEmpty());
    QVERIFY(!referenceLine(panel));
    QCOMPARE(panel.failedPointCount(), 1);
    QVERIFY(panel.seriesPoints(kFailed).isEmpty());  // nothing drawn, failed points neither
    // x still spans the measured sizes, ready for the points once a baseline is chosen.
    auto* x = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(x->min() < 4096 && x->min() > 2048 && x->max() > (1 << 24) && x->max() < (1 << 25));
    // A name that is not (yet) a series: no points either, but the reference line and the title.
    panel.setBaseline("dot.not_run_yet 64x1");
    QVERIFY(referenceLine(panel));
    QVERIFY(panel.chart()->title().contains("dot.not_run_yet"));
    for (const QString& name : panel.seriesNames())
      if (name != kFailed) QVERIFY(panel.seriesPoints(name).isEmpty());
    panel.setBaseline(QString());
    QVERIFY(panel.chart()->title().contains("choose a baseline series"));
  }

  void relativeTimeUpdatesLive() {
    ChartPanel panel(Metric::RelativeTime);
    const QString base = nameOf(kDotCpu, {});
    const QString simd = nameOf(kDotSimd, wgParams(256));
    panel.setBaseline(base);  // chosen before any data arrives
    panel.addMeasurement(bwPoint(kDotSimd, wgParams(256), dotSize(4096), 12e3, dotBytes(4096)));
    QCOMPARE(panel.seriesPoints(simd).size(), 0);  // no baseline point yet
    panel.addMeasurement(bwPoint(kDotCpu, {}, dotSize(4096), 3e3, dotBytes(4096)));
    QCOMPARE(panel.seriesPoints(simd).size(), 1);
    QVERIFY(near(panel.seriesPoints(simd)[0].y(), 4.0));
    QCOMPARE(panel.seriesPoints(base)[0].y(), 1.0);
    // The baseline re-measured: the ratios follow.
    panel.addMeasurement(bwPoint(kDotCpu, {}, dotSize(4096), 6e3, dotBytes(4096)));
    QVERIFY(near(panel.seriesPoints(simd)[0].y(), 2.0));
    // clear() keeps the metric and the baseline.
    panel.clear();
    QCOMPARE(panel.metric(), Metric::RelativeTime);
    QCOMPARE(panel.baseline(), base);
  }

  void metricSwitchKeepsSeriesAndVisibility() {
    ChartPanel panel(Metric::Gflops);
    QVERIFY(showPanel(panel));
    panel.setMeasurements(dotData());
    QCoreApplication::processEvents();
    const QStringList names = panel.seriesNames();
    QCOMPARE(names.size(), 5);
    const QString cpu = nameOf(kDotCpu, {});
    emit markerFor(panel, cpu)->clicked();  // hide the CPU series
    emit markerFor(panel, kFailed)->clicked();
    QVERIFY(!seriesFor(panel, cpu)->isVisible());
    panel.setBaseline(nameOf(kDotSimd, wgParams(256)));

    QPointer<QChart> old = panel.chart();
    const struct {
      Metric metric;
      QString y_title;
    } steps[] = {{Metric::Gbps, "GB/s"},
                 {Metric::Time, "Median time (ms)"},
                 {Metric::RelativeTime, "time relative to"},
                 {Metric::Gflops, "GFLOPS"}};
    for (const auto& step : steps) {
      panel.setMetric(step.metric);
      QCOMPARE(panel.metric(), step.metric);
      QCoreApplication::processEvents();
      QVERIFY(old.isNull());  // the replaced chart is deleted, not leaked
      old = panel.chart();
      QCOMPARE(panel.seriesNames(), names);
      QVERIFY2(panel.chart()->axes(Qt::Vertical).value(0)->titleText().startsWith(step.y_title),
               qPrintable(panel.chart()->axes(Qt::Vertical).value(0)->titleText()));
      QVERIFY(!seriesFor(panel, cpu)->isVisible());  // still hidden
      QVERIFY(!seriesFor(panel, kFailed)->isVisible());
      QLegendMarker* mk = markerFor(panel, cpu);
      QVERIFY(mk && mk->isVisible());  // dimmed in the legend, to be clicked back on
      QVERIFY(seriesFor(panel, names[1])->isVisible());
      QVERIFY(!panel.seriesPoints(names[1]).isEmpty());
      // Clicking the new chart's legend still toggles.
      emit markerFor(panel, names[1])->clicked();
      QVERIFY(!seriesFor(panel, names[1])->isVisible());
      emit markerFor(panel, names[1])->clicked();
      QVERIFY(seriesFor(panel, names[1])->isVisible());
    }
    emit markerFor(panel, cpu)->clicked();
    QVERIFY(seriesFor(panel, cpu)->isVisible());
  }

  void logYForDifferentMagnitudes() {
    ChartPanel panel(Metric::Gflops);
    const auto ms = magnitudeData();
    panel.setMeasurements(ms);
    QVERIFY(qobject_cast<QValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0)));
    const QStringList names = panel.seriesNames();
    panel.setLogY(true);
    QVERIFY(panel.logY());
    auto* y = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0));
    QVERIFY(y);
    QVERIFY(y->min() > 0);
    QVERIFY(y->labelFormat().contains("g"));
    QCOMPARE(panel.seriesNames(), names);
    // Every point and band fits: from the naive kernel at 0.3 to OpenBLAS at 205 (band above it).
    double lo = 1e300, hi = 0;
    for (QAreaSeries* b : bands(panel))
      for (int i = 0; i < b->lowerSeries()->count(); ++i) {
        lo = std::min(lo, b->lowerSeries()->at(i).y());
        hi = std::max(hi, b->upperSeries()->at(i).y());
      }
    QVERIFY(lo > 0.25 && hi > 205);
    QVERIFY2(y->min() < lo && y->max() > hi, qPrintable(QStringLiteral("%1 .. %2").arg(y->min()).arg(y->max())));
    QVERIFY(y->max() < 10 * hi);  // not absurdly loose
    const auto naive = panel.seriesPoints(names[0]);
    QVERIFY(near(naive[0].y(), findPoint(ms, "gemm.naive", 128).gflops));
    QVERIFY(panel.chart()->title().contains("log y"));

    // A failed point sits in the bottom row, above the axis minimum.
    auto bad = point("gemm.naive", ms[0].item.params, square(2048), 1e6);
    bad.verification = ks::judge(0.5, 1.0, 1e-5, "vs cpu.gemm.openblas");
    panel.addMeasurement(bad);
    y = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0));
    const double fy = panel.seriesPoints(kFailed).value(0).y();
    const double frac = std::log(fy / y->min()) / std::log(y->max() / y->min());
    QVERIFY2(frac > 0 && frac < 0.05, qPrintable(QString::number(frac)));

    // GB/s and relative time take log y too; Time is log-log either way.
    panel.setMetric(Metric::Gbps);
    y = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0));
    QVERIFY(y && y->min() > 0);
    panel.setMetric(Metric::RelativeTime);
    panel.setBaseline(kCpu);
    y = qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0));
    QVERIFY(y && y->min() > 0 && y->min() < 1 && y->max() > 1);
    QVERIFY(y->min() < panel.seriesPoints(kCpu)[0].y());
    QVERIFY(y->max() > panel.seriesPoints(names[0])[0].y());  // naive ~500x slower than OpenBLAS
    QVERIFY(referenceLine(panel));
    QVERIFY2(panel.chart()->title().endsWith("(lower is faster, log y)"), qPrintable(panel.chart()->title()));
    panel.setMetric(Metric::Time);
    QVERIFY(qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0)));
    panel.setLogY(false);
    QVERIFY(qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0)));
    panel.setMetric(Metric::Gflops);
    QVERIFY(qobject_cast<QValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0)));
    QVERIFY(!panel.chart()->title().contains("log"));
  }

  void logYLeavesOutZero() {
    ChartPanel panel(Metric::Gflops);
    auto zero = point("gemm.block_tiling", gpuParams(), square(256), 1e6);
    zero.gflops = 0;
    panel.setMeasurements({zero, point("gemm.block_tiling", gpuParams(), square(512), 1e6)});
    QCOMPARE(panel.seriesPoints(kGpu).size(), 2);
    panel.setLogY(true);
    QCOMPARE(panel.seriesPoints(kGpu).size(), 1);
    QVERIFY(qobject_cast<QLogValueAxis*>(panel.chart()->axes(Qt::Vertical).value(0))->min() > 0);
  }

  void toolTipHasBandwidth() {
    const auto ms = dotData();
    const auto& m = findPoint(ms, kDotSimd, 1 << 20);
    const QString t = ks::ui::measurementToolTip(m);
    QVERIFY2(t.contains(QStringLiteral("GB/s %1").arg(m.gbps, 0, 'f', 1)), qPrintable(t));
    QVERIFY(t.contains("1x1048576x1"));
  }

  void exportPngInEveryMetric() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ChartPanel panel(Metric::Gflops);
    panel.setMeasurements(dotData());
    panel.setBaseline(nameOf(kDotTwoPass, wgParams(256)));
    int n = 0;
    for (bool log : {false, true})
      for (Metric metric : {Metric::Gflops, Metric::Gbps, Metric::Time, Metric::RelativeTime}) {
        panel.setLogY(log);
        panel.setMetric(metric);
        const QString path = dir.filePath(QStringLiteral("chart%1.png").arg(n++));
        QCOMPARE(panel.exportPng(path, QSize(800, 500), 1.5), QString());
        QImage img(path);
        QCOMPARE(img.size(), QSize(1200, 750));
        qint64 non_white = 0;
        QSet<QRgb> colours;
        for (int y = 0; y < img.height(); y += 3)
          for (int x = 0; x < img.width(); x += 3) {
            const QRgb c = img.pixel(x, y);
            colours.insert(c);
            if (qRed(c) < 245 || qGreen(c) < 245 || qBlue(c) < 245) ++non_white;
          }
        QVERIFY2(non_white > 5000 && colours.size() > 50,
                 qPrintable(QStringLiteral("%1: %2 %3").arg(path).arg(non_white).arg(colours.size())));
        const QString svg = dir.filePath(QStringLiteral("chart%1.svg").arg(n));
        QCOMPARE(panel.exportSvg(svg, QSize(800, 500)), QString());
      }
    // The SVG of the relative chart carries its titles.
    QFile f(dir.filePath(QStringLiteral("chart%1.svg").arg(n)));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("relative to"));
  }

  // With KS_CHART_DUMP_DIR set, writes realistic charts for a human to look at.
  void dumpForInspection() {
    const QString out = qEnvironmentVariable("KS_CHART_DUMP_DIR");
    if (out.isEmpty()) QSKIP("KS_CHART_DUMP_DIR not set");
    for (ChartKind kind : {ChartKind::Gflops, ChartKind::Time}) {
      ChartPanel panel(kind);
      panel.setMeasurements(sessionData());
      const QString base = QDir(out).filePath(kind == ChartKind::Gflops ? "chart_gflops" : "chart_time");
      QCOMPARE(panel.exportPng(base + ".png", QSize(800, 500), 2), QString());
      QCOMPARE(panel.exportSvg(base + ".svg", QSize(800, 500)), QString());
    }
    ChartPanel dot(Metric::Gbps);
    dot.setMeasurements(dotData());
    QCOMPARE(dot.exportPng(QDir(out).filePath("chart_gbps.png"), QSize(800, 500), 2), QString());
    dot.setLogY(true);
    QCOMPARE(dot.exportPng(QDir(out).filePath("chart_gbps_logy.png"), QSize(800, 500), 2), QString());
    dot.setLogY(false);
    dot.setMetric(Metric::RelativeTime);
    QCOMPARE(dot.exportPng(QDir(out).filePath("chart_relative_none.png"), QSize(800, 500), 2), QString());
    dot.setBaseline(nameOf(kDotTwoPass, wgParams(256)));
    QCOMPARE(dot.exportPng(QDir(out).filePath("chart_relative.png"), QSize(800, 500), 2), QString());
    dot.setBaseline(nameOf(kDotCpu, {}));
    dot.setLogY(true);
    QCOMPARE(dot.exportPng(QDir(out).filePath("chart_relative_logy.png"), QSize(800, 500), 2), QString());
    ChartPanel mag(Metric::Gflops);
    mag.setMeasurements(magnitudeData());
    QCOMPARE(mag.exportPng(QDir(out).filePath("chart_magnitudes_linear.png"), QSize(800, 500), 2), QString());
    mag.setLogY(true);
    QCOMPARE(mag.exportPng(QDir(out).filePath("chart_magnitudes_logy.png"), QSize(800, 500), 2), QString());
    // As in the app at 1280x800 (the chart tab is about 875x725, the legend on the right).
    QCOMPARE(mag.exportPng(QDir(out).filePath("chart_magnitudes_app.png"), QSize(875, 725), 1), QString());
    dot.setLogY(false);
    dot.setBaseline(nameOf(kDotTwoPass, wgParams(256)));
    QCOMPARE(dot.exportPng(QDir(out).filePath("chart_relative_app.png"), QSize(875, 725), 1), QString());
    dot.setMetric(Metric::Gbps);
    QCOMPARE(dot.exportPng(QDir(out).filePath("chart_gbps_small.png"), QSize(520, 380), 1), QString());
    // All three families on one time chart: the longest x title.
    auto mixed = dotData();
    for (uint64_t n : {1024, 2048, 4096}) {
      const double bytes = 4.0 * (double(n) * n + 2.0 * n);
      mixed.push_back(bwPoint("gemv.row_per_thread", wgParams(64), {n, n, 1}, 8000 + bytes / 700, bytes));
      mixed.push_back(bwPoint("gemv.row_per_thread", wgParams(64), {n, 4 * n, 1}, 8000 + 4 * bytes / 700, 4 * bytes));
    }
    for (const auto& m : sessionData()) mixed.push_back(m);
    ChartPanel all(Metric::Time);
    all.setMeasurements(mixed);
    QCOMPARE(all.exportPng(QDir(out).filePath("chart_mixed_app.png"), QSize(875, 725), 1), QString());
  }
};

QTEST_MAIN(TestChartPanel)
#include "test_chart_panel.moc"
