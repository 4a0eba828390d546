// RooflineChart: points at the kernels' intensities, ceilings from measured peaks, log axes, the
// note without peaks, tooltips and PNG export.
#include <QChart>
#include <QImage>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "engine/bench/complexity.h"
#include "engine/bench/roofline.h"
#include "tests/synthetic_session.h"
#include "ui/roofline_chart.h"

using ks::testing::failedPoint;
using ks::testing::kernelById;
using ks::testing::okPoint;
using ks::testing::planItem;
using ks::testing::samplesAround;
using ks::ui::RooflineChart;

namespace {

ks::DevicePeaks peaks(bool fp16 = true, bool coopmat = true) {
  ks::DevicePeaks p;
  p.measured_at = "2026-11-21T00:00:00Z";
  p.results = {{"fp32_fma", "fp32 FMA", "GFLOP/s", 51000, 0.01, 15, ""},
               {"fp16_fma", "fp16 FMA", "GFLOP/s", fp16 ? 95300.0 : 0.0, 0.01, 15, fp16 ? "" : "no fp16"},
               {"coopmat_16x8x16_f16_f32", "coopmat", "GFLOP/s", coopmat ? 600000.0 : 0.0, 0.01, 15, ""},
               {"coopmat_16x8x16_f16_f16", "coopmat", "GFLOP/s", 700000, 0.01, 15, ""},  // fp16 accumulation: not drawn
               {"copy_shader", "copy", "GB/s", 3000, 0.01, 15, ""},
               {"copy_buffer", "copy", "GB/s", 4000, 0.01, 15, ""}};
  return p;
}

// An ok point of `kernel` at size n running at `gflops`.
ks::Measurement at(const std::string& kernel, uint64_t n, double gflops) {
  const ks::PlanItem item = planItem(kernel, n);
  const double median = kernelById(kernel).flops(item.size) / gflops;
  return okPoint(item, samplesAround(median, 5));
}

QString nameOf(const ks::Measurement& m) { return QString::fromStdString(ks::seriesKey(m.item)); }

const QString kMemory = QStringLiteral("memory 4 TB/s");
const QString kFp32 = QStringLiteral("fp32 FMA 51 TFLOP/s");
const QString kFp16 = QStringLiteral("fp16 FMA 95.3 TFLOP/s");
const QString kCoopmat = QStringLiteral("coopmat fp16→fp32 600 TFLOP/s");
const QString kCpuMemory = QStringLiteral("CPU: memory 25 GB/s");
const QString kCpuFp32 = QStringLiteral("CPU: fp32 FMA 200 GFLOP/s");

// The host CPU's peaks beside the device's: fp32 FMA 200 GFLOP/s, STREAM triad 25 (copy 20) GB/s.
ks::DevicePeaks withCpu(ks::DevicePeaks p) {
  p.results.push_back({"cpu_fp32_fma", "host CPU fp32 FMA", "GFLOP/s", 200, 0.01, 9, "AVX-512F, 2 threads"});
  p.results.push_back({"cpu_triad", "host CPU STREAM triad", "GB/s", 25, 0.01, 9, ""});
  p.results.push_back({"cpu_copy", "host CPU STREAM copy", "GB/s", 20, 0.01, 9, ""});
  return p;
}

struct Data {
  ks::Measurement gemm = at("gemm.tile2d", 1024, 20000);
  ks::Measurement gemm_big = at("gemm.tile2d", 4096, 38000);
  ks::Measurement dot = at("dot.two_pass_shared", 1 << 22, 700);
  ks::Measurement cpu = at("cpu.gemm.openblas", 512, 150);
  std::vector<ks::Measurement> all() const {
    auto failed = failedPoint(planItem("gemm.tile2d", 2048), "out of memory");
    auto wrong = at("gemm.tile2d", 512, 90000);  // fast but wrong
    wrong.verification = ks::judge(0.7, 3.0, 1e-4, "vs cpu.gemm.openblas");
    return {gemm, dot, failed, cpu, wrong, gemm_big};
  }
};

bool near(double a, double b, double rel = 1e-9) { return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)); }

}  // namespace

class TestRooflineChart : public QObject {
  Q_OBJECT

 private slots:
  void pointsLandAtTheirIntensity() {
    const Data d;
    const ks::DevicePeaks p = peaks();
    RooflineChart chart;
    chart.setData(d.all(), &p);

    // gemm n^3: 2 n^3 FLOP over 3 n^2 floats = n / 6 FLOP/byte; one series for both sizes, in x order.
    const auto gemm = chart.seriesPoints(nameOf(d.gemm));
    QCOMPARE(gemm.size(), 2);  // the failed and the unverified points are not drawn
    QVERIFY(near(gemm[0].x(), 1024.0 / 6));
    QVERIFY(near(gemm[0].y(), d.gemm.gflops));
    QVERIFY(near(gemm[0].y(), 20000, 1e-6));
    QVERIFY(near(gemm[1].x(), 4096.0 / 6));
    QVERIFY(near(gemm[1].y(), 38000, 1e-6));
    // dot: 2N FLOP over 2N floats read and one written: about 1/4.
    const auto dot = chart.seriesPoints(nameOf(d.dot));
    QCOMPARE(dot.size(), 1);
    QVERIFY2(std::abs(dot[0].x() - 0.25) < 1e-5, qPrintable(QString::number(dot[0].x())));
    QVERIFY(near(dot[0].y(), 700, 1e-6));
    // The CPU point is drawn too, as a triangle; GPU points are circles.
    const auto cpu = chart.seriesPoints(nameOf(d.cpu));
    QCOMPARE(cpu.size(), 1);
    const double cpu_x = ks::arithmeticIntensity(kernelById("cpu.gemm.openblas"), d.cpu.item.size, d.cpu.item.params);
    QVERIFY(near(cpu[0].x(), cpu_x));
    QVERIFY(near(cpu[0].x(), 512.0 / 6));
    const auto shapeOf = [&](const QString& name) {
      for (QAbstractSeries* s : chart.chart()->series())
        if (s->name() == name) return qobject_cast<QScatterSeries*>(s)->markerShape();
      return QScatterSeries::MarkerShapeRectangle;
    };
    QCOMPARE(shapeOf(nameOf(d.cpu)), QScatterSeries::MarkerShapeTriangle);
    QCOMPARE(shapeOf(nameOf(d.gemm)), QScatterSeries::MarkerShapeCircle);
    QCOMPARE(shapeOf(nameOf(d.dot)), QScatterSeries::MarkerShapeCircle);

    // Legend: the ceilings, then the three point series.
    QCOMPARE(chart.seriesNames(),
             (QStringList{kMemory, kFp32, kFp16, kCoopmat, nameOf(d.gemm), nameOf(d.dot), nameOf(d.cpu)}));
    // Peaks without the host CPU's: the CPU point has no roof, and the chart says so.
    QVERIFY2(chart.noteText().contains("No host CPU peaks"), qPrintable(chart.noteText()));
    QVERIFY(chart.chart()->title().contains("CPU points have no roof"));
    QVERIFY(!chart.chart()->title().contains("No measured peaks"));

    // Log10 axes with units; their ranges hold every point and every ridge with a margin.
    auto* x = qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0));
    auto* y = qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Vertical).value(0));
    QVERIFY(x && y);
    QCOMPARE(x->base(), 10.0);
    QCOMPARE(y->base(), 10.0);
    QVERIFY(x->titleText().contains("FLOP/byte"));
    QVERIFY(y->titleText().contains("GFLOP/s"));
    QVERIFY2(x->min() < 0.25 / 1.2 && x->max() > 4096.0 / 6 * 1.2,
             qPrintable(QStringLiteral("%1 .. %2").arg(x->min()).arg(x->max())));
    QVERIFY(x->max() > 600000.0 / 4000 && x->min() < 51000.0 / 4000);
    QVERIFY(x->max() < 100 * 4096.0 / 6 && x->min() > 0.25 / 100);  // not absurdly loose
    QVERIFY2(y->min() < 150 / 1.2 && y->max() > 600000 * 1.2,
             qPrintable(QStringLiteral("%1 .. %2").arg(y->min()).arg(y->max())));
    QVERIFY(y->max() < 100 * 600000.0 && y->min() > 150.0 / 100);
  }

  void ceilingsFromThePeaks() {
    const Data d;
    const ks::DevicePeaks p = peaks();
    RooflineChart chart;
    chart.setData(d.all(), &p);
    QCOMPARE(chart.ridgeIntensity(), 51000.0 / 4000);  // fp32 / the better copy
    QCOMPARE(chart.ceilingNames(), (QStringList{kMemory, kFp32, kFp16, kCoopmat}));
    auto* x = qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0));

    // Memory: y = 4000 x from the left edge up to the ridge, where fp32 takes over to the right edge.
    const auto memory = chart.seriesPoints(kMemory);
    QCOMPARE(memory.size(), 2);
    QCOMPARE(memory[0].x(), x->min());
    QVERIFY(near(memory[0].y(), 4000 * x->min()));
    QVERIFY(near(memory[1].x(), 12.75));
    QVERIFY(near(memory[1].y(), 51000));
    const auto fp32 = chart.seriesPoints(kFp32);
    QCOMPARE(fp32.size(), 2);
    QVERIFY(near(fp32[0].x(), 12.75));
    QCOMPARE(fp32[1].x(), x->max());
    QCOMPARE(fp32[0].y(), 51000.0);
    QCOMPARE(fp32[1].y(), 51000.0);
    // fp16 FMA and coopmat (fp32 accumulation): flat from their own ridges.
    const auto coop = chart.seriesPoints(kCoopmat);
    QCOMPARE(coop.size(), 2);
    QVERIFY(near(coop[0].x(), 150));
    QCOMPARE(coop[0].y(), 600000.0);
    QCOMPARE(coop[1].y(), 600000.0);
    QCOMPARE(coop[1].x(), x->max());
    const auto fp16 = chart.seriesPoints(kFp16);
    QVERIFY(near(fp16[0].x(), 95300.0 / 4000));
    QCOMPARE(fp16[1].y(), 95300.0);
    // The memory roof continues (dashed, unnamed, not in the legend) from the fp32 ridge to coopmat's.
    QLineSeries* continuation = nullptr;
    for (QAbstractSeries* s : chart.chart()->series())
      if (s->name().isEmpty()) continuation = qobject_cast<QLineSeries*>(s);
    QVERIFY(continuation);
    QCOMPARE(continuation->count(), 2);
    QVERIFY(near(continuation->at(1).x(), 150) && near(continuation->at(1).y(), 600000));
    QVERIFY(continuation->pen().style() != Qt::SolidLine);
    QCOMPARE(chart.seriesPoints(kMemory), memory);

    // Without fp16 and coopmat peaks: only memory and fp32, and no continuation.
    const ks::DevicePeaks plain = peaks(false, false);
    chart.setData(d.all(), &plain);
    QCOMPARE(chart.ceilingNames(), (QStringList{kMemory, kFp32}));
    for (QAbstractSeries* s : chart.chart()->series()) QVERIFY(!s->name().isEmpty());
    // Only a bandwidth: the memory roof spans the whole chart; no ridge.
    ks::DevicePeaks copy_only;
    copy_only.results = {{"copy_buffer", "copy", "GB/s", 900, 0.01, 15, ""}};
    chart.setData(d.all(), &copy_only);
    QCOMPARE(chart.ceilingNames(), QStringList{QStringLiteral("memory 900 GB/s")});
    QCOMPARE(chart.ridgeIntensity(), 0.0);
    x = qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0));
    const auto mem = chart.seriesPoints(QStringLiteral("memory 900 GB/s"));
    QCOMPARE(mem.first().x(), x->min());
    QCOMPARE(mem.last().x(), x->max());
    QVERIFY(near(mem.last().y(), 900 * x->max()));
  }

  void cpuRoofsBesideTheGpus() {
    const Data d;
    const ks::DevicePeaks p = withCpu(peaks());
    RooflineChart chart;
    chart.setData(d.all(), &p);
    // Two sets, each named with its value: the device's ("GPU: ", solid) and the host CPU's ("CPU: ", dashed).
    const QStringList gpu{"GPU: " + kMemory, "GPU: " + kFp32, "GPU: " + kFp16, "GPU: " + kCoopmat};
    const QStringList cpu{kCpuMemory, kCpuFp32};
    QCOMPARE(chart.ceilingNames(), gpu + cpu);
    const QStringList points{nameOf(d.gemm), nameOf(d.dot), nameOf(d.cpu)};
    QCOMPARE(chart.seriesNames(), gpu + cpu + points);
    QVERIFY2(chart.noteText().isEmpty(), qPrintable(chart.noteText()));
    const auto penOf = [&](const QString& name) {
      for (QAbstractSeries* s : chart.chart()->series())
        if (s->name() == name) return qobject_cast<QLineSeries*>(s)->pen();
      return QPen();
    };
    for (const QString& name : {gpu[0], gpu[1]}) QCOMPARE(penOf(name).style(), Qt::SolidLine);
    for (const QString& name : cpu) QCOMPARE(penOf(name).style(), Qt::DashLine);
    QVERIFY(penOf(kCpuMemory).color() != penOf(gpu[0]).color());
    QVERIFY(penOf(kCpuFp32).color() != penOf(gpu[1]).color());

    // The CPU roofs: memory 25 GB/s up to the CPU ridge (200 / 25 = 8 FLOP/byte), then fp32 FMA flat.
    QCOMPARE(chart.cpuRidgeIntensity(), 8.0);
    QCOMPARE(chart.ridgeIntensity(), 51000.0 / 4000);
    auto* x = qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0));
    auto* y = qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Vertical).value(0));
    const auto memory = chart.seriesPoints(kCpuMemory);
    QCOMPARE(memory.size(), 2);
    QCOMPARE(memory[0].x(), x->min());
    QVERIFY(near(memory[0].y(), 25 * x->min()));
    QVERIFY(near(memory[1].x(), 8) && near(memory[1].y(), 200));
    const auto fp32 = chart.seriesPoints(kCpuFp32);
    QCOMPARE(fp32.size(), 2);
    QVERIFY(near(fp32[0].x(), 8));
    QCOMPARE(fp32[1].x(), x->max());
    QCOMPARE(fp32[0].y(), 200.0);
    QCOMPARE(fp32[1].y(), 200.0);
    // Both sets and every point within the axes, on log scales.
    QVERIFY(y->min() < 25 * x->min() * 1.0001 && y->max() > 600000);
    QVERIFY(chart.seriesPoints(nameOf(d.cpu)).first().y() < 200);  // the OpenBLAS point sits under its roof

    // The CPU point's hover text: its share of the CPU roof (150 of 200 GFLOP/s, compute-bound).
    const QString tip = RooflineChart::toolTip(d.cpu, &p);
    QVERIFY2(tip.contains("75.0 % of peak") && tip.contains("compute-bound: CPU fp32 FMA"), qPrintable(tip));
    // The GPU points still against the device's roofs.
    QVERIFY2(RooflineChart::toolTip(d.gemm_big, &p).contains("compute-bound: fp32 FMA"),
             qPrintable(RooflineChart::toolTip(d.gemm_big, &p)));

    // Host CPU peaks alone (a CPU-only session): the CPU roofs, no "GPU: " set, and a note for the GPU points.
    ks::DevicePeaks host_only;
    host_only.measured_at = p.measured_at;
    host_only.results = {p.results.end() - 3, p.results.end()};
    chart.setData(d.all(), &host_only);
    QCOMPARE(chart.ceilingNames(), cpu);
    QVERIFY2(chart.noteText().contains("GPU points have no roof"), qPrintable(chart.noteText()));
    chart.setData({d.cpu}, &host_only);
    QVERIFY(chart.noteText().isEmpty());
    QVERIFY(chart.chart()->title().contains("peaks measured"));
  }

  void withoutPeaksOnlyPoints() {
    const Data d;
    RooflineChart chart;
    chart.setData(d.all(), nullptr);
    QCOMPARE(chart.seriesNames(), (QStringList{nameOf(d.gemm), nameOf(d.dot), nameOf(d.cpu)}));
    QVERIFY(chart.ceilingNames().isEmpty());
    QCOMPARE(chart.ridgeIntensity(), 0.0);
    for (QAbstractSeries* s : chart.chart()->series()) QVERIFY(qobject_cast<QScatterSeries*>(s));
    QCOMPARE(chart.noteText(), QStringLiteral("No measured peaks: Measure peaks to draw the ceilings"));
    QVERIFY(chart.chart()->title().contains(chart.noteText()));
    QCOMPARE(chart.seriesPoints(nameOf(d.gemm)).size(), 2);
    auto* y = qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Vertical).value(0));
    QVERIFY(y->min() < 150 && y->max() > 38000 && y->max() < 38000 * 100);

    // Peaks where nothing was measured count as none.
    ks::DevicePeaks empty;
    empty.results = {{"fp32_fma", "fp32 FMA", "GFLOP/s", 0, 0, 0, "cancelled"}};
    chart.setData(d.all(), &empty);
    QVERIFY(chart.ceilingNames().isEmpty());
    QVERIFY(!chart.noteText().isEmpty());

    // Nothing at all: still a chart with log axes, and the note.
    chart.clear();
    QVERIFY(chart.seriesNames().isEmpty());
    QVERIFY(qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0)));
    QVERIFY(chart.chart()->title().contains("No measured peaks"));
  }

  void toolTips() {
    const Data d;
    const ks::DevicePeaks p = peaks();
    // A compute-bound gemm at 38000 of 51000 GFLOP/s.
    const QString gemm = RooflineChart::toolTip(d.gemm_big, &p);
    QVERIFY2(gemm.contains("gemm.tile2d") && gemm.contains("size: 4096\n"), qPrintable(gemm));
    QVERIFY2(gemm.contains(QStringLiteral("intensity: %1 FLOP/byte").arg(4096.0 / 6, 0, 'g', 4)), qPrintable(gemm));
    QVERIFY2(gemm.contains("38000 GFLOP/s"), qPrintable(gemm));
    QVERIFY2(gemm.contains(QStringLiteral("%1 % of peak").arg(100 * 38000.0 / 51000, 0, 'f', 1)), qPrintable(gemm));
    QVERIFY2(gemm.contains("compute-bound: fp32 FMA"), qPrintable(gemm));
    // A memory-bound dot at 700 of 4000 x 0.25 = 1000 GFLOP/s.
    const QString dot = RooflineChart::toolTip(d.dot, &p);
    const auto f = ks::fractionOfPeak(d.dot, p);
    QVERIFY(f && f->bound == "memory");
    QVERIFY2(dot.contains(QStringLiteral("%1 % of peak").arg(100 * f->fraction, 0, 'f', 1)), qPrintable(dot));
    QVERIFY2(dot.contains("memory-bound"), qPrintable(dot));
    QVERIFY(std::abs(f->fraction - 0.7) < 1e-3);
    // CPU points have no GPU ceiling; without peaks there is no fraction at all.
    QVERIFY(RooflineChart::toolTip(d.cpu, &p).contains("CPU kernel"));
    QVERIFY(!RooflineChart::toolTip(d.gemm, nullptr).contains("of peak"));
  }

  void exportPng() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Data d;
    const ks::DevicePeaks p = peaks();
    RooflineChart chart;
    chart.setData(d.all(), &p);
    for (bool with_peaks : {true, false}) {
      if (!with_peaks) chart.setData(d.all(), nullptr);
      const QString path = dir.filePath(QStringLiteral("roofline%1.png").arg(int(with_peaks)));
      QCOMPARE(chart.exportPng(path, QSize(800, 500), 1.5), QString());
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
      QVERIFY2(non_white > 3000 && colours.size() > 50,
               qPrintable(QStringLiteral("%1: %2 %3").arg(path).arg(non_white).arg(colours.size())));
    }
    QVERIFY(!chart.exportPng(QString(), QSize(800, 500), 1).isEmpty());
    QVERIFY(!chart.exportPng(dir.filePath("x.png"), QSize(0, 500), 1).isEmpty());
    QVERIFY(chart.exportPng(dir.filePath("no/such/folder/x.png"), QSize(800, 500), 1).contains("does not exist"));
  }
};

QTEST_MAIN(TestRooflineChart)
#include "test_roofline_chart.moc"
