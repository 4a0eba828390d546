// The kernel editor, driven through its widgets on lavapipe (offscreen):
// compile errors land on the line of the user's file, a fixed kernel shows
// the driver's statistics, Run measures it like any kernel, an outside edit
// reloads and recompiles, built-in and session kernels open in it.
#include <Qsci/qsciscintilla.h>

#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QToolTip>
#include <QTreeWidget>
#include <QtTest>
#include <cstdio>

#include "engine/kernels/kernel_file.h"
#include "engine/kernels/registry.h"
#include "tests/ui/lavapipe_window.h"
#include "ui/kernel_editor.h"
#include "ui/main_window.h"
#include "ui/sweep_editor.h"

using ks::ui::KernelEditor;
using ks::ui::MainWindow;

namespace {

// The 1-based line of the first line of `text` that contains `needle`; 0 if none.
int lineOf(const QString& text, const QString& needle) {
  const QStringList lines = text.split('\n');
  for (int i = 0; i < lines.size(); ++i)
    if (lines[i].contains(needle)) return i + 1;
  return 0;
}

// Replaces a whole 1-based line as a user would: select it, type over it.
void replaceLine(QsciScintilla* edit, int line, const QString& with) {
  const QString old = edit->text(line - 1);
  const int length = int(old.length() - (old.endsWith('\n') ? 1 : 0));
  edit->setSelection(line - 1, 0, line - 1, length);
  edit->replaceSelectedText(with);
}

bool writeFile(const QString& path, const QString& text) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text.toUtf8()) == text.toUtf8().size();
}

}  // namespace

class TestKernelEditor : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

  std::unique_ptr<MainWindow> makeWindow() { return ks::ui::testing::openLavapipeWindow(dir_.filePath("journal")); }

  // Compiles through the Compile action and returns whether it compiled.
  static bool compileAndWait(KernelEditor* editor) {
    QSignalSpy done(editor, &KernelEditor::compileFinished);
    editor->compileAction()->trigger();
    if (!editor->isCompiling()) qFatal("Compile did not ask the engine");
    if (!done.wait(60000)) qFatal("no compile result within a minute");
    return done.last().first().toBool();
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("kernelscope-tests");
    QVERIFY(dir_.isValid());
  }

  void aCompileErrorIsMarkedOnItsLineAndGoesAwayWhenFixed() {
    auto w = makeWindow();
    KernelEditor* editor = w->kernelEditor();
    QVERIFY(editor->newFromTemplate("gemm"));
    QVERIFY(w->kernelEditorDock()->isVisible());
    QsciScintilla* edit = editor->textEdit();
    QCOMPARE(edit->text(), QString::fromStdString(*ks::kernelTemplate("gemm")));

    // An undeclared identifier in main(), far below the manifest: the line
    // reported must be the line of the file, not of what glslang was given.
    const int line = lineOf(edit->text(), "float acc = 0.0;");
    QVERIFY(line > 40);
    const QString good = edit->text(line - 1).trimmed();
    replaceLine(edit, line, "  float acc = not_declared_here;");
    QVERIFY(editor->isModified());
    QVERIFY(!compileAndWait(editor));

    QCOMPARE(editor->markedLines(), QList<int>{line});
    // One problem: glslang's closing "compilation terminated" is not a second one.
    QCOMPARE(int(editor->diagnostics().size()), 1);
    QCOMPARE(editor->diagnostics().front().line, line);
    QVERIFY2(QString::fromStdString(editor->diagnostics().front().message).contains("not_declared_here"),
             editor->diagnostics().front().message.c_str());
    QVERIFY2(editor->annotationAt(line).contains("undeclared identifier"), qPrintable(editor->annotationAt(line)));
    QVERIFY(editor->annotationAt(line - 1).isEmpty());
    QVERIFY(editor->statusLabel()->text().contains(QString("line %1").arg(line)));
    QCOMPARE(editor->resultTabs()->currentWidget(), editor->diagnosticsView());
    QCOMPARE(editor->statisticsView()->topLevelItemCount(), 0);

    // The list names the line; clicking the entry puts the cursor there.
    QTreeWidget* problems = editor->diagnosticsView();
    QCOMPARE(problems->topLevelItemCount(), int(editor->diagnostics().size()));
    QCOMPARE(problems->topLevelItem(0)->text(0), QString::number(line));
    edit->setCursorPosition(0, 0);
    const QRect rect = problems->visualItemRect(problems->topLevelItem(0));
    QTest::mouseClick(problems->viewport(), Qt::LeftButton, {}, rect.center());
    QCOMPARE(editor->cursorLine(), line);

    // Hovering the marked line shows the message; another line shows nothing.
    const long pos = edit->positionFromLineIndex(line - 1, 4);
    const int x = int(edit->SendScintilla(QsciScintillaBase::SCI_POINTXFROMPOSITION, 0, pos));
    const int y = int(edit->SendScintilla(QsciScintillaBase::SCI_POINTYFROMPOSITION, 0, pos)) + 2;
    QToolTip::hideText();
    emit edit->SCN_DWELLSTART(int(pos), x, y);
    QVERIFY(QTest::qWaitFor([] { return QToolTip::isVisible(); }, 2000));
    QVERIFY2(QToolTip::text().contains("not_declared_here"), qPrintable(QToolTip::text()));
    QToolTip::hideText();
    QVERIFY(QTest::qWaitFor([] { return !QToolTip::isVisible(); }, 2000));
    QCOMPARE(editor->hoverTextAt(line - 1), QString());

    // Fixed: no marker, no annotation, no problem; the statistics page says what the driver told.
    replaceLine(edit, line, "  " + good);
    QVERIFY(compileAndWait(editor));
    QVERIFY(editor->markedLines().isEmpty());
    QVERIFY(editor->diagnostics().empty());
    QVERIFY(editor->annotationAt(line).isEmpty());
    QCOMPARE(problems->topLevelItemCount(), 0);
    QVERIFY2(editor->statusLabel()->text().contains("Compiled user.my_gemm"),
             qPrintable(editor->statusLabel()->text()));
    QVERIFY(editor->statusLabel()->text().contains("llvmpipe"));
    QCOMPARE(editor->resultTabs()->currentWidget(), editor->statisticsView());
    QTreeWidget* stats = editor->statisticsView();
    QCOMPARE(stats->topLevelItemCount(), 1);  // one pass
    QVERIFY(stats->topLevelItem(0)->text(1).contains("workgroups"));
    QVERIFY(stats->topLevelItem(0)->childCount() >= 1);
    // Either the driver's numbers or the statement that it gives none.
    const bool none = stats->topLevelItem(0)->child(0)->text(0) == "(none)";
    QCOMPARE(editor->statusLabel()->text().contains("reports no pipeline statistics"), none);
    if (!none)
      for (int i = 0; i < stats->topLevelItem(0)->childCount(); ++i)
        QVERIFY(!stats->topLevelItem(0)->child(i)->text(1).isEmpty());
  }

  void aManifestErrorIsShownAtTheManifestLine() {
    auto w = makeWindow();
    KernelEditor* editor = w->kernelEditor();
    QVERIFY(editor->newFromTemplate("gemm"));
    QsciScintilla* edit = editor->textEdit();
    const int line = lineOf(edit->text(), "grid:");
    QVERIFY(line > 1);
    replaceLine(edit, line, "grid:        ceil(N / TILES), ceil(M / WG_Y), 1");
    QVERIFY(!compileAndWait(editor));
    QCOMPARE(editor->markedLines(), QList<int>{line});
    QCOMPARE(int(editor->diagnostics().size()), 1);
    QCOMPARE(editor->diagnostics().front().line, line);
    const QString message = QString::fromStdString(editor->diagnostics().front().message);
    QVERIFY2(message.startsWith("grid:") && message.contains("TILES"), qPrintable(message));
    QCOMPARE(editor->annotationAt(line), message);
    QCOMPARE(editor->diagnosticsView()->topLevelItem(0)->text(0), QString::number(line));
  }

  void runRegistersTheKernelAndMeasuresIt() {
    auto w = makeWindow();
    w->setKernelChecked("gemm.naive", true);
    KernelEditor* editor = w->kernelEditor();
    QVERIFY(editor->newFromTemplate("gemm"));
    auto* sweep = w->sweepEditor();
    sweep->sizesEdit()->clear();
    QTest::keyClicks(sweep->sizesEdit(), "32,48");
    sweep->shapesEdit()->clear();
    sweep->repsBox()->setValue(3);
    sweep->warmupBox()->setValue(1);

    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    editor->runAction()->trigger();
    QVERIFY(finished.wait(180000));
    QCOMPARE(finished.first().first().toBool(), false);

    // The kernel file's kernel sits in the tree under its family, marked, next
    // to the built-in that stayed checked; both were measured and verified.
    const ks::KernelInfo* k = ks::Registry::instance().find("user.my_gemm");
    QVERIFY(k && k->user);
    QVERIFY(k->source_path.empty());  // never saved
    QVERIFY(w->checkedKernels().contains("user.my_gemm"));
    QVERIFY(w->checkedKernels().contains("gemm.naive"));
    QTreeWidgetItem* item = nullptr;
    for (int f = 0; f < w->kernelTree()->topLevelItemCount(); ++f)
      for (int i = 0; i < w->kernelTree()->topLevelItem(f)->childCount(); ++i)
        if (w->kernelTree()->topLevelItem(f)->child(i)->text(0) == "user.my_gemm")
          item = w->kernelTree()->topLevelItem(f)->child(i);
    QVERIFY(item);
    QCOMPARE(item->parent()->text(0), QString("gemm"));
    QVERIFY(item->font(0).italic());
    QVERIFY(item->text(1).contains("(file)"));
    QVERIFY(item->toolTip(0).contains("Kernel file"));
    int mine = 0;
    for (const auto& m : w->session().points) {
      QVERIFY2(m.trustworthy(), m.error.c_str());
      mine += m.item.kernel == "user.my_gemm";
    }
    QCOMPARE(mine, 2);
    QCOMPARE(int(w->session().points.size()), 4);
    QCOMPARE(w->session().kernel_files.size(), size_t(1));

    // Saved and opened again elsewhere: the session's kernel comes back, and
    // "Open source" shows exactly the text that was measured.
    const QString path = dir_.filePath("with-kernel.json");
    QVERIFY(w->saveSessionTo(path));
    const QString measured = editor->text();
    auto other = makeWindow();
    QVERIFY(other->openSession(path));
    QVERIFY(other->openKernelSource("user.my_gemm"));
    QCOMPARE(other->kernelEditor()->text(), measured);
    QVERIFY(other->kernelEditor()->builtinId().isEmpty());
    QVERIFY(!other->kernelEditor()->isReadOnly());
  }

  void aBuiltInKernelShowsItsSourceReadOnlyWithStatistics() {
    auto w = makeWindow();
    QVERIFY(!w->kernelEditorDock()->isVisible());
    KernelEditor* editor = w->kernelEditor();
    QSignalSpy done(editor, &KernelEditor::compileFinished);
    QVERIFY(w->openKernelSource("gemm.tiled_shared"));
    QVERIFY(w->kernelEditorDock()->isVisible());
    QVERIFY(editor->isReadOnly());
    QCOMPARE(editor->builtinId(), QString("gemm.tiled_shared"));
    const ks::KernelInfo* k = ks::Registry::instance().find("gemm.tiled_shared");
    QCOMPARE(editor->text(), QString::fromStdString(ks::shaderSource(k->shader)));
    QVERIFY(!editor->saveAction()->isEnabled());
    QVERIFY(done.wait(60000));
    QVERIFY(done.first().first().toBool());
    QVERIFY(editor->statusLabel()->text().contains("Compiled gemm.tiled_shared"));
    QCOMPARE(editor->statisticsView()->topLevelItemCount(), 1);
    // A CPU kernel has no shader: nothing opens.
    QVERIFY(!w->openKernelSource("gemm.openblas"));
  }

  // lavapipe reports no statistics: what a GPU driver reports is shown per
  // pass, registers, shared memory and spills in bold.
  void theDriversStatisticsAreShownPerPass() {
    KernelEditor editor;
    editor.setAskBeforeDiscard(false);
    QVERIFY(editor.newFromTemplate("dot"));
    QSignalSpy asked(&editor, &KernelEditor::compileRequested);
    editor.compile();
    QCOMPARE(asked.count(), 1);
    ks::CompileReport report;
    report.kernel = "user.my_dot";
    report.params = "256x1";
    report.size = {1, 1 << 20, 1, 1};
    report.passes.push_back(
        {"PASS=1", {4096, 1, 1}, {{"Register Count", "40"}, {"Spill Count", "0"}, {"Binary Size", "3712"}}});
    report.passes.push_back({"PASS=2", {1, 1, 1}, {{"Register Count", "24"}, {"Shared Memory Size", "1024"}}});
    QSignalSpy done(&editor, &KernelEditor::compileFinished);
    editor.showCompiled(asked.first().first().toInt(), report);
    QCOMPARE(done.count(), 1);
    QTreeWidget* stats = editor.statisticsView();
    QCOMPARE(stats->topLevelItemCount(), 2);
    QCOMPARE(stats->topLevelItem(0)->text(0), QString("Pass 1"));
    QVERIFY(stats->topLevelItem(0)->text(1).contains("4096 × 1 × 1 workgroups"));
    QVERIFY(stats->topLevelItem(0)->text(1).contains("PASS=1"));
    QCOMPARE(stats->topLevelItem(0)->childCount(), 3);
    QCOMPARE(stats->topLevelItem(0)->child(0)->text(0), QString("Register Count"));
    QCOMPARE(stats->topLevelItem(0)->child(0)->text(1), QString("40"));
    QVERIFY(stats->topLevelItem(0)->child(0)->font(0).bold());
    QVERIFY(stats->topLevelItem(0)->child(1)->font(0).bold());   // spills
    QVERIFY(!stats->topLevelItem(0)->child(2)->font(0).bold());  // binary size
    QCOMPARE(stats->topLevelItem(1)->child(1)->text(1), QString("1024"));
    QVERIFY(editor.statusLabel()->text().contains("2 passes"));
    QVERIFY(!editor.statusLabel()->text().contains("no pipeline statistics"));
    // The engine's own answer to that request comes too late: it is dropped.
    editor.showCompileFailed(asked.first().first().toInt(), "late", {{3, "late"}});
    QCOMPARE(done.count(), 1);
    QVERIFY(editor.markedLines().isEmpty());
  }

  void aKernelFolderLoadsWhatItCanAndSaysWhatItCannot() {
    auto w = makeWindow();
    QDir folder(dir_.filePath("kernels"));
    QVERIFY(folder.mkpath("."));
    QString good = QString::fromStdString(*ks::kernelTemplate("gemv"));
    good.replace("user.my_gemv", "user.folder_gemv");
    QVERIFY(writeFile(folder.filePath("good.comp"), good));
    QString bad = QString::fromStdString(*ks::kernelTemplate("dot"));
    bad.replace("user.my_dot", "user.folder_dot");
    bad.replace(QRegularExpression("\\ngrid:[^\\n]*"), "\ngrid: ceil(N / TILES)");
    QVERIFY(writeFile(folder.filePath("bad.comp"), bad));
    w->loadKernelDir(folder.path());
    const ks::KernelInfo* k = ks::Registry::instance().find("user.folder_gemv");
    QVERIFY(k);
    QCOMPARE(QString::fromStdString(k->source_path), QFileInfo(folder.filePath("good.comp")).absoluteFilePath());
    QVERIFY(!ks::Registry::instance().find("user.folder_dot"));
    QTreeWidgetItem* item = nullptr;
    for (int f = 0; f < w->kernelTree()->topLevelItemCount(); ++f)
      for (int i = 0; i < w->kernelTree()->topLevelItem(f)->childCount(); ++i)
        if (w->kernelTree()->topLevelItem(f)->child(i)->text(0) == "user.folder_gemv")
          item = w->kernelTree()->topLevelItem(f)->child(i);
    QVERIFY(item);
    QCOMPARE(item->parent()->text(0), QString("gemv"));
    QVERIFY(item->toolTip(0).contains(QString::fromStdString(k->source_path)));
    auto* log = w->findChild<QPlainTextEdit*>("log");
    QVERIFY(log);
    QVERIFY2(log->toPlainText().contains("bad.comp:"), qPrintable(log->toPlainText()));
    QVERIFY(log->toPlainText().contains("TILES"));
    // Open source opens the file itself, watched and saved in place.
    QVERIFY(w->openKernelSource("user.folder_gemv"));
    QCOMPARE(w->kernelEditor()->filePath(), QString::fromStdString(k->source_path));
    QCOMPARE(w->kernelEditor()->text(), good);
    QVERIFY(!w->kernelEditor()->isModified());
  }

  void anOutsideEditReloadsAndRecompiles() {
    auto w = makeWindow();
    KernelEditor* editor = w->kernelEditor();
    QVERIFY(editor->newFromTemplate("gemm"));
    const QString path = dir_.filePath("watched.comp");
    {
      QSignalSpy done(editor, &KernelEditor::compileFinished);
      QVERIFY(editor->saveTo(path));  // Save compiles
      QVERIFY(done.wait(60000));
      QVERIFY(done.first().first().toBool());
    }
    QCOMPARE(editor->filePath(), QFileInfo(path).absoluteFilePath());
    QVERIFY(!editor->isModified());
    const QString good = editor->text();
    const int line = lineOf(good, "barrier();");
    QVERIFY(line > 40);

    // An editor that writes a new file and renames it over the old one.
    QStringList lines = good.split('\n');
    lines[line - 1] = "    barrier(;";
    const QString broken = lines.join('\n');
    QSignalSpy reloaded(editor, &KernelEditor::fileReloaded);
    QSignalSpy done(editor, &KernelEditor::compileFinished);
    QVERIFY(writeFile(path + ".tmp", broken));
    QVERIFY(::rename(qPrintable(path + ".tmp"), qPrintable(path)) == 0);
    QVERIFY(reloaded.wait(10000));
    QCOMPARE(editor->text(), broken);
    QVERIFY(!editor->isModified());
    QVERIFY(done.wait(60000));
    QVERIFY(!done.last().first().toBool());
    QCOMPARE(editor->markedLines(), QList<int>{line});

    // The watch survived the rename: an edit in place is seen too.
    done.clear();
    QVERIFY(writeFile(path, good));
    QVERIFY(reloaded.wait(10000));
    QCOMPARE(editor->text(), good);
    QVERIFY(done.wait(60000));
    QVERIFY(done.last().first().toBool());
    QVERIFY(editor->markedLines().isEmpty());

    // With unsaved edits the buffer stays; a banner offers the disk's version.
    editor->textEdit()->append("\n// mine\n");
    QVERIFY(editor->isModified());
    const QString mine = editor->text();
    reloaded.clear();
    QVERIFY(writeFile(path, broken));
    QVERIFY(QTest::qWaitFor([&] { return editor->reloadBanner()->isVisible(); }, 10000));
    QCOMPARE(editor->text(), mine);
    QCOMPARE(reloaded.count(), 0);
    auto* reload = editor->reloadBanner()->findChild<QPushButton*>("reloadButton");
    QVERIFY(reload);
    QTest::mouseClick(reload, Qt::LeftButton);
    QCOMPARE(editor->text(), broken);
    QVERIFY(!editor->reloadBanner()->isVisible());
  }
};

QTEST_MAIN(TestKernelEditor)
#include "test_kernel_editor.moc"
