// The desktop app, driven through its widgets on lavapipe (offscreen).
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include "engine/bench/complexity.h"
#include "engine/session/session.h"
#include "tests/ui/lavapipe_window.h"
#include "ui/chart_panel.h"
#include "ui/compare_panel.h"
#include "ui/main_window.h"
#include "ui/results_model.h"
#include "ui/roofline_chart.h"
#include "ui/sweep_editor.h"

using ks::ui::ChartKind;
using ks::ui::MainWindow;

class TestMainWindow : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

  // A window with lavapipe open and nothing picked; unsaved windows leave journals: not in ~/.qttest.
  std::unique_ptr<MainWindow> makeWindow() { return ks::ui::testing::openLavapipeWindow(dir_.filePath("journal")); }

  void setSweep(MainWindow& w, const QString& sizes, const QString& shapes = {}) {
    auto* sweep = w.sweepEditor();
    sweep->sizesEdit()->clear();
    QTest::keyClicks(sweep->sizesEdit(), sizes);
    sweep->shapesEdit()->clear();
    if (!shapes.isEmpty()) QTest::keyClicks(sweep->shapesEdit(), shapes);
    sweep->repsBox()->setValue(3);
    sweep->warmupBox()->setValue(1);
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings away from the user's
    QCoreApplication::setOrganizationName("kernelscope-tests");
    QVERIFY(dir_.isValid());
  }

  void runsTwoKernelsAtThreeSizesLive() {
    auto w = makeWindow();
    w->setKernelChecked("gemm.naive_coalesced", true);
    w->setKernelChecked("gemm.reg4x4", true);
    setSweep(*w, "32,64,96");
    QVERIFY2(w->runButton()->isEnabled(), qPrintable(w->sweepEditor()->errorText()));

    QAbstractItemModelTester tester(w->resultsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(w->isRunning());
    QVERIFY(!w->runButton()->isEnabled());
    QVERIFY(w->stopButton()->isEnabled());
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.first().first().toBool(), false);

    // The table holds exactly the engine's measurements, all verified.
    const auto& points = w->session().points;
    QCOMPARE(points.size(), size_t(6));
    QCOMPARE(w->resultsModel()->rowCount(), 6);
    for (int r = 0; r < 6; ++r) {
      const auto& m = w->resultsModel()->measurements()[size_t(r)];
      QCOMPARE(QString::fromStdString(m.item.kernel), QString::fromStdString(points[size_t(r)].item.kernel));
      QVERIFY2(m.trustworthy(), m.error.c_str());
      QCOMPARE(m.samples_ns.size(), size_t(3));
      QCOMPARE(w->resultsModel()
                   ->data(w->resultsModel()->index(r, ks::ui::ResultsModel::Verified), Qt::DisplayRole)
                   .toString(),
               QString("ok"));
    }
    QCOMPARE(w->progressBar()->value(), 6);

    // Each chart has one series per kernel with the measured values at the measured sizes.
    for (ChartKind kind : {ChartKind::Gflops, ChartKind::Time}) {
      auto* chart = w->chartPanel(kind);
      QCOMPARE(chart->seriesNames().size(), 2);
      QCOMPARE(chart->failedPointCount(), 0);
      for (const auto& m : points) {
        const QString name = ks::ui::seriesName(m.item);
        QVERIFY2(chart->seriesNames().contains(name), qPrintable(name));
        const auto pts = chart->seriesPoints(name);
        QCOMPARE(pts.size(), 3);
        bool found = false;
        for (const QPointF& p : pts)
          if (qFuzzyCompare(p.x(), double(m.item.size.m))) {
            found = true;
            if (kind == ChartKind::Gflops)
              QVERIFY(qFuzzyCompare(p.y(), m.gflops));
            else
              QVERIFY(p.y() > 0);
          }
        QVERIFY2(found, qPrintable(name));
      }
    }
    QVERIFY(w->isDirty());

    // The y-axis choice and the relative-time chart against a chosen baseline.
    w->metricBox()->setCurrentIndex(w->metricBox()->findText("GB/s"));
    QCOMPARE(w->chartPanel(ChartKind::Gflops)->metric(), ks::ui::Metric::Gbps);
    for (const auto& m : points) {
      bool found = false;
      for (const QPointF& p : w->chartPanel(ChartKind::Gflops)->seriesPoints(ks::ui::seriesName(m.item)))
        if (qFuzzyCompare(p.x(), double(m.item.size.m))) found = qFuzzyCompare(p.y(), m.gbps);
      QVERIFY2(found, "the GB/s chart does not show the measured GB/s");
    }
    QCOMPARE(w->baselineBox()->count(), 2);
    const QString base = ks::ui::seriesName(points[0].item);
    w->baselineBox()->setCurrentText(base);
    QCOMPARE(w->relativeChart()->baseline(), base);
    for (const QPointF& p : w->relativeChart()->seriesPoints(base)) QVERIFY(qFuzzyCompare(p.y(), 1.0));
    const QString other = ks::ui::seriesName(points[1].item);
    const auto rel = w->relativeChart()->seriesPoints(other);
    QCOMPARE(rel.size(), 3);
    for (const QPointF& p : rel)
      for (size_t i = 0; i + 1 < points.size(); i += 2)
        if (qFuzzyCompare(p.x(), double(points[i].item.size.m)))
          QVERIFY(qFuzzyCompare(p.y(), points[i + 1].stats.median / points[i].stats.median));
  }

  void adaptiveRepetitionsFromTheEditor() {
    auto w = makeWindow();
    w->setKernelChecked("cpu.gemm.naive", true);
    setSweep(*w, "16");
    QVERIFY(!w->sweepEditor()->budgetBox()->isEnabled());  // only with a target
    w->sweepEditor()->targetCiBox()->setValue(50);         // a loose target: met right away
    QVERIFY(w->sweepEditor()->budgetBox()->isEnabled());
    w->sweepEditor()->budgetBox()->setValue(1500);
    w->sweepEditor()->maxRepsBox()->setValue(400);
    w->sweepEditor()->cacheBox()->setValue(0);
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(60000));
    QCOMPARE(w->session().plan.target_ci, 0.5);
    QCOMPARE(w->session().plan.budget_ms, 1500u);
    QCOMPARE(w->session().plan.max_reps, 400u);
    QVERIFY(!w->session().plan.rotate_inputs);
    QCOMPARE(QString::fromStdString(w->session().points.at(0).stop_reason), QString("ci_target"));
  }

  void withTransfersSwitchRecordsAndDrawsEndToEnd() {
    auto w = makeWindow();
    w->setKernelChecked("gemv.row_per_thread", true);
    setSweep(*w, "128,256");
    w->sweepEditor()->repsBox()->setValue(3);
    QCheckBox* box = w->sweepEditor()->withTransfersBox();
    QVERIFY(box && !box->isChecked());  // off unless asked for
    box->setChecked(true);
    QVERIFY(w->sweepEditor()->plan()->with_transfers);
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(60000));
    QVERIFY(w->session().plan.with_transfers);
    QCOMPARE(int(w->session().points.size()), 2);
    for (const auto& m : w->session().points) {
      QVERIFY2(m.status == ks::PointStatus::Ok, m.error.c_str());
      QVERIFY(m.hasTransfers());
      QVERIFY(m.transferNs() > 0);
    }
    // The table: transfer and end-to-end columns filled; the time chart: the end-to-end series beside.
    auto* model = w->resultsModel();
    const QString e2e = model->data(model->index(0, ks::ui::ResultsModel::EndToEnd), Qt::DisplayRole).toString();
    QVERIFY2(e2e != QStringLiteral("–") && !e2e.isEmpty(), qPrintable(e2e));
    QCOMPARE(model->data(model->index(0, ks::ui::ResultsModel::EndToEnd), ks::ui::ResultsModel::SortRole).toDouble(),
             w->session().points[0].endToEndNs());
    const QString kernelSeries = ks::ui::seriesName(w->session().points[0].item);
    auto* chart = w->chartPanel(ks::ui::ChartKind::Time);
    QVERIFY(chart->seriesNames().contains(kernelSeries + ks::ui::ChartPanel::endToEndSuffix()));
    const auto kernelOnly = chart->seriesPoints(kernelSeries);
    const auto endToEnd = chart->seriesPoints(kernelSeries + ks::ui::ChartPanel::endToEndSuffix());
    QCOMPARE(endToEnd.size(), 2);
    for (int i = 0; i < 2; ++i) QVERIFY(endToEnd[i].y() > kernelOnly[i].y());

    // Switched off, the next run records none and draws none.
    box->setChecked(false);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(60000));
    QVERIFY(!w->session().plan.with_transfers);
    QVERIFY(!w->session().points.at(0).hasTransfers());
    QVERIFY(!chart->seriesNames().contains(kernelSeries + ks::ui::ChartPanel::endToEndSuffix()));
  }

  void measurePeaksFillsThePanelAndThePeakColumn() {
    auto w = makeWindow();
    QVERIFY(w->peaksButton()->isEnabled());
    QVERIFY(w->peaksLabel()->text().contains("not measured"));
    QSignalSpy done(w.get(), &MainWindow::peaksDone);
    QTest::mouseClick(w->peaksButton(), Qt::LeftButton);
    QVERIFY(w->isMeasuringPeaks());
    QVERIFY(!w->runButton()->isEnabled());  // one thing at a time on the engine thread
    QVERIFY(w->stopButton()->isEnabled());
    w->sweepEditor()->repsBox()->setValue(5);  // editing the sweep meanwhile does not enable Run
    QVERIFY(!w->runButton()->isEnabled());
    QVERIFY(done.wait(120000));
    QCOMPARE(done.first().first().toBool(), true);
    const QString text = w->peaksLabel()->text();
    for (const char* part : {"Peaks", "fp32 ", "GFLOP/s", "memory ", "GB/s", "dispatch ", "host CPU"})
      QVERIFY2(text.contains(part), qPrintable(part + QString(" missing from: ") + text));
    const QString details = w->peaksLabel()->toolTip();  // every measurement, with how it was measured
    for (const char* part : {"fp32 FMA (vec4 chains)", "vkCmdCopyBuffer", "empty dispatch", "workgroups",
                             "host CPU fp32 FMA", "STREAM triad", "STREAM copy", " threads"})
      QVERIFY2(details.contains(part), qPrintable(part + QString(" missing from: ") + details));

    // A run afterwards carries the peaks into the session and fills "% peak": GPU points against the
    // device's roofs, CPU points against the host CPU's.
    w->setKernelChecked("dot.two_pass_shared", true);
    w->setKernelChecked("cpu.dot.naive", true);
    setSweep(*w, "65536");
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    QVERIFY(w->sessionPeaks());
    QVERIFY(w->sessionPeaks()->fp32Gflops() > 0);
    QVERIFY(w->sessionPeaks()->cpuBandwidthGbps() > 0);
    auto* model = w->resultsModel();
    int cpu_rows = 0;
    for (int r = 0; r < model->rowCount(); ++r) {
      const auto& m = model->measurements()[size_t(r)];
      const QModelIndex cell = model->index(r, ks::ui::ResultsModel::PeakFraction);
      const QString pct = model->data(cell, Qt::DisplayRole).toString();
      QVERIFY2(pct.endsWith("% mem"), qPrintable(pct));  // a dot product is bandwidth-bound
      const QString tip = model->data(cell, Qt::ToolTipRole).toString();
      const bool cpu = m.item.kernel.rfind("cpu.", 0) == 0;
      cpu_rows += cpu;
      QVERIFY2(tip.contains(cpu ? "host CPU's measured roofline" : "device's measured roofline"), qPrintable(tip));
    }
    QCOMPARE(cpu_rows, 1);
    // The Series tab's best % peak for the CPU series too, and the roofline's CPU roofs.
    QCOMPARE(w->seriesTable()->rowCount(), 2);
    for (int r = 0; r < 2; ++r)
      QVERIFY2(w->seriesTable()->item(r, 5)->text().endsWith("%"), qPrintable(w->seriesTable()->item(r, 0)->text()));
    const QStringList ceilings = w->rooflineChart()->ceilingNames();
    QVERIFY2(ceilings.filter(QRegularExpression("^CPU: memory ")).size() == 1, qPrintable(ceilings.join(", ")));
    QVERIFY2(ceilings.filter(QRegularExpression("^GPU: memory ")).size() == 1, qPrintable(ceilings.join(", ")));
  }

  void driftIsCheckedAndAnUnstableSessionShowsTheBanner() {
    auto w = makeWindow();
    w->setKernelChecked("dot.two_pass_shared", true);
    w->setKernelChecked("cpu.dot.naive", true);
    setSweep(*w, "4096,8192");
    w->sweepEditor()->driftBox()->setValue(50);  // lavapipe on a busy machine drifts; 50% never fires here
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    QVERIFY(w->session().drift);
    const ks::DriftReport& d = *w->session().drift;
    QCOMPARE(d.threshold, 0.5);
    QVERIFY(d.checks.size() >= 2);
    QCOMPARE(QString::fromStdString(d.checks.front().when), QString("start"));
    QCOMPARE(QString::fromStdString(d.checks.back().when), QString("end"));
    // The banner follows the verdict (on a busy machine even 50% can be exceeded).
    QCOMPARE(w->driftBanner()->isVisible(), d.unstable);

    // The same session with its last check 80% slower: the file says unstable, the banner shows it.
    ks::Session s = w->session();
    auto checks = s.drift->checks;
    // Every check as fast as the first, the last 80% slower.
    for (size_t i = 1; i < checks.size(); ++i) {
      for (double& ns : checks[i].samples_ns) ns = checks.front().stats.median * (i + 1 == checks.size() ? 1.8 : 1.0);
      checks[i].stats = ks::computeStats(checks[i].samples_ns);
    }
    s.drift = ks::evaluateDrift(s.drift->reference, checks, 0.5);
    s.drift->clock = d.clock;
    QVERIFY(s.drift->unstable);
    const QString path = dir_.filePath("unstable.json");
    QVERIFY(ks::saveSession(s, path.toStdString()));
    QVERIFY2(w->openSession(path), qPrintable(w->lastError()));
    QVERIFY(w->driftBanner()->isVisible());
    QVERIFY2(w->driftBanner()->text().contains("Unstable sweep: reference time moved"),
             qPrintable(w->driftBanner()->text()));
    QVERIFY2(w->driftBanner()->text().contains("+80.0%"), qPrintable(w->driftBanner()->text()));
    w->newSession();
    QVERIFY(!w->driftBanner()->isVisible());

    // Off in the editor: no checks, no report.
    w->sweepEditor()->driftBox()->setValue(0);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    QVERIFY(!w->session().plan.drift_check);
    QVERIFY(!w->session().drift);
  }

  void theWatchdogStopsAPointAndTheRunGoesOn() {
    // A 0.1 s watchdog from the editor: gemm.naive at 512 (about half a
    // second a run on lavapipe) is stopped and failed with the reason; the
    // device is recreated and the next point, a small one, is measured.
    auto w = makeWindow();
    w->setKernelChecked("gemm.naive", true);
    setSweep(*w, "512,16");
    w->sweepEditor()->driftBox()->setValue(0);
    w->sweepEditor()->dispatchTimeoutBox()->setValue(0.1);
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    QCOMPARE(w->session().plan.dispatch_timeout_ms, 100u);
    const auto& points = w->resultsModel()->measurements();
    QCOMPARE(int(points.size()), 2);
    QCOMPARE(points[0].status, ks::PointStatus::Failed);
    QVERIFY2(QString::fromStdString(points[0].error).contains("watchdog"), points[0].error.c_str());
    QVERIFY2(points[1].trustworthy(), points[1].error.c_str());
    QVERIFY(w->runButton()->isEnabled());
  }

  void baselineRooflineAndSeriesViews() {
    auto w = makeWindow();
    w->setKernelChecked("dot.two_pass_shared", true);
    w->setKernelChecked("cpu.dot.naive", true);
    setSweep(*w, "4096,16384,65536");
    w->sweepEditor()->driftBox()->setValue(0);  // a busy machine's drift would add warnings to the comparison
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    const QString first = dir_.filePath("baseline.json");
    QVERIFY(w->saveSessionTo(first));

    // Series: one row per series with its complexity slope; the roofline has the GPU and CPU points.
    QCOMPARE(w->seriesTable()->rowCount(), 2);
    for (int r = 0; r < 2; ++r) {
      QCOMPARE(w->seriesTable()->item(r, 1)->text(), QString("3"));
      QVERIFY2(w->seriesTable()->item(r, 2)->text().contains("(2 sizes)"),
               qPrintable(w->seriesTable()->item(r, 2)->text()));
    }
    w->fitFromBox()->setValue(4096);  // all three sizes
    for (int r = 0; r < 2; ++r) QVERIFY(w->seriesTable()->item(r, 2)->text().contains("(3 sizes)"));
    w->fitFromBox()->setValue(65536);  // one size left: nothing to fit
    for (int r = 0; r < 2; ++r) QCOMPARE(w->seriesTable()->item(r, 2)->text(), QString("–"));
    w->fitFromBox()->setValue(0);
    QCOMPARE(w->rooflineChart()->seriesNames().size(), 2);  // no peaks measured: points only
    QVERIFY(!w->rooflineChart()->noteText().isEmpty());
    const QString dotSeries = ks::ui::seriesName(w->session().points.front().item);
    for (const QPointF& p :
         w->rooflineChart()->seriesPoints(QString::fromStdString(ks::seriesKey(w->session().points.front().item))))
      QVERIFY2(std::abs(p.x() - 0.25) < 1e-3, "a dot product does 2 FLOP per 8 bytes");

    // The same sweep again, compared against the first: matching series overlaid dashed, ratios in Compare.
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    QVERIFY(w->openBaseline(first));
    QVERIFY(w->baselineSession());
    QCOMPARE(w->chartPanel(ChartKind::Gflops)->overlayNames().size(), 2);
    QVERIFY(w->chartPanel(ChartKind::Gflops)->overlayNames().contains(dotSeries + ks::ui::ChartPanel::overlaySuffix()));
    QVERIFY(w->comparePanel()->hasBaseline());
    QCOMPARE(w->comparePanel()->model()->rowCount(), 6);
    for (int r = 0; r < 6; ++r) {
      const QString ratio =
          w->comparePanel()->model()->index(r, ks::ui::CompareModel::Ratio).data(Qt::DisplayRole).toString();
      bool ok = false;
      const double v = ratio.toDouble(&ok);
      QVERIFY2(ok && v > 0.05 && v < 20, qPrintable(ratio));  // the same kernels on the same machine
    }
    QVERIFY2(w->comparePanel()->warningsText().isEmpty(), qPrintable(w->comparePanel()->warningsText()));
    w->clearBaseline();
    QVERIFY(w->chartPanel(ChartKind::Gflops)->overlayNames().isEmpty());
    QVERIFY(!w->comparePanel()->hasBaseline());
    // A broken baseline is refused with the reason; nothing changes.
    const QString broken = dir_.filePath("broken-baseline.json");
    QFile f(broken);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"format\": \"kernelscope-session\"");
    f.close();
    QVERIFY(!w->openBaseline(broken));
    QVERIFY(!w->baselineSession());
    QVERIFY(w->lastError().contains("not a valid JSON"));
  }

  void stopWhileMeasuringPeaks() {
    auto w = makeWindow();
    QSignalSpy done(w.get(), &MainWindow::peaksDone);
    QTest::mouseClick(w->peaksButton(), Qt::LeftButton);
    QTest::mouseClick(w->stopButton(), Qt::LeftButton);
    QVERIFY(done.wait(60000));
    QCOMPARE(done.first().first().toBool(), false);
    QVERIFY(!w->isMeasuringPeaks());
    QVERIFY(w->peaksButton()->isEnabled());
    QVERIFY(w->peaksLabel()->text().contains("stopped"));
    QVERIFY(!w->sessionPeaks());
  }

  void stopRightAfterRunIsNotLost() {
    auto w = makeWindow();
    w->setKernelChecked("gemm.naive_coalesced", true);
    setSweep(*w, "16:1024:+16");
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QTest::mouseClick(w->stopButton(), Qt::LeftButton);  // before the engine thread starts the run
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.first().first().toBool(), true);
    QVERIFY(w->resultsModel()->rowCount() <= 1);
  }

  void saveDuringARunLeavesLaterPointsUnsaved() {
    auto w = makeWindow();
    w->setKernelChecked("gemm.naive_coalesced", true);
    setSweep(*w, "16:1024:+16");
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(w->resultsModel()->rowCount() >= 1, 60000);
    QVERIFY(w->saveSessionTo(dir_.filePath("midrun.json")));
    const int saved = w->resultsModel()->rowCount();
    QTRY_VERIFY_WITH_TIMEOUT(w->resultsModel()->rowCount() > saved, 60000);
    QVERIFY2(w->isDirty(), "points that arrived after the save must count as unsaved");
    w->stopRun();
    QVERIFY(finished.wait(30000));
  }

  void closingDuringARunStopsFirst() {
    auto w = makeWindow();
    w->setKernelChecked("gemm.naive_coalesced", true);
    setSweep(*w, "16:1024:+16");
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(w->resultsModel()->rowCount() >= 1, 60000);
    QVERIFY(!w->close());  // refused for now: the sweep is stopping
    QVERIFY(w->isVisible());
    QVERIFY(finished.wait(30000));
    QTRY_VERIFY_WITH_TIMEOUT(!w->isVisible(), 10000);  // closed once the engine let go
  }

  void stopKeepsFinishedPointsAndStaysResponsive() {
    auto w = makeWindow();
    w->setKernelChecked("gemm.naive_coalesced", true);
    setSweep(*w, "16:1024:+16");  // 64 points, each warms up for 200 ms
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    // The UI thread keeps serving events while the engine runs: the model
    // grows under QTRY, which only spins this thread's event loop.
    QTRY_VERIFY_WITH_TIMEOUT(w->resultsModel()->rowCount() >= 2, 60000);
    w->resize(1000, 700);
    w->tabs()->setCurrentIndex(1);
    QElapsedTimer sinceStop;
    sinceStop.start();
    QTest::mouseClick(w->stopButton(), Qt::LeftButton);
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.first().first().toBool(), true);
    QVERIFY2(sinceStop.elapsed() < 5000, "Stop took more than one dispatch and a warm-up to act");
    const int rows = w->resultsModel()->rowCount();
    QVERIFY(rows >= 2);
    QVERIFY(rows < 64);
    QCOMPARE(w->session().points.size(), size_t(rows));
    for (const auto& m : w->session().points) QVERIFY(m.status == ks::PointStatus::Ok);
    QCOMPARE(
        w->chartPanel(ChartKind::Gflops)->seriesPoints(w->chartPanel(ChartKind::Gflops)->seriesNames().first()).size(),
        rows);
    QVERIFY(w->runButton()->isEnabled());
    QVERIFY(!w->stopButton()->isEnabled());
  }

  void saveAndReopenGiveTheSameTable() {
    auto w = makeWindow();
    w->setKernelChecked("gemm.naive", true);
    w->setKernelChecked("cpu.gemm.openblas", true);
    setSweep(*w, "24,40x48x56");
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    auto* model = w->resultsModel();
    QCOMPARE(model->rowCount(), 4);
    QList<int> all{0, 1, 2, 3};
    const QString before = model->rowsAsText(all);

    const QString path = dir_.filePath("roundtrip.json");
    QVERIFY(w->saveSessionTo(path));
    QVERIFY(!w->isDirty());
    w->newSession();
    QCOMPARE(model->rowCount(), 0);
    QVERIFY(w->openSession(path));
    QCOMPARE(model->rowCount(), 4);
    QCOMPARE(model->rowsAsText(all), before);
    QCOMPARE(w->chartPanel(ChartKind::Time)->seriesNames().size(), 2);
    // The CLI reads what the app wrote.
    QProcess cli;
    cli.start(KS_CLI_PATH, {"show", path});
    QVERIFY(cli.waitForFinished(30000));
    QCOMPARE(cli.exitCode(), 0);
    QVERIFY(cli.readAllStandardOutput().contains("cpu.gemm.openblas"));
  }

  void brokenSessionIsRefusedAndNothingIsLost() {
    auto w = makeWindow();
    const QString path = dir_.filePath("broken.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"format": "kernelscope-session", "version": 1, "points": "nope"})");
    f.close();
    QVERIFY(!w->openSession(path));
    QVERIFY2(w->lastError().contains("broken.json"), qPrintable(w->lastError()));
    QVERIFY(!w->openSession(dir_.filePath("missing.json")));
    QVERIFY2(w->lastError().contains("cannot open"), qPrintable(w->lastError()));
  }

  void invalidEntriesAreRefusedWithTheReason() {
    auto w = makeWindow();
    w->setKernelChecked("gemm.naive", true);
    auto* sweep = w->sweepEditor();

    setSweep(*w, "0");
    QVERIFY(!w->runButton()->isEnabled());
    QVERIFY2(sweep->errorText().contains("size 0"), qPrintable(sweep->errorText()));
    QVERIFY(!sweep->sizesEdit()->styleSheet().isEmpty());  // marked

    setSweep(*w, "64:32:x2");
    QVERIFY(!w->runButton()->isEnabled());
    QVERIFY2(sweep->errorText().contains("ends before it starts"), qPrintable(sweep->errorText()));

    setSweep(*w, "64", "64x32");
    QVERIFY(!w->runButton()->isEnabled());
    QVERIFY2(sweep->errorText().contains("maxComputeWorkGroupInvocations"), qPrintable(sweep->errorText()));

    setSweep(*w, "64", "16xx");
    QVERIFY(!w->runButton()->isEnabled());
    QVERIFY2(sweep->errorText().contains("16xx"), qPrintable(sweep->errorText()));

    // A shape one kernel cannot take: a warning, the others still run.
    w->setKernelChecked("gemm.tiled_shared", true);
    setSweep(*w, "64", "16x8");
    QVERIFY(w->runButton()->isEnabled());
    QVERIFY2(sweep->warningText().contains("not square"), qPrintable(sweep->warningText()));

    // Shared memory over the device limit.
    w->setKernelChecked("gemm.naive", false);
    w->setKernelChecked("gemm.tiled_shared", false);
    w->setKernelChecked("gemm.block_tiling", true);
    setSweep(*w, "64", "64x16");
    sweep->paramsEdit()->setText("BK=16; BN=8");
    QVERIFY(!w->runButton()->isEnabled());
    QVERIFY2(sweep->errorText().contains("maxComputeSharedMemorySize"), qPrintable(sweep->errorText()));

    // A size the only kernel cannot take.
    w->setKernelChecked("gemm.block_tiling", false);
    w->setKernelChecked("gemm.reg4x4", true);
    sweep->paramsEdit()->clear();
    setSweep(*w, "17");
    QVERIFY(!w->runButton()->isEnabled());
    QVERIFY2(sweep->errorText().contains("not a multiple of 4"), qPrintable(sweep->errorText()));

    // An unknown tunable.
    setSweep(*w, "16");
    sweep->paramsEdit()->setText("BK=4");
    QVERIFY(!w->runButton()->isEnabled());
    QVERIFY2(sweep->errorText().contains("tunable named BK"), qPrintable(sweep->errorText()));

    // Nothing picked.
    sweep->paramsEdit()->clear();
    w->setKernelChecked("gemm.reg4x4", false);
    QVERIFY(!w->runButton()->isEnabled());
    QVERIFY2(sweep->errorText().contains("kernel"), qPrintable(sweep->errorText()));
  }

  void headlessPngExportFromTheCommandLine() {
    // A session from the CLI, charted by the app without a window.
    const QString session = dir_.filePath("cli.json");
    QProcess cli;
    cli.start(KS_CLI_PATH, {"run", "--kernels", "gemm.naive_coalesced,cpu.gemm.openblas", "--sizes", "16,32,64",
                            "--reps", "3", "--warmup", "0", "--peaks", "-o", session});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 0);
    for (const char* kind : {"gflops", "time", "roofline"}) {
      const QString png = dir_.filePath(QString("chart-%1.png").arg(kind));
      QProcess gui;
      auto env = QProcessEnvironment::systemEnvironment();
      env.insert("QT_QPA_PLATFORM", "offscreen");
      gui.setProcessEnvironment(env);
      gui.start(KS_GUI_PATH, {"--export-png", png, "--chart", kind, "--size", "800x500", "--scale", "2", session});
      QVERIFY(gui.waitForFinished(60000));
      QVERIFY2(gui.exitCode() == 0, gui.readAllStandardError().constData());
      // The session has the host CPU's peaks too: the CPU points have their own roof, no note.
      const QByteArray said = gui.readAllStandardOutput();
      QVERIFY2(said.startsWith("wrote ") && !said.contains("no roof") && !said.contains("No measured"),
               said.constData());
      QImage image(png);
      QCOMPARE(image.size(), QSize(1600, 1000));
      int nonWhite = 0;
      for (int y = 0; y < image.height(); y += 4)
        for (int x = 0; x < image.width(); x += 4) nonWhite += image.pixel(x, y) != qRgb(255, 255, 255);
      QVERIFY2(nonWhite > 1000, "the exported chart is blank");
    }
    QProcess bad;
    bad.start(KS_GUI_PATH, {"--export-png", dir_.filePath("x.png"), "--chart", "pie", session});
    QVERIFY(bad.waitForFinished(30000));
    QCOMPARE(bad.exitCode(), 2);
    QVERIFY(bad.readAllStandardError().contains(
        "--chart must be gflops, gbps, time, relative, roofline, heatmap or tune-progress"));
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
