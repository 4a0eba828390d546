// ChartPanel: series, points, failed markers, log axes, legend toggling, export.
#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
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
  }
};

QTEST_MAIN(TestChartPanel)
#include "test_chart_panel.moc"
