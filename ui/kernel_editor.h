#pragma once
// The kernel editor: a kernel file (manifest + GLSL) in QScintilla, compiled
// on the engine thread. Errors come back as lines of the user's file: a red
// marker in the margin, the message under the line and on hover, and a list
// that jumps to the line. A clean compile shows the driver's statistics per
// pass (registers, shared memory, spills, where the driver reports them).
// The editor never talks to the engine itself: it asks through signals and
// MainWindow wires them to the EngineWorker.
#include <QString>
#include <QWidget>
#include <map>
#include <vector>

#include "ui/metatypes.h"

class QAction;
class QFileSystemWatcher;
class QLabel;
class QMenu;
class QPushButton;
class QTabWidget;
class QTimer;
class QToolBar;
class QTreeWidget;
class QsciScintilla;

namespace ks::ui {

class KernelEditor : public QWidget {
  Q_OBJECT
 public:
  explicit KernelEditor(QWidget* parent = nullptr);
  ~KernelEditor() override;

  // What the buffer holds.
  QString text() const;
  QString filePath() const { return path_; }      // "" when not saved yet
  QString builtinId() const { return builtin_; }  // set while a built-in shader is shown (read-only)
  QString displayName() const;                    // for titles: the file's name, "Untitled", the built-in id
  bool isModified() const;
  bool isReadOnly() const;

  // Each of these asks before dropping unsaved edits (see setAskBeforeDiscard)
  // and returns false when nothing was loaded.
  bool newFromTemplate(const QString& workload);  // gemm, gemv, dot, custom
  bool openFile(const QString& path);
  // A built-in kernel's shader, read-only, compiled as the registry has it.
  bool showBuiltin(const ks::KernelInfo& kernel);
  // A registered kernel file's text (from a file or a session); `path` is the
  // file it belongs to when that exists here ("" otherwise).
  bool showUserKernel(const ks::KernelInfo& kernel);
  bool saveTo(const QString& path);
  bool confirmDiscard();  // Save / Discard / Cancel when there are unsaved edits

  // Tests and scripted use: no questions (unsaved edits are dropped) and no file dialogs.
  void setAskBeforeDiscard(bool ask) { askBeforeDiscard_ = ask; }
  void setDeviceName(const QString& name) { deviceName_ = name; }
  // A sweep holds the engine thread: a compile waits for it, and says so.
  void setEngineBusy(bool busy) { engineBusy_ = busy; }

  // The state of the last compile, for the window and tests.
  bool isCompiling() const { return pending_ != 0; }
  const std::vector<ks::SourceDiagnostic>& diagnostics() const { return diagnostics_; }
  QList<int> markedLines() const;        // 1-based lines that carry the error marker
  QString annotationAt(int line) const;  // the message under a 1-based line
  QString hoverTextAt(int line) const;   // what hovering the 1-based line shows
  int cursorLine() const;                // 1-based

  // Widgets, for tests.
  QsciScintilla* textEdit() const { return edit_; }
  QTreeWidget* diagnosticsView() const { return problems_; }
  QTreeWidget* statisticsView() const { return statistics_; }
  QTabWidget* resultTabs() const { return resultTabs_; }
  QLabel* statusLabel() const { return status_; }
  QWidget* reloadBanner() const { return banner_; }

  // Actions, shared with the window's Kernel menu.
  QMenu* templateMenu() const { return templateMenu_; }
  QAction* openAction() const { return openAction_; }
  QAction* saveAction() const { return saveAction_; }
  QAction* saveAsAction() const { return saveAsAction_; }
  QAction* compileAction() const { return compileAction_; }
  QAction* runAction() const { return runAction_; }

 public slots:
  void openDialog();
  bool save();  // Save As for a new buffer
  bool saveAs();
  void compile();
  void run();  // compiles first; a clean compile asks the window to run it
  void reloadFromDisk();
  // Answers from the engine thread (request ids that are not the latest are stale).
  void showCompiled(int request, const ks::CompileReport& report);
  void showCompileFailed(int request, const QString& message, const std::vector<ks::SourceDiagnostic>& diagnostics);

 signals:
  void compileRequested(int request, const QString& text, const QString& path);
  void compileRegisteredRequested(int request, const QString& id);
  void runRequested(const QString& text, const QString& path);
  void runRegisteredRequested(const QString& id);  // a built-in kernel
  void compileFinished(bool ok);                   // once its result is on screen
  void documentLoaded();                           // new buffer, file or kernel: the window shows the editor
  void titleChanged(const QString& title);
  void fileReloaded();  // the file changed on disk and the buffer took it

 private:
  void buildUi();
  void setDocument(const QString& text, const QString& path, const QString& builtin);
  void clearResults();
  void setDiagnostics(std::vector<ks::SourceDiagnostic> diagnostics);
  void goToLine(int line);  // 1-based
  void showHover(int x, int y);
  void updateState();
  void setStatus(const QString& text, const QString& color);
  void watch(const QString& path);
  void onFileChanged();
  bool writeFile(const QString& path, const QString& text, QString* error);

  QsciScintilla* edit_ = nullptr;
  QToolBar* toolbar_ = nullptr;
  QLabel* header_ = nullptr;
  QLabel* status_ = nullptr;
  QWidget* banner_ = nullptr;
  QLabel* bannerText_ = nullptr;
  QTabWidget* resultTabs_ = nullptr;
  QTreeWidget* problems_ = nullptr;
  QTreeWidget* statistics_ = nullptr;
  QMenu* templateMenu_ = nullptr;
  QAction* openAction_ = nullptr;
  QAction* saveAction_ = nullptr;
  QAction* saveAsAction_ = nullptr;
  QAction* compileAction_ = nullptr;
  QAction* runAction_ = nullptr;
  QFileSystemWatcher* watcher_ = nullptr;
  QTimer* changeTimer_ = nullptr;  // lets an outside editor finish writing before we read

  QString path_;
  QString builtin_;
  QString untitledName_ = "Untitled";
  QString diskText_;  // the file as last read or written here
  QString deviceName_;
  std::vector<ks::SourceDiagnostic> diagnostics_;
  std::map<int, QString> messagesByLine_;  // 1-based
  int nextRequest_ = 1;
  int pending_ = 0;       // the request whose answer is awaited; 0 when none
  int runRequest_ = 0;    // a Run waits for this compile
  QString runText_;       // the text that Run compiled
  int watchRetries_ = 0;  // an editor that replaces the file: wait for the new one
  bool askBeforeDiscard_ = true;
  bool engineBusy_ = false;
};

}  // namespace ks::ui
