#include "ui/kernel_editor.h"

#include <Qsci/qscilexercpp.h>
#include <Qsci/qsciscintilla.h>
#include <Qsci/qscistyle.h>

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <functional>

#include "engine/kernels/kernel_file.h"

namespace ks::ui {

namespace {

constexpr int kErrorMarker = 8;      // red dot in the symbol margin
constexpr int kErrorLineMarker = 9;  // pale red line background
constexpr int kErrorIndicator = 8;   // red squiggle under the line's text
constexpr int kSymbolMargin = 1;
constexpr int kLineRole = Qt::UserRole + 1;

// QsciLexerCPP reads GLSL well; it only needs GLSL's words.
class GlslLexer : public QsciLexerCPP {
 public:
  using QsciLexerCPP::QsciLexerCPP;
  const char* language() const override { return "GLSL"; }
  const char* keywords(int set) const override {
    if (set == 1)
      return "attribute const uniform varying buffer shared coherent volatile restrict readonly writeonly layout "
             "centroid flat smooth noperspective patch sample break continue do for while switch case default if "
             "else in out inout float double int void bool true false invariant precise discard return struct "
             "uint lowp mediump highp precision vec2 vec3 vec4 ivec2 ivec3 ivec4 uvec2 uvec3 uvec4 bvec2 bvec3 "
             "bvec4 dvec2 dvec3 dvec4 mat2 mat3 mat4 mat2x2 mat2x3 mat2x4 mat3x2 mat3x3 mat3x4 mat4x2 mat4x3 mat4x4 "
             "dmat2 dmat3 dmat4 float16_t f16vec2 f16vec3 f16vec4 float64_t int8_t uint8_t int16_t uint16_t int64_t "
             "uint64_t i64vec2 u64vec2 coopmat subroutine";
    if (set == 2)
      return "gl_GlobalInvocationID gl_LocalInvocationID gl_WorkGroupID gl_NumWorkGroups gl_WorkGroupSize "
             "gl_LocalInvocationIndex gl_SubgroupSize gl_SubgroupInvocationID gl_NumSubgroups gl_SubgroupID "
             "barrier memoryBarrier memoryBarrierShared memoryBarrierBuffer groupMemoryBarrier subgroupBarrier "
             "subgroupAdd subgroupMul subgroupMin subgroupMax subgroupBroadcast subgroupBroadcastFirst "
             "subgroupShuffle subgroupShuffleXor subgroupShuffleDown subgroupElect subgroupInclusiveAdd "
             "subgroupExclusiveAdd atomicAdd atomicMin atomicMax atomicExchange atomicCompSwap fma min max clamp "
             "mix step smoothstep abs sign floor ceil fract mod sqrt inversesqrt exp exp2 log log2 pow dot cross "
             "length normalize local_size_x local_size_y local_size_z local_size_x_id local_size_y_id "
             "local_size_z_id constant_id binding set push_constant std430 std140 scalar";
    return QsciLexerCPP::keywords(set);
  }
};

// Ctrl+S in the editor saves the kernel file; elsewhere it saves the session.
class KernelTextEdit : public QsciScintilla {
 public:
  using QsciScintilla::QsciScintilla;
  std::function<void()> onSave;

 protected:
  bool event(QEvent* e) override {
    if (e->type() == QEvent::ShortcutOverride && static_cast<QKeyEvent*>(e)->matches(QKeySequence::Save)) {
      e->accept();  // the key comes to keyPressEvent instead of the window's Save
      return true;
    }
    return QsciScintilla::event(e);
  }
  void keyPressEvent(QKeyEvent* e) override {
    if (e->matches(QKeySequence::Save)) {
      if (onSave) onSave();
      return;
    }
    QsciScintilla::keyPressEvent(e);
  }
};

QFont codeFont() {
  QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  f.setPointSize(std::max(f.pointSize(), 10));
  return f;
}

// Registers, shared memory and spills are what a kernel writer reads first.
bool keyStatistic(const QString& name) {
  static const QRegularExpression re("register|spill|shared|local memory|scratch|private|vgpr|sgpr|occupancy",
                                     QRegularExpression::CaseInsensitiveOption);
  return re.match(name).hasMatch();
}

}  // namespace

KernelEditor::KernelEditor(QWidget* parent) : QWidget(parent) {
  buildUi();
  watcher_ = new QFileSystemWatcher(this);
  changeTimer_ = new QTimer(this);
  changeTimer_->setSingleShot(true);
  changeTimer_->setInterval(150);
  connect(watcher_, &QFileSystemWatcher::fileChanged, changeTimer_, qOverload<>(&QTimer::start));
  connect(changeTimer_, &QTimer::timeout, this, &KernelEditor::onFileChanged);
  setDocument(QString(), QString(), QString());
}

KernelEditor::~KernelEditor() = default;

void KernelEditor::buildUi() {
  setObjectName("kernelEditor");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->setSpacing(2);

  // ---- actions
  templateMenu_ = new QMenu(tr("&New from Template"), this);
  for (const std::string& w : ks::kernelTemplateWorkloads()) {
    const QString workload = QString::fromStdString(w);
    templateMenu_->addAction(tr("%1 kernel").arg(workload), this, [this, workload] { newFromTemplate(workload); });
  }
  openAction_ = new QAction(tr("&Open Kernel File…"), this);
  openAction_->setShortcut(QKeySequence("Ctrl+Shift+O"));
  connect(openAction_, &QAction::triggered, this, &KernelEditor::openDialog);
  saveAction_ = new QAction(tr("&Save Kernel File"), this);
  saveAction_->setToolTip(tr("Save the kernel file (Ctrl+S in the editor)"));
  connect(saveAction_, &QAction::triggered, this, &KernelEditor::save);
  saveAsAction_ = new QAction(tr("Save Kernel File &As…"), this);
  connect(saveAsAction_, &QAction::triggered, this, &KernelEditor::saveAs);
  compileAction_ = new QAction(tr("&Compile"), this);
  compileAction_->setShortcut(QKeySequence(Qt::Key_F7));
  compileAction_->setToolTip(tr("Compile on the open device and show the driver's pipeline statistics (F7)"));
  connect(compileAction_, &QAction::triggered, this, &KernelEditor::compile);
  runAction_ = new QAction(tr("&Run Kernel"), this);
  runAction_->setShortcut(QKeySequence("Ctrl+Shift+R"));
  runAction_->setToolTip(
      tr("Compile, add the kernel to the kernel list and run the sweep with it checked (Ctrl+Shift+R)"));
  connect(runAction_, &QAction::triggered, this, &KernelEditor::run);

  toolbar_ = new QToolBar;
  toolbar_->setToolButtonStyle(Qt::ToolButtonTextOnly);
  toolbar_->setIconSize(QSize(16, 16));
  auto* newButton = new QToolButton;
  newButton->setText(tr("New"));
  newButton->setToolTip(tr("A new kernel file from a working template"));
  newButton->setMenu(templateMenu_);
  newButton->setPopupMode(QToolButton::InstantPopup);
  toolbar_->addWidget(newButton);
  toolbar_->addAction(openAction_);
  toolbar_->addAction(saveAction_);
  toolbar_->addAction(saveAsAction_);
  toolbar_->addSeparator();
  toolbar_->addAction(compileAction_);
  toolbar_->addAction(runAction_);
  // Short labels in the toolbar (icon text); the menu keeps the long ones.
  openAction_->setIconText(tr("Open"));
  saveAction_->setIconText(tr("Save"));
  saveAsAction_->setIconText(tr("Save As"));
  compileAction_->setIconText(tr("Compile"));
  runAction_->setIconText(tr("Run"));
  header_ = new QLabel;
  header_->setObjectName("kernelEditorHeader");
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* top = new QHBoxLayout;
  top->addWidget(toolbar_);
  top->addWidget(header_, 1);
  layout->addLayout(top);

  // ---- the file changed on disk while the buffer has edits
  banner_ = new QWidget;
  banner_->setObjectName("reloadBanner");
  banner_->setStyleSheet("#reloadBanner { background: #fff4ce; border: 1px solid #e0c060; }");
  auto* bannerLayout = new QHBoxLayout(banner_);
  bannerLayout->setContentsMargins(6, 3, 6, 3);
  bannerText_ = new QLabel;
  bannerText_->setWordWrap(true);
  auto* reload = new QPushButton(tr("Reload from disk"));
  reload->setObjectName("reloadButton");
  auto* keep = new QPushButton(tr("Keep my edits"));
  keep->setObjectName("keepButton");
  connect(reload, &QPushButton::clicked, this, &KernelEditor::reloadFromDisk);
  connect(keep, &QPushButton::clicked, this, [this] {
    // The next Save overwrites the outside change; do not ask again for it.
    QFile f(path_);
    if (f.open(QIODevice::ReadOnly)) diskText_ = QString::fromUtf8(f.readAll());
    banner_->hide();
  });
  bannerLayout->addWidget(bannerText_, 1);
  bannerLayout->addWidget(reload);
  bannerLayout->addWidget(keep);
  banner_->hide();
  layout->addWidget(banner_);

  // ---- the text
  auto* edit = new KernelTextEdit;
  edit->onSave = [this] { save(); };
  edit_ = edit;
  edit_->setObjectName("kernelText");
  auto* lexer = new GlslLexer(edit_);
  const QFont font = codeFont();
  lexer->setDefaultFont(font);
  lexer->setFont(font);  // every style
  lexer->setColor(QColor("#0b6e75"), QsciLexerCPP::KeywordSet2);
  lexer->setFoldComments(true);
  edit_->setLexer(lexer);
  edit_->setUtf8(true);
  edit_->setTabWidth(2);
  edit_->setIndentationsUseTabs(false);
  edit_->setAutoIndent(true);
  edit_->setBraceMatching(QsciScintilla::SloppyBraceMatch);
  edit_->setCaretLineVisible(true);
  edit_->setCaretLineBackgroundColor(QColor("#f3f6fa"));
  edit_->setEdgeMode(QsciScintilla::EdgeLine);
  edit_->setEdgeColumn(120);
  edit_->setAutoCompletionSource(QsciScintilla::AcsAll);
  edit_->setAutoCompletionThreshold(3);
  edit_->setFolding(QsciScintilla::BoxedTreeFoldStyle, 2);
  // Margin 0: line numbers; margin 1: the error marker.
  edit_->setMarginType(0, QsciScintilla::NumberMargin);
  edit_->setMarginLineNumbers(0, true);
  edit_->setMarginsFont(font);
  edit_->setMarginWidth(0, QStringLiteral("00000"));
  edit_->setMarginMarkerMask(0, 0);
  edit_->setMarginType(kSymbolMargin, QsciScintilla::SymbolMargin);
  edit_->setMarginWidth(kSymbolMargin, 14);
  edit_->setMarginMarkerMask(kSymbolMargin, 1 << kErrorMarker);
  edit_->setMarginSensitivity(kSymbolMargin, true);
  edit_->markerDefine(QsciScintilla::Circle, kErrorMarker);
  edit_->setMarkerBackgroundColor(QColor("#d32f2f"), kErrorMarker);
  edit_->setMarkerForegroundColor(QColor("#8e1b1b"), kErrorMarker);
  edit_->markerDefine(QsciScintilla::Background, kErrorLineMarker);
  edit_->setMarkerBackgroundColor(QColor("#fdecea"), kErrorLineMarker);
  edit_->indicatorDefine(QsciScintilla::SquiggleIndicator, kErrorIndicator);
  edit_->setIndicatorForegroundColor(QColor("#d32f2f"), kErrorIndicator);
  edit_->setAnnotationDisplay(QsciScintilla::AnnotationBoxed);
  // Hovering a marked line (text or margin) shows its message.
  edit_->SendScintilla(QsciScintillaBase::SCI_SETMOUSEDWELLTIME, 400);
  connect(edit_, &QsciScintillaBase::SCN_DWELLSTART, this, [this](int, int x, int y) { showHover(x, y); });
  connect(edit_, &QsciScintillaBase::SCN_DWELLEND, this, [] { QToolTip::hideText(); });
  connect(edit_, &QsciScintilla::marginClicked, this, [this](int, int line, Qt::KeyboardModifiers) {
    if (auto it = messagesByLine_.find(line + 1); it != messagesByLine_.end()) {
      const QPoint p(0, int(edit_->SendScintilla(QsciScintillaBase::SCI_POINTYFROMPOSITION, 0,
                                                 edit_->positionFromLineIndex(line, 0))));
      QToolTip::showText(edit_->viewport()->mapToGlobal(p), it->second, edit_->viewport());
    }
  });
  connect(edit_, &QsciScintilla::modificationChanged, this, [this] { updateState(); });

  // ---- below: problems and the driver's statistics
  problems_ = new QTreeWidget;
  problems_->setObjectName("kernelProblems");
  problems_->setHeaderLabels({tr("Line"), tr("Message")});
  problems_->setRootIsDecorated(false);
  problems_->setUniformRowHeights(true);
  problems_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  problems_->setWordWrap(true);
  connect(problems_, &QTreeWidget::itemClicked, this,
          [this](QTreeWidgetItem* item) { goToLine(item->data(0, kLineRole).toInt()); });
  connect(problems_, &QTreeWidget::itemActivated, this,
          [this](QTreeWidgetItem* item) { goToLine(item->data(0, kLineRole).toInt()); });
  statistics_ = new QTreeWidget;
  statistics_->setObjectName("kernelStatistics");
  statistics_->setHeaderLabels({tr("Statistic"), tr("Value")});
  statistics_->setUniformRowHeights(true);
  statistics_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  resultTabs_ = new QTabWidget;
  resultTabs_->setDocumentMode(true);
  resultTabs_->addTab(problems_, tr("Problems"));
  resultTabs_->addTab(statistics_, tr("Pipeline statistics"));
  status_ = new QLabel;
  status_->setObjectName("kernelStatus");
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* bottom = new QWidget;
  auto* bottomLayout = new QVBoxLayout(bottom);
  bottomLayout->setContentsMargins(0, 0, 0, 0);
  bottomLayout->setSpacing(2);
  bottomLayout->addWidget(status_);
  bottomLayout->addWidget(resultTabs_, 1);

  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(edit_);
  split->addWidget(bottom);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  split->setSizes({560, 180});
  layout->addWidget(split, 1);
}

// ------------------------------------------------------------------ document

QString KernelEditor::text() const { return edit_->text(); }
bool KernelEditor::isModified() const { return edit_->isModified(); }
bool KernelEditor::isReadOnly() const { return edit_->isReadOnly(); }

QString KernelEditor::displayName() const {
  if (!builtin_.isEmpty()) return builtin_;
  return path_.isEmpty() ? untitledName_ : QFileInfo(path_).fileName();
}

void KernelEditor::setDocument(const QString& text, const QString& path, const QString& builtin) {
  if (!path_.isEmpty()) watcher_->removePath(path_);
  banner_->hide();
  path_ = path;
  builtin_ = builtin;
  diskText_ = path.isEmpty() ? QString() : text;
  edit_->setReadOnly(false);
  edit_->setText(text);
  edit_->setReadOnly(!builtin.isEmpty());
  edit_->setModified(false);
  edit_->setCursorPosition(0, 0);
  pending_ = 0;
  runRequest_ = 0;
  clearResults();
  if (!path.isEmpty()) watch(path);
  setStatus(text.isEmpty() ? tr("New from Template or Open a kernel file to start.") : QString(), QString());
  updateState();
}

bool KernelEditor::newFromTemplate(const QString& workload) {
  auto text = ks::kernelTemplate(workload.toStdString());
  if (!text) {
    setStatus(QString::fromStdString(text.error().message), "#8e1b1b");
    return false;
  }
  if (!confirmDiscard()) return false;
  untitledName_ = QStringLiteral("my_%1.comp").arg(workload);
  setDocument(QString::fromStdString(*text), QString(), QString());
  setStatus(tr("A working %1 kernel to start from: the manifest on top says what the engine runs; "
               "Compile (F7) checks it, Run (Ctrl+Shift+R) measures it.")
                .arg(workload),
            QString());
  emit documentLoaded();
  return true;
}

bool KernelEditor::openFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    setStatus(tr("Cannot open %1: %2").arg(path, f.errorString()), "#8e1b1b");
    return false;
  }
  const QString text = QString::fromUtf8(f.readAll());
  if (!confirmDiscard()) return false;
  setDocument(text, QFileInfo(path).absoluteFilePath(), QString());
  emit documentLoaded();
  compile();
  return true;
}

bool KernelEditor::showBuiltin(const ks::KernelInfo& kernel) {
  const std::string& source = ks::shaderSource(kernel.shader);
  if (kernel.backend != ks::Backend::Vulkan || source.empty()) {
    setStatus(tr("%1 has no shader to show (it runs on the CPU).").arg(QString::fromStdString(kernel.id)), "#8e1b1b");
    return false;
  }
  if (!confirmDiscard()) return false;
  QString text = QString::fromStdString(source);
  setDocument(text, QString(), QString::fromStdString(kernel.id));
  emit documentLoaded();
  compile();
  return true;
}

bool KernelEditor::showUserKernel(const ks::KernelInfo& kernel) {
  if (!confirmDiscard()) return false;
  const QString source = QString::fromStdString(kernel.source);
  const QString file = QString::fromStdString(kernel.source_path);
  QString disk;
  bool onDisk = false;
  if (!file.isEmpty()) {
    QFile f(file);
    onDisk = f.open(QIODevice::ReadOnly);
    if (onDisk) disk = QString::fromUtf8(f.readAll());
  }
  untitledName_ = QString::fromStdString(kernel.id).section('.', -1) + ".comp";
  setDocument(source, onDisk ? QFileInfo(file).absoluteFilePath() : QString(), QString());
  if (onDisk && disk != source) {
    // What the registry (or a session) holds is shown; the file differs.
    diskText_ = disk;
    edit_->setModified(true);
    setStatus(tr("This is the text %1 was registered with; %2 differs now. Save writes this text, "
                 "Reload from disk shows the file.")
                  .arg(QString::fromStdString(kernel.id), file),
              "#9a6700");
    bannerText_->setText(tr("%1 on disk differs from the registered kernel.").arg(QFileInfo(file).fileName()));
    banner_->show();
  } else if (!file.isEmpty() && !onDisk) {
    setStatus(tr("From a session: %1 is not on this machine. Save As keeps a copy.").arg(file), "#9a6700");
  }
  emit documentLoaded();
  compile();
  return true;
}

bool KernelEditor::confirmDiscard() {
  if (!isModified() || !askBeforeDiscard_ || isReadOnly()) return true;
  const auto answer =
      QMessageBox::question(this, tr("Unsaved kernel"), tr("%1 has unsaved edits. Save them first?").arg(displayName()),
                            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

void KernelEditor::openDialog() {
  if (!askBeforeDiscard_) return;  // scripted use opens by path
  const QString dir = QDir(QString::fromStdString(ks::defaultKernelDir())).exists()
                          ? QString::fromStdString(ks::defaultKernelDir())
                          : QString();
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open kernel file"), dir, tr("Kernel files (*.comp);;All files (*)"));
  if (!path.isEmpty()) openFile(path);
}

bool KernelEditor::writeFile(const QString& path, const QString& text, QString* error) {
  QSaveFile f(path);  // atomic: an outside editor or the app never reads half a file
  const QByteArray bytes = text.toUtf8();
  if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit()) {
    *error = f.errorString();
    return false;
  }
  return true;
}

bool KernelEditor::saveTo(const QString& path) {
  if (isReadOnly()) return false;
  const QString text = edit_->text();
  QString error;
  if (!writeFile(path, text, &error)) {
    setStatus(tr("Cannot save %1: %2").arg(path, error), "#8e1b1b");
    if (askBeforeDiscard_) QMessageBox::warning(this, tr("Cannot save"), tr("Cannot save %1: %2").arg(path, error));
    return false;
  }
  const QString absolute = QFileInfo(path).absoluteFilePath();
  if (!path_.isEmpty() && path_ != absolute) watcher_->removePath(path_);
  path_ = absolute;
  diskText_ = text;
  banner_->hide();
  edit_->setModified(false);
  watch(path_);  // the save replaced the file: watch the new one
  updateState();
  compile();  // a saved kernel is a compiled one: errors show at once
  return true;
}

bool KernelEditor::save() {
  if (isReadOnly()) return false;
  return path_.isEmpty() ? saveAs() : saveTo(path_);
}

bool KernelEditor::saveAs() {
  if (isReadOnly() || !askBeforeDiscard_) return false;
  // The user's kernel folder is loaded at start: the natural home.
  const QString dir = QString::fromStdString(ks::defaultKernelDir());
  QDir().mkpath(dir);
  const QString suggestion = path_.isEmpty() ? QDir(dir).filePath(untitledName_) : path_;
  QString path = QFileDialog::getSaveFileName(this, tr("Save kernel file"), suggestion,
                                              tr("Kernel files (*.comp);;All files (*)"));
  if (path.isEmpty()) return false;
  return saveTo(path);
}

void KernelEditor::updateState() {
  const bool readOnly = isReadOnly();
  saveAction_->setEnabled(!readOnly);
  saveAsAction_->setEnabled(!readOnly);
  compileAction_->setEnabled(!edit_->text().isEmpty());
  runAction_->setEnabled(!edit_->text().isEmpty());
  QString where;
  if (!builtin_.isEmpty())
    where = tr("<b>%1</b> — built-in shader, read-only").arg(builtin_.toHtmlEscaped());
  else if (!path_.isEmpty())
    where = QStringLiteral("<b>%1</b>%2 — %3")
                .arg(QFileInfo(path_).fileName().toHtmlEscaped(), isModified() ? "*" : "",
                     QFileInfo(path_).path().toHtmlEscaped());
  else
    where =
        QStringLiteral("<b>%1</b>%2 — %3").arg(untitledName_.toHtmlEscaped(), isModified() ? "*" : "", tr("not saved"));
  header_->setText(where);
  emit titleChanged(displayName() + (isModified() ? "*" : ""));
}

void KernelEditor::setStatus(const QString& text, const QString& color) {
  status_->setText(text);
  status_->setStyleSheet(color.isEmpty() ? QString() : QStringLiteral("QLabel { color: %1; }").arg(color));
  status_->setVisible(!text.isEmpty());
}

// ------------------------------------------------------------------ compile

void KernelEditor::compile() {
  if (edit_->text().isEmpty()) return;
  pending_ = nextRequest_++;
  setStatus(engineBusy_ ? tr("Compiling after the running sweep…") : tr("Compiling…"), "#555555");
  if (!builtin_.isEmpty())
    emit compileRegisteredRequested(pending_, builtin_);
  else
    emit compileRequested(pending_, edit_->text(), path_);
}

void KernelEditor::run() {
  if (edit_->text().isEmpty()) return;
  if (!builtin_.isEmpty()) {
    emit runRegisteredRequested(builtin_);
    return;
  }
  runText_ = edit_->text();
  compile();
  runRequest_ = pending_;
}

void KernelEditor::clearResults() {
  setDiagnostics({});
  statistics_->clear();
  resultTabs_->setTabText(0, tr("Problems"));
}

void KernelEditor::setDiagnostics(std::vector<ks::SourceDiagnostic> diagnostics) {
  diagnostics_ = std::move(diagnostics);
  edit_->markerDeleteAll(kErrorMarker);
  edit_->markerDeleteAll(kErrorLineMarker);
  edit_->clearAnnotations();
  edit_->clearIndicatorRange(0, 0, std::max(0, edit_->lines() - 1), edit_->lineLength(edit_->lines() - 1),
                             kErrorIndicator);
  messagesByLine_.clear();
  problems_->clear();
  for (const auto& d : diagnostics_) {
    const QString message = QString::fromStdString(d.message);
    auto* item = new QTreeWidgetItem(problems_, {d.line > 0 ? QString::number(d.line) : QStringLiteral("–"), message});
    item->setData(0, kLineRole, d.line);
    item->setToolTip(1, message);
    item->setForeground(0, QColor("#8e1b1b"));
    if (d.line < 1 || d.line > edit_->lines()) continue;
    QString& text = messagesByLine_[d.line];
    text += (text.isEmpty() ? "" : "\n") + message;
  }
  static const QsciStyle annotationStyle(-1, "kernelscope error", QColor("#8e1b1b"), QColor("#fdecea"), codeFont());
  for (const auto& [line, message] : messagesByLine_) {
    const int l = line - 1;
    edit_->markerAdd(l, kErrorMarker);
    edit_->markerAdd(l, kErrorLineMarker);
    edit_->annotate(l, message, annotationStyle);
    // The squiggle from the first non-blank character to the end of the line.
    const QString lineText = edit_->text(l);
    const int start = int(lineText.indexOf(QRegularExpression("\\S")));
    const int end = int(lineText.length() - (lineText.endsWith('\n') ? 1 : 0));
    if (start >= 0 && end > start) edit_->fillIndicatorRange(l, start, l, end, kErrorIndicator);
  }
  resultTabs_->setTabText(0, diagnostics_.empty() ? tr("Problems") : tr("Problems (%1)").arg(diagnostics_.size()));
}

void KernelEditor::showCompileFailed(int request, const QString& message,
                                     const std::vector<ks::SourceDiagnostic>& diagnostics) {
  if (request != pending_) return;  // an older compile of an older text
  pending_ = 0;
  runRequest_ = 0;
  statistics_->clear();
  setDiagnostics(diagnostics);
  const int located = int(std::count_if(diagnostics.begin(), diagnostics.end(),
                                        [&](const auto& d) { return d.line > 0 && d.line <= edit_->lines(); }));
  QString summary = diagnostics.size() == 1 ? tr("1 problem") : tr("%1 problems").arg(diagnostics.size());
  if (located > 0) {
    const int first = int(messagesByLine_.begin()->first);
    summary += tr(", the first on line %1").arg(first);
  }
  setStatus(tr("✗ Not compiled: %1.").arg(summary), "#8e1b1b");
  status_->setToolTip(message);
  resultTabs_->setCurrentWidget(problems_);
  emit compileFinished(false);
}

void KernelEditor::showCompiled(int request, const ks::CompileReport& report) {
  if (request != pending_) return;
  pending_ = 0;
  setDiagnostics({});
  statistics_->clear();
  int reported = 0;
  for (size_t i = 0; i < report.passes.size(); ++i) {
    const auto& pass = report.passes[i];
    QString title = report.passes.size() > 1 ? tr("Pass %1").arg(i + 1) : tr("Pipeline");
    QString detail = tr("%1 × %2 × %3 workgroups").arg(pass.groups[0]).arg(pass.groups[1]).arg(pass.groups[2]);
    if (!pass.defines.empty()) detail += "  ·  " + QString::fromStdString(pass.defines);
    auto* top = new QTreeWidgetItem(statistics_, {title, detail});
    QFont bold = top->font(0);
    bold.setBold(true);
    top->setFont(0, bold);
    for (const auto& [name, value] : pass.statistics) {
      auto* item = new QTreeWidgetItem(top, {QString::fromStdString(name), QString::fromStdString(value)});
      if (keyStatistic(item->text(0))) {
        item->setFont(0, bold);
        item->setFont(1, bold);
      }
      ++reported;
    }
    if (pass.statistics.empty())
      new QTreeWidgetItem(top, {tr("(none)"), tr("the driver reports no pipeline statistics for this pass")});
    top->setExpanded(true);
  }
  statistics_->resizeColumnToContents(0);
  const QString on = deviceName_.isEmpty() ? QString() : tr(" on %1").arg(deviceName_);
  QString text = tr("✓ Compiled %1 (%2) for %3%4: %5.")
                     .arg(QString::fromStdString(report.kernel), QString::fromStdString(report.params),
                          QString::fromStdString(report.size.str()), on,
                          report.passes.size() == 1 ? tr("1 pass") : tr("%1 passes").arg(report.passes.size()));
  if (reported == 0)
    text +=
        tr(" The driver reports no pipeline statistics (VK_KHR_pipeline_executable_properties); lavapipe "
           "reports none, a GPU driver shows registers, shared memory and spills here.");
  setStatus(text, "#1b5e20");
  status_->setToolTip(QString());
  resultTabs_->setCurrentWidget(statistics_);
  const bool runIt = request == runRequest_;
  runRequest_ = 0;
  emit compileFinished(true);
  if (runIt) emit runRequested(runText_, path_);
}

// ------------------------------------------------------------------ lines

QList<int> KernelEditor::markedLines() const {
  QList<int> lines;
  for (int l = 0; l < edit_->lines(); ++l)
    if (edit_->markersAtLine(l) & (1u << kErrorMarker)) lines << l + 1;
  return lines;
}

QString KernelEditor::annotationAt(int line) const { return edit_->annotation(line - 1); }

QString KernelEditor::hoverTextAt(int line) const {
  auto it = messagesByLine_.find(line);
  return it == messagesByLine_.end() ? QString() : it->second;
}

int KernelEditor::cursorLine() const {
  int line = 0, index = 0;
  edit_->getCursorPosition(&line, &index);
  return line + 1;
}

void KernelEditor::goToLine(int line) {
  if (line < 1 || line > edit_->lines()) return;
  const QString text = edit_->text(line - 1);
  const int indent = std::max(0, int(text.indexOf(QRegularExpression("\\S"))));
  edit_->setCursorPosition(line - 1, indent);
  edit_->ensureLineVisible(line - 1);
  edit_->setFocus();
}

void KernelEditor::showHover(int x, int y) {
  // The nearest position to the point, also over the margins.
  const long pos = edit_->SendScintilla(QsciScintillaBase::SCI_POSITIONFROMPOINT, static_cast<unsigned long>(x),
                                        static_cast<long>(y));
  const int line = int(edit_->SendScintilla(QsciScintillaBase::SCI_LINEFROMPOSITION, static_cast<unsigned long>(pos)));
  const QString message = hoverTextAt(line + 1);
  if (message.isEmpty()) return;
  QToolTip::showText(edit_->viewport()->mapToGlobal(QPoint(x, y)), message, edit_->viewport());
}

// ------------------------------------------------------------------ the file on disk

void KernelEditor::watch(const QString& path) {
  // Saving replaces the file (QSaveFile, and most editors): the watch on the
  // old file is gone, so it is always added again.
  watcher_->removePath(path);
  if (QFileInfo::exists(path)) watcher_->addPath(path);
}

void KernelEditor::onFileChanged() {
  if (path_.isEmpty()) return;
  if (!QFileInfo::exists(path_)) {
    // Replaced by rename or deleted: give an editor's save a moment to land.
    if (watchRetries_++ < 20) {
      changeTimer_->start();
      return;
    }
    watchRetries_ = 0;
    setStatus(tr("%1 was deleted or moved; Save writes it again.").arg(path_), "#9a6700");
    return;
  }
  watchRetries_ = 0;
  watch(path_);
  QFile f(path_);
  if (!f.open(QIODevice::ReadOnly)) return;
  const QString disk = QString::fromUtf8(f.readAll());
  if (disk == diskText_) return;  // our own save, or a touch
  if (!isModified()) {
    reloadFromDisk();
    return;
  }
  bannerText_->setText(tr("%1 changed on disk, and this buffer has unsaved edits.").arg(QFileInfo(path_).fileName()));
  banner_->show();
}

void KernelEditor::reloadFromDisk() {
  if (path_.isEmpty()) return;
  QFile f(path_);
  if (!f.open(QIODevice::ReadOnly)) {
    setStatus(tr("Cannot read %1: %2").arg(path_, f.errorString()), "#8e1b1b");
    return;
  }
  const QString disk = QString::fromUtf8(f.readAll());
  // Keep the view where the user had it.
  int line = 0, index = 0;
  edit_->getCursorPosition(&line, &index);
  const int first = edit_->firstVisibleLine();
  edit_->setText(disk);
  edit_->setModified(false);
  edit_->setFirstVisibleLine(first);
  edit_->setCursorPosition(std::min(line, edit_->lines() - 1), index);
  diskText_ = disk;
  banner_->hide();
  updateState();
  emit fileReloaded();
  compile();
}

}  // namespace ks::ui
