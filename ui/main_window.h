#pragma once
// The main window: device panel, kernel picker, sweep editor, Run/Stop with
// progress, live charts, results table, log; File menu with sessions and
// exports. The engine runs on the EngineWorker's thread; this thread only
// sends requests and receives values.
#include <QElapsedTimer>
#include <QMainWindow>
#include <QThread>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "engine/session/session.h"
#include "ui/chart_panel.h"
#include "ui/metatypes.h"

class QComboBox;
class QDockWidget;
class QLabel;
class QLockFile;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QSplitter;
class QTabWidget;
class QTableView;
class QTableWidget;
class QTimer;
class QTreeWidget;
class QTreeWidgetItem;
class QMenu;

namespace ks::ui {

class ComparePanel;
class EngineWorker;
class KernelEditor;
class ResultsModel;
class RooflineChart;
class SweepEditor;
class TunePanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Sessions. Errors are shown to the user and returned; nothing is lost.
  bool openSession(const QString& path);
  bool saveSessionTo(const QString& path);
  // A second session to compare against (overlaid dashed, ratios in the Compare tab).
  bool openBaseline(const QString& path);
  void clearBaseline();
  const ks::Session& session() const { return session_; }
  bool isDirty() const { return dirty_; }
  bool isRunning() const { return running_; }
  bool isTuning() const { return tuning_; }
  bool isDevicePending() const { return devicePending_; }
  bool isMeasuringPeaks() const { return measuringPeaks_; }
  // The peaks that apply to the session's points: measured on its device.
  const ks::DevicePeaks* sessionPeaks() const { return session_.peaks ? &*session_.peaks : nullptr; }
  // Tests and scripted use turn off the "discard unsaved changes?" question.
  void setAskBeforeDiscard(bool ask);  // also the kernel editor's

  // Every run is journaled (engine/session/journal.h) to a file in this folder
  // (default: the app's data folder / journal); the journal goes once the
  // session is saved or discarded, so one that is left is a sweep that was lost.
  QString journalDirectory() const { return journalDir_; }
  void setJournalDirectory(const QString& dir) { journalDir_ = dir; }
  QString journalPath() const { return journalPath_; }  // the current session's, if any
  enum class RestoreAnswer { Restore, Discard, Later };
  // Answers the restore offer instead of a message box (tests, scripted use).
  void setRestoreAnswerer(std::function<RestoreAnswer(const QString& question)> answerer) {
    restoreAnswerer_ = std::move(answerer);
  }

  // Widgets, for tests.
  QComboBox* deviceBox() const { return deviceBox_; }
  QTreeWidget* kernelTree() const { return kernelTree_; }
  SweepEditor* sweepEditor() const { return sweep_; }
  QPushButton* runButton() const { return runButton_; }
  QPushButton* stopButton() const { return stopButton_; }
  QPushButton* peaksButton() const { return peaksButton_; }
  QLabel* peaksLabel() const { return peaksLabel_; }
  QLabel* driftBanner() const { return driftBanner_; }
  ResultsModel* resultsModel() const { return model_; }
  QTableView* resultsView() const { return table_; }
  ChartPanel* chartPanel(ChartKind kind) const { return kind == ChartKind::Gflops ? gflopsChart_ : timeChart_; }
  ChartPanel* relativeChart() const { return relativeChart_; }
  QComboBox* metricBox() const { return metricBox_; }
  QComboBox* baselineBox() const { return baselineBox_; }
  QTabWidget* tabs() const { return tabs_; }
  RooflineChart* rooflineChart() const { return roofline_; }
  ComparePanel* comparePanel() const { return compare_; }
  QTableWidget* seriesTable() const { return seriesTable_; }
  QSpinBox* fitFromBox() const { return fitFrom_; }
  const std::optional<ks::Session>& baselineSession() const { return baseline_; }
  QLabel* deviceLabel() const { return deviceLabel_; }
  QProgressBar* progressBar() const { return progress_; }
  QString lastError() const { return lastError_; }
  TunePanel* tunePanel() const { return tune_; }
  EngineWorker* worker() const { return worker_; }  // for tests: its signals

  void setKernelChecked(const QString& id, bool checked);
  QStringList checkedKernels() const;

  // Kernel files. The editor compiles on the engine thread and runs through
  // the same path as any kernel (registry -> tree -> sweep).
  KernelEditor* kernelEditor() const { return kernelEditor_; }
  QDockWidget* kernelEditorDock() const { return editorDock_; }
  // Registers every *.comp of the folder (errors go to the log) and refreshes the tree.
  void loadKernelDir(const QString& dir);
  // A built-in kernel's shader (read-only, compiled for its statistics) or a
  // kernel file's text in the editor.
  bool openKernelSource(const QString& id);
  // Registers the text as a kernel file, checks it in the tree and starts the sweep.
  bool runKernelText(const QString& text, const QString& path);
  bool runCheckedKernel(const QString& id);
  void showKernelEditor();

 public slots:
  void startRun();
  void stopRun();  // the sweep, the tune or the peaks measurement
  // Tunes what the Tune tab describes; the tune becomes the session.
  void startTune();
  void measurePeaks();
  void newSession();
  void openSessionDialog();
  void openBaselineDialog();
  bool save();
  bool saveAs();
  void exportChartPng();
  void exportChartSvg();
  void exportCsv();
  void copySelectedRows();
  // Offers each journal that no running kernelscope holds: Restore (it becomes
  // the current, unsaved session), Discard or Later. Called at start.
  bool offerRestore();
  // Lists the devices of a server over ssh ([user@]host[:port]; `cli`: a
  // kernelscope-cli there, empty for the bundle); they join the device list.
  void addRemoteTarget(const QString& target, const QString& cli = QString());

 signals:
  void devicesListed();
  void deviceOpened();
  void runFinished(bool cancelled);
  void tuneEnded(bool ok);  // finished (also when stopped) or failed to start
  void sessionLoaded();
  void peaksDone(bool ok);
  // To the engine thread.
  void requestDevice(int index);
  void requestRun(const ks::Plan& plan);
  void requestJournal(const ks::Session& header, const QString& path);
  void requestPeaks();
  void requestTune(const ks::TuneRequest& request);
  void requestRemoteDevices(const QString& target, const QString& cli);
  void requestRemoteRun(const ks::Plan& plan, const QString& target, const QString& cli, int device);
  void remoteDevicesListed(const QString& target, bool ok);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  // A new session for a sweep or a tune of `plan` on the open device, its views emptied.
  void beginSession(const ks::Plan& plan);
  void buildUi();
  void buildMenus();
  void onDevicesReady(const std::vector<ks::vk::DeviceInfo>& devices, int selected, const ks::cpu::HostInfo& host);
  void fillDeviceBox(int selected_data);
  void selectRemoteDevice(size_t index);
  void askForRemoteTarget();
  void onDeviceOpened(const ks::vk::DeviceInfo& device);
  void onPoint(const ks::Measurement& m);
  void onProgress(int done, int total);
  double estimateSecondsLeft(size_t done) const;
  void onRunFinished(bool cancelled);
  void onEngineError(const QString& message);
  void onTuneEvaluated(const ks::TuneRecord& snapshot, const ks::Measurement& m, const ks::TuneEvaluation& e);
  void onTuneFinished(const ks::TuneOutcome& outcome);
  void onTuneFailed(const QString& message);
  void showSessionTune();  // the session's tune in the Tune tab (or an empty tab)
  void applyTunedDefaults(ks::Plan& plan);
  void onPeaksFinished(const ks::DevicePeaks& peaks);
  void onPeaksFailed(const QString& message);
  void applyPeaks();
  void showDrift();  // the session's drift verdict in the banner (hidden when stable or unchecked) // the session's
                     // peaks to the table, the roofline and the device panel
  const ks::DevicePeaks* devicePeaks() const;  // of the open device, if measured or loaded
  void refreshKernelTree();
  void rebuildKernelTree();  // from the registry, keeping the checks
  void rebuildKernelTree(const QStringList& checked);
  void showKernelMenu(const QPoint& pos);
  void updateRunState();
  void updateDevicePanel();
  void setDirty(bool dirty);
  bool confirmDiscard();
  void showError(const QString& title, const QString& message);
  void addRecent(const QString& path);
  void rebuildRecentMenu();
  ChartPanel* currentChart() const;
  std::vector<ChartPanel*> charts() const { return {gflopsChart_, timeChart_, relativeChart_}; }
  void refreshBaselines();
  // Everything derived from the whole session: roofline, series table, comparison.
  void refreshDerivedViews();
  void log(const QString& line);
  void startJournal();  // for the run about to start
  void dropJournal();   // the session was saved or discarded
  RestoreAnswer askRestore(const QString& question, const QString& details, bool can_restore);
  void showLoadedSession();  // session_ from a file or a journal into every view

  QThread engineThread_;
  EngineWorker* worker_ = nullptr;

  QComboBox* deviceBox_ = nullptr;
  QLabel* deviceLabel_ = nullptr;
  QTreeWidget* kernelTree_ = nullptr;
  SweepEditor* sweep_ = nullptr;
  QPushButton* runButton_ = nullptr;
  QPushButton* stopButton_ = nullptr;
  QPushButton* peaksButton_ = nullptr;
  QLabel* peaksLabel_ = nullptr;
  QLabel* driftBanner_ = nullptr;
  QSplitter* splitter_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  ChartPanel* gflopsChart_ = nullptr;
  ChartPanel* timeChart_ = nullptr;
  ChartPanel* relativeChart_ = nullptr;
  QComboBox* metricBox_ = nullptr;    // GFLOPS / GB/s / time for the first chart
  QComboBox* baselineBox_ = nullptr;  // the series the relative chart divides by
  RooflineChart* roofline_ = nullptr;
  QTableWidget* seriesTable_ = nullptr;  // per series: points, complexity slope, best rates
  QSpinBox* fitFrom_ = nullptr;          // the complexity fit's size cutoff; 0 = upper half
  ComparePanel* compare_ = nullptr;
  TunePanel* tune_ = nullptr;
  std::optional<ks::Session> baseline_;
  QString baselinePath_;
  QTimer* derivedTimer_ = nullptr;  // coalesces refreshes during a live run
  ResultsModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* table_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* eta_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  KernelEditor* kernelEditor_ = nullptr;
  QDockWidget* editorDock_ = nullptr;
  bool editorShown_ = false;  // sized once; later the user's size stays

  std::vector<ks::vk::DeviceInfo> devices_;
  std::optional<ks::vk::DeviceInfo> device_;  // the open device (or the server's, when remoteSelected_)
  struct RemoteDevice {
    QString target, cli;
    ks::vk::DeviceInfo info;
  };
  std::vector<RemoteDevice> remoteDevices_;  // of the servers added (Add remote target…)
  std::optional<size_t> remoteSelected_;     // sweeps run there
  ks::cpu::HostInfo host_;
  ks::Session session_;
  QString path_;
  bool dirty_ = false;
  bool running_ = false;
  bool askBeforeDiscard_ = true;
  bool closePending_ = false;   // close once the running sweep has stopped
  bool devicePending_ = false;  // a device is being opened: Run waits
  bool measuringPeaks_ = false;
  bool tuning_ = false;
  bool sessionFromFile_ = false;                       // session_ was opened, not run here: its peaks are its own
  std::map<uint32_t, ks::DevicePeaks> measuredPeaks_;  // by device index, this app run
  QElapsedTimer runClock_;
  QString journalDir_;
  QString journalPath_;
  std::unique_ptr<QLockFile> journalLock_;  // held while this window owns journalPath_
  std::function<RestoreAnswer(const QString&)> restoreAnswerer_;
  QString lastError_;
};

}  // namespace ks::ui
