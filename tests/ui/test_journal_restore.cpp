// The app's journal: every run is journaled under the XDG data folder, saving
// or discarding removes it, and the next start offers back what was not saved.
#include <sys/wait.h>
#include <unistd.h>

#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QLockFile>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <csignal>
#include <fstream>

#include "engine/session/journal.h"
#include "tests/synthetic_session.h"
#include "tests/ui/lavapipe_window.h"
#include "ui/chart_panel.h"
#include "ui/main_window.h"
#include "ui/results_model.h"
#include "ui/sweep_editor.h"

using ks::ui::ChartKind;
using ks::ui::MainWindow;
using Answer = MainWindow::RestoreAnswer;

class TestJournalRestore : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir xdg_;

  static QString journalDir() {
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + "/journal";
  }
  static QStringList journals() { return QDir(journalDir()).entryList({"*.partial"}, QDir::Files); }

  // A window with lavapipe open, as a user would have it (journals where the app keeps them).
  std::unique_ptr<MainWindow> makeWindow() { return ks::ui::testing::openLavapipeWindow(); }

  // A finished, unsaved sweep of four points.
  void runSweep(MainWindow& w) {
    w.setKernelChecked("gemm.naive", true);
    w.setKernelChecked("cpu.gemm.naive", true);
    auto* sweep = w.sweepEditor();
    sweep->sizesEdit()->clear();
    QTest::keyClicks(sweep->sizesEdit(), "16,32");
    sweep->repsBox()->setValue(3);
    sweep->warmupBox()->setValue(1);
    QSignalSpy finished(&w, &MainWindow::runFinished);
    QTest::mouseClick(w.runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    QCOMPARE(w.session().points.size(), size_t(4));
  }

  // A journal of two points, as a run killed after its second point leaves it.
  static QString writeJournal(const QString& name) {
    using namespace ks::testing;
    const auto a = okPoint(planItem("gemm.naive", 64), samplesAround(1e6, 5));
    const auto b = okPoint(planItem("cpu.gemm.naive", 64), samplesAround(3e6, 5));
    ks::Session header = syntheticSession({a, b});
    header.plan.items.push_back(planItem("gemm.naive", 128));
    header.points.clear();
    QDir().mkpath(journalDir());
    const QString path = QDir(journalDir()).filePath(name);
    auto writer = ks::JournalWriter::create(path.toStdString(), header);
    if (!writer) qFatal("%s", writer.error().message.c_str());
    if (!writer->append(a) || !writer->append(b)) qFatal("cannot write %s", qPrintable(path));
    return path;
  }

 private slots:
  void initTestCase() {
    QVERIFY(xdg_.isValid());
    // The real XDG lookup, in folders of this test's own.
    qputenv("XDG_DATA_HOME", QFile::encodeName(xdg_.filePath("data")));
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(xdg_.filePath("config")));
    QCoreApplication::setOrganizationName("kernelscope-tests");
    QVERIFY2(journalDir().startsWith(xdg_.filePath("data")), qPrintable(journalDir()));
  }

  void init() { QDir(journalDir()).removeRecursively(); }

  void aRunIsJournaledUntilItIsSaved() {
    auto w = makeWindow();
    QCOMPARE(w->journalDirectory(), journalDir());
    runSweep(*w);
    QVERIFY(w->isDirty());
    // The journal under the XDG data folder holds every point of the session.
    const QString path = w->journalPath();
    QVERIFY(!path.isEmpty());
    QCOMPARE(QFileInfo(path).absolutePath(), QDir(journalDir()).absolutePath());
    QCOMPARE(journals().size(), 1);
    auto journal = ks::loadJournal(path.toStdString());
    QVERIFY2(journal.ok(), journal.ok() ? "" : journal.error().message.c_str());
    QCOMPARE(journal->session.points.size(), w->session().points.size());
    for (size_t i = 0; i < journal->session.points.size(); ++i)
      QCOMPARE(journal->session.points[i].samples_ns, w->session().points[i].samples_ns);
    QCOMPARE(journal->session.plan.items.size(), size_t(4));
    QVERIFY(journal->session.device.has_value());

    // Saved: the file holds it, the journal goes.
    QTemporaryDir out;
    QVERIFY(w->saveSessionTo(out.filePath("s.json")));
    QVERIFY(!QFile::exists(path));
    QVERIFY(!QFile::exists(path + ".lock"));
    QVERIFY(w->journalPath().isEmpty());
  }

  void aLostSweepIsRestoredAsAnUnsavedSession() {
    std::vector<ks::Measurement> lost;
    {
      auto crashed = makeWindow();
      runSweep(*crashed);
      lost = crashed->session().points;
    }  // gone without saving or closing, as in a crash
    QCOMPARE(journals().size(), 1);

    auto w = makeWindow();
    QStringList questions;
    w->setRestoreAnswerer([&](const QString& question) {
      questions << question;
      return Answer::Restore;
    });
    QSignalSpy loaded(w.get(), &MainWindow::sessionLoaded);
    QVERIFY(w->offerRestore());
    QCOMPARE(questions.size(), 1);
    QVERIFY2(questions[0].contains("4 of 4 points") && questions[0].contains("llvmpipe"), qPrintable(questions[0]));
    QCOMPARE(loaded.count(), 1);

    // The points are back, in the table and the charts, as an unsaved session.
    QCOMPARE(w->session().points.size(), lost.size());
    for (size_t i = 0; i < lost.size(); ++i) {
      QCOMPARE(w->session().points[i].samples_ns, lost[i].samples_ns);
      QVERIFY(w->session().points[i].trustworthy());
    }
    QCOMPARE(w->resultsModel()->rowCount(), 4);
    QCOMPARE(w->chartPanel(ChartKind::Gflops)->seriesNames().size(), 2);
    QCOMPARE(w->chartPanel(ChartKind::Time)->seriesPoints(ks::ui::seriesName(lost[0].item)).size(), 2);
    QVERIFY(w->isDirty());
    QVERIFY(w->windowTitle().startsWith("Untitled"));

    // The journal stands for the restored session until it is discarded.
    QCOMPARE(journals().size(), 1);
    QVERIFY(!w->journalPath().isEmpty());
    QVERIFY(!w->offerRestore());  // its own journal is not offered again
    w->newSession();
    QCOMPARE(journals().size(), 0);
    QVERIFY(w->session().points.empty());
  }

  void discardDeletesAndLaterKeeps() {
    const QString path = writeJournal("run-a.json.partial");
    MainWindow w;
    w.setAskBeforeDiscard(false);
    int asked = 0;
    w.setRestoreAnswerer([&](const QString&) {
      ++asked;
      return Answer::Later;
    });
    QVERIFY(!w.offerRestore());
    QCOMPARE(asked, 1);
    QVERIFY(QFile::exists(path));
    QVERIFY(!QFile::exists(path + ".lock"));  // Later lets go of it
    QVERIFY(w.session().points.empty());
    QVERIFY(!w.isDirty());

    w.setRestoreAnswerer([&](const QString&) {
      ++asked;
      return Answer::Discard;
    });
    QVERIFY(!w.offerRestore());
    QCOMPARE(asked, 2);
    QVERIFY(!QFile::exists(path));
    QVERIFY(w.session().points.empty());
  }

  void aJournalWithAStaleLockIsOfferedAndOneHeldByARunningAppIsNot() {
    const QString path = writeJournal("run-b.json.partial");
    // A kernelscope that is running holds the lock: its sweep is not lost.
    {
      QLockFile held(path + ".lock");
      QVERIFY(held.tryLock(0));
      MainWindow w;
      int asked = 0;
      w.setRestoreAnswerer([&](const QString&) {
        ++asked;
        return Answer::Discard;
      });
      QVERIFY(!w.offerRestore());
      QCOMPARE(asked, 0);
      QVERIFY(QFile::exists(path));
    }
    // One killed while it held the lock leaves a stale lock: the sweep is offered.
    const pid_t child = fork();
    if (child == 0) {
      QLockFile lock(path + ".lock");
      _exit(lock.tryLock(0) ? 0 : 1);  // no destructor: the lock file stays behind
    }
    int status = 0;
    QCOMPARE(waitpid(child, &status, 0), child);
    QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    QVERIFY(QFile::exists(path + ".lock"));
    MainWindow w;
    w.setAskBeforeDiscard(false);
    w.setRestoreAnswerer([](const QString&) { return Answer::Restore; });
    QVERIFY(w.offerRestore());
    QCOMPARE(w.session().points.size(), size_t(2));
    QCOMPARE(w.session().plan.items.size(), size_t(3));
    QVERIFY(w.isDirty());
  }

  void anUnreadableJournalCanOnlyBeDiscardedOrKept() {
    QDir().mkpath(journalDir());
    const QString path = QDir(journalDir()).filePath("run-c.json.partial");
    std::ofstream(path.toStdString()) << "not a journal\n";
    MainWindow w;
    w.setAskBeforeDiscard(false);
    QString question;
    w.setRestoreAnswerer([&](const QString& q) {
      question = q;
      return Answer::Restore;
    });
    QVERIFY(!w.offerRestore());  // Restore is no answer here: it stays for later
    QVERIFY2(question.contains("cannot read"), qPrintable(question));
    QVERIFY(QFile::exists(path));
    w.setRestoreAnswerer([](const QString&) { return Answer::Discard; });
    QVERIFY(!w.offerRestore());
    QVERIFY(!QFile::exists(path));
  }

  void theOfferIsAMessageBoxWithRestoreDiscardAndLater() {
    writeJournal("run-d.json.partial");
    MainWindow w;
    w.setAskBeforeDiscard(false);
    w.show();
    QString text;
    QStringList buttons;
    bool seen = false;
    // Answer the modal box from the event loop it runs.
    QTimer poll;
    connect(&poll, &QTimer::timeout, this, [&] {
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      if (!box || seen) return;
      seen = true;
      text = box->text();
      QPushButton* restore = nullptr;
      for (QAbstractButton* b : box->buttons()) {
        buttons << b->text();
        if (b->text() == "Restore") restore = qobject_cast<QPushButton*>(b);
      }
      if (restore) restore->click();
    });
    poll.start(20);
    QVERIFY(w.offerRestore());
    poll.stop();
    QVERIFY(seen);
    QVERIFY2(text.contains("2 of 3 points"), qPrintable(text));
    buttons.sort();
    QCOMPARE(buttons, QStringList({"Discard", "Later", "Restore"}));
    QCOMPARE(w.session().points.size(), size_t(2));
  }
};

QTEST_MAIN(TestJournalRestore)
#include "test_journal_restore.moc"
