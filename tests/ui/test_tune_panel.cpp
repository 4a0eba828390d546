// The autotuner in the app: the heatmap's cells, the progress chart, the
// headless export, and tunes run from the Tune tab on lavapipe (offscreen).
#include <QCheckBox>
#include <QComboBox>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "engine/bench/report.h"
#include "engine/kernels/kernel_file.h"
#include "engine/session/session.h"
#include "engine/tune/tuned_defaults.h"
#include "tests/ui/lavapipe_window.h"
#include "ui/engine_worker.h"
#include "ui/main_window.h"
#include "ui/sweep_editor.h"
#include "ui/tune_heatmap.h"
#include "ui/tune_panel.h"
#include "ui/tune_progress_chart.h"

using ks::ui::MainWindow;
using ks::ui::TuneHeatmap;
using State = ks::ui::TuneHeatmap::CellState;

namespace {

// gemm.block_tiling at 256 over BK x BN x wg, with every cell state in the wg=16x16 slice:
//            BK=4          BK=8          BK=16
//   BN=8     unmeasured    unmeasured    invalid (pruned)
//   BN=4     30 (cached)   40 (winner)   invalid (pruned)
//   BN=2     10            20            failed
// and one evaluation at wg=8x8 (BK=4, BN=2) scoring 50: the best evaluation, not the winner.
struct HandMade {
  ks::TuneRecord record;
  std::vector<ks::Measurement> points;
};

HandMade handMadeTune() {
  HandMade h;
  ks::TuneRecord& r = h.record;
  r.kernel = "gemm.block_tiling";
  r.size = {256, 256, 256, 3};
  r.strategy = ks::SearchStrategy::Random;
  r.objective = ks::TuneObjective::Gflops;
  r.budget = 8;
  ks::TuneDimension bk{"BK", {4, 8, 16}, {}}, bn{"BN", {2, 4, 8}, {}}, wg{"wg", {}, {{8, 8, 1}, {16, 16, 1}}};
  r.dimensions = {bk, bn, wg};
  r.space_size = 18;
  r.valid = 16;
  r.pruned = {{"shared memory: 24576 bytes over the device's 16384", {{2, 1, 1}, {2, 2, 1}}}};
  const struct {
    ks::TuneConfig config;
    std::optional<double> score;
    bool cached;
  } evaluations[] = {{{0, 0, 1}, 10.0, false}, {{1, 0, 1}, 20.0, false}, {{2, 0, 1}, std::nullopt, false},
                     {{0, 1, 1}, 30.0, true},  {{1, 1, 1}, 40.0, false}, {{0, 0, 0}, 50.0, false}};
  for (const auto& e : evaluations) {
    ks::TuneEvaluation ev;
    ev.point = h.points.size();
    ev.config = e.config;
    ev.score = e.score;
    ev.cached = e.cached;
    ev.elapsed_s = double(h.points.size() + 1);
    r.evaluations.push_back(ev);
    ks::Measurement m;
    m.item.kernel = r.kernel;
    m.item.size = r.size;
    if (e.score) {
      m.stats.median = 1e6 / *e.score;
      m.samples_ns = {m.stats.median, m.stats.median, m.stats.median};
    } else {
      m.status = ks::PointStatus::Failed;
      m.error = "compile failed: too many registers\nsecond line";
    }
    h.points.push_back(m);
  }
  r.stop_reason = "budget";
  r.winner = ks::TuneConfig{1, 1, 1};
  r.verdict = "tie: made by hand";
  return h;
}

// The median colour of a rectangle's pixels: robust to the text and hatch lines drawn over a fill.
QColor medianColor(const QImage& image, const QRect& r) {
  std::vector<int> reds, greens, blues;
  for (int y = r.top(); y <= r.bottom(); ++y)
    for (int x = r.left(); x <= r.right(); ++x) {
      const QRgb p = image.pixel(x, y);
      reds.push_back(qRed(p));
      greens.push_back(qGreen(p));
      blues.push_back(qBlue(p));
    }
  auto median = [](std::vector<int>& v) {
    std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  return QColor(median(reds), median(greens), median(blues));
}

bool near(const QColor& a, const QColor& b, int tolerance = 8) {
  return std::abs(a.red() - b.red()) <= tolerance && std::abs(a.green() - b.green()) <= tolerance &&
         std::abs(a.blue() - b.blue()) <= tolerance;
}

QString colorText(const QColor& c) { return c.name(); }

int countPixels(const QImage& image, const QRect& r, const std::function<bool(QColor)>& match) {
  int n = 0;
  for (int y = r.top(); y <= r.bottom(); ++y)
    for (int x = r.left(); x <= r.right(); ++x) n += match(QColor(image.pixel(x, y)));
  return n;
}

QProcessEnvironment offscreenEnvironment() {
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  return env;
}

}  // namespace

class TestTunePanel : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QString cliSession_;  // a small grid tune by kernelscope-cli on lavapipe

  std::unique_ptr<MainWindow> makeWindow() { return ks::ui::testing::openLavapipeWindow(dir_.filePath("journal")); }

  // A small tune in the Tune tab: block tiling at 64 over the given shapes and tunables.
  void setTune(ks::ui::TunePanel* panel, const QString& shapes, const QString& params, int top, bool cache) {
    panel->kernelBox()->setCurrentIndex(panel->kernelBox()->findData("gemm.block_tiling"));
    panel->sizeEdit()->setText("64");
    panel->strategyBox()->setCurrentIndex(panel->strategyBox()->findText("grid"));
    panel->shapesEdit()->setText(shapes);
    panel->paramsEdit()->setText(params);
    panel->repsBox()->setValue(3);
    panel->warmupBox()->setValue(1);
    panel->warmupMsBox()->setValue(10);
    panel->topBox()->setValue(top);
    panel->roundsBox()->setValue(2);
    panel->cacheBox()->setChecked(cache);
  }

  QString runGui(const QStringList& args, int* exit_code, QByteArray* err = nullptr, QByteArray* out = nullptr) {
    QProcess gui;
    gui.setProcessEnvironment(offscreenEnvironment());
    gui.start(KS_GUI_PATH, args);
    if (!gui.waitForFinished(60000)) return "kernelscope did not finish";
    *exit_code = gui.exitCode();
    if (err) *err = gui.readAllStandardError();
    if (out) *out = gui.readAllStandardOutput();
    return {};
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings away from the user's
    QCoreApplication::setOrganizationName("kernelscope-tests");
    QVERIFY(dir_.isValid());
    // The tuned defaults and the result cache of this test, not the user's (kernelscope-cli inherits them).
    qputenv("XDG_CONFIG_HOME", dir_.filePath("config").toUtf8());
    qputenv("XDG_CACHE_HOME", dir_.filePath("cache").toUtf8());
  }

  // (a) Every cell state from a hand-made record, through the accessors.
  void heatmapCellStates() {
    const HandMade h = handMadeTune();
    TuneHeatmap heatmap;
    heatmap.setRecord(h.record, h.points);
    QCOMPARE(heatmap.dimensionNames(), QStringList({"BK", "BN", "wg"}));
    QCOMPARE(heatmap.xDimension(), QString("BK"));
    QCOMPARE(heatmap.yDimension(), QString("BN"));
    QCOMPARE(heatmap.columns(), 3);
    QCOMPARE(heatmap.rows(), 3);
    // The slice follows the winner (wg=16x16), not the best evaluation (wg=8x8).
    QCOMPARE(heatmap.sliceLabel("wg"), QString("16x16"));
    QCOMPARE(heatmap.titleText(), QString("gemm.block_tiling 256: BK × BN (wg=16x16)"));
    QCOMPARE(heatmap.unitText(), QString("GFLOP/s"));

    const State expected[3][3] = {// [row = BN][column = BK]
                                  {State::Measured, State::Measured, State::Failed},
                                  {State::Measured, State::Measured, State::Invalid},
                                  {State::Unmeasured, State::Unmeasured, State::Invalid}};
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) QCOMPARE(heatmap.cellState(c, r), expected[r][c]);
    QCOMPARE(heatmap.cellScore(0, 0), std::optional<double>(10.0));
    QCOMPARE(heatmap.cellScore(1, 1), std::optional<double>(40.0));
    QCOMPARE(heatmap.cellScore(2, 0), std::nullopt);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) QCOMPARE(heatmap.isWinnerCell(c, r), c == 1 && r == 1);

    // Tooltips: configuration, score with median, failure, pruning reason, cache.
    QVERIFY(heatmap.cellToolTip(1, 1).contains("BK=8 BN=4 wg=16x16"));
    QVERIFY(heatmap.cellToolTip(1, 1).contains("40.0 GFLOP/s"));
    const QString median = "median " + QString::fromStdString(ks::formatDuration(25000)) + " over 3 samples";
    QVERIFY2(heatmap.cellToolTip(1, 1).contains(median), qPrintable(heatmap.cellToolTip(1, 1)));
    QVERIFY(heatmap.cellToolTip(1, 1).contains("winner"));
    QVERIFY(heatmap.cellToolTip(2, 0).contains("failed: compile failed: too many registers"));
    QVERIFY(!heatmap.cellToolTip(2, 0).contains("second line"));
    QVERIFY(heatmap.cellToolTip(2, 1).contains("shared memory: 24576 bytes over the device's 16384"));
    QVERIFY(heatmap.cellToolTip(0, 1).contains("result cache"));
    QVERIFY(heatmap.cellToolTip(0, 2).contains("not measured"));

    // Colours: by score over the whole tune's range (10..50), so 50 would be the top of the scale.
    QCOMPARE(heatmap.cellFill(0, 0), TuneHeatmap::scoreColor(0.0));
    QCOMPARE(heatmap.cellFill(1, 1), TuneHeatmap::scoreColor(0.75));
    QVERIFY(TuneHeatmap::scoreColor(0) != TuneHeatmap::scoreColor(1));

    // Another slice: wg=8x8 has one measured cell, the rest never ran; the winner is not in it.
    QCOMPARE(heatmap.setSliceValue("wg", "8x8"), QString());
    QCOMPARE(heatmap.titleText(), QString("gemm.block_tiling 256: BK × BN (wg=8x8)"));
    QCOMPARE(heatmap.cellState(0, 0), State::Measured);
    QCOMPARE(heatmap.cellScore(0, 0), std::optional<double>(50.0));
    QCOMPARE(heatmap.cellState(1, 1), State::Unmeasured);
    QVERIFY(!heatmap.isWinnerCell(1, 1));
    QCOMPARE(heatmap.setSliceValue("wg", ""), QString());  // back to the best
    QCOMPARE(heatmap.sliceLabel("wg"), QString("16x16"));

    // Other axes: BK x wg at BN = the winner's 4.
    QCOMPARE(heatmap.setAxes("BK", "wg"), QString());
    QCOMPARE(heatmap.rows(), 2);
    QCOMPARE(heatmap.titleText(), QString("gemm.block_tiling 256: BK × wg (BN=4)"));
    QCOMPARE(heatmap.cellState(1, 1), State::Measured);  // BK=8 wg=16x16
    QCOMPARE(heatmap.cellState(2, 1), State::Invalid);
    QCOMPARE(heatmap.cellState(0, 0), State::Unmeasured);  // BK=4 BN=4 wg=8x8

    // Bad axes and slices change nothing and say why.
    QVERIFY(heatmap.setAxes("BK", "BK").contains("different"));
    const QString unknown = heatmap.setAxes("TM", "BN");
    QVERIFY2(unknown.contains("'TM'") && unknown.contains("BK, BN, wg"), qPrintable(unknown));
    QCOMPARE(heatmap.yDimension(), QString("wg"));
    QVERIFY(heatmap.setSliceValue("BK", "4").contains("axis"));
    QCOMPARE(heatmap.setAxes("BK", "BN"), QString());
    const QString badValue = heatmap.setSlice("wg=9x9");
    QVERIFY2(badValue.contains("8x8, 16x16"), qPrintable(badValue));
    QVERIFY(heatmap.setSlice("wg").contains("NAME=VALUE"));
    QCOMPARE(heatmap.sliceLabel("wg"), QString("16x16"));
  }

  // (a) The same states by pixel colour in an exported PNG.
  void heatmapPixels() {
    const HandMade h = handMadeTune();
    TuneHeatmap heatmap;
    heatmap.setRecord(h.record, h.points);
    const QString png = dir_.filePath("heatmap.png");
    const QSize size(900, 640);
    QCOMPARE(heatmap.exportPng(png, size, 1), QString());
    QImage image(png);
    QCOMPARE(image.size(), size);
    image = image.convertToFormat(QImage::Format_RGB32);
    auto inner = [&](int c, int r) {  // the middle of a cell, clear of its outline
      const QRectF cell = heatmap.cellRect(c, r, QSizeF(size));
      return cell.adjusted(cell.width() * 0.2, cell.height() * 0.2, -cell.width() * 0.2, -cell.height() * 0.2)
          .toAlignedRect();
    };
    std::vector<QColor> seen;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        const QColor got = medianColor(image, inner(c, r));
        const QColor want = heatmap.cellState(c, r) == State::Measured
                                ? heatmap.cellFill(c, r)
                                : TuneHeatmap::stateFill(heatmap.cellState(c, r));
        QVERIFY2(near(got, want),
                 qPrintable(QString("cell %1,%2: %3, expected %4").arg(c).arg(r).arg(colorText(got), colorText(want))));
      }
    // Four states, four looks: fills apart from one another and from every score colour drawn.
    const QColor failed = medianColor(image, inner(2, 0)), invalid = medianColor(image, inner(2, 1)),
                 unmeasured = medianColor(image, inner(0, 2));
    for (const QColor& a : {failed, invalid, unmeasured})
      for (const QColor& b : {medianColor(image, inner(0, 0)), medianColor(image, inner(1, 1))})
        QVERIFY(!near(a, b, 30));
    QVERIFY(!near(failed, invalid, 30) && !near(failed, unmeasured, 30) && !near(invalid, unmeasured, 20));
    // The marks over the fills: a red cross, a grey hatch, a dot in the middle of a white cell.
    QVERIFY(countPixels(image, inner(2, 0), [](QColor p) { return p.red() > 150 && p.green() < 90; }) > 20);
    QVERIFY(countPixels(image, inner(2, 1),
                        [](QColor p) { return p.red() < 180 && std::abs(p.red() - p.blue()) < 12; }) > 50);
    const QPoint middle = heatmap.cellRect(0, 2, QSizeF(size)).center().toPoint();
    QVERIFY(QColor(image.pixel(middle)).lightness() < 220);
    QVERIFY(QColor(image.pixel(middle + QPoint(12, 12))) == QColor(Qt::white));
    // The winner's outline: dark at the edge of its cell only.
    const QRectF winner = heatmap.cellRect(1, 1, QSizeF(size));
    const QRectF plain = heatmap.cellRect(0, 0, QSizeF(size));
    const QColor winnerEdge(image.pixel(QPointF(winner.left() + 2, winner.center().y()).toPoint()));
    QVERIFY2(winnerEdge.lightness() < 40 && !near(winnerEdge, heatmap.cellFill(1, 1), 30),
             qPrintable(colorText(winnerEdge)));
    const QColor plainEdge(image.pixel(QPointF(plain.left() + 2, plain.center().y()).toPoint()));
    QVERIFY2(near(plainEdge, heatmap.cellFill(0, 0)), qPrintable(colorText(plainEdge)));
  }

  // (e) The progress chart: one point per evaluation in its series, and the best-so-far steps.
  void progressChartSeries() {
    const HandMade h = handMadeTune();
    ks::ui::TuneProgressChart chart;
    chart.resize(800, 500);
    chart.setRecord(h.record);
    using C = ks::ui::TuneProgressChart;
    QCOMPARE(chart.seriesNames(), QStringList({C::bestName(), C::measuredName(), C::cachedName(), C::failedName()}));
    QCOMPARE(chart.seriesPoints(C::measuredName()), QList<QPointF>({{1, 10}, {2, 20}, {5, 40}, {6, 50}}));
    QCOMPARE(chart.seriesPoints(C::cachedName()), QList<QPointF>({{4, 30}}));
    QCOMPARE(chart.seriesPoints(C::failedName()), QList<QPointF>({{3, 0}}));
    const auto best = chart.seriesPoints(C::bestName());
    QCOMPARE(best.first(), QPointF(1, 10));
    QCOMPARE(best.last().y(), 50.0);
    for (int i = 1; i < best.size(); ++i) {
      QVERIFY(best[i].x() >= best[i - 1].x());
      QVERIFY(best[i].y() >= best[i - 1].y());
      QVERIFY(best[i].x() == best[i - 1].x() || best[i].y() == best[i - 1].y());  // steps, no slopes
    }
    QVERIFY2(chart.titleText().contains("6 of 8 evaluations") && chart.titleText().contains("1 failed"),
             qPrintable(chart.titleText()));
    const QString png = dir_.filePath("progress.png");
    QCOMPARE(chart.exportPng(png, QSize(800, 500), 2), QString());
    QImage image(png);
    QCOMPARE(image.size(), QSize(1600, 1000));
    // The failed cross is red: the chart has red pixels (nothing else in it is).
    int red = 0;
    for (int y = 0; y < image.height(); y += 2)
      for (int x = 0; x < image.width(); x += 2) {
        const QColor p(image.pixel(x, y));
        red += p.red() > 170 && p.green() < 80 && p.blue() < 80;
      }
    QVERIFY(red > 10);
    chart.clear();
    QVERIFY(chart.seriesPoints(C::measuredName()).isEmpty());

    // Scores of an H200 (tens of thousands of GFLOP/s) after small ones and on a
    // fresh chart: the axes once laid out one tick per unit of the old interval
    // over the new range and hung (the ctest timeout fails this if it comes back).
    ks::TuneRecord big = h.record;
    for (auto& e : big.evaluations)
      if (e.score) *e.score *= 1000;
    chart.setRecord(h.record);
    chart.setRecord(big);
    QCOMPARE(chart.seriesPoints(C::measuredName()).last(), QPointF(6, 50000));
    ks::ui::TuneProgressChart fresh;
    fresh.resize(800, 500);
    fresh.setRecord(big);
    QCOMPARE(fresh.exportPng(dir_.filePath("progress-big.png"), QSize(800, 500), 1), QString());
  }

  // (b) kernelscope-cli tune on lavapipe, then the heatmap from the kernelscope binary, and its errors.
  void headlessExport() {
    cliSession_ = dir_.filePath("tune.json");
    QProcess cli;
    cli.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
    cli.start(KS_CLI_PATH, {"tune",
                            "--kernel",
                            "gemm.block_tiling",
                            "--size",
                            "64",
                            "--wg",
                            "8x8,16x16",
                            "--param",
                            "BK=4,8",
                            "--param",
                            "BN=2,4",
                            "--reps",
                            "3",
                            "--warmup-ms",
                            "10",
                            "--no-cache",
                            "--top",
                            "3",
                            "--final-rounds",
                            "2",
                            "-o",
                            cliSession_});
    QVERIFY(cli.waitForFinished(90000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    auto session = ks::loadSession(cliSession_.toStdString());
    QVERIFY2(session, session ? "" : session.error().message.c_str());
    QVERIFY(session->tune);
    QCOMPARE(session->tune->evaluations.size(), size_t(8));

    const QString png = dir_.filePath("cli-heatmap.png");
    int rc = -1;
    QByteArray err, out;
    QCOMPARE(runGui({"--export-png", png, "--chart", "heatmap", "--x", "BK", "--y", "BN", "--size", "800x500",
                     "--scale", "1", cliSession_},
                    &rc, &err, &out),
             QString());
    QVERIFY2(rc == 0, err.constData());
    QVERIFY2(out.contains("gemm.block_tiling 64: BK × BN (wg="), out.constData());
    QImage image(png);
    QCOMPARE(image.size(), QSize(800, 500));
    // The same heatmap in this process: the exported cells are coloured as it says.
    TuneHeatmap heatmap;
    heatmap.setRecord(*session->tune, session->points);
    QCOMPARE(heatmap.setAxes("BK", "BN"), QString());
    int measured = 0;
    for (int r = 0; r < heatmap.rows(); ++r)
      for (int c = 0; c < heatmap.columns(); ++c) {
        QVERIFY(heatmap.cellState(c, r) == State::Measured || heatmap.cellState(c, r) == State::Failed);
        if (heatmap.cellState(c, r) != State::Measured) continue;
        ++measured;
        const QRectF cell = heatmap.cellRect(c, r, QSizeF(800, 500));
        const QColor got = medianColor(
            image.convertToFormat(QImage::Format_RGB32),
            cell.adjusted(cell.width() * 0.25, cell.height() * 0.25, -cell.width() * 0.25, -cell.height() * 0.25)
                .toAlignedRect());
        QVERIFY2(near(got, heatmap.cellFill(c, r)), qPrintable(colorText(got)));
      }
    QVERIFY(measured > 0);

    // A chosen slice and the progress chart.
    QCOMPARE(runGui({"--export-png", png, "--chart", "heatmap", "--slice", "wg=8x8", "--size", "800x500", cliSession_},
                    &rc, &err, &out),
             QString());
    QVERIFY2(rc == 0 && out.contains("(wg=8x8)"), err.constData());
    QCOMPARE(runGui({"--export-png", dir_.filePath("cli-progress.png"), "--chart", "tune-progress", cliSession_}, &rc,
                    &err, &out),
             QString());
    QVERIFY2(rc == 0 && out.contains("grid search, 8 of 8 evaluations"), err.constData());
    QVERIFY(!QImage(dir_.filePath("cli-progress.png")).isNull());

    // Errors: unknown dimension (the valid ones listed), x == y, a bad slice, a session without a tune.
    const struct {
      QStringList args;
      const char* said;
    } bad[] = {
        {{"--chart", "heatmap", "--x", "TM", "--y", "BN", cliSession_},
         "no dimension 'TM' (its dimensions: BK, BN, wg)"},
        {{"--chart", "heatmap", "--x", "BN", "--y", "BN", cliSession_}, "two different dimensions"},
        {{"--chart", "heatmap", "--slice", "wg=3x3", cliSession_}, "wg has no value 3x3"},
        {{"--chart", "heatmap", "--x", "BK", "--y", "BN", "--slice", "BK=4", cliSession_}, "BK is an axis"},
        {{"--chart", "gflops", "--x", "BK", cliSession_}, "--x applies to --chart heatmap only"},
        {{"--chart", "pie", cliSession_}, "roofline, heatmap or tune-progress"},
    };
    for (const auto& b : bad) {
      QCOMPARE(runGui(QStringList{"--export-png", dir_.filePath("bad.png")} + b.args, &rc, &err), QString());
      QCOMPARE(rc, 2);
      QVERIFY2(err.contains(b.said), err.constData());
    }
    QVERIFY(!QFileInfo::exists(dir_.filePath("bad.png")));
    const QString plain = dir_.filePath("run.json");
    QProcess run;
    run.start(KS_CLI_PATH, {"run", "--kernels", "cpu.gemm.naive", "--sizes", "16", "--reps", "2", "-o", plain});
    QVERIFY(run.waitForFinished(60000));
    QCOMPARE(run.exitCode(), 0);
    QCOMPARE(runGui({"--export-png", png, "--chart", "heatmap", plain}, &rc, &err), QString());
    QCOMPARE(rc, 2);
    QVERIFY2(err.contains("has no tune"), err.constData());
  }

  // Opening a session with a tune shows it in the Tune tab.
  void openTuneSession() {
    if (cliSession_.isEmpty()) QSKIP("needs headlessExport's session");
    auto w = makeWindow();
    QVERIFY(w->openSession(cliSession_));
    auto* panel = w->tunePanel();
    QCOMPARE(w->tabs()->currentWidget(), static_cast<QWidget*>(panel));
    QVERIFY(panel->record());
    QCOMPARE(panel->record()->evaluations.size(), size_t(8));
    QCOMPARE(panel->rankingTable()->rowCount(), 3);
    QVERIFY(panel->verdictLabel()->text().contains(QString::fromStdString(panel->record()->verdict).toHtmlEscaped()));
    QCOMPARE(panel->heatmap()->columns(), 2);
    QCOMPARE(panel->progressChart()->seriesPoints(ks::ui::TuneProgressChart::measuredName()).size() +
                 panel->progressChart()->seriesPoints(ks::ui::TuneProgressChart::failedName()).size(),
             8);
    // The form holds the tune's settings: Start would run it again.
    QCOMPARE(panel->kernelBox()->currentData().toString(), QString("gemm.block_tiling"));
    QCOMPARE(panel->sizeEdit()->text(), QString("64"));
    QCOMPARE(panel->shapesEdit()->text(), QString("8x8,16x16"));
    QCOMPARE(panel->paramsEdit()->text(), QString("BK=4,8; BN=2,4"));
    QCOMPARE(panel->repsBox()->value(), 3);  // measured as the session's plan says
    // Another session without one empties the tab.
    w->newSession();
    QVERIFY(!panel->record());
    QCOMPARE(panel->rankingTable()->rowCount(), 0);
  }

  // Kernel files join the kernel box as they are loaded; CPU kernels and kernels with nothing to tune do not.
  void kernelBoxFollowsTheRegistry() {
    auto w = makeWindow();
    auto* box = w->tunePanel()->kernelBox();
    QVERIFY(box->findData("gemm.block_tiling") >= 0);
    QCOMPARE(box->currentData().toString(), QString("gemm.block_tiling"));
    QCOMPARE(box->findData("cpu.gemm.openblas"), -1);
    auto text = ks::kernelTemplate("gemm");
    QVERIFY(text);
    QString source = QString::fromStdString(*text).replace("user.my_gemm", "user.tune_me");
    QDir().mkpath(dir_.filePath("kernels"));
    QFile file(dir_.filePath("kernels/tune_me.comp"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(source.toUtf8());
    file.close();
    QCOMPARE(box->findData("user.tune_me"), -1);
    w->loadKernelDir(dir_.filePath("kernels"));
    const int i = box->findData("user.tune_me");
    QVERIFY(i >= 0);
    QVERIFY(box->itemText(i).contains("(file)"));
    QCOMPARE(box->currentData().toString(), QString("gemm.block_tiling"));  // the pick stays
    box->setCurrentIndex(i);
    QVERIFY2(w->tunePanel()->request(), qPrintable(w->tunePanel()->requestError()));
    QCOMPARE(w->tunePanel()->request()->kernel, std::string("user.tune_me"));
  }

  // (c) A real tune from the Tune tab; its winner saved as tuned default and used by a sweep.
  void tuneFromTheTab() {
    auto w = makeWindow();
    auto* panel = w->tunePanel();
    setTune(panel, "8x8,16x16", "BK=4,8; BN=2,4", 3, true);
    QVERIFY2(panel->startButton()->isEnabled(), qPrintable(panel->requestError()));
    const auto request = panel->request();
    QVERIFY(request);
    QVERIFY2(QString::fromStdString(request->cache_path).startsWith(dir_.filePath("cache")),
             request->cache_path.c_str());

    QSignalSpy evaluated(w->worker(), &ks::ui::EngineWorker::tuneEvaluated);
    QSignalSpy progress(w->worker(), &ks::ui::EngineWorker::tuneProgress);
    QSignalSpy finished(w->worker(), &ks::ui::EngineWorker::tuneFinished);
    QSignalSpy failed(w->worker(), &ks::ui::EngineWorker::tuneFailed);
    QTest::mouseClick(panel->startButton(), Qt::LeftButton);
    QVERIFY(w->isTuning());
    QVERIFY(!panel->startButton()->isEnabled());
    QVERIFY(panel->stopButton()->isEnabled());
    QVERIFY(!w->runButton()->isEnabled());  // one thing at a time on the engine
    QVERIFY(finished.wait(90000));
    QCOMPARE(failed.count(), 0);
    QCOMPARE(evaluated.count(), 8);
    QVERIFY(progress.count() >= 8);
    // Each evaluation came with the record so far, ending with it.
    for (int i = 0; i < evaluated.count(); ++i) {
      const auto snapshot = evaluated.at(i).at(0).value<ks::TuneRecord>();
      QCOMPARE(snapshot.evaluations.size(), size_t(i + 1));
      QCOMPARE(snapshot.evaluations.back(), evaluated.at(i).at(2).value<ks::TuneEvaluation>());
    }
    const auto outcome = finished.first().first().value<ks::TuneOutcome>();
    const ks::TuneRecord& record = outcome.record;
    QCOMPARE(record.evaluations.size(), size_t(8));
    QCOMPARE(record.stop_reason, std::string("space_exhausted"));
    QVERIFY(record.winner);
    QVERIFY(!record.verdict.empty());

    // The tab shows the ranking and verdict; the tune is the session.
    QVERIFY(!w->isTuning());
    QVERIFY(panel->startButton()->isEnabled());
    QCOMPARE(panel->rankingTable()->rowCount(), int(record.final.size()));
    QCOMPARE(panel->rankingTable()->rowCount(), 3);
    QCOMPARE(panel->rankingTable()->item(0, 1)->text(),
             QString::fromStdString(record.configText(record.final[0].config)));
    QCOMPARE(panel->rankingTable()->horizontalHeaderItem(2)->text(), QString("GFLOP/s"));
    QVERIFY(panel->verdictLabel()->text().contains(QString::fromStdString(record.verdict).toHtmlEscaped()));
    QCOMPARE(panel->verdictLabel()->property("decided").toBool(), record.decided);
    QVERIFY(panel->statusLabel()->text().startsWith("Done: 8 evaluations"));
    QCOMPARE(w->session().points.size(), size_t(8));
    QVERIFY(w->session().tune);
    QCOMPARE(w->session().tune->winner, record.winner);
    QVERIFY(w->isDirty());
    for (int r = 0; r < panel->heatmap()->rows(); ++r)
      for (int c = 0; c < panel->heatmap()->columns(); ++c)
        QVERIFY(panel->heatmap()->cellState(c, r) == State::Measured);
    QCOMPARE(panel->progressChart()->seriesPoints(ks::ui::TuneProgressChart::measuredName()).size(), 8);
    // The slice picker of wg follows the best; picking 8x8 moves the heatmap.
    QComboBox* wg = panel->sliceBox("wg");
    QVERIFY(wg);
    wg->setCurrentIndex(wg->findData("8x8"));
    emit wg->activated(wg->currentIndex());
    QCOMPARE(panel->heatmap()->sliceLabel("wg"), QString("8x8"));
    panel->xBox()->setCurrentText("wg");
    emit panel->xBox()->activated(panel->xBox()->currentIndex());
    QCOMPARE(panel->heatmap()->xDimension(), QString("wg"));
    QVERIFY(panel->sliceBox("BK") && !panel->sliceBox("wg"));
    panel->yBox()->setCurrentText("wg");  // x's dimension for y: the two swap
    emit panel->yBox()->activated(panel->yBox()->currentIndex());
    QCOMPARE(panel->heatmap()->xDimension(), QString("BN"));
    QCOMPARE(panel->heatmap()->yDimension(), QString("wg"));
    QCOMPARE(panel->xBox()->currentText(), QString("BN"));
    QVERIFY(panel->sliceBox("BK") && !panel->sliceBox("BN"));

    // Saved, it opens again with its tune.
    const QString saved = dir_.filePath("tab-tune.json");
    QVERIFY(w->saveSessionTo(saved));
    auto reloaded = ks::loadSession(saved.toStdString());
    QVERIFY2(reloaded, reloaded ? "" : reloaded.error().message.c_str());
    QCOMPARE(reloaded->tune->evaluations, record.evaluations);

    // Save as tuned default, then a sweep with "Use tuned defaults" runs the winner's parameters.
    QVERIFY(panel->saveDefaultButton()->isEnabled());
    QTest::mouseClick(panel->saveDefaultButton(), Qt::LeftButton);
    auto list = ks::loadTunedDefaults(ks::defaultTunedPath());
    QVERIFY(QString::fromStdString(ks::defaultTunedPath()).startsWith(dir_.filePath("config")));
    QVERIFY(list && list->size() == 1);
    const ks::Params best =
        record.params(*record.winner, ks::Registry::instance().find(record.kernel)->defaultParams());
    QCOMPARE(list->front().params, best);
    QVERIFY(panel->statusLabel()->text().startsWith("Saved"));

    w->setKernelChecked("gemm.block_tiling", true);
    auto* sweep = w->sweepEditor();
    sweep->sizesEdit()->setText("64");
    sweep->shapesEdit()->clear();
    sweep->paramsEdit()->clear();
    sweep->repsBox()->setValue(2);
    sweep->warmupBox()->setValue(0);
    sweep->tunedBox()->setChecked(true);
    QVERIFY(w->runButton()->isEnabled());
    QSignalSpy ran(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(ran.wait(60000));
    QCOMPARE(w->session().points.size(), size_t(1));
    QCOMPARE(w->session().points[0].item.params, best);
    QVERIFY(!w->session().tune);  // a sweep's session has no tune, and the tab says so
    QVERIFY(!panel->record());
    const QString log = w->findChild<QPlainTextEdit*>("log")->toPlainText();
    QVERIFY2(log.contains("Tuned defaults: gemm.block_tiling (size class 64): tuned"), qPrintable(log.right(800)));
  }

  // (d) Stop in the middle keeps what was evaluated; the window stays usable.
  void stopInTheMiddle() {
    auto w = makeWindow();
    auto* panel = w->tunePanel();
    setTune(panel, "8x8,16x16,8x4", "BK=1,2,4,8; BN=1,2,4", 5, false);
    QVERIFY2(panel->startButton()->isEnabled(), qPrintable(panel->requestError()));
    QSignalSpy evaluated(w->worker(), &ks::ui::EngineWorker::tuneEvaluated);
    QSignalSpy finished(w->worker(), &ks::ui::EngineWorker::tuneFinished);
    QTest::mouseClick(panel->startButton(), Qt::LeftButton);
    QVERIFY(QTest::qWaitFor([&] { return evaluated.count() >= 2; }, 60000));
    QTest::mouseClick(panel->stopButton(), Qt::LeftButton);
    QVERIFY(!panel->stopButton()->isEnabled());
    QVERIFY(finished.wait(60000));
    const auto record = finished.first().first().value<ks::TuneOutcome>().record;
    QCOMPARE(record.stop_reason, std::string("cancelled"));
    QVERIFY(record.evaluations.size() >= 2 && record.evaluations.size() < 36);
    QVERIFY(record.final.empty());
    // Every evaluation done is kept: in the session, the heatmap and the chart.
    QCOMPARE(w->session().points.size(), record.evaluations.size());
    QCOMPARE(w->session().tune->evaluations.size(), record.evaluations.size());
    QVERIFY(w->isDirty());
    using C = ks::ui::TuneProgressChart;
    QCOMPARE(size_t(panel->progressChart()->seriesPoints(C::measuredName()).size() +
                    panel->progressChart()->seriesPoints(C::failedName()).size()),
             record.evaluations.size());
    QVERIFY(panel->statusLabel()->text().startsWith(
        QString("Stopped: %1 evaluations kept").arg(record.evaluations.size())));
    QVERIFY(panel->verdictLabel()->text().contains("cancelled"));
    QVERIFY(!panel->saveDefaultButton()->isEnabled());  // an interrupted tune is no default
    QVERIFY(!panel->saveTunedDefault().isEmpty());
    // Usable: the next tune runs to its end (the stop flag was cleared).
    QVERIFY(panel->startButton()->isEnabled());
    QVERIFY(w->stopButton()->isEnabled() == false);
    setTune(panel, "8x8", "BK=4; BN=2,4", 0, false);
    finished.clear();
    QTest::mouseClick(panel->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(60000));
    const auto next = finished.first().first().value<ks::TuneOutcome>().record;
    QCOMPARE(next.evaluations.size(), size_t(2));
    QCOMPARE(next.stop_reason, std::string("space_exhausted"));
    w->setKernelChecked("gemm.naive", true);
    QVERIFY(w->runButton()->isEnabled());
  }
};

QTEST_MAIN(TestTunePanel)
#include "test_tune_panel.moc"
