#include "ui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLockFile>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <map>
#include <set>

#include "engine/bench/complexity.h"
#include "engine/bench/report.h"
#include "engine/bench/roofline.h"
#include "engine/kernels/kernel_file.h"
#include "engine/kernels/registry.h"
#include "engine/session/journal.h"
#include "engine/tune/tune_report.h"
#include "engine/tune/tuned_defaults.h"
#include "ui/compare_panel.h"
#include "ui/engine_worker.h"
#include "ui/kernel_editor.h"
#include "ui/results_model.h"
#include "ui/roofline_chart.h"
#include "ui/sweep_editor.h"
#include "ui/tune_heatmap.h"
#include "ui/tune_panel.h"
#include "ui/tune_progress_chart.h"

namespace ks::ui {

namespace {
constexpr int kKernelIdRole = Qt::UserRole + 1;
constexpr int kMaxRecent = 8;
const char* kDefaultKernels[] = {"gemm.naive", "gemm.tiled_shared", "gemm.reg4x4"};

// The same physical device and driver: peaks measured on one hold for the other.
bool sameDevice(const ks::vk::DeviceInfo& a, const ks::vk::DeviceInfo& b) {
  return a.name == b.name && a.vendor_id == b.vendor_id && a.device_id == b.device_id &&
         a.driver_version == b.driver_version;
}

QString mib(uint64_t bytes) { return QString::number(double(bytes) / (1 << 20), 'f', 0) + " MiB"; }

// An interrupted run keeps its cancelled point; it is not a result.
void dropCancelledPoints(std::vector<ks::Measurement>& points) {
  points.erase(std::remove_if(points.begin(), points.end(),
                              [](const ks::Measurement& m) { return m.status == ks::PointStatus::Cancelled; }),
               points.end());
}
// Device list entries that are not local device indices.
constexpr int kAddRemoteItem = -2;
constexpr int kFirstRemoteItem = -1000;  // -1000 - k: remoteDevices_[k]

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  registerMetaTypes();
  buildUi();
  buildMenus();
  setAcceptDrops(true);
  setWindowTitle("kernelscope[*]");

  worker_ = new EngineWorker;
  worker_->moveToThread(&engineThread_);
  connect(&engineThread_, &QThread::finished, worker_, &QObject::deleteLater);
  connect(this, &MainWindow::requestDevice, worker_, &EngineWorker::selectDevice);
  connect(this, &MainWindow::requestRun, worker_, &EngineWorker::run);
  connect(this, &MainWindow::requestRemoteRun, worker_, &EngineWorker::runRemote);
  connect(this, &MainWindow::requestRemoteDevices, worker_, &EngineWorker::listRemoteDevices);
  connect(worker_, &EngineWorker::remoteDevicesReady, this,
          [this](const QString& target, const QString& cli, const std::vector<ks::vk::DeviceInfo>& devices,
                 int default_index) {
            std::erase_if(remoteDevices_, [&](const RemoteDevice& d) { return d.target == target; });
            const size_t first = remoteDevices_.size();
            for (const auto& d : devices) remoteDevices_.push_back({target, cli, d});
            log(tr("%1: %n Vulkan device(s)", "", int(devices.size())).arg(target));
            if (!running_ && !devices.empty())
              selectRemoteDevice(first + size_t(std::clamp(default_index, 0, int(devices.size()) - 1)));
            else
              fillDeviceBox(deviceBox_->currentData().toInt());
            emit remoteDevicesListed(target, !devices.empty());
          });
  connect(worker_, &EngineWorker::remoteFailed, this, [this](const QString& target, const QString& message) {
    onEngineError(tr("Remote target %1: %2").arg(target, message));
    emit remoteDevicesListed(target, false);
  });
  connect(worker_, &EngineWorker::remoteStarted, this, [this](const ks::Session& header) {
    // The server's own record of its device, host and software goes into the session.
    session_.device = header.device;
    session_.host = header.host;
    session_.glslang_version = header.glslang_version;
    session_.environment = header.environment;
    session_.app_version = header.app_version;
    session_.app_commit = header.app_commit;
    session_.remote = header.remote;
    log(tr("Running on %1: %2")
            .arg(QString::fromStdString(header.remote ? header.remote->target : std::string()),
                 QString::fromStdString(header.device ? header.device->name : std::string())));
  });
  connect(worker_, &EngineWorker::remoteLost, this, [this](const QString& message) {
    session_.notes += (session_.notes.empty() ? "" : "\n") + message.toStdString() + "; the finished points are kept.";
    onEngineError(tr("%1; the finished points are kept.").arg(message));
  });
  connect(this, &MainWindow::requestJournal, worker_, &EngineWorker::journalNextRun);
  connect(worker_, &EngineWorker::journalFailed, this, [this](const QString& message) {
    const QString text = tr("The run's journal failed (%1): a crash would lose the points from here on.").arg(message);
    log(text);
    statusBar()->showMessage(text, 15000);
  });
  connect(this, &MainWindow::requestPeaks, worker_, &EngineWorker::measurePeaks);
  connect(this, &MainWindow::requestTune, worker_, &EngineWorker::tune);
  connect(worker_, &EngineWorker::tuneEvaluated, this, &MainWindow::onTuneEvaluated);
  connect(worker_, &EngineWorker::tuneProgress, tune_, &TunePanel::tuneProgress);
  connect(worker_, &EngineWorker::tuneNote, this, [this](const QString& text) { log(tr("Tune: %1").arg(text)); });
  connect(worker_, &EngineWorker::tuneFinished, this, &MainWindow::onTuneFinished);
  connect(worker_, &EngineWorker::tuneFailed, this, &MainWindow::onTuneFailed);
  connect(tune_, &TunePanel::startRequested, this, &MainWindow::startTune);
  connect(tune_, &TunePanel::stopRequested, this, &MainWindow::stopRun);
  connect(tune_, &TunePanel::message, this, [this](const QString& text) {
    log(text);
    statusBar()->showMessage(text, 10000);
  });
  connect(worker_, &EngineWorker::peakMeasured, this, [this](const ks::PeakResult& r) {
    log(tr("Peak: %1 %2%3")
            .arg(QString::fromStdString(r.title), QString::fromStdString(ks::formatPeakValue(r)),
                 r.measured() ? QString() : QStringLiteral(" (") + QString::fromStdString(r.note) + ")"));
    if (stopButton_->isEnabled())  // after Stop the label keeps saying so
      peaksLabel_->setText(tr("Measuring peaks… %1 done").arg(QString::fromStdString(r.title)));
  });
  connect(worker_, &EngineWorker::peaksFinished, this, &MainWindow::onPeaksFinished);
  connect(worker_, &EngineWorker::driftChecked, this, [this](const ks::DriftReport& d) {
    if (!running_) return;
    const bool was_unstable = session_.drift && session_.drift->unstable;
    session_.drift = d;
    if (d.unstable && !was_unstable) log(QString::fromStdString(ks::formatDriftLine(d)));
    showDrift();
  });
  connect(worker_, &EngineWorker::peaksFailed, this, &MainWindow::onPeaksFailed);
  connect(worker_, &EngineWorker::devicesReady, this, &MainWindow::onDevicesReady);
  connect(worker_, &EngineWorker::deviceOpened, this, &MainWindow::onDeviceOpened);
  connect(worker_, &EngineWorker::deviceFailed, this, [this] {
    devicePending_ = false;
    device_.reset();
    kernelEditor_->setDeviceName(QString());
    sweep_->setDevice(device_);
    tune_->setDevice(device_);
    updateDevicePanel();
    refreshKernelTree();
    emit deviceOpened();
  });
  connect(worker_, &EngineWorker::pointFinished, this, &MainWindow::onPoint);
  connect(worker_, &EngineWorker::progress, this, &MainWindow::onProgress);
  connect(worker_, &EngineWorker::runFinished, this, &MainWindow::onRunFinished);
  connect(worker_, &EngineWorker::errorOccurred, this, &MainWindow::onEngineError);
  connect(kernelEditor_, &KernelEditor::compileRequested, worker_, &EngineWorker::compileKernelText);
  connect(kernelEditor_, &KernelEditor::compileRegisteredRequested, worker_, &EngineWorker::compileRegisteredKernel);
  connect(worker_, &EngineWorker::kernelCompiled, kernelEditor_, &KernelEditor::showCompiled);
  connect(worker_, &EngineWorker::kernelCompileFailed, kernelEditor_, &KernelEditor::showCompileFailed);
  engineThread_.setObjectName("engine");
  engineThread_.start();
  QMetaObject::invokeMethod(worker_, &EngineWorker::initialize, Qt::QueuedConnection);
  setDirty(false);  // "Untitled — kernelscope"
  journalDir_ = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + "/journal";

  QSettings settings;
  if (!restoreGeometry(settings.value("window/geometry").toByteArray())) resize(1280, 800);
  splitter_->restoreState(settings.value("window/splitter").toByteArray());
  rebuildRecentMenu();
  refreshKernelTree();
  updateRunState();
}

MainWindow::~MainWindow() {
  if (worker_) worker_->requestStop();
  engineThread_.quit();
  engineThread_.wait();
}

void MainWindow::buildUi() {
  // ---- left: device, kernels, sweep, run
  auto* left = new QWidget;
  auto* leftLayout = new QVBoxLayout(left);

  auto* deviceGroup = new QGroupBox(tr("Device"));
  auto* deviceLayout = new QVBoxLayout(deviceGroup);
  deviceBox_ = new QComboBox;
  deviceBox_->setObjectName("deviceBox");
  deviceBox_->addItem(tr("Looking for Vulkan devices…"));
  deviceBox_->setEnabled(false);
  deviceLabel_ = new QLabel;
  deviceLabel_->setObjectName("deviceLabel");
  deviceLabel_->setWordWrap(true);
  deviceLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  deviceLayout->addWidget(deviceBox_);
  deviceLayout->addWidget(deviceLabel_);
  peaksLabel_ = new QLabel;
  peaksLabel_->setObjectName("peaksLabel");
  peaksLabel_->setWordWrap(true);
  peaksLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  peaksButton_ = new QPushButton(tr("Measure peaks"));
  peaksButton_->setObjectName("peaksButton");
  peaksButton_->setToolTip(
      tr("Measure this device's fp32/fp16 FMA and cooperative-matrix throughput, memory bandwidth and dispatch "
         "overhead, and the host CPU's fp32 FMA throughput and memory bandwidth (STREAM triad and copy): the "
         "ceilings of the roofline and the \"% peak\" column"));
  connect(peaksButton_, &QPushButton::clicked, this, &MainWindow::measurePeaks);
  deviceLayout->addWidget(peaksLabel_);
  deviceLayout->addWidget(peaksButton_);
  connect(deviceBox_, &QComboBox::activated, this, [this](int row) {
    const int index = deviceBox_->itemData(row).toInt();
    if (running_) return;
    if (index == kAddRemoteItem) {
      askForRemoteTarget();
      return;
    }
    if (index <= kFirstRemoteItem) {
      selectRemoteDevice(size_t(kFirstRemoteItem - index));
      return;
    }
    if (index < 0) return;
    remoteSelected_.reset();
    devicePending_ = true;
    updateRunState();
    emit requestDevice(index);
  });

  auto* kernelGroup = new QGroupBox(tr("Kernels"));
  auto* kernelLayout = new QVBoxLayout(kernelGroup);
  kernelTree_ = new QTreeWidget;
  kernelTree_->setObjectName("kernelTree");
  kernelTree_->setHeaderLabels({tr("Kernel"), tr("Title")});
  kernelTree_->setRootIsDecorated(true);
  kernelTree_->setUniformRowHeights(true);
  QStringList preset;
  for (const char* id : kDefaultKernels) preset << id;
  rebuildKernelTree(preset);
  connect(kernelTree_, &QTreeWidget::itemChanged, this, [this] { updateRunState(); });
  kernelTree_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(kernelTree_, &QTreeWidget::customContextMenuRequested, this, &MainWindow::showKernelMenu);
  kernelLayout->addWidget(kernelTree_);

  auto* sweepGroup = new QGroupBox(tr("Sweep"));
  auto* sweepLayout = new QVBoxLayout(sweepGroup);
  sweep_ = new SweepEditor;
  sweepLayout->addWidget(sweep_);
  connect(sweep_, &SweepEditor::changed, this, [this] {
    if (runButton_)
      runButton_->setEnabled(!running_ && !tuning_ && !measuringPeaks_ && !devicePending_ && sweep_->isValid());
  });

  auto* buttons = new QHBoxLayout;
  runButton_ = new QPushButton(tr("Run"));
  runButton_->setObjectName("runButton");
  stopButton_ = new QPushButton(tr("Stop"));
  stopButton_->setObjectName("stopButton");
  stopButton_->setEnabled(false);
  connect(runButton_, &QPushButton::clicked, this, &MainWindow::startRun);
  connect(stopButton_, &QPushButton::clicked, this, &MainWindow::stopRun);
  buttons->addWidget(runButton_);
  buttons->addWidget(stopButton_);

  leftLayout->addWidget(deviceGroup);
  leftLayout->addWidget(kernelGroup, 1);
  leftLayout->addWidget(sweepGroup);
  leftLayout->addLayout(buttons);

  // ---- right: charts, table, log
  tabs_ = new QTabWidget;
  tabs_->setObjectName("tabs");
  gflopsChart_ = new ChartPanel(ChartKind::Gflops);
  timeChart_ = new ChartPanel(ChartKind::Time);
  relativeChart_ = new ChartPanel(Metric::RelativeTime);
  // A chart with its controls above it.
  auto withControls = [](ChartPanel* chart, std::initializer_list<QWidget*> controls) {
    auto* page = new QWidget;
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 4, 0, 0);
    auto* row = new QHBoxLayout;
    for (QWidget* c : controls) row->addWidget(c);
    row->addStretch();
    layout->addLayout(row);
    layout->addWidget(chart, 1);
    return page;
  };
  metricBox_ = new QComboBox;
  metricBox_->setObjectName("metricBox");
  metricBox_->addItem(tr("GFLOPS"), int(Metric::Gflops));
  metricBox_->addItem(tr("GB/s"), int(Metric::Gbps));
  metricBox_->addItem(tr("Median time"), int(Metric::Time));
  metricBox_->setToolTip(
      tr("Compute-bound kernels (gemm) are judged in GFLOPS, bandwidth-bound ones (gemv, dot) in GB/s"));
  connect(metricBox_, &QComboBox::currentIndexChanged, this, [this] {
    gflopsChart_->setMetric(Metric(metricBox_->currentData().toInt()));
    tabs_->setTabText(0, metricBox_->currentText());
  });
  auto* logY = new QCheckBox(tr("log y"));
  logY->setToolTip(tr("A log y axis keeps slow series readable next to fast ones"));
  connect(logY, &QCheckBox::toggled, this, [this](bool on) { gflopsChart_->setLogY(on); });
  baselineBox_ = new QComboBox;
  baselineBox_->setObjectName("baselineBox");
  baselineBox_->setMinimumContentsLength(28);
  baselineBox_->setPlaceholderText(tr("no series yet"));
  connect(baselineBox_, &QComboBox::currentTextChanged, this, [this](const QString& name) {
    if (!name.isEmpty()) relativeChart_->setBaseline(name);
  });
  auto* relLogY = new QCheckBox(tr("log y"));
  connect(relLogY, &QCheckBox::toggled, this, [this](bool on) { relativeChart_->setLogY(on); });
  relLogY->setChecked(true);  // ratios span decades (a GPU kernel vs a CPU baseline)
  tabs_->addTab(withControls(gflopsChart_, {new QLabel(tr("y axis:")), metricBox_, logY}), tr("GFLOPS"));
  tabs_->addTab(timeChart_, tr("Time (log-log)"));
  tabs_->addTab(withControls(relativeChart_, {new QLabel(tr("relative to:")), baselineBox_, relLogY}),
                tr("Relative time"));
  roofline_ = new RooflineChart;
  roofline_->setObjectName("roofline");
  tabs_->addTab(roofline_, tr("Roofline"));
  model_ = new ResultsModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(ResultsModel::SortRole);
  table_ = new QTableView;
  table_->setObjectName("resultsTable");
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(-1, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->setVisible(false);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setContextMenuPolicy(Qt::ActionsContextMenu);
  auto* copy = new QAction(tr("Copy rows"), table_);
  copy->setShortcut(QKeySequence::Copy);
  copy->setShortcutContext(Qt::WidgetShortcut);
  connect(copy, &QAction::triggered, this, &MainWindow::copySelectedRows);
  table_->addAction(copy);
  tabs_->addTab(table_, tr("Results"));
  seriesTable_ = new QTableWidget(0, 6);
  seriesTable_->setObjectName("seriesTable");
  seriesTable_->setHorizontalHeaderLabels(
      {tr("Series"), tr("Points"), tr("Complexity (slope)"), tr("Best GFLOPS"), tr("Best GB/s"), tr("Best % peak")});
  seriesTable_->horizontalHeaderItem(2)->setToolTip(
      tr("Least-squares slope of log(median time) against log(size) over the sizes chosen above, ± its "
         "standard error: about 3 for gemm, 2 for gemv, 1 for dot once fixed costs stop dominating"));
  seriesTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  seriesTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  seriesTable_->setAlternatingRowColors(true);
  seriesTable_->verticalHeader()->setVisible(false);
  seriesTable_->verticalHeader()->setDefaultSectionSize(seriesTable_->fontMetrics().height() + 8);
  seriesTable_->horizontalHeader()->setStretchLastSection(true);
  fitFrom_ = new QSpinBox;
  fitFrom_->setObjectName("fitFrom");
  fitFrom_->setRange(0, 1 << 30);
  fitFrom_->setSpecialValueText(tr("upper half of each series"));
  fitFrom_->setToolTip(
      tr("The complexity fit uses the sizes from this one up (N for squares and vectors, "
         "\u221a(M\u00b7N) for gemv, \u221b(M\u00b7N\u00b7K) for gemm)"));
  connect(fitFrom_, &QSpinBox::valueChanged, this, &MainWindow::refreshDerivedViews);
  auto* seriesPage = new QWidget;
  auto* seriesLayout = new QVBoxLayout(seriesPage);
  seriesLayout->setContentsMargins(0, 4, 0, 0);
  auto* fitRow = new QHBoxLayout;
  fitRow->addWidget(new QLabel(tr("Complexity fit from size:")));
  fitRow->addWidget(fitFrom_);
  fitRow->addStretch();
  seriesLayout->addLayout(fitRow);
  seriesLayout->addWidget(seriesTable_, 1);
  tabs_->addTab(seriesPage, tr("Series"));
  compare_ = new ComparePanel;
  compare_->setObjectName("comparePanel");
  tabs_->addTab(compare_, tr("Compare"));
  tune_ = new TunePanel;
  tune_->setObjectName("tunePanel");
  tabs_->addTab(tune_, tr("Tune"));
  derivedTimer_ = new QTimer(this);
  derivedTimer_->setSingleShot(true);
  derivedTimer_->setInterval(250);
  connect(derivedTimer_, &QTimer::timeout, this, &MainWindow::refreshDerivedViews);
  log_ = new QPlainTextEdit;
  log_->setObjectName("log");
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(20000);
  tabs_->addTab(log_, tr("Log"));

  // A run whose reference kernel drifted says so above everything it measured.
  driftBanner_ = new QLabel;
  driftBanner_->setObjectName("driftBanner");
  driftBanner_->setWordWrap(true);
  driftBanner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  driftBanner_->setStyleSheet(
      "QLabel { background: #fdecea; color: #8e1b1b; border: 1px solid #e0a0a0; padding: 6px; font-weight: bold; }");
  driftBanner_->hide();
  auto* right = new QWidget;
  auto* rightLayout = new QVBoxLayout(right);
  rightLayout->setContentsMargins(0, 0, 0, 0);
  rightLayout->addWidget(driftBanner_);
  rightLayout->addWidget(tabs_, 1);

  splitter_ = new QSplitter;
  splitter_->addWidget(left);
  splitter_->addWidget(right);
  splitter_->setStretchFactor(0, 0);
  splitter_->setStretchFactor(1, 1);
  splitter_->setSizes({400, 880});
  setCentralWidget(splitter_);

  progress_ = new QProgressBar;
  progress_->setObjectName("progress");
  progress_->setMaximumWidth(280);
  progress_->setFormat(tr("%v / %m points"));
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setTextVisible(false);  // until there is a sweep to count
  eta_ = new QLabel;
  statusBar()->addPermanentWidget(eta_);
  statusBar()->addPermanentWidget(progress_);

  // The kernel editor docks on the right (or floats); Kernel > Kernel Editor shows it.
  kernelEditor_ = new KernelEditor;
  editorDock_ = new QDockWidget(tr("Kernel editor"), this);
  editorDock_->setObjectName("kernelEditorDock");
  editorDock_->setWidget(kernelEditor_);
  addDockWidget(Qt::RightDockWidgetArea, editorDock_);
  editorDock_->hide();
  connect(kernelEditor_, &KernelEditor::titleChanged, editorDock_,
          [this](const QString& title) { editorDock_->setWindowTitle(tr("Kernel editor — %1").arg(title)); });
  connect(kernelEditor_, &KernelEditor::documentLoaded, this, &MainWindow::showKernelEditor);
  connect(kernelEditor_, &KernelEditor::runRequested, this, &MainWindow::runKernelText);
  connect(kernelEditor_, &KernelEditor::runRegisteredRequested, this, &MainWindow::runCheckedKernel);
  // Compiling or running from the menu while the editor is hidden shows it.
  connect(kernelEditor_->compileAction(), &QAction::triggered, this, &MainWindow::showKernelEditor);
  connect(kernelEditor_->runAction(), &QAction::triggered, this, &MainWindow::showKernelEditor);
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&New"), QKeySequence::New, this, &MainWindow::newSession);
  file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openSessionDialog);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  file->addAction(tr("&Save"), QKeySequence::Save, this, &MainWindow::save);
  file->addAction(tr("Save &As…"), QKeySequence::SaveAs, this, &MainWindow::saveAs);
  file->addSeparator();
  file->addAction(tr("Open &Baseline…"), this, &MainWindow::openBaselineDialog);
  file->addAction(tr("C&lear Baseline"), this, &MainWindow::clearBaseline);
  file->addSeparator();
  file->addAction(tr("Export Chart as &PNG…"), this, &MainWindow::exportChartPng);
  file->addAction(tr("Export Chart as S&VG…"), this, &MainWindow::exportChartSvg);
  file->addAction(tr("Export &CSV…"), this, &MainWindow::exportCsv);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(tr("&Run sweep"), QKeySequence("Ctrl+R"), this, &MainWindow::startRun);
  run->addAction(tr("&Stop"), QKeySequence("Ctrl+."), this, &MainWindow::stopRun);
  run->addSeparator();
  run->addAction(tr("Measure &Peaks"), this, &MainWindow::measurePeaks);

  // One set of actions: the editor's toolbar and this menu share them (and their shortcuts).
  QMenu* kernel = menuBar()->addMenu(tr("&Kernel"));
  QAction* toggle = editorDock_->toggleViewAction();
  toggle->setText(tr("Kernel &Editor"));
  toggle->setShortcut(QKeySequence("Ctrl+E"));
  kernel->addAction(toggle);
  kernel->addSeparator();
  kernel->addMenu(kernelEditor_->templateMenu());
  kernel->addAction(kernelEditor_->openAction());
  kernel->addAction(kernelEditor_->saveAction());
  kernel->addAction(kernelEditor_->saveAsAction());
  kernel->addSeparator();
  kernel->addAction(kernelEditor_->compileAction());
  kernel->addAction(kernelEditor_->runAction());
  kernel->addSeparator();
  kernel->addAction(tr("Re&load My Kernel Folder"), this,
                    [this] { loadKernelDir(QString::fromStdString(ks::defaultKernelDir())); });
  kernel->addAction(tr("Load Kernel &Folder…"), this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Load kernel files (*.comp) from"));
    if (!dir.isEmpty()) loadKernelDir(dir);
  });
}

// ------------------------------------------------------------------ engine

void MainWindow::onDevicesReady(const std::vector<ks::vk::DeviceInfo>& devices, int selected,
                                const ks::cpu::HostInfo& host) {
  devices_ = devices;
  host_ = host;
  devicePending_ = selected >= 0;  // the worker opens the default device next
  fillDeviceBox(selected);
  updateDevicePanel();
  refreshKernelTree();
  emit devicesListed();
  if (devices.empty()) emit deviceOpened();
}

// The local devices, the servers' devices, and "Add remote target…".
void MainWindow::fillDeviceBox(int selected_data) {
  deviceBox_->clear();
  for (const auto& d : devices_)
    deviceBox_->addItem(
        QString("%1: %2 (%3)").arg(d.index).arg(QString::fromStdString(d.name), QString::fromStdString(d.type)),
        int(d.index));
  if (devices_.empty()) deviceBox_->addItem(tr("No Vulkan device (CPU kernels only)"), -1);
  for (size_t k = 0; k < remoteDevices_.size(); ++k) {
    const auto& r = remoteDevices_[k];
    deviceBox_->addItem(QString("%1: %2: %3 (%4)")
                            .arg(r.target)
                            .arg(r.info.index)
                            .arg(QString::fromStdString(r.info.name), QString::fromStdString(r.info.type)),
                        kFirstRemoteItem - int(k));
    deviceBox_->setItemData(deviceBox_->count() - 1, tr("On %1, over ssh").arg(r.target), Qt::ToolTipRole);
  }
  deviceBox_->addItem(tr("Add remote target…"), kAddRemoteItem);
  deviceBox_->setItemData(deviceBox_->count() - 1,
                          tr("Run on a GPU server over ssh (your ssh config, keys and agent; the server needs sshd and "
                             "a Vulkan driver)"),
                          Qt::ToolTipRole);
  deviceBox_->setEnabled(true);
  for (int i = 0; i < deviceBox_->count(); ++i)
    if (deviceBox_->itemData(i).toInt() == selected_data) deviceBox_->setCurrentIndex(i);
}

void MainWindow::selectRemoteDevice(size_t index) {
  if (index >= remoteDevices_.size()) return;
  remoteSelected_ = index;
  device_ = remoteDevices_[index].info;
  fillDeviceBox(kFirstRemoteItem - int(index));
  kernelEditor_->setDeviceName(QString::fromStdString(device_->name));
  sweep_->setDevice(device_);
  tune_->setDevice(device_);
  updateDevicePanel();
  refreshKernelTree();
  updateRunState();
  log(tr("Device: %1 on %2").arg(QString::fromStdString(device_->name), remoteDevices_[index].target));
  emit deviceOpened();
}

void MainWindow::addRemoteTarget(const QString& target, const QString& cli) {
  log(tr("Connecting to %1 over ssh…").arg(target));
  statusBar()->showMessage(tr("Connecting to %1 over ssh…").arg(target), 10000);
  emit requestRemoteDevices(target, cli);
}

void MainWindow::askForRemoteTarget() {
  // Put the selection back: "Add remote target…" is an action, not a device.
  fillDeviceBox(remoteSelected_ ? kFirstRemoteItem - int(*remoteSelected_) : device_ ? int(device_->index) : -1);
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Add remote target"));
  auto* form = new QFormLayout(&dialog);
  auto* host = new QLineEdit;
  host->setPlaceholderText(tr("[user@]host[:port], as for ssh"));
  auto* cli = new QLineEdit;
  cli->setPlaceholderText(tr("optional: a kernelscope-cli on the server (default: this build's bundle is copied)"));
  form->addRow(tr("Host:"), host);
  form->addRow(tr("CLI path:"), cli);
  form->addRow(
      new QLabel(tr("ssh uses your config, keys and agent and never asks for a password. The server needs "
                    "sshd and a Vulkan driver.")));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  form->addRow(buttons);
  if (dialog.exec() != QDialog::Accepted || host->text().trimmed().isEmpty()) return;
  addRemoteTarget(host->text().trimmed(), cli->text().trimmed());
}

void MainWindow::onDeviceOpened(const ks::vk::DeviceInfo& device) {
  remoteSelected_.reset();
  devicePending_ = false;
  device_ = device;
  kernelEditor_->setDeviceName(QString::fromStdString(device.name));
  for (int i = 0; i < deviceBox_->count(); ++i)
    if (deviceBox_->itemData(i).toInt() == int(device.index)) deviceBox_->setCurrentIndex(i);
  sweep_->setDevice(device_);
  tune_->setDevice(device_);
  updateDevicePanel();
  refreshKernelTree();
  log(tr("Device: %1").arg(QString::fromStdString(device.name)));
  emit deviceOpened();
}

void MainWindow::updateDevicePanel() {
  QString html;
  if (device_) {
    const auto& d = *device_;
    html += QString("<b>%1</b> (%2)<br>").arg(QString(d.name.c_str()).toHtmlEscaped(), QString::fromStdString(d.type));
    if (remoteSelected_)
      html += tr("On <b>%1</b>, over ssh<br>").arg(remoteDevices_[*remoteSelected_].target.toHtmlEscaped());
    html +=
        tr("Driver: %1 %2<br>").arg(QString::fromStdString(d.driver_name), QString::fromStdString(d.driver_version));
    if (!d.driver_info.empty()) html += QString::fromStdString(d.driver_info).toHtmlEscaped() + "<br>";
    html += tr("Vulkan %1 · subgroup %2 · shared memory %3 KiB<br>")
                .arg(QString::fromStdString(d.api_version))
                .arg(d.subgroup_size)
                .arg(d.max_shared_memory / 1024);
    html += tr("Workgroup ≤ %1×%2×%3, %4 invocations<br>")
                .arg(d.max_workgroup_size[0])
                .arg(d.max_workgroup_size[1])
                .arg(d.max_workgroup_size[2])
                .arg(d.max_invocations);
    html += d.timestamps
                ? tr("Timestamps: %1 bits, %2 ns/tick<br>").arg(d.timestamp_valid_bits).arg(d.timestamp_period_ns)
                : tr("Timestamps: none (wall clock)<br>");
    html +=
        tr("Memory: %1 device-local, buffers ≤ %2<br>").arg(mib(d.device_local_bytes), mib(d.max_storage_buffer_range));
  } else if (!devices_.empty() && devicePending_) {
    html += tr("Opening the device…<br>");
  } else if (!devices_.empty()) {
    html += tr("<b>No device open.</b> %1<br>").arg(lastError_.toHtmlEscaped());
  } else {
    html += tr("<b>No Vulkan device.</b> Install mesa-vulkan-drivers for lavapipe.<br>");
  }
  if (!host_.cpu_model.empty())
    html += tr("CPU: %1, %2 threads · OpenBLAS %3 (%4 threads)")
                .arg(QString::fromStdString(host_.cpu_model).toHtmlEscaped())
                .arg(host_.logical_cores)
                .arg(QString::fromStdString(host_.openblas_core))
                .arg(host_.openblas_threads);
  if (!host_.openblas_warning.empty())
    html += "<br><span style='color:#9a6700'>⚠ " + QString::fromStdString(host_.openblas_warning).toHtmlEscaped() +
            "</span>";
  deviceLabel_->setText(html);

  // Two lines here (the kernel list needs the room); every measurement in the tooltip.
  QString peaks, details;
  if (const ks::DevicePeaks* p = devicePeaks()) {
    auto value = [&](const std::string& id) {
      const ks::PeakResult* r = p->find(id);
      return r && r->measured() ? QString::fromStdString(ks::formatPeakValue(*r)) : QString();
    };
    QStringList parts;
    if (QString v = value("fp32_fma"); !v.isEmpty()) parts << tr("fp32 %1").arg(v);
    if (QString v = value("fp16_fma"); !v.isEmpty()) parts << tr("fp16 %1").arg(v);
    if (const double c = std::max(p->coopmatGflops(32), p->coopmatGflops(16)); c > 0)
      parts << tr("coopmat %1 TFLOP/s").arg(c / 1000, 0, 'g', 3);
    if (const double bw = p->bandwidthGbps(); bw > 0)
      parts << tr("memory %1")
                   .arg(bw >= 1000 ? QString::number(bw / 1000, 'g', 3) + " TB/s"
                                   : QString::number(bw, 'g', 3) + " GB/s");
    if (QString v = value("dispatch"); !v.isEmpty()) parts << tr("dispatch %1").arg(v);
    peaks = tr("<b>Peaks</b> (%1): %2").arg(QString::fromStdString(p->measured_at), parts.join(" · "));
    // The host CPU's roofs, for the CPU kernels.
    QStringList host;
    if (QString v = value("cpu_fp32_fma"); !v.isEmpty()) host << tr("fp32 %1").arg(v);
    if (const double bw = p->cpuBandwidthGbps(); bw > 0)
      host << tr("memory %1").arg(QString::fromStdString(ks::formatPeakValue({"", "", "GB/s", bw})));
    if (!host.isEmpty()) peaks += tr("<br><b>host CPU</b>: %1").arg(host.join(" · "));
    for (const auto& r : p->results)
      details += QStringLiteral("%1: %2\n")
                     .arg(QString::fromStdString(r.title),
                          r.measured() ? QString::fromStdString(ks::formatPeakValue(r) + "  (" + r.note + ")")
                                       : QString::fromStdString(r.note));
  } else if (device_) {
    peaks = tr("Peaks: not measured on this device yet.");
    if (session_.peaks && session_.device)
      peaks += tr(" (The open session's peaks were measured on %1; its table and roofline use them.)")
                   .arg(QString::fromStdString(session_.device->name).toHtmlEscaped());
  }
  peaksLabel_->setToolTip(details.trimmed());
  if (!measuringPeaks_) peaksLabel_->setText(peaks);
}

// The tree from the registry as it is now (kernel files come and go); the
// user's checks and collapsed families stay as they were.
void MainWindow::rebuildKernelTree(const QStringList& checked) {
  std::set<QString> collapsed;
  for (int f = 0; f < kernelTree_->topLevelItemCount(); ++f)
    if (!kernelTree_->topLevelItem(f)->isExpanded()) collapsed.insert(kernelTree_->topLevelItem(f)->text(0));
  QSignalBlocker block(kernelTree_);
  kernelTree_->clear();
  std::map<std::string, QTreeWidgetItem*> families;
  for (const auto& k : ks::Registry::instance().all()) {
    QTreeWidgetItem*& family = families[k.family];
    if (!family) {
      family = new QTreeWidgetItem(kernelTree_, {QString::fromStdString(k.family)});
      family->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsAutoTristate);
      family->setCheckState(0, Qt::Unchecked);
    }
    const QString id = QString::fromStdString(k.id);
    auto* item = new QTreeWidgetItem(family, {id, QString::fromStdString(k.title)});
    item->setData(0, kKernelIdRole, id);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsSelectable);
    if (k.user) {  // a kernel file: italic, with a file icon
      QFont italic = item->font(0);
      italic.setItalic(true);
      item->setFont(0, italic);
      item->setFont(1, italic);
      item->setIcon(0, style()->standardIcon(QStyle::SP_FileIcon));
    }
    item->setCheckState(0, checked.contains(id) ? Qt::Checked : Qt::Unchecked);
  }
  for (int f = 0; f < kernelTree_->topLevelItemCount(); ++f)
    kernelTree_->topLevelItem(f)->setExpanded(!collapsed.count(kernelTree_->topLevelItem(f)->text(0)));
  kernelTree_->resizeColumnToContents(0);
  refreshKernelTree();
  if (tune_) tune_->refreshKernels();  // kernel files come and go there too
}

void MainWindow::rebuildKernelTree() {
  QStringList checked;
  for (int f = 0; f < kernelTree_->topLevelItemCount(); ++f)
    for (int i = 0; i < kernelTree_->topLevelItem(f)->childCount(); ++i)
      if (kernelTree_->topLevelItem(f)->child(i)->checkState(0) == Qt::Checked)
        checked << kernelTree_->topLevelItem(f)->child(i)->data(0, kKernelIdRole).toString();
  rebuildKernelTree(checked);
}

void MainWindow::showKernelMenu(const QPoint& pos) {
  QTreeWidgetItem* item = kernelTree_->itemAt(pos);
  if (!item || item->data(0, kKernelIdRole).isNull()) return;
  const QString id = item->data(0, kKernelIdRole).toString();
  const ks::KernelInfo* k = ks::Registry::instance().find(id.toStdString());
  if (!k) return;
  QMenu menu;
  if (k->user) {
    menu.addAction(tr("Open Source in the Kernel Editor"), this, [this, id] { openKernelSource(id); });
  } else {
    QAction* show =
        menu.addAction(tr("Show Source and Pipeline Statistics"), this, [this, id] { openKernelSource(id); });
    if (k->backend != ks::Backend::Vulkan) {
      show->setEnabled(false);
      show->setText(tr("Runs on the CPU: no shader"));
    }
  }
  menu.exec(kernelTree_->viewport()->mapToGlobal(pos));
}

bool MainWindow::openKernelSource(const QString& id) {
  const ks::KernelInfo* k = ks::Registry::instance().find(id.toStdString());
  if (!k) return false;
  showKernelEditor();
  return k->user ? kernelEditor_->showUserKernel(*k) : kernelEditor_->showBuiltin(*k);
}

void MainWindow::showKernelEditor() {
  const bool first = editorDock_->isHidden() && !editorShown_;
  editorDock_->show();
  editorDock_->raise();
  // GLSL wants width: the first time, the editor takes about half the window.
  if (first && !editorDock_->isFloating()) resizeDocks({editorDock_}, {width() / 2}, Qt::Horizontal);
  editorShown_ = true;
}

bool MainWindow::runKernelText(const QString& text, const QString& path) {
  if (running_ || tuning_ || measuringPeaks_ || devicePending_) {
    showError(tr("Cannot run the kernel"), tr("Wait for the running sweep (or the device) first."));
    return false;
  }
  auto kernel = ks::parseKernelFile(text.toStdString(), path.isEmpty() ? "kernel.comp" : path.toStdString());
  if (!kernel) {
    showError(tr("Cannot run the kernel"), QString::fromStdString(kernel.error().message));
    return false;
  }
  kernel->source_path = path.toStdString();  // "" for a buffer that was never saved
  auto added = ks::Registry::instance().addUserKernel(std::move(*kernel));
  if (!added) {
    showError(tr("Cannot run the kernel"), QString::fromStdString(added.error().message));
    return false;
  }
  const QString id = QString::fromStdString((*added)->id);
  log(tr("Kernel %1 registered from %2").arg(id, path.isEmpty() ? tr("the editor") : path));
  rebuildKernelTree();
  setKernelChecked(id, true);
  updateRunState();
  return runCheckedKernel(id);
}

bool MainWindow::runCheckedKernel(const QString& id) {
  setKernelChecked(id, true);
  updateRunState();
  if (!checkedKernels().contains(id)) {
    showError(tr("Cannot run the kernel"), tr("%1 cannot run on this device.").arg(id));
    return false;
  }
  startRun();
  return running_;
}

void MainWindow::loadKernelDir(const QString& dir) {
  if (!QFileInfo(dir).isDir()) return;
  const auto loaded = ks::registerKernelDir(dir.toStdString());
  for (const auto& e : loaded.errors) log(tr("Kernel file not loaded: %1").arg(QString::fromStdString(e)));
  if (!loaded.errors.empty())
    statusBar()->showMessage(
        tr("%n kernel file(s) in %1 did not load: see the Log tab", "", int(loaded.errors.size())).arg(dir), 15000);
  if (!loaded.kernels.empty()) log(tr("Loaded %n kernel file(s) from %1", "", int(loaded.kernels.size())).arg(dir));
  rebuildKernelTree();
}

void MainWindow::refreshKernelTree() {
  const ks::vk::DeviceInfo* dev = device_ ? &*device_ : nullptr;
  QSignalBlocker block(kernelTree_);
  for (int f = 0; f < kernelTree_->topLevelItemCount(); ++f) {
    auto* family = kernelTree_->topLevelItem(f);
    for (int i = 0; i < family->childCount(); ++i) {
      auto* item = family->child(i);
      const auto* k = ks::Registry::instance().find(item->data(0, kKernelIdRole).toString().toStdString());
      std::optional<std::string> why;
      if (k->backend == ks::Backend::Vulkan) {
        if (!dev)
          why = devices_.empty() ? "no Vulkan device" : "no device open";
        else if (auto size = ks::problemSize(*k, {256}); !size)
          why = size.error().message;
        else
          why = ks::checkPoint(*k, *size, k->defaultParams(dev), dev);
      }
      QString tip;
      if (k->user)  // where the kernel file lives (a session's may not be on this machine)
        tip = k->source_path.empty() || !QFileInfo::exists(QString::fromStdString(k->source_path))
                  ? tr("<b>Kernel file</b> %1 (not on disk here: from a session or the editor)<br>")
                        .arg(QString::fromStdString(k->source_path).toHtmlEscaped())
                  : tr("<b>Kernel file</b> %1<br>").arg(QString::fromStdString(k->source_path).toHtmlEscaped());
      tip += QString("<b>%1</b><br>%2<br><i>%3</i><br>Origin: %4<br>Constraints: %5")
                 .arg(QString::fromStdString(k->id), QString::fromStdString(k->title),
                      QString::fromStdString(k->description), QString::fromStdString(k->origin),
                      QString::fromStdString(k->constraints));
      for (const auto& t : k->tunables) {
        QStringList values;
        for (int v : t.values) values << QString::number(v);
        tip += QString("<br>%1 = %2 (default %3): %4")
                   .arg(QString::fromStdString(t.name), values.join('/'))
                   .arg(t.default_value)
                   .arg(QString::fromStdString(t.help));
      }
      if (k->uses_workgroup) tip += tr("<br>Default workgroup %1").arg(QString::fromStdString(k->default_wg.str()));
      if (why) {
        const QString reason = QString::fromStdString(*why).remove("unsupported: ");
        item->setDisabled(true);  // keeps its check state: it comes back with a device that can run it
        item->setText(1, tr("unsupported: %1").arg(reason));
        tip += tr("<br><b>Unsupported here:</b> %1").arg(reason.toHtmlEscaped());
      } else {
        item->setDisabled(false);
        item->setText(1, QString::fromStdString(k->title) + (k->user ? tr("  (file)") : QString()));
      }
      item->setToolTip(0, tip);
      item->setToolTip(1, tip);
    }
  }
  updateRunState();
}

void MainWindow::setKernelChecked(const QString& id, bool checked) {
  for (int f = 0; f < kernelTree_->topLevelItemCount(); ++f) {
    auto* family = kernelTree_->topLevelItem(f);
    for (int i = 0; i < family->childCount(); ++i)
      if (family->child(i)->data(0, kKernelIdRole).toString() == id)
        family->child(i)->setCheckState(0, checked ? Qt::Checked : Qt::Unchecked);
  }
}

QStringList MainWindow::checkedKernels() const {
  QStringList ids;
  for (int f = 0; f < kernelTree_->topLevelItemCount(); ++f) {
    auto* family = kernelTree_->topLevelItem(f);
    for (int i = 0; i < family->childCount(); ++i) {
      auto* item = family->child(i);
      if (item->checkState(0) == Qt::Checked && !item->isDisabled()) ids << item->data(0, kKernelIdRole).toString();
    }
  }
  return ids;
}

void MainWindow::updateRunState() {
  if (!sweep_) return;
  std::vector<const ks::KernelInfo*> kernels;
  for (const QString& id : checkedKernels()) kernels.push_back(ks::Registry::instance().find(id.toStdString()));
  sweep_->setKernels(kernels);
  const bool busy = running_ || tuning_ || measuringPeaks_;
  runButton_->setEnabled(!busy && !devicePending_ && sweep_->isValid());
  runButton_->setToolTip(devicePending_      ? tr("Opening the device…")
                         : sweep_->isValid() ? tr("Run the sweep (Ctrl+R)")
                                             : sweep_->errorText());
  stopButton_->setEnabled(busy);
  if (kernelEditor_) kernelEditor_->setEngineBusy(busy);
  deviceBox_->setEnabled(!busy);
  peaksButton_->setEnabled(device_ && !busy && !devicePending_ && !remoteSelected_);
  if (tune_) tune_->setEngineBusy(running_ || measuringPeaks_ || devicePending_);
}

// ------------------------------------------------------------------ running

// A new session for a sweep or a tune of `plan` on the open device, and views emptied for it.
void MainWindow::beginSession(const ks::Plan& plan) {
  dropJournal();
  session_ = ks::newSession();
  session_.device = device_;
  session_.plan = plan;
  // The kernel files as they are now: an edit made during the sweep does not
  // change what the session says it measured.
  ks::embedKernelFiles(session_);
  sessionFromFile_ = false;
  // Only peaks measured in this app run: a file's peaks may be another day's (or driver's).
  if (device_)
    if (auto it = measuredPeaks_.find(device_->index); it != measuredPeaks_.end()) session_.peaks = it->second;
  applyPeaks();
  showDrift();
  path_.clear();
  model_->clear();
  for (auto* c : charts()) c->clear();
  refreshBaselines();
}

void MainWindow::startRun() {
  if (running_ || tuning_ || measuringPeaks_ || devicePending_) return;
  auto plan = sweep_->plan();
  if (!plan) {
    showError(tr("Cannot run"), sweep_->errorText());
    return;
  }
  if (!session_.points.empty() && !confirmDiscard()) return;
  if (sweep_->useTunedDefaults()) applyTunedDefaults(*plan);
  beginSession(*plan);
  tune_->clearTune();  // the new session has none
  running_ = true;
  setDirty(true);
  progress_->setRange(0, int(plan->items.size()));
  progress_->setValue(0);
  progress_->setTextVisible(true);
  eta_->setText(tr("starting…"));
  runClock_.start();
  log(tr("Run: %1 points, %2 warm-up + %3 repetitions").arg(plan->items.size()).arg(plan->warmup).arg(plan->reps));
  updateRunState();
  worker_->clearStop();  // before queueing: a Stop pressed from now on counts
  startJournal();
  if (remoteSelected_) {
    const auto& r = remoteDevices_[*remoteSelected_];
    session_.remote = ks::RemoteOrigin{r.target.toStdString(), r.cli.toStdString()};
    emit requestRemoteRun(*plan, r.target, r.cli, int(r.info.index));
  } else {
    emit requestRun(*plan);
  }
}

void MainWindow::stopRun() {
  if (measuringPeaks_) {
    worker_->requestStop();
    peaksLabel_->setText(tr("Stopping…"));
    stopButton_->setEnabled(false);
    return;
  }
  if (tuning_) {
    worker_->requestStop();  // the search stops; what it evaluated comes back
    tune_->tuneStopping();
    eta_->setText(tr("stopping the tune…"));
    stopButton_->setEnabled(false);
    return;
  }
  if (!running_) return;
  worker_->requestStop();  // atomic: takes effect before the next dispatch
  eta_->setText(tr("stopping…"));
  stopButton_->setEnabled(false);
}

void MainWindow::onPoint(const ks::Measurement& m) {
  if (m.status == ks::PointStatus::Cancelled) return;  // not a result
  setDirty(true);                                      // also after a Save during the run
  session_.points.push_back(m);
  model_->append(m);
  if (model_->rowCount() <= 3) table_->resizeColumnsToContents();  // settle widths early, then leave them
  for (auto* c : charts()) c->addMeasurement(m);
  refreshBaselines();
  derivedTimer_->start();
  log(QString::fromStdString(ks::formatPointLine(m, session_.points.size(), session_.plan.items.size())));
  if (m.error.find('\n') != std::string::npos) log(QString::fromStdString(m.error));
}

// Time left: each remaining point's FLOPs at the rate its series (or, before
// its first point, the whole run) reached so far, times its repetitions, plus
// the warm-up floor. Sizes grow along a sweep, so counting points would lie.
double MainWindow::estimateSecondsLeft(size_t done) const {
  const auto& plan = session_.plan;
  const auto& reg = ks::Registry::instance();
  std::map<std::string, double> nsPerFlop;
  double allNs = 0, allFlops = 0;
  for (const auto& m : session_.points) {
    if (m.status != ks::PointStatus::Ok) continue;
    const double flops = reg.find(m.item.kernel)->flops(m.item.size);
    nsPerFlop[ks::ui::seriesName(m.item).toStdString()] = m.stats.median / flops;
    allNs += m.stats.median;
    allFlops += flops;
  }
  if (allFlops <= 0) return -1;
  double seconds = 0;
  for (size_t i = done; i < plan.items.size(); ++i) {
    const auto& item = plan.items[i];
    const auto it = nsPerFlop.find(ks::ui::seriesName(item).toStdString());
    const double rate = it != nsPerFlop.end() ? it->second : allNs / allFlops;
    const double runNs = rate * reg.find(item.kernel)->flops(item.size);
    seconds += std::max(runNs * (plan.reps + plan.warmup), runNs * plan.reps + plan.warmup_ms * 1e6) / 1e9;
  }
  return seconds;
}

void MainWindow::onProgress(int done, int total) {
  progress_->setRange(0, total);
  progress_->setValue(done);
  if (done > 0 && done < total) {
    const double left = estimateSecondsLeft(size_t(done));
    if (left < 0) {
      eta_->setText(tr("estimating…"));
      return;
    }
    const int seconds = int(left + 0.5);
    eta_->setText(seconds >= 3600 ? tr("about %1 h %2 min left").arg(seconds / 3600).arg(seconds % 3600 / 60)
                  : seconds >= 60 ? tr("about %1 min %2 s left").arg(seconds / 60).arg(seconds % 60)
                                  : tr("about %1 s left").arg(seconds));
  }
}

void MainWindow::onRunFinished(bool cancelled) {
  running_ = false;
  const auto& pts = session_.points;
  table_->resizeColumnsToContents();
  if (pts.empty()) setDirty(false);  // nothing to save
  if (!dirty_) dropJournal();        // nothing measured, or saved while it ran
  int failed = 0;
  for (const auto& m : pts) failed += m.status == ks::PointStatus::Failed;
  const QString summary = tr("%1 of %2 points done, %3 failed%4 in %5 s")
                              .arg(pts.size())
                              .arg(session_.plan.items.size())
                              .arg(failed)
                              .arg(cancelled ? tr(", stopped") : QString())
                              .arg(runClock_.elapsed() / 1000.0, 0, 'f', 1);
  eta_->setText(summary);
  statusBar()->showMessage(summary, 10000);
  log(summary);
  if (session_.drift) log(QString::fromStdString(ks::formatDriftLine(*session_.drift)));
  showDrift();
  derivedTimer_->stop();
  refreshDerivedViews();
  updateRunState();
  emit runFinished(cancelled);
  if (closePending_) close();
}

// ------------------------------------------------------------------ tuning

// The tuned defaults (engine/tune/tuned_defaults.h) for the parameters the
// user left open; what was used, or why not, goes to the log.
void MainWindow::applyTunedDefaults(ks::Plan& plan) {
  if (!device_) {
    log(tr("Tuned defaults: no device is open; each kernel runs with its own defaults"));
    return;
  }
  const std::string path = ks::defaultTunedPath();
  auto list = ks::loadTunedDefaults(path);
  if (!list) {
    const QString why = tr("Tuned defaults not used: %1").arg(QString::fromStdString(list.error().message));
    log(why);
    statusBar()->showMessage(why, 15000);
    return;
  }
  const auto lines = ks::applyTunedDefaults(plan.items, *list, *device_, sweep_->explicitParamNames());
  for (const auto& line : lines) log(tr("Tuned defaults: %1").arg(QString::fromStdString(line)));
  if (!lines.empty())
    statusBar()->showMessage(
        tr("Tuned defaults: %1%2")
            .arg(QString::fromStdString(lines.front()))
            .arg(lines.size() > 1 ? tr(" (and %1 more in the Log tab)").arg(lines.size() - 1) : QString()),
        15000);
}

void MainWindow::startTune() {
  if (running_ || tuning_ || measuringPeaks_ || devicePending_) return;
  if (remoteSelected_) {
    showError(tr("Cannot tune"), tr("The tuner runs on local devices; pick one in the device list."));
    return;
  }
  const auto request = tune_->request();
  if (!request) {
    showError(tr("Cannot tune"), tune_->requestError());
    return;
  }
  const ks::KernelInfo* kernel = ks::Registry::instance().find(request->kernel);
  if (!kernel) return;
  if (!session_.points.empty() && !confirmDiscard()) return;
  // The tune becomes the session: its evaluations are the points (no journal:
  // the result cache keeps what an interrupted tune measured). The kernel file
  // is embedded through an item of the plan; the points come as it runs.
  ks::Plan plan = request->plan;
  plan.items = {ks::PlanItem{kernel->id, kernel->defaultParams(device_ ? &*device_ : nullptr), request->size}};
  beginSession(plan);
  session_.plan.items.clear();
  setDirty(false);
  tuning_ = true;
  runClock_.start();
  eta_->setText(tr("tuning…"));
  log(tr("Tune: %1 at %2, %3 search, objective %4, seed %5")
          .arg(QString::fromStdString(request->kernel), QString::fromStdString(request->size.str()),
               QString::fromStdString(ks::strategyName(request->strategy)),
               QString::fromStdString(ks::objectiveName(request->objective)))
          .arg(request->seed));
  tune_->tuneStarted(*request);
  updateRunState();
  worker_->clearStop();  // before queueing: a Stop pressed from now on counts
  emit requestTune(*request);
}

void MainWindow::onTuneEvaluated(const ks::TuneRecord& snapshot, const ks::Measurement& m,
                                 const ks::TuneEvaluation& e) {
  if (!tuning_) return;
  session_.points.push_back(m);
  session_.plan.items.push_back(m.item);
  session_.tune = snapshot;  // a Save during the tune keeps the search so far
  setDirty(true);
  model_->append(m);
  if (model_->rowCount() <= 3) table_->resizeColumnsToContents();
  for (auto* c : charts()) c->addMeasurement(m);
  refreshBaselines();
  derivedTimer_->start();
  log(QString::fromStdString(ks::formatTuneEvaluation(snapshot, e, m)));
  tune_->tuneEvaluated(snapshot, session_.points);
}

void MainWindow::onTuneFinished(const ks::TuneOutcome& outcome) {
  tuning_ = false;
  session_.points = outcome.points;
  session_.plan.items.clear();
  for (const auto& m : outcome.points) session_.plan.items.push_back(m.item);
  session_.tune = outcome.record;
  setDirty(!session_.points.empty());
  model_->setMeasurements(session_.points);
  table_->resizeColumnsToContents();
  for (auto* c : charts()) c->setMeasurements(session_.points);
  refreshBaselines();
  derivedTimer_->stop();
  refreshDerivedViews();
  tune_->tuneFinished(outcome);
  for (const QString& line : QString::fromStdString(ks::formatTuneSummary(outcome.record)).split('\n'))
    if (!line.isEmpty()) log(line);
  if (!outcome.cache_error.empty())
    log(tr("The result cache could not be used: %1").arg(QString::fromStdString(outcome.cache_error)));
  const QString summary = tr("Tune: %1 evaluations in %2 s%3")
                              .arg(outcome.record.evaluations.size())
                              .arg(runClock_.elapsed() / 1000.0, 0, 'f', 1)
                              .arg(outcome.record.stop_reason == "cancelled" ? tr(", stopped") : QString());
  eta_->setText(summary);
  statusBar()->showMessage(summary, 10000);
  updateRunState();
  emit tuneEnded(true);
  if (closePending_) close();
}

void MainWindow::onTuneFailed(const QString& message) {
  tuning_ = false;
  tune_->tuneFailed(message);
  eta_->clear();
  showError(tr("Cannot tune"), message);
  updateRunState();
  emit tuneEnded(false);
  if (closePending_) close();
}

void MainWindow::showSessionTune() {
  if (session_.tune) {
    tune_->showTune(*session_.tune, session_.points, session_.device, &session_.plan);
    tabs_->setCurrentWidget(tune_);
  } else {
    tune_->clearTune();
  }
}

void MainWindow::measurePeaks() {
  if (!device_ || running_ || tuning_ || measuringPeaks_ || devicePending_) return;
  if (remoteSelected_) {
    statusBar()->showMessage(tr("Peaks are measured on local devices (kernelscope-cli run --remote HOST --peaks "
                                "measures a server's)"),
                             10000);
    return;
  }
  measuringPeaks_ = true;
  peaksLabel_->setText(tr("Measuring peaks… (a few seconds; Stop cancels)"));
  log(tr("Measuring the peaks of %1").arg(QString::fromStdString(device_->name)));
  updateRunState();
  worker_->clearStop();
  emit requestPeaks();
}

void MainWindow::onPeaksFinished(const ks::DevicePeaks& peaks) {
  measuringPeaks_ = false;
  if (device_) measuredPeaks_[device_->index] = peaks;
  // A session this app ran on this very device takes them; a session opened
  // from a file keeps its own (the next run takes the new ones).
  if (device_ && session_.device && sameDevice(*session_.device, *device_) && !sessionFromFile_) {
    session_.peaks = peaks;
    if (!session_.points.empty()) setDirty(true);
  } else if (sessionFromFile_ && session_.peaks) {
    log(tr("The open session keeps the peaks stored in its file; the next run uses the new ones."));
  }
  applyPeaks();
  log(tr("Peaks measured at %1").arg(QString::fromStdString(peaks.measured_at)));
  updateRunState();
  emit peaksDone(true);
  if (closePending_) close();
}

void MainWindow::onPeaksFailed(const QString& message) {
  measuringPeaks_ = false;
  log(message);
  statusBar()->showMessage(message, 10000);
  updateDevicePanel();
  peaksLabel_->setText(peaksLabel_->text() + "<br>" + message.toHtmlEscaped());
  updateRunState();
  emit peaksDone(false);
  if (closePending_) close();
}

const ks::DevicePeaks* MainWindow::devicePeaks() const {
  if (!device_) return nullptr;
  if (auto it = measuredPeaks_.find(device_->index); it != measuredPeaks_.end()) return &it->second;
  if (session_.peaks && session_.device && sameDevice(*session_.device, *device_)) return &*session_.peaks;
  return nullptr;
}

void MainWindow::showDrift() {
  const auto& d = session_.drift;
  if (d && d->unstable) {
    QString summary = QString::fromStdString(d->summary());
    summary.remove(QRegularExpression("^UNSTABLE: "));
    driftBanner_->setText(tr("⚠ Unstable sweep: %1. The device's speed changed during the sweep "
                             "(clocks, heat or other load); rankings of close results may not hold.")
                              .arg(summary.toHtmlEscaped()));
    driftBanner_->setToolTip(QString::fromStdString(d->reference));
    driftBanner_->show();
  } else {
    driftBanner_->hide();
  }
}

void MainWindow::applyPeaks() {
  model_->setPeaks(session_.peaks);
  updateDevicePanel();
  refreshDerivedViews();
}

void MainWindow::refreshDerivedViews() {
  roofline_->setData(session_.points, sessionPeaks());
  compare_->setSessions(baseline_ ? &*baseline_ : nullptr, session_);

  // Per series: complexity and the best of each rate.
  struct Row {
    int points = 0;
    double gflops = 0, gbps = 0, peak = -1;
  };
  std::map<std::string, Row> rows;
  std::vector<std::string> order;
  for (const auto& m : session_.points) {
    if (!m.trustworthy()) continue;
    const std::string key = ks::seriesKey(m.item);
    if (!rows.count(key)) order.push_back(key);
    Row& r = rows[key];
    ++r.points;
    r.gflops = std::max(r.gflops, m.gflops);
    r.gbps = std::max(r.gbps, m.gbps);
    if (const auto* p = sessionPeaks())
      if (auto f = ks::fractionOfPeak(m, *p)) r.peak = std::max(r.peak, f->fraction);
  }
  std::map<std::string, ks::ComplexityFit> fits;
  for (const auto& f : ks::fitComplexity(session_.points, fitFrom_->value())) fits[f.series] = f;
  seriesTable_->setSortingEnabled(false);
  seriesTable_->setRowCount(int(order.size()));
  auto cell = [](const QString& text, double sort_value, bool right = true) {
    auto* item = new QTableWidgetItem(text);
    item->setData(Qt::UserRole, sort_value);
    if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
  };
  for (size_t i = 0; i < order.size(); ++i) {
    const Row& r = rows[order[i]];
    const int row = int(i);
    seriesTable_->setItem(row, 0, cell(QString::fromStdString(order[i]), 0, false));
    seriesTable_->setItem(row, 1, cell(QString::number(r.points), r.points));
    const auto fit = fits.find(order[i]);
    QString slope = QStringLiteral("–");
    if (fit != fits.end()) {
      slope = QString::number(fit->second.slope, 'f', 2);
      if (fit->second.points > 2) slope += QStringLiteral(" ± ") + QString::number(fit->second.slope_error, 'f', 2);
      slope += tr("  (%1 sizes)").arg(fit->second.points);
    }
    seriesTable_->setItem(row, 2, cell(slope, fit != fits.end() ? fit->second.slope : -1));
    seriesTable_->setItem(row, 3, cell(QString::number(r.gflops, 'f', 2), r.gflops));
    seriesTable_->setItem(row, 4, cell(QString::number(r.gbps, 'f', 2), r.gbps));
    seriesTable_->setItem(
        row, 5, cell(r.peak >= 0 ? QString::number(100 * r.peak, 'f', 0) + "%" : QStringLiteral("–"), r.peak));
  }
  seriesTable_->resizeColumnsToContents();
}

void MainWindow::openBaselineDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open baseline session"), QString(),
                                                    tr("kernelscope sessions (*.json);;All files (*)"));
  if (!path.isEmpty()) openBaseline(path);
}

bool MainWindow::openBaseline(const QString& path) {
  auto s = ks::loadSession(path.toStdString());
  if (!s) {
    showError(tr("Cannot open baseline"), QString::fromStdString(s.error().message));
    return false;
  }
  baseline_ = std::move(s.value());
  baselinePath_ = QFileInfo(path).absoluteFilePath();
  rebuildKernelTree();  // loading registered the baseline's kernel files too
  for (auto* c : charts()) c->setOverlay(baseline_->points);
  refreshDerivedViews();
  log(tr("Baseline: %1 (%2 points from %3)")
          .arg(baselinePath_)
          .arg(baseline_->points.size())
          .arg(QString::fromStdString(baseline_->created)));
  for (const auto& w : ks::compareSessions(*baseline_, session_).warnings)
    log(tr("Baseline warning: %1").arg(QString::fromStdString(w)));
  return true;
}

void MainWindow::clearBaseline() {
  if (!baseline_) return;
  baseline_.reset();
  baselinePath_.clear();
  for (auto* c : charts()) c->clearOverlay();
  refreshDerivedViews();
  log(tr("Baseline cleared"));
}

void MainWindow::onEngineError(const QString& message) {
  log(message);
  lastError_ = message;
  statusBar()->showMessage(message, 15000);
  if (devices_.empty()) refreshKernelTree();
}

// ------------------------------------------------------------------ files

void MainWindow::setDirty(bool dirty) {
  dirty_ = dirty;
  setWindowModified(dirty);
  setWindowTitle(QString("%1[*] — kernelscope").arg(path_.isEmpty() ? tr("Untitled") : QFileInfo(path_).fileName()));
}

bool MainWindow::confirmDiscard() {
  if (!dirty_ || !askBeforeDiscard_) return true;
  const auto answer = QMessageBox::question(
      this, tr("Unsaved results"), tr("The current session has unsaved results. Save them first?"),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

void MainWindow::setAskBeforeDiscard(bool ask) {
  askBeforeDiscard_ = ask;
  kernelEditor_->setAskBeforeDiscard(ask);
}

void MainWindow::showError(const QString& title, const QString& message) {
  lastError_ = message;
  log(title + ": " + message);
  if (askBeforeDiscard_) QMessageBox::warning(this, title, message);
}

void MainWindow::newSession() {
  if (running_ || tuning_ || !confirmDiscard()) return;
  dropJournal();
  session_ = ks::Session{};
  sessionFromFile_ = false;
  path_.clear();
  model_->clear();
  applyPeaks();
  showDrift();
  for (auto* c : charts()) c->clear();
  refreshBaselines();
  tune_->clearTune();
  progress_->setValue(0);
  eta_->clear();
  setDirty(false);
}

bool MainWindow::openSession(const QString& path) {
  if (running_ || tuning_) {
    showError(tr("Cannot open"), tr("Stop the running sweep or tune first."));
    return false;
  }
  auto s = ks::loadSession(path.toStdString());
  if (!s) {
    if (!QFileInfo::exists(path)) {  // a recent file that is gone
      QSettings settings;
      QStringList recent = settings.value("recentFiles").toStringList();
      recent.removeAll(QFileInfo(path).absoluteFilePath());
      settings.setValue("recentFiles", recent);
      rebuildRecentMenu();
    }
    showError(tr("Cannot open session"), QString::fromStdString(s.error().message));
    return false;
  }
  dropCancelledPoints(s->points);
  if (!confirmDiscard()) return false;
  dropJournal();
  session_ = std::move(s.value());
  sessionFromFile_ = true;
  path_ = QFileInfo(path).absoluteFilePath();
  showLoadedSession();
  eta_->setText(tr("opened %1").arg(QFileInfo(path).fileName()));
  log(tr("Opened %1: %2 points from %3 on %4")
          .arg(path_)
          .arg(session_.points.size())
          .arg(QString::fromStdString(session_.created),
               session_.device ? QString::fromStdString(session_.device->name) : tr("the CPU")));
  setDirty(false);
  addRecent(path_);
  emit sessionLoaded();
  return true;
}

void MainWindow::showLoadedSession() {
  rebuildKernelTree();  // loading registered the session's kernel files
  model_->setMeasurements(session_.points);
  applyPeaks();
  showDrift();
  table_->resizeColumnsToContents();
  for (auto* c : charts()) c->setMeasurements(session_.points);
  refreshBaselines();
  showSessionTune();
  progress_->setRange(0, std::max(1, int(session_.plan.items.size())));
  progress_->setValue(int(session_.points.size()));
  progress_->setTextVisible(true);
}

void MainWindow::openSessionDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open session"), QString(),
                                                    tr("kernelscope sessions (*.json);;All files (*)"));
  if (!path.isEmpty()) openSession(path);
}

bool MainWindow::saveSessionTo(const QString& path) {
  auto st = ks::saveSession(session_, path.toStdString());
  if (!st) {
    showError(tr("Cannot save"), QString::fromStdString(st.error().message));
    return false;
  }
  path_ = QFileInfo(path).absoluteFilePath();
  setDirty(false);
  dropJournal();  // the file holds it all now (during a run, the journal stays until it ends)
  addRecent(path_);
  statusBar()->showMessage(tr("Saved %1").arg(path_), 5000);
  return true;
}

bool MainWindow::save() { return path_.isEmpty() ? saveAs() : saveSessionTo(path_); }

bool MainWindow::saveAs() {
  QString path = QFileDialog::getSaveFileName(this, tr("Save session"), path_.isEmpty() ? "session.json" : path_,
                                              tr("kernelscope sessions (*.json)"));
  if (path.isEmpty()) return false;
  if (!path.endsWith(".json", Qt::CaseInsensitive)) {
    path += ".json";  // the dialog did not ask about this name: ask now
    if (QFileInfo::exists(path) && askBeforeDiscard_ &&
        QMessageBox::question(this, tr("Replace file?"), tr("%1 exists. Replace it?").arg(path)) != QMessageBox::Yes)
      return false;
  }
  return saveSessionTo(path);
}

ChartPanel* MainWindow::currentChart() const {
  for (ChartPanel* c : charts())
    if (tabs_->currentWidget() == c || tabs_->currentWidget()->isAncestorOf(c)) return c;
  return gflopsChart_;
}

// The baseline choices are the series measured so far; keep the user's pick,
// else prefer a BLAS series (seed 004 compares against the library).
void MainWindow::refreshBaselines() {
  const QStringList names = timeChart_->seriesNames();
  const QString current = baselineBox_->currentText();
  QStringList existing;
  for (int i = 0; i < baselineBox_->count(); ++i) existing << baselineBox_->itemText(i);
  if (existing == names) return;
  QSignalBlocker block(baselineBox_);
  baselineBox_->clear();
  baselineBox_->addItems(names);
  QString pick = names.contains(current) ? current : QString();
  if (pick.isEmpty())
    for (const QString& n : names)
      if (n.contains("openblas")) pick = n;
  if (pick.isEmpty() && !names.isEmpty()) pick = names.first();
  baselineBox_->setCurrentText(pick);
  if (relativeChart_->baseline() != pick) relativeChart_->setBaseline(pick);
}

void MainWindow::exportChartPng() {
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Export chart as PNG"));
  auto* form = new QFormLayout(&dialog);
  auto* chart = new QComboBox;
  chart->addItems(
      {tabs_->tabText(0) + tr(" vs size"), tr("Time vs size (log-log)"), tr("Relative time"), tr("Roofline")});
  const auto all = charts();
  chart->setCurrentIndex(
      tabs_->currentWidget() == roofline_ ? 3 : int(std::find(all.begin(), all.end(), currentChart()) - all.begin()));
  if (tune_->record()) {  // as the Tune tab shows them (axes and slice included)
    chart->addItems({tr("Tune heatmap"), tr("Tune progress")});
    if (tabs_->currentWidget() == tune_) chart->setCurrentIndex(4);
  }
  auto* width = new QSpinBox;
  width->setRange(200, 8000);
  width->setValue(1600);
  auto* height = new QSpinBox;
  height->setRange(150, 8000);
  height->setValue(900);
  auto* scale = new QComboBox;
  scale->addItems({"1x", "2x", "3x"});
  scale->setCurrentIndex(1);
  form->addRow(tr("Chart"), chart);
  form->addRow(tr("Width (px)"), width);
  form->addRow(tr("Height (px)"), height);
  form->addRow(tr("Scale"), scale);
  auto* box = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  form->addRow(box);
  connect(box, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(box, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  if (dialog.exec() != QDialog::Accepted) return;
  const QString path = QFileDialog::getSaveFileName(this, tr("Export PNG"), "chart.png", tr("PNG images (*.png)"));
  if (path.isEmpty()) return;
  const QSize size(width->value(), height->value());
  const int which = chart->currentIndex(), pixels = scale->currentIndex() + 1;
  const QString err = which == 3   ? roofline_->exportPng(path, size, pixels)
                      : which == 4 ? tune_->heatmap()->exportPng(path, size, pixels)
                      : which == 5 ? tune_->progressChart()->exportPng(path, size, pixels)
                                   : all[size_t(which)]->exportPng(path, size, pixels);
  if (!err.isEmpty())
    showError(tr("Export failed"), err);
  else
    statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
}

void MainWindow::exportChartSvg() {
  if (tabs_->currentWidget() == roofline_ || tabs_->currentWidget() == tune_) {
    showError(tr("Export failed"), tr("The roofline and the tune's charts export as PNG only (File > Export Chart as "
                                      "PNG)."));
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Export SVG"), "chart.svg", tr("SVG images (*.svg)"));
  if (path.isEmpty()) return;
  const QString err = currentChart()->exportSvg(path, QSize(1600, 900));
  if (!err.isEmpty())
    showError(tr("Export failed"), err);
  else
    statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
}

void MainWindow::exportCsv() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export CSV"), "results.csv", tr("CSV files (*.csv)"));
  if (path.isEmpty()) return;
  QSaveFile f(path);
  const std::string csv = ks::measurementsToCsv(session_.points);
  if (!f.open(QIODevice::WriteOnly) || f.write(csv.data(), qint64(csv.size())) != qint64(csv.size()) || !f.commit())
    showError(tr("Export failed"), tr("Cannot write %1: %2").arg(path, f.errorString()));
  else
    statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
}

void MainWindow::copySelectedRows() {
  // In the order the table shows them; no selection copies every row.
  QList<int> viewRows;
  for (const QModelIndex& i : table_->selectionModel()->selectedRows()) viewRows << i.row();
  if (viewRows.isEmpty())
    for (int r = 0; r < proxy_->rowCount(); ++r) viewRows << r;
  std::sort(viewRows.begin(), viewRows.end());
  QList<int> rows;
  for (int r : viewRows) rows << proxy_->mapToSource(proxy_->index(r, 0)).row();
  QApplication::clipboard()->setText(model_->rowsAsText(rows));
}

void MainWindow::addRecent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value("recentFiles").toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue("recentFiles", recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  const QStringList recent = QSettings().value("recentFiles").toStringList();
  for (const QString& path : recent)
    recentMenu_->addAction(QFileInfo(path).fileName() + "  —  " + QFileInfo(path).path(), this,
                           [this, path] { openSession(path); });
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::log(const QString& line) { log_->appendPlainText(line); }

// ------------------------------------------------------------------ journal

void MainWindow::startJournal() {
  // One file per run; the lock tells another kernelscope that this one is alive.
  if (!QDir().mkpath(journalDir_)) {
    log(tr("No journal for this run: cannot create %1; a crash would lose its points.").arg(journalDir_));
    return;
  }
  const QString path = QDir(journalDir_)
                           .filePath(QStringLiteral("run-%1-%2.json.partial")
                                         .arg(QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss-zzz"))
                                         .arg(QCoreApplication::applicationPid()));
  auto lock = std::make_unique<QLockFile>(path + ".lock");
  lock->setStaleLockTime(0);  // a long run is not stale; a dead process is
  if (!lock->tryLock(0)) {
    log(tr("No journal for this run: cannot lock %1; a crash would lose its points.").arg(path));
    return;
  }
  journalPath_ = path;
  journalLock_ = std::move(lock);
  // The engine thread writes it as points arrive (see EngineWorker::run).
  emit requestJournal(session_, journalPath_);
}

void MainWindow::dropJournal() {
  if (journalPath_.isEmpty() || running_) return;  // a running sweep still writes to it
  QFile::remove(journalPath_);
  journalLock_.reset();  // unlocks and removes the lock file
  journalPath_.clear();
}

MainWindow::RestoreAnswer MainWindow::askRestore(const QString& question, const QString& details, bool can_restore) {
  if (restoreAnswerer_) {
    const RestoreAnswer answer = restoreAnswerer_(question);
    return answer == RestoreAnswer::Restore && !can_restore ? RestoreAnswer::Later : answer;
  }
  QMessageBox box(QMessageBox::Question, tr("Restore unsaved sweep?"), question, QMessageBox::NoButton, this);
  box.setObjectName("restoreBox");
  box.setInformativeText(details);
  QPushButton* restore = can_restore ? box.addButton(tr("Restore"), QMessageBox::AcceptRole) : nullptr;
  QPushButton* discard = box.addButton(tr("Discard"), QMessageBox::DestructiveRole);
  QPushButton* later = box.addButton(tr("Later"), QMessageBox::RejectRole);
  box.setDefaultButton(restore ? restore : later);
  box.setEscapeButton(later);
  box.exec();
  if (restore && box.clickedButton() == restore) return RestoreAnswer::Restore;
  if (box.clickedButton() == discard) return RestoreAnswer::Discard;
  return RestoreAnswer::Later;
}

bool MainWindow::offerRestore() {
  if (running_ || tuning_ || measuringPeaks_ || journalDir_.isEmpty()) return false;
  // Newest first; a journal whose lock a live kernelscope holds is that one's run.
  const QFileInfoList files = QDir(journalDir_).entryInfoList({"*.partial"}, QDir::Files, QDir::Time);
  for (const QFileInfo& file : files) {
    const QString path = file.absoluteFilePath();
    if (path == journalPath_) continue;
    auto lock = std::make_unique<QLockFile>(path + ".lock");
    lock->setStaleLockTime(0);
    if (!lock->tryLock(0)) continue;
    auto journal = ks::loadJournal(path.toStdString());
    if (!journal) {
      const QString why = QString::fromStdString(journal.error().message);
      log(tr("Journal of an unsaved sweep cannot be read: %1").arg(why));
      if (askRestore(tr("kernelscope found the journal of a sweep that was not saved, but cannot read it."), why,
                     false) == RestoreAnswer::Discard)
        QFile::remove(path);
      continue;
    }
    ks::Session& found = journal->session;
    dropCancelledPoints(found.points);
    if (found.points.empty()) {  // it stopped before its first point: nothing to restore
      log(tr("Removed the journal of a sweep that finished no point: %1").arg(path));
      QFile::remove(path);
      continue;
    }
    QStringList kernels;
    for (const auto& item : found.plan.items)
      if (!kernels.contains(QString::fromStdString(item.kernel))) kernels << QString::fromStdString(item.kernel);
    const QString question =
        tr("A sweep from %1 was not saved: %2 of %3 points on %4 (%5). Restore it?")
            .arg(QString::fromStdString(found.created))
            .arg(found.points.size())
            .arg(found.plan.items.size())
            .arg(found.device ? QString::fromStdString(found.device->name) : tr("the CPU"), kernels.join(", "));
    QString details = tr("Restore shows it as an unsaved session; Discard deletes it; Later asks at the next start.");
    if (journal->dropped_lines)
      details += "\n" + tr("The point in flight was lost (%1).").arg(QString::fromStdString(journal->dropped_reason));
    details += "\n" + tr("Journal: %1").arg(path);
    const RestoreAnswer answer = askRestore(question, details, true);
    if (answer == RestoreAnswer::Discard) {
      QFile::remove(path);
      log(tr("Discarded the unsaved sweep in %1").arg(path));
      continue;
    }
    if (answer == RestoreAnswer::Later) continue;
    if (!confirmDiscard()) return false;  // keeps the current session; the journal stays for later
    dropJournal();
    session_ = std::move(found);
    sessionFromFile_ = true;  // its peaks are its own
    path_.clear();
    showLoadedSession();
    eta_->setText(tr("restored %1 of %2 points").arg(session_.points.size()).arg(session_.plan.items.size()));
    // The journal now stands for this unsaved session, until it is saved or discarded.
    journalPath_ = path;
    journalLock_ = std::move(lock);
    setDirty(true);
    log(tr("Restored an unsaved sweep from %1: %2 of %3 points (journal %4)")
            .arg(QString::fromStdString(session_.created))
            .arg(session_.points.size())
            .arg(session_.plan.items.size())
            .arg(path));
    emit sessionLoaded();
    return true;
  }
  return false;
}

// ------------------------------------------------------------------ events

void MainWindow::closeEvent(QCloseEvent* event) {
  if (running_ || tuning_ || measuringPeaks_) {
    // Stop first and close when the engine has let go (within one dispatch).
    closePending_ = true;
    stopRun();
    event->ignore();
    return;
  }
  if (!confirmDiscard() || !kernelEditor_->confirmDiscard()) {
    closePending_ = false;
    event->ignore();
    return;
  }
  dropJournal();
  worker_->requestStop();
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/splitter", splitter_->saveState());
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls() && event->mimeData()->urls().size() == 1 &&
      event->mimeData()->urls().first().isLocalFile())
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = event->mimeData()->urls().first().toLocalFile();
  event->acceptProposedAction();
  // Open after the drop returns: questions and errors must not hold the drag source.
  QTimer::singleShot(0, this, [this, path] { openSession(path); });
}

}  // namespace ks::ui
