// A remote target in the app: a real sshd on 127.0.0.1 (tests/ssh_server.h),
// added through the device list, swept live on the server's lavapipe, stopped.
#include <QComboBox>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "engine/session/session.h"
#include "tests/ssh_server.h"
#include "tests/ui/lavapipe_window.h"
#include "ui/chart_panel.h"
#include "ui/main_window.h"
#include "ui/results_model.h"
#include "ui/sweep_editor.h"

using ks::testing::server;
using ks::ui::ChartKind;
using ks::ui::MainWindow;

class TestRemoteTarget : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

  std::unique_ptr<MainWindow> windowOnServer() {
    auto w = ks::ui::testing::openLavapipeWindow(dir_.filePath("journal"));
    QSignalSpy listed(w.get(), &MainWindow::remoteDevicesListed);
    w->addRemoteTarget(QString::fromStdString(server().target()));
    // The UI thread did not wait for ssh: the answer comes later, as a signal.
    if (listed.count() != 0) return nullptr;
    if (!listed.wait(180000)) return nullptr;
    if (!listed.first().at(1).toBool()) return nullptr;
    return w;
  }
  void setSweep(MainWindow& w, const QString& sizes) {
    w.setKernelChecked("gemm.naive", true);
    auto* sweep = w.sweepEditor();
    sweep->sizesEdit()->clear();
    QTest::keyClicks(sweep->sizesEdit(), sizes);
    sweep->shapesEdit()->clear();
    sweep->repsBox()->setValue(3);
    sweep->warmupBox()->setValue(1);
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("kernelscope-tests");
    QVERIFY(dir_.isValid());
    if (!std::filesystem::exists(ks::testing::kSshd))
      QSKIP("sshd is not installed (Debian: openssh-server; scripts/test.sh installs it)");
    QCOMPARE(QString::fromStdString(server().failure), QString());
  }

  void remoteTargetIsAddedAndSweptLive() {
    auto w = windowOnServer();
    QVERIFY2(w, "the server's devices did not arrive");
    const QString target = QString::fromStdString(server().target());
    // The server's device sits beside the local one, selected; "Add remote target…" stays last.
    QVERIFY2(w->deviceBox()->currentText().startsWith(target + ": 0: llvmpipe"),
             qPrintable(w->deviceBox()->currentText()));
    QVERIFY(w->deviceBox()->itemText(0).startsWith("0: llvmpipe"));
    QCOMPARE(w->deviceBox()->itemText(w->deviceBox()->count() - 1), QString("Add remote target…"));

    setSweep(*w, "32,64,96");
    QVERIFY2(w->runButton()->isEnabled(), qPrintable(w->sweepEditor()->errorText()));
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QVERIFY(w->isRunning());
    QVERIFY(w->stopButton()->isEnabled());
    QVERIFY(finished.wait(180000));
    QCOMPARE(finished.first().first().toBool(), false);

    const auto& s = w->session();
    QCOMPARE(s.points.size(), size_t(3));
    for (const auto& m : s.points) QVERIFY2(m.trustworthy(), m.error.c_str());
    QVERIFY(s.remote);
    QCOMPARE(QString::fromStdString(s.remote->target), target);
    QVERIFY(s.device && s.device->name.find("llvmpipe") != std::string::npos);
    QCOMPARE(w->resultsModel()->rowCount(), 3);
    QCOMPARE(w->progressBar()->value(), 3);
    auto* chart = w->chartPanel(ChartKind::Gflops);
    QCOMPARE(chart->seriesNames().size(), 1);
    QCOMPARE(chart->seriesPoints(chart->seriesNames().first()).size(), 3);
  }

  void stopEndsTheServersSweepAndKeepsItsPoints() {
    auto w = windowOnServer();
    QVERIFY2(w, "the server's devices did not arrive");
    setSweep(*w, "32:1024:+32");
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    QTest::mouseClick(w->runButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(w->resultsModel()->rowCount() >= 2, 180000);
    QTest::mouseClick(w->stopButton(), Qt::LeftButton);
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.first().first().toBool(), true);
    const auto& s = w->session();
    QVERIFY(s.points.size() >= 2);
    QVERIFY(s.points.size() < s.plan.items.size());
    QVERIFY(s.remote);
    // The server's run ended too.
    QTRY_VERIFY_WITH_TIMEOUT(ks::testing::processesWith(server().remoteDir() + "/").empty(), 10000);
  }

  void aRefusedKeyIsReportedAndNothingIsAdded() {
    auto w = ks::ui::testing::openLavapipeWindow(dir_.filePath("journal"));
    const int before = w->deviceBox()->count();
    QSignalSpy listed(w.get(), &MainWindow::remoteDevicesListed);
    w->addRemoteTarget("ks-wrong-key");
    QVERIFY(listed.wait(60000));
    QCOMPARE(listed.first().at(1).toBool(), false);
    QVERIFY2(w->lastError().contains("ks-wrong-key refused the key"), qPrintable(w->lastError()));
    QCOMPARE(w->deviceBox()->count(), before);
  }
};

QTEST_MAIN(TestRemoteTarget)
#include "test_remote_target.moc"
