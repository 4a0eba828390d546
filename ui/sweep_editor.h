#pragma once
// The sweep editor: sizes (list, linear or geometric range, M x N x K),
// workgroup shapes (presets and free entry), tunables, repetitions. Every
// entry is checked as it is typed, against the syntax, the device's limits
// and the selected kernels' constraints; the reason is shown beside it.
#include <QWidget>
#include <optional>
#include <vector>

#include "engine/bench/sweep.h"
#include "engine/vulkan/context.h"

class QCheckBox;
class QLineEdit;
class QLabel;
class QSpinBox;
class QDoubleSpinBox;
class QToolButton;

namespace ks::ui {

class SweepEditor : public QWidget {
  Q_OBJECT
 public:
  explicit SweepEditor(QWidget* parent = nullptr);

  void setDevice(std::optional<ks::vk::DeviceInfo> device);
  void setKernels(std::vector<const ks::KernelInfo*> kernels);

  // The plan to run, or nullopt with errorText() saying why not.
  std::optional<ks::Plan> plan() const;
  bool isValid() const { return plan().has_value(); }
  QString errorText() const;    // what blocks Run (empty when valid)
  QString warningText() const;  // points that will be skipped, and why
  // Run with the tuned defaults (engine/tune/tuned_defaults.h) for what the
  // user did not give: the main window applies them to plan() when a run starts.
  bool useTunedDefaults() const;
  // The parameters the user gave: the tunables typed, and "wg" when shapes were.
  std::vector<std::string> explicitParamNames() const;

  QLineEdit* sizesEdit() const { return sizes_; }
  QLineEdit* shapesEdit() const { return shapes_; }
  QLineEdit* paramsEdit() const { return params_; }
  QSpinBox* repsBox() const { return reps_; }
  QSpinBox* warmupBox() const { return warmup_; }
  QDoubleSpinBox* targetCiBox() const { return targetCi_; }
  QSpinBox* budgetBox() const { return budget_; }
  QSpinBox* maxRepsBox() const { return maxReps_; }
  QSpinBox* cacheBox() const { return cache_; }
  QDoubleSpinBox* driftBox() const { return drift_; }
  QDoubleSpinBox* dispatchTimeoutBox() const { return timeout_; }
  QCheckBox* tunedBox() const { return tuned_; }
  QCheckBox* withTransfersBox() const { return withTransfers_; }

 signals:
  void changed();  // any entry or its validity changed

 private:
  void revalidate();
  void togglePreset(const QString& shape);

  QLineEdit* sizes_;
  QLineEdit* shapes_;
  QLineEdit* params_;
  QSpinBox* reps_;
  QSpinBox* warmup_;
  QDoubleSpinBox* targetCi_;  // adaptive repetitions: % half-width of the median's CI, 0 = off
  QSpinBox* budget_;          // ... per-point time budget, ms
  QSpinBox* maxReps_;         // ... and sample cap
  QSpinBox* cache_;           // MiB touched between reuses of a bandwidth kernel's inputs; 0 = no rotation
  QDoubleSpinBox* drift_;     // % change of the reference kernel that marks the sweep unstable; 0 = no check
  QDoubleSpinBox* timeout_;   // the dispatch watchdog, seconds; 0 = automatic
  QCheckBox* tuned_;
  QCheckBox* withTransfers_;  // Plan::with_transfers: time uploads and downloads beside each GPU kernel
  QLabel* sizesError_;
  QLabel* shapesError_;
  QLabel* paramsError_;
  QLabel* summary_;
  std::vector<QToolButton*> presets_;
  std::optional<ks::vk::DeviceInfo> device_;
  std::vector<const ks::KernelInfo*> kernels_;
  QString error_, warning_;
  std::optional<ks::Plan> plan_;
};

}  // namespace ks::ui
