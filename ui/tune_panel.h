#pragma once
// The Tune tab: what to tune and how (kernel, size, strategy, objective,
// budgets, restrictions, measurement), Start/Stop with progress, and the
// tune's views: the heatmap with its axis and slice pickers, the progress
// chart, the final ranking and the verdict. The panel does not run anything:
// the main window sends request() to the engine thread and hands the worker's
// answers back through the tune*() calls.
#include <QWidget>
#include <optional>
#include <vector>

#include "engine/tune/tuner.h"
#include "engine/vulkan/context.h"

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTableWidget;

namespace ks::ui {

class TuneHeatmap;
class TuneProgressChart;

class TunePanel : public QWidget {
  Q_OBJECT
 public:
  explicit TunePanel(QWidget* parent = nullptr);

  void setDevice(std::optional<ks::vk::DeviceInfo> device);  // the open device
  void refreshKernels();                                     // the registry changed (kernel files)
  // Something else runs on the engine (a sweep, peaks, a device opening): Start waits.
  void setEngineBusy(bool busy);

  // The tune the inputs describe, or nullopt with requestError() saying why not.
  std::optional<ks::TuneRequest> request() const;
  QString requestError() const { return error_; }

  // A tune's life, as the main window hands it over from the engine thread.
  void tuneStarted(const ks::TuneRequest& request);
  void tuneEvaluated(const ks::TuneRecord& snapshot, const std::vector<ks::Measurement>& points);
  void tuneProgress(const ks::TuneProgress& progress);
  void tuneFinished(const ks::TuneOutcome& outcome);
  void tuneFailed(const QString& message);
  void tuneStopping();
  bool isTuning() const { return tuning_; }

  // A finished tune (from a session file): shown, and its settings put in the form.
  // `device`: where it ran, for "Save as tuned default".
  void showTune(const ks::TuneRecord& record, const std::vector<ks::Measurement>& points,
                std::optional<ks::vk::DeviceInfo> device, const ks::Plan* plan = nullptr);
  void clearTune();
  const std::optional<ks::TuneRecord>& record() const { return record_; }

  // The shown tune's winner as the tuned default of its kernel, device and
  // size class, in ks::defaultTunedPath(). Empty on success, else why not.
  QString saveTunedDefault();

  // Widgets, for tests.
  QComboBox* kernelBox() const { return kernel_; }
  QLineEdit* sizeEdit() const { return size_; }
  QComboBox* strategyBox() const { return strategy_; }
  QComboBox* objectiveBox() const { return objective_; }
  QSpinBox* budgetBox() const { return budget_; }
  QSpinBox* timeBudgetBox() const { return timeBudget_; }
  QSpinBox* seedBox() const { return seed_; }
  QLineEdit* shapesEdit() const { return shapes_; }
  QLineEdit* paramsEdit() const { return params_; }
  QSpinBox* repsBox() const { return reps_; }
  QSpinBox* warmupBox() const { return warmup_; }
  QSpinBox* warmupMsBox() const { return warmupMs_; }
  QSpinBox* topBox() const { return top_; }
  QSpinBox* roundsBox() const { return rounds_; }
  QCheckBox* cacheBox() const { return cache_; }
  QPushButton* startButton() const { return start_; }
  QPushButton* stopButton() const { return stop_; }
  QPushButton* saveDefaultButton() const { return saveDefault_; }
  QProgressBar* progressBar() const { return progress_; }
  QLabel* statusLabel() const { return status_; }
  TuneHeatmap* heatmap() const { return heatmap_; }
  TuneProgressChart* progressChart() const { return chart_; }
  QComboBox* xBox() const { return xBox_; }
  QComboBox* yBox() const { return yBox_; }
  // The slice picker of a dimension that is not an axis (nullptr otherwise).
  QComboBox* sliceBox(const QString& dimension) const;
  QTableWidget* rankingTable() const { return ranking_; }
  QLabel* verdictLabel() const { return verdict_; }

 signals:
  void startRequested();  // Start was clicked: the main window takes request()
  void stopRequested();
  void message(const QString& text);  // for the log

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void revalidate();
  void updateButtons();
  void onKernelChanged();
  void showRecord(const ks::TuneRecord& record, const std::vector<ks::Measurement>& points);
  void rebuildPickers();  // the axis and slice combos from the heatmap's dimensions
  void applyAxes(bool x_changed);
  void showRanking();
  void showVerdict();
  void fillForm(const ks::TuneRecord& record);

  QComboBox* kernel_;
  QLineEdit* size_;
  QComboBox* strategy_;
  QComboBox* objective_;
  QSpinBox* budget_;
  QSpinBox* timeBudget_;
  QSpinBox* seed_;
  QLineEdit* shapes_;
  QLineEdit* params_;
  QSpinBox* reps_;
  QSpinBox* warmup_;
  QSpinBox* warmupMs_;
  QSpinBox* top_;
  QSpinBox* rounds_;
  QCheckBox* cache_;
  QLabel* error_label_;
  QPushButton* start_;
  QPushButton* stop_;
  QPushButton* saveDefault_;
  QProgressBar* progress_;
  QLabel* status_;
  QSplitter* charts_;  // the heatmap and the progress chart
  TuneHeatmap* heatmap_;
  TuneProgressChart* chart_;
  QComboBox* xBox_;
  QComboBox* yBox_;
  QHBoxLayout* sliceRow_;
  std::vector<std::pair<QString, QComboBox*>> sliceBoxes_;
  QTableWidget* ranking_;
  QLabel* verdict_;

  std::optional<ks::vk::DeviceInfo> device_;
  std::optional<ks::vk::DeviceInfo> recordDevice_;  // where the shown tune ran
  std::optional<ks::TuneRecord> record_;
  std::vector<ks::Measurement> points_;
  std::optional<ks::TuneRequest> request_;
  QString error_;
  bool busy_ = false;
  bool tuning_ = false;
  bool stopping_ = false;
};

}  // namespace ks::ui
