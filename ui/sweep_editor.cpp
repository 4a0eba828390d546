#include "ui/sweep_editor.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>
#include <algorithm>
#include <map>

#include "engine/tune/tuned_defaults.h"

namespace ks::ui {

namespace {
const char* kErrorStyle = "QLineEdit { border: 2px solid #c62828; }";

QLabel* errorLabel() {
  auto* l = new QLabel;
  l->setWordWrap(true);
  l->setStyleSheet("color: #c62828;");
  l->hide();
  return l;
}

void showError(QLineEdit* edit, QLabel* label, const QString& text) {
  edit->setStyleSheet(text.isEmpty() ? QString() : kErrorStyle);
  edit->setToolTip(text);
  label->setText(text);
  label->setVisible(!text.isEmpty());
}
}  // namespace

SweepEditor::SweepEditor(QWidget* parent) : QWidget(parent) {
  sizes_ = new QLineEdit(QStringLiteral("128,256,512"));
  sizes_->setObjectName("sizes");
  sizes_->setPlaceholderText(tr("128,256,512  or  64:4096:x2  or  256:2048:+256  or  1024x768x512"));
  sizes_->setToolTip(
      tr("Square sizes N, ranges FROM:TO:xFACTOR (geometric) or FROM:TO:+STEP (linear), "
         "or M x N x K (A is M x K, B is K x N); comma separated"));
  shapes_ = new QLineEdit;
  shapes_->setObjectName("shapes");
  shapes_->setPlaceholderText(tr("each kernel's default"));
  params_ = new QLineEdit;
  params_->setObjectName("params");
  params_->setPlaceholderText(tr("defaults, or e.g. BK=4,8; BN=4"));
  reps_ = new QSpinBox;
  reps_->setObjectName("reps");
  reps_->setRange(1, 100000);
  reps_->setValue(20);
  warmup_ = new QSpinBox;
  warmup_->setObjectName("warmup");
  warmup_->setRange(0, 10000);
  warmup_->setValue(3);
  targetCi_ = new QDoubleSpinBox;
  targetCi_->setObjectName("targetCi");
  targetCi_->setRange(0, 50);
  targetCi_->setDecimals(1);
  targetCi_->setSingleStep(0.5);
  targetCi_->setSuffix(" %");
  targetCi_->setSpecialValueText(tr("off"));
  targetCi_->setToolTip(
      tr("Adaptive repetitions: after the repetitions above, keep timing until the median's 95% "
         "confidence interval is within ± this much (at most 2 s or 1000 runs per point)"));
  budget_ = new QSpinBox;
  budget_->setObjectName("budgetMs");
  budget_->setRange(1, 3600000);
  budget_->setValue(2000);
  budget_->setSuffix(" ms");
  budget_->setToolTip(tr("Adaptive repetitions stop after this much timing per point"));
  maxReps_ = new QSpinBox;
  maxReps_->setObjectName("maxReps");
  maxReps_->setRange(1, 1000000);
  maxReps_->setValue(1000);
  maxReps_->setToolTip(tr("Adaptive repetitions stop at this many samples per point"));
  cache_ = new QSpinBox;
  cache_->setObjectName("cacheMiB");
  cache_->setRange(0, 65536);
  cache_->setValue(256);
  cache_->setSuffix(" MiB");
  cache_->setSpecialValueText(tr("off (mark cached points)"));
  cache_->setToolTip(
      tr("Bandwidth kernels (gemv, dot) rotate among copies of their inputs so that this much data is touched "
         "between two uses of one copy: small sizes then measure memory, not the cache. Off: no rotation, and "
         "points whose data fits in 256 MiB are marked as cache-resident."));
  drift_ = new QDoubleSpinBox;
  drift_->setObjectName("driftThreshold");
  drift_->setRange(0, 50);
  drift_->setDecimals(1);
  drift_->setSingleStep(0.5);
  drift_->setValue(3);
  drift_->setSuffix(" %");
  drift_->setSpecialValueText(tr("off"));
  drift_->setToolTip(
      tr("A short reference kernel runs at the start, between kernels and at the end; if its time moves by more "
         "than this, the sweep is marked unstable"));
  timeout_ = new QDoubleSpinBox;
  timeout_->setObjectName("dispatchTimeout");
  timeout_->setRange(0, 86400);
  timeout_->setDecimals(1);
  timeout_->setValue(0);
  timeout_->setSuffix(" s");
  timeout_->setSpecialValueText(tr("automatic"));
  timeout_->setToolTip(
      tr("The watchdog: a dispatch running longer is stopped, its point failed, the device recreated, and the "
         "sweep goes on. Automatic: 5 s past a pessimistic estimate of the point's run."));
  withTransfers_ = new QCheckBox(tr("Time transfers too (end to end)"));
  withTransfers_->setObjectName("withTransfers");
  withTransfers_->setToolTip(
      tr("Also time, for every GPU point, the upload of its inputs from host memory and the download of its output "
         "(host clock, as many samples as repetitions). The table then shows kernel, transfer and end-to-end "
         "times, and the charts draw an end-to-end series beside each kernel-only one (seed 002)."));
  tuned_ = new QCheckBox(tr("Use tuned defaults"));
  tuned_->setObjectName("useTuned");
  tuned_->setToolTip(
      tr("Workgroup shapes and tunables you leave empty come from the best configuration a tune saved for this "
         "kernel, device and size class (%1); what you type here stays")
          .arg(QString::fromStdString(ks::defaultTunedPath())));
  sizesError_ = errorLabel();
  shapesError_ = errorLabel();
  paramsError_ = errorLabel();
  summary_ = new QLabel;
  summary_->setWordWrap(true);
  summary_->setObjectName("sweepSummary");

  auto* presetRow = new QHBoxLayout;
  presetRow->setSpacing(2);
  for (const char* p : {"8x8", "16x8", "16x16", "32x8", "32x32"}) {
    auto* b = new QToolButton;
    b->setText(p);
    b->setCheckable(true);
    b->setToolTip(tr("Add or remove workgroup shape %1").arg(p));
    connect(b, &QToolButton::clicked, this, [this, p] { togglePreset(p); });
    presets_.push_back(b);
    presetRow->addWidget(b);
  }
  presetRow->addStretch();

  auto* form = new QFormLayout(this);
  form->setContentsMargins(0, 0, 0, 0);
  form->addRow(tr("Sizes"), sizes_);
  form->addRow(QString(), sizesError_);
  form->addRow(tr("Workgroups"), shapes_);
  form->addRow(QString(), presetRow);
  form->addRow(QString(), shapesError_);
  form->addRow(tr("Tunables"), params_);
  form->addRow(QString(), paramsError_);
  form->addRow(QString(), tuned_);
  auto* repsRow = new QHBoxLayout;
  repsRow->addWidget(reps_);
  repsRow->addWidget(new QLabel(tr("warm-up")));
  repsRow->addWidget(warmup_);
  form->addRow(tr("Repetitions"), repsRow);
  auto* ciRow = new QHBoxLayout;
  ciRow->addWidget(targetCi_);
  ciRow->addWidget(new QLabel(tr("or")));
  ciRow->addWidget(budget_);
  ciRow->addWidget(new QLabel(tr("max")));
  ciRow->addWidget(maxReps_);
  form->addRow(tr("Until CI within"), ciRow);
  form->addRow(tr("Rotate inputs over"), cache_);
  form->addRow(QString(), withTransfers_);
  form->addRow(tr("Drift alarm at"), drift_);
  form->addRow(tr("Dispatch timeout"), timeout_);
  form->addRow(summary_);

  for (QLineEdit* e : {sizes_, shapes_, params_}) connect(e, &QLineEdit::textChanged, this, &SweepEditor::revalidate);
  for (QSpinBox* s : {reps_, warmup_, budget_, maxReps_, cache_})
    connect(s, &QSpinBox::valueChanged, this, &SweepEditor::revalidate);
  connect(targetCi_, &QDoubleSpinBox::valueChanged, this, &SweepEditor::revalidate);
  connect(drift_, &QDoubleSpinBox::valueChanged, this, &SweepEditor::revalidate);
  connect(timeout_, &QDoubleSpinBox::valueChanged, this, &SweepEditor::revalidate);
  connect(tuned_, &QCheckBox::toggled, this, &SweepEditor::changed);
  connect(withTransfers_, &QCheckBox::toggled, this, &SweepEditor::revalidate);
  revalidate();
}

void SweepEditor::setDevice(std::optional<ks::vk::DeviceInfo> device) {
  device_ = std::move(device);
  revalidate();
}

void SweepEditor::setKernels(std::vector<const ks::KernelInfo*> kernels) {
  kernels_ = std::move(kernels);
  revalidate();
}

std::optional<ks::Plan> SweepEditor::plan() const { return plan_; }
QString SweepEditor::errorText() const { return error_; }
QString SweepEditor::warningText() const { return warning_; }
bool SweepEditor::useTunedDefaults() const { return tuned_->isChecked(); }

std::vector<std::string> SweepEditor::explicitParamNames() const {
  std::vector<std::string> names;
  if (!shapes_->text().trimmed().isEmpty()) names.push_back("wg");
  for (const QString& part : params_->text().split(';', Qt::SkipEmptyParts))
    if (auto p = ks::parseParamSweep(part.trimmed().remove(' ').toStdString())) names.push_back(p->first);
  return names;
}

void SweepEditor::togglePreset(const QString& shape) {
  QStringList shapes = shapes_->text().split(',', Qt::SkipEmptyParts);
  for (auto& s : shapes) s = s.trimmed();
  if (shapes.contains(shape))
    shapes.removeAll(shape);
  else
    shapes << shape;
  shapes_->setText(shapes.join(','));
}

void SweepEditor::revalidate() {
  plan_.reset();
  error_.clear();
  budget_->setEnabled(targetCi_->value() > 0);  // they bound adaptive repetitions only
  maxReps_->setEnabled(targetCi_->value() > 0);
  warning_.clear();
  ks::SweepSpec spec;
  spec.kernels = kernels_;

  // Sizes.
  QString sizeError;
  auto sizes = ks::parseSizeSpecs(sizes_->text().remove(' ').toStdString());
  if (!sizes)
    sizeError = QString::fromStdString(sizes.error().message);
  else
    spec.sizes = *sizes;
  showError(sizes_, sizesError_, sizeError);

  // Workgroup shapes: syntax, then the device's limits (these can never run).
  QString shapeError;
  const QString shapeText = shapes_->text().remove(' ');
  if (!shapeText.isEmpty()) {
    auto shapes = ks::parseShapeList(shapeText.toStdString());
    if (!shapes) {
      shapeError = QString::fromStdString(shapes.error().message);
    } else {
      spec.shapes = *shapes;
      // Only kernels with a workgroup take shapes: CPU-only picks ignore them.
      const bool anyGpu =
          std::any_of(kernels_.begin(), kernels_.end(), [](const ks::KernelInfo* k) { return k->uses_workgroup; });
      if (device_ && anyGpu)
        for (const auto& s : *shapes) {
          const std::array<uint32_t, 3> dims{s.x, s.y, s.z};
          for (int i = 0; i < 3 && shapeError.isEmpty(); ++i)
            if (dims[size_t(i)] > device_->max_workgroup_size[size_t(i)])
              shapeError = tr("%1: %2 = %3 is over this device's maxComputeWorkGroupSize (%4)")
                               .arg(QString::fromStdString(s.str()))
                               .arg(QChar("xyz"[i]))
                               .arg(dims[size_t(i)])
                               .arg(device_->max_workgroup_size[size_t(i)]);
          if (shapeError.isEmpty() && s.invocations() > device_->max_invocations)
            shapeError = tr("%1 has %2 invocations, over this device's maxComputeWorkGroupInvocations (%3)")
                             .arg(QString::fromStdString(s.str()))
                             .arg(s.invocations())
                             .arg(device_->max_invocations);
        }
    }
  }
  for (auto* b : presets_) {
    QStringList shapes = shapeText.split(',', Qt::SkipEmptyParts);
    b->setChecked(shapes.contains(b->text()));
  }
  showError(shapes_, shapesError_, shapeError);

  // Tunables: "BK=4,8; BN=4".
  QString paramError;
  for (const QString& part : params_->text().split(';', Qt::SkipEmptyParts)) {
    if (part.trimmed().isEmpty()) continue;
    auto p = ks::parseParamSweep(part.trimmed().remove(' ').toStdString());
    if (!p) {
      paramError = QString::fromStdString(p.error().message);
      break;
    }
    spec.params[p->first] = p->second;
  }

  std::optional<std::vector<ks::PlanItem>> items;
  if (sizeError.isEmpty() && shapeError.isEmpty() && paramError.isEmpty()) {
    if (kernels_.empty()) {
      error_ = tr("Pick at least one kernel.");
    } else {
      spec.device = device_ ? &*device_ : nullptr;
      auto built = ks::buildPlan(spec);
      if (!built)
        paramError = QString::fromStdString(built.error().message);
      else
        items = *built;
    }
  }
  showError(params_, paramsError_, paramError);
  if (error_.isEmpty()) error_ = !sizeError.isEmpty() ? sizeError : !shapeError.isEmpty() ? shapeError : paramError;

  if (items && error_.isEmpty()) {
    // Points a kernel cannot take on this device are run as "skipped": say so now.
    std::map<std::string, int> reasons;
    int skipped = 0;
    const ks::vk::DeviceInfo* dev = device_ ? &*device_ : nullptr;
    for (const auto& item : *items) {
      const auto* k = ks::Registry::instance().find(item.kernel);
      std::optional<std::string> why;
      if (k->backend == ks::Backend::Vulkan && !dev)
        why = "unsupported: no Vulkan device";
      else
        why = ks::checkPoint(*k, item.size, item.params, dev);
      if (why) {
        ++skipped;
        ++reasons[item.kernel + ": " + *why];
      }
    }
    if (skipped == int(items->size())) {
      error_ = tr("None of the %1 points can run here: %2")
                   .arg(items->size())
                   .arg(QString::fromStdString(reasons.begin()->first));
    } else {
      if (skipped) {
        QStringList lines;
        for (const auto& [r, n] : reasons) {
          if (lines.size() == 4) {
            lines << tr("…");
            break;
          }
          lines << QString::fromStdString(r);
        }
        warning_ = tr("%1 of %2 points will be skipped:\n%3").arg(skipped).arg(items->size()).arg(lines.join('\n'));
      }
      ks::Plan plan;
      plan.items = *items;
      plan.reps = uint32_t(reps_->value());
      plan.warmup = uint32_t(warmup_->value());
      plan.target_ci = targetCi_->value() / 100.0;
      plan.budget_ms = uint32_t(budget_->value());
      plan.max_reps = uint32_t(maxReps_->value());
      plan.with_transfers = withTransfers_->isChecked();
      plan.rotate_inputs = cache_->value() > 0;
      if (plan.rotate_inputs) plan.cache_bytes = uint64_t(cache_->value()) << 20;
      plan.drift_check = drift_->value() > 0;
      if (plan.drift_check) plan.drift_threshold = drift_->value() / 100.0;
      plan.dispatch_timeout_ms = uint32_t(timeout_->value() * 1000);
      plan_ = plan;
    }
  }
  if (plan_) {
    summary_->setStyleSheet(warning_.isEmpty() ? QString() : "color: #9a6700;");
    summary_->setText(tr("%1 points").arg(plan_->items.size()) + (warning_.isEmpty() ? QString() : "; " + warning_));
  } else {
    summary_->setStyleSheet("color: #c62828;");
    summary_->setText(error_);
  }
  emit changed();
}

}  // namespace ks::ui
