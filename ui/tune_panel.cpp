#include "ui/tune_panel.h"

#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "engine/bench/report.h"
#include "engine/kernels/registry.h"
#include "engine/tune/space.h"
#include "engine/tune/tune_cache.h"
#include "engine/tune/tuned_defaults.h"
#include "ui/tune_heatmap.h"
#include "ui/tune_progress_chart.h"

namespace ks::ui {

namespace {

constexpr int kAutoObjective = -1;
// Spaces up to this size are pruned as the form is edited, to say how many configurations are valid.
constexpr uint64_t kPreviewPruneLimit = 5000;

QString secondsText(double s) {
  const int t = int(std::lround(s));
  if (t >= 3600) return TunePanel::tr("%1 h %2 min").arg(t / 3600).arg(t % 3600 / 60);
  if (t >= 60) return TunePanel::tr("%1 min %2 s").arg(t / 60).arg(t % 60);
  return TunePanel::tr("%1 s").arg(t);
}

// Why the search ended, in words.
QString stopText(const std::string& reason) {
  if (reason == "budget") return TunePanel::tr("the budget of evaluations was spent");
  if (reason == "time_budget") return TunePanel::tr("the time budget ran out");
  if (reason == "space_exhausted") return TunePanel::tr("every valid configuration was evaluated");
  if (reason == "cancelled") return TunePanel::tr("it was stopped");
  return QString::fromStdString(reason);
}

QString scoreText(double v) { return QString::number(v, 'f', std::fabs(v) >= 100 ? 1 : 2); }

bool tunable(const ks::KernelInfo& k) {
  return k.backend == ks::Backend::Vulkan && (!k.tunables.empty() || k.uses_workgroup);
}

QSpinBox* spin(const char* name, int lo, int hi, int value) {
  auto* s = new QSpinBox;
  s->setObjectName(name);
  s->setRange(lo, hi);
  s->setValue(value);
  return s;
}

}  // namespace

TunePanel::TunePanel(QWidget* parent) : QWidget(parent) {
  // ---- the form
  kernel_ = new QComboBox;
  kernel_->setObjectName("tuneKernel");
  kernel_->setMinimumContentsLength(18);
  kernel_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  size_ = new QLineEdit(QStringLiteral("256"));
  size_->setObjectName("tuneSize");
  size_->setToolTip(tr("One size: N, MxN or MxNxK (a tune is per size)"));
  strategy_ = new QComboBox;
  strategy_->setObjectName("tuneStrategy");
  for (auto s :
       {ks::SearchStrategy::Grid, ks::SearchStrategy::Random, ks::SearchStrategy::Anneal, ks::SearchStrategy::Genetic})
    strategy_->addItem(QString::fromStdString(ks::strategyName(s)), int(s));
  strategy_->setToolTip(
      tr("grid: every valid configuration in order; random: a seeded shuffle; anneal: steps between neighbours, "
         "accepting worse ones less and less; genetic: a population bred by selection, crossover and mutation"));
  objective_ = new QComboBox;
  objective_->setObjectName("tuneObjective");
  objective_->addItem(tr("automatic"), kAutoObjective);
  for (auto o : {ks::TuneObjective::Gflops, ks::TuneObjective::Gbps, ks::TuneObjective::Time})
    objective_->addItem(QString("%1 (%2)").arg(QString::fromStdString(ks::objectiveName(o)),
                                               QString::fromStdString(ks::objectiveUnit(o))),
                        int(o));
  objective_->setToolTip(tr("Automatic: GB/s for memory-bound kernels, GFLOP/s for the others"));
  budget_ = spin("tuneBudget", 0, 1000000, 0);
  budget_->setSpecialValueText(tr("automatic"));
  budget_->setToolTip(tr("Evaluations. Automatic: all valid configurations for grid, a quarter of them otherwise"));
  timeBudget_ = spin("tuneTimeBudget", 0, 7 * 86400, 0);
  timeBudget_->setSuffix(tr(" s"));
  timeBudget_->setSpecialValueText(tr("none"));
  timeBudget_->setToolTip(tr("The search stops after this long (the evaluation in flight finishes)"));
  seed_ = spin("tuneSeed", 0, std::numeric_limits<int>::max(), 1);
  seed_->setToolTip(tr("The search's seed: the same seed and scores give the same evaluations"));
  shapes_ = new QLineEdit;
  shapes_->setObjectName("tuneShapes");
  params_ = new QLineEdit;
  params_->setObjectName("tuneParams");
  params_->setToolTip(tr("Limit tunables to these values, e.g. BK=4,8; BN=8,16 (the others take all their values)"));
  reps_ = spin("tuneReps", 1, 100000, 20);
  warmup_ = spin("tuneWarmup", 0, 10000, 3);
  warmupMs_ = spin("tuneWarmupMs", 0, 60000, 200);
  warmupMs_->setSuffix(tr(" ms"));
  warmupMs_->setToolTip(tr("Warm-up lasts at least this long, so the clocks ramp up before timing"));
  top_ = spin("tuneTop", 0, 100, 5);
  top_->setSpecialValueText(tr("none"));
  top_->setToolTip(tr("The best this many are measured again at the end, interleaved, to tell #1 from #2"));
  rounds_ = spin("tuneRounds", 1, 1000, 5);
  cache_ = new QCheckBox(tr("Use the result cache"));
  cache_->setObjectName("tuneCache");
  cache_->setChecked(true);
  cache_->setToolTip(
      tr("Configurations measured before on this device, driver and settings (with the same shader) are taken from "
         "the cache instead of measured again; new ones are added. An interrupted tune resumes where it stopped."));
  error_label_ = new QLabel;
  error_label_->setObjectName("tuneError");
  error_label_->setWordWrap(true);

  auto* what = new QGroupBox(tr("Tune"));
  auto* form = new QFormLayout(what);
  form->addRow(tr("Kernel"), kernel_);
  form->addRow(tr("Size"), size_);
  form->addRow(tr("Strategy"), strategy_);
  form->addRow(tr("Objective"), objective_);
  form->addRow(tr("Budget"), budget_);
  form->addRow(tr("Time budget"), timeBudget_);
  form->addRow(tr("Seed"), seed_);
  form->addRow(tr("Workgroups"), shapes_);
  form->addRow(tr("Tunables"), params_);
  auto* how = new QGroupBox(tr("Measure each"));
  auto* howForm = new QFormLayout(how);
  // One field a row: the form stays narrow.
  howForm->addRow(tr("Repetitions"), reps_);
  howForm->addRow(tr("Warm-up runs"), warmup_);
  howForm->addRow(tr("Warm-up at least"), warmupMs_);
  howForm->addRow(tr("Final round: best"), top_);
  howForm->addRow(tr("× rounds"), rounds_);
  howForm->addRow(cache_);

  start_ = new QPushButton(tr("Start tune"));
  start_->setObjectName("tuneStart");
  stop_ = new QPushButton(tr("Stop"));
  stop_->setObjectName("tuneStop");
  stop_->setEnabled(false);
  connect(start_, &QPushButton::clicked, this, &TunePanel::startRequested);
  connect(stop_, &QPushButton::clicked, this, &TunePanel::stopRequested);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(start_);
  buttons->addWidget(stop_);
  progress_ = new QProgressBar;
  progress_->setObjectName("tuneProgress");
  progress_->hide();  // shown while a tune runs
  status_ = new QLabel;
  status_->setObjectName("tuneStatus");
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  saveDefault_ = new QPushButton(tr("Save as tuned default"));
  saveDefault_->setObjectName("tuneSaveDefault");
  saveDefault_->setToolTip(
      tr("Keep the winner as this kernel's defaults on this device at this size class (%1): a sweep with "
         "\"Use tuned defaults\" and kernelscope-cli run --tuned use it")
          .arg(QString::fromStdString(ks::defaultTunedPath())));
  connect(saveDefault_, &QPushButton::clicked, this, [this] { saveTunedDefault(); });

  auto* controls = new QWidget;
  auto* controlsLayout = new QVBoxLayout(controls);
  controlsLayout->addWidget(what);
  controlsLayout->addWidget(how);
  controlsLayout->addWidget(error_label_);
  controlsLayout->addLayout(buttons);
  controlsLayout->addWidget(progress_);
  controlsLayout->addWidget(status_);
  controlsLayout->addWidget(saveDefault_);
  controlsLayout->addStretch();
  auto* scroll = new QScrollArea;
  scroll->setWidget(controls);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  // Narrower than the form when the window is small (the form scrolls): the tab must not
  // make the main window wider than the other tabs do.
  scroll->setMinimumWidth(200);

  // ---- the views
  heatmap_ = new TuneHeatmap;
  heatmap_->setObjectName("tuneHeatmap");
  chart_ = new TuneProgressChart;
  chart_->setObjectName("tuneProgressChart");
  chart_->view()->setMinimumSize(180, 200);  // the heatmap needs the width more
  xBox_ = new QComboBox;
  xBox_->setObjectName("tuneX");
  yBox_ = new QComboBox;
  yBox_->setObjectName("tuneY");
  connect(xBox_, &QComboBox::activated, this, [this] { applyAxes(true); });
  connect(yBox_, &QComboBox::activated, this, [this] { applyAxes(false); });
  auto* pickers = new QHBoxLayout;
  pickers->addWidget(new QLabel(tr("x:")));
  pickers->addWidget(xBox_);
  pickers->addWidget(new QLabel(tr("y:")));
  pickers->addWidget(yBox_);
  sliceRow_ = new QHBoxLayout;
  pickers->addLayout(sliceRow_);
  pickers->addStretch();
  // A kernel with many tunables has a picker per dimension: the row scrolls
  // sideways rather than make the tab (and the window) wider than the screen.
  pickers->setContentsMargins(0, 0, 0, 0);
  auto* pickerBar = new QWidget;
  pickerBar->setLayout(pickers);
  auto* pickerScroll = new QScrollArea;
  pickerScroll->setWidget(pickerBar);
  pickerScroll->setWidgetResizable(true);
  pickerScroll->setFrameShape(QFrame::NoFrame);
  pickerScroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  pickerScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  pickerScroll->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  pickerScroll->setFixedHeight(pickerBar->sizeHint().height() +
                               pickerScroll->horizontalScrollBar()->sizeHint().height());
  auto* heatmapPage = new QWidget;
  auto* heatmapLayout = new QVBoxLayout(heatmapPage);
  heatmapLayout->setContentsMargins(0, 0, 0, 0);
  heatmapLayout->addWidget(pickerScroll);
  heatmapLayout->addWidget(heatmap_, 1);

  ranking_ = new QTableWidget(0, 6);
  ranking_->setObjectName("tuneRanking");
  ranking_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  ranking_->setSelectionBehavior(QAbstractItemView::SelectRows);
  ranking_->setAlternatingRowColors(true);
  ranking_->verticalHeader()->setVisible(false);
  ranking_->verticalHeader()->setDefaultSectionSize(ranking_->fontMetrics().height() + 8);
  ranking_->horizontalHeader()->setStretchLastSection(false);
  verdict_ = new QLabel;
  verdict_->setObjectName("tuneVerdict");
  verdict_->setWordWrap(true);
  verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* resultPage = new QWidget;
  auto* resultLayout = new QVBoxLayout(resultPage);
  resultLayout->setContentsMargins(0, 0, 0, 0);
  resultLayout->addWidget(verdict_);
  resultLayout->addWidget(ranking_, 1);

  // The heatmap gets the most room; the ranking enough for the final round's five.
  auto* charts = charts_ = new QSplitter(Qt::Horizontal);
  charts->addWidget(heatmapPage);
  charts->addWidget(chart_);
  charts->setStretchFactor(0, 3);
  charts->setStretchFactor(1, 2);
  charts->setSizes({600, 400});
  auto* views = new QSplitter(Qt::Vertical);
  views->addWidget(charts);
  views->addWidget(resultPage);
  views->setStretchFactor(0, 1);
  views->setStretchFactor(1, 0);
  views->setSizes({560, 250});
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(scroll);
  split->addWidget(views);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setSizes({controls->sizeHint().width() + 16, 1000});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 4, 0, 0);
  layout->addWidget(split);

  for (QLineEdit* e : {size_, shapes_, params_}) connect(e, &QLineEdit::textChanged, this, &TunePanel::revalidate);
  for (QSpinBox* s : {budget_, timeBudget_, seed_, reps_, warmup_, warmupMs_, top_, rounds_})
    connect(s, &QSpinBox::valueChanged, this, &TunePanel::revalidate);
  for (QComboBox* c : {strategy_, objective_})
    connect(c, &QComboBox::currentIndexChanged, this, &TunePanel::revalidate);
  connect(cache_, &QCheckBox::toggled, this, &TunePanel::revalidate);
  connect(kernel_, &QComboBox::currentIndexChanged, this, &TunePanel::onKernelChanged);
  refreshKernels();
  clearTune();
}

// Side by side where there is room, else the heatmap above the progress chart.
void TunePanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  const Qt::Orientation want = charts_->width() >= 720 ? Qt::Horizontal : Qt::Vertical;
  if (charts_->orientation() == want) return;
  charts_->setOrientation(want);
  charts_->setSizes(want == Qt::Horizontal ? QList<int>{600, 400} : QList<int>{580, 420});
}

// ------------------------------------------------------------------ the form

void TunePanel::setDevice(std::optional<ks::vk::DeviceInfo> device) {
  device_ = std::move(device);
  refreshKernels();  // what the device cannot run is greyed
}

void TunePanel::refreshKernels() {
  const QString current = kernel_->currentData().toString();
  QSignalBlocker block(kernel_);
  kernel_->clear();
  auto* model = qobject_cast<QStandardItemModel*>(kernel_->model());
  const ks::vk::DeviceInfo* dev = device_ ? &*device_ : nullptr;
  for (const auto& k : ks::Registry::instance().all()) {
    if (!tunable(k)) continue;
    const QString id = QString::fromStdString(k.id);
    kernel_->addItem(id + (k.user ? tr("  (file)") : QString()), id);
    QString tip = QString::fromStdString(k.title);
    for (const auto& t : k.tunables) {
      QStringList values;
      for (int v : t.values) values << QString::number(v);
      tip += QString("\n%1 = %2").arg(QString::fromStdString(t.name), values.join('/'));
    }
    const auto why = dev ? ks::unsupportedReason(k, dev) : std::optional<std::string>("no Vulkan device open");
    if (why) {
      tip += "\n" + tr("Cannot run here: %1").arg(QString::fromStdString(*why));
      if (auto* item = model ? model->item(kernel_->count() - 1) : nullptr) item->setEnabled(false);
    }
    kernel_->setItemData(kernel_->count() - 1, tip, Qt::ToolTipRole);
  }
  int pick = kernel_->findData(current.isEmpty() ? QStringLiteral("gemm.block_tiling") : current);
  if (pick < 0) pick = 0;
  kernel_->setCurrentIndex(pick);
  block.unblock();
  onKernelChanged();
}

void TunePanel::onKernelChanged() {
  const ks::KernelInfo* k = ks::Registry::instance().find(kernel_->currentData().toString().toStdString());
  if (k) {
    QStringList presets;
    for (const auto& s : ks::workgroupPresets(*k)) presets << QString::fromStdString(s.str());
    shapes_->setEnabled(k->uses_workgroup);
    shapes_->setPlaceholderText(k->uses_workgroup ? tr("presets: %1").arg(presets.join(',')) : tr("no workgroup"));
    shapes_->setToolTip(tr("Workgroup shapes to try, comma separated (empty: the presets %1)").arg(presets.join(',')));
    QStringList all;
    for (const auto& t : k->tunables) {
      QStringList values;
      for (int v : t.values) values << QString::number(v);
      all << QString::fromStdString(t.name) + '=' + values.join(',');
    }
    params_->setEnabled(!k->tunables.empty());
    params_->setPlaceholderText(all.isEmpty() ? tr("no tunables") : tr("all: %1").arg(all.join("; ")));
    objective_->setItemText(0, tr("automatic (%1)").arg(k->memory_bound ? "GB/s" : "GFLOP/s"));
  }
  revalidate();
}

void TunePanel::revalidate() {
  request_.reset();
  error_.clear();
  QString hint;
  const ks::KernelInfo* k = ks::Registry::instance().find(kernel_->currentData().toString().toStdString());
  auto fail = [&](const QString& why) { error_ = why; };
  ks::TuneRequest req;
  std::optional<ks::ProblemSize> size;
  if (!k) {
    fail(tr("Pick a kernel to tune."));
  } else if (auto why = ks::unsupportedReason(*k, device_ ? &*device_ : nullptr)) {
    fail(tr("%1 cannot run here: %2").arg(QString::fromStdString(k->id), QString::fromStdString(*why)));
  } else if (auto sizes = ks::parseSizeSpecs(size_->text().remove(' ').toStdString()); !sizes) {
    fail(tr("Size: %1").arg(QString::fromStdString(sizes.error().message)));
  } else if (sizes->size() != 1) {
    fail(tr("Size: give one size (a tune is per size)"));
  } else if (auto s = ks::problemSize(*k, sizes->front()); !s) {
    fail(tr("Size: %1").arg(QString::fromStdString(s.error().message)));
  } else {
    size = *s;
  }
  if (error_.isEmpty() && k->uses_workgroup && !shapes_->text().trimmed().isEmpty()) {
    auto shapes = ks::parseShapeList(shapes_->text().remove(' ').toStdString());
    if (!shapes)
      fail(tr("Workgroups: %1").arg(QString::fromStdString(shapes.error().message)));
    else
      req.shapes = *shapes;
  }
  if (error_.isEmpty())
    for (const QString& part : params_->text().split(';', Qt::SkipEmptyParts)) {
      if (part.trimmed().isEmpty()) continue;
      auto p = ks::parseParamSweep(part.trimmed().remove(' ').toStdString());
      if (!p) {
        fail(tr("Tunables: %1").arg(QString::fromStdString(p.error().message)));
        break;
      }
      req.only[p->first] = p->second;
    }
  if (error_.isEmpty()) {
    req.kernel = k->id;
    req.size = *size;
    req.strategy = ks::SearchStrategy(strategy_->currentData().toInt());
    const int objective = objective_->currentData().toInt();
    req.objective = objective == kAutoObjective
                        ? (k->memory_bound ? ks::TuneObjective::Gbps : ks::TuneObjective::Gflops)
                        : ks::TuneObjective(objective);
    req.seed = uint64_t(seed_->value());
    req.budget = size_t(budget_->value());
    req.time_budget_s = timeBudget_->value();
    req.final_top = size_t(top_->value());
    req.final_rounds = uint32_t(rounds_->value());
    req.plan.reps = uint32_t(reps_->value());
    req.plan.warmup = uint32_t(warmup_->value());
    req.plan.warmup_ms = uint32_t(warmupMs_->value());
    req.plan.drift_check = false;  // the final round, interleaved, answers for drift
    if (cache_->isChecked() && device_)
      req.cache_path = ks::tuneCachePath(ks::defaultTuneCacheDir(), *device_, k->id, *size, req.plan);
    // The space as the tuner will see it: refused here, before anything is queued.
    auto dims = ks::tuneDimensions(*k, req.only, req.shapes);
    if (!dims) {
      fail(QString::fromStdString(dims.error().message));
    } else {
      uint64_t total = 1;
      for (const auto& d : *dims) total *= d.size();
      if (total <= kPreviewPruneLimit) {
        const ks::PrunedSpace space = ks::pruneSpace(*dims, *k, *size, device_ ? &*device_ : nullptr);
        if (space.search.valid.empty()) {
          fail(tr("None of the %1 configurations can run at this size: %2")
                   .arg(space.total)
                   .arg(space.pruned.empty() ? QString() : QString::fromStdString(space.pruned.front().reason)));
        } else {
          hint = tr("%1 configurations, %2 valid; %3 evaluations")
                     .arg(space.total)
                     .arg(space.search.valid.size())
                     .arg(ks::tuneBudget(req, space.search.valid.size()));
        }
      } else {
        hint = tr("%1 configurations").arg(total);
      }
    }
    if (error_.isEmpty()) request_ = req;
  }
  error_label_->setStyleSheet(error_.isEmpty() ? "color: #505050;" : "color: #c62828;");
  error_label_->setText(error_.isEmpty() ? hint : error_);
  updateButtons();
}

std::optional<ks::TuneRequest> TunePanel::request() const { return request_; }

void TunePanel::setEngineBusy(bool busy) {
  busy_ = busy;
  updateButtons();
}

void TunePanel::updateButtons() {
  start_->setEnabled(!tuning_ && !busy_ && request_.has_value());
  start_->setToolTip(tuning_ || busy_ ? tr("The engine is busy") : error_);
  stop_->setEnabled(tuning_ && !stopping_);
  saveDefault_->setEnabled(!tuning_ && record_ && record_->winner && record_->stop_reason != "cancelled" &&
                           recordDevice_.has_value());
}

// ------------------------------------------------------------------ a tune

void TunePanel::tuneStarted(const ks::TuneRequest& request) {
  tuning_ = true;
  stopping_ = false;
  recordDevice_ = device_;
  record_.reset();
  points_.clear();
  heatmap_->clear();
  chart_->clear();
  rebuildPickers();
  ranking_->setRowCount(0);
  verdict_->setText(request.final_top > 0
                        ? tr("Once the search ends, the best %1 are measured again, interleaved, %2 rounds: the "
                             "ranking and the verdict will be here.")
                              .arg(request.final_top)
                              .arg(request.final_rounds)
                        : tr("No final round: the best of the search will be the result."));
  verdict_->setStyleSheet("color: #606060;");
  verdict_->setProperty("decided", false);
  verdict_->setProperty("tie", false);
  progress_->setRange(0, 0);  // busy until the first progress report
  progress_->setTextVisible(false);
  progress_->show();
  status_->setStyleSheet(QString());
  status_->setText(
      tr("Tuning %1 at %2…")
          .arg(QString::fromStdString(request.kernel), QString::fromStdString(ks::SizeSpec(request.size).str())));
  updateButtons();
}

void TunePanel::tuneEvaluated(const ks::TuneRecord& snapshot, const std::vector<ks::Measurement>& points) {
  record_ = snapshot;
  points_ = points;
  showRecord(*record_, points_);
}

void TunePanel::tuneProgress(const ks::TuneProgress& p) {
  if (!tuning_) return;
  const bool final_round = p.phase == "final";
  progress_->setRange(0, int(std::max<size_t>(p.total, 1)));
  progress_->setValue(int(std::min(p.done, p.total)));
  progress_->setFormat(final_round ? tr("final round %v / %m") : tr("search %v / %m"));
  progress_->setTextVisible(true);
  if (stopping_) return;
  QStringList parts;
  parts << (final_round ? tr("Final round: %1 of %2 re-measurements").arg(p.done).arg(p.total)
                        : tr("Search: %1 of %2 evaluations").arg(p.done).arg(p.total));
  parts << (p.eta_s >= 0 ? tr("about %1 left").arg(secondsText(p.eta_s)) : tr("estimating the time left…"));
  if (p.best > 0 && record_)
    parts << tr("best %1 %2").arg(scoreText(p.best), QString::fromStdString(ks::objectiveUnit(record_->objective)));
  status_->setText(parts.join(" · "));
}

void TunePanel::tuneStopping() {
  if (!tuning_) return;
  stopping_ = true;
  status_->setText(tr("Stopping after the configuration in flight…"));
  updateButtons();
}

void TunePanel::tuneFinished(const ks::TuneOutcome& outcome) {
  tuning_ = false;
  stopping_ = false;
  record_ = outcome.record;
  points_ = outcome.points;
  showRecord(*record_, points_);
  showRanking();
  showVerdict();
  const auto& r = *record_;
  const double elapsed = r.evaluations.empty() ? 0 : r.evaluations.back().elapsed_s;
  progress_->hide();
  const bool cancelled = r.stop_reason == "cancelled";
  status_->setStyleSheet(cancelled ? "color: #9a6700;" : QString());
  status_->setText((cancelled ? tr("Stopped: %1 evaluations kept (search %2)") : tr("Done: %1 evaluations (search %2)"))
                       .arg(r.evaluations.size())
                       .arg(secondsText(elapsed)) +
                   (cancelled ? QString() : tr("; the search ended as %1").arg(stopText(r.stop_reason))));
  updateButtons();
}

void TunePanel::tuneFailed(const QString& message) {
  tuning_ = false;
  stopping_ = false;
  progress_->hide();
  status_->setStyleSheet("color: #c62828;");
  status_->setText(tr("The tune failed: %1").arg(message));
  updateButtons();
}

void TunePanel::showTune(const ks::TuneRecord& record, const std::vector<ks::Measurement>& points,
                         std::optional<ks::vk::DeviceInfo> device, const ks::Plan* plan) {
  recordDevice_ = std::move(device);
  record_ = record;
  points_ = points;
  fillForm(record);
  if (plan) {  // how each configuration was measured, so that Start measures the same way
    reps_->setValue(int(std::min<uint32_t>(plan->reps, uint32_t(reps_->maximum()))));
    warmup_->setValue(int(std::min<uint32_t>(plan->warmup, uint32_t(warmup_->maximum()))));
    warmupMs_->setValue(int(std::min<uint32_t>(plan->warmup_ms, uint32_t(warmupMs_->maximum()))));
  }
  showRecord(*record_, points_);
  showRanking();
  showVerdict();
  progress_->hide();
  status_->setStyleSheet(QString());
  status_->setText(tr("From the session: %1 evaluations of %2 valid configurations (%3 in all); the search ended as %4")
                       .arg(record.evaluations.size())
                       .arg(record.valid)
                       .arg(record.space_size)
                       .arg(stopText(record.stop_reason)));
  updateButtons();
}

void TunePanel::clearTune() {
  if (tuning_) return;
  record_.reset();
  points_.clear();
  recordDevice_.reset();
  heatmap_->clear();
  chart_->clear();
  rebuildPickers();
  ranking_->setRowCount(0);
  ranking_->setHorizontalHeaderLabels(
      {tr("Rank"), tr("Configuration"), tr("Score"), tr("Median"), tr("Samples"), tr("p vs next")});
  verdict_->setText(tr("Start a tune, or open a session that has one."));
  verdict_->setStyleSheet("color: #606060;");
  status_->clear();
  updateButtons();
}

// The settings of a tune from a file, so that Start runs it again.
void TunePanel::fillForm(const ks::TuneRecord& r) {
  const int k = kernel_->findData(QString::fromStdString(r.kernel));
  if (k < 0) return;
  kernel_->setCurrentIndex(k);
  const ks::KernelInfo* info = ks::Registry::instance().find(r.kernel);
  size_->setText(QString::fromStdString(ks::SizeSpec(r.size).str()));
  strategy_->setCurrentIndex(strategy_->findData(int(r.strategy)));
  const bool automatic = r.objective == (info->memory_bound ? ks::TuneObjective::Gbps : ks::TuneObjective::Gflops);
  objective_->setCurrentIndex(automatic ? 0 : objective_->findData(int(r.objective)));
  seed_->setValue(int(std::min<uint64_t>(r.seed, uint64_t(std::numeric_limits<int>::max()))));
  timeBudget_->setValue(int(r.time_budget_s));
  QStringList only;
  shapes_->clear();
  for (const auto& d : r.dimensions) {
    if (d.isWorkgroup()) {
      if (d.shapes != ks::workgroupPresets(*info)) {
        QStringList shapes;
        for (const auto& s : d.shapes) shapes << QString::fromStdString(s.str());
        shapes_->setText(shapes.join(','));
      }
    } else if (const ks::Tunable* t = info->tunable(d.name); t && t->values != d.values) {
      QStringList values;
      for (int v : d.values) values << QString::number(v);
      only << QString::fromStdString(d.name) + '=' + values.join(',');
    }
  }
  params_->setText(only.join("; "));
  if (r.final_rounds > 0) rounds_->setValue(int(r.final_rounds));
  if (!r.final.empty()) top_->setValue(int(r.final.size()));
}

void TunePanel::showRecord(const ks::TuneRecord& record, const std::vector<ks::Measurement>& points) {
  const QStringList before = heatmap_->dimensionNames();
  heatmap_->setRecord(record, points);
  chart_->setRecord(record);
  if (heatmap_->dimensionNames() != before || xBox_->count() == 0) rebuildPickers();
}

QComboBox* TunePanel::sliceBox(const QString& dimension) const {
  for (const auto& [name, box] : sliceBoxes_)
    if (name == dimension) return box;
  return nullptr;
}

void TunePanel::rebuildPickers() {
  const QStringList dims = heatmap_->dimensionNames();
  for (QComboBox* box : {xBox_, yBox_}) {
    QSignalBlocker block(box);
    box->clear();
    box->addItems(dims);
    box->setEnabled(dims.size() > 1);
  }
  xBox_->setCurrentText(heatmap_->xDimension());
  yBox_->setCurrentText(heatmap_->yDimension());
  if (dims.size() == 1) {  // one dimension: one row, no y
    QSignalBlocker block(yBox_);
    yBox_->clear();
    yBox_->addItem(tr("none"));
  }
  // One picker per dimension that is not an axis: its value, or at the best configuration's.
  while (QLayoutItem* item = sliceRow_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  sliceBoxes_.clear();
  for (const QString& name : dims) {
    if (name == heatmap_->xDimension() || name == heatmap_->yDimension()) continue;
    auto* label = new QLabel(name + ':');
    auto* box = new QComboBox;
    box->setObjectName("tuneSlice_" + name);
    box->addItem(tr("at best"), QString());
    for (const QString& v : heatmap_->valueLabels(name)) box->addItem(v, v);
    if (!heatmap_->sliceFollowsBest(name)) box->setCurrentIndex(box->findData(heatmap_->sliceLabel(name)));
    box->setToolTip(tr("The value %1 is held at: the best configuration's, or one chosen here").arg(name));
    connect(box, &QComboBox::activated, this,
            [this, name, box] { heatmap_->setSliceValue(name, box->currentData().toString()); });
    sliceRow_->addWidget(label);
    sliceRow_->addWidget(box);
    sliceBoxes_.emplace_back(name, box);
  }
}

void TunePanel::applyAxes(bool x_changed) {
  QString x = xBox_->currentText(), y = yBox_->currentText();
  // Picking the other axis's dimension swaps the two.
  if (x == y) {
    if (x_changed)
      y = heatmap_->xDimension();
    else
      x = heatmap_->yDimension();
  }
  heatmap_->setAxes(x, y);
  rebuildPickers();
}

void TunePanel::showRanking() {
  ranking_->setRowCount(0);
  if (!record_) return;
  const auto& r = *record_;
  const QString unit = QString::fromStdString(ks::objectiveUnit(r.objective));
  ranking_->setHorizontalHeaderLabels(
      {tr("Rank"), tr("Configuration"), unit, tr("Median"), tr("Samples"), tr("p vs next")});
  ranking_->setRowCount(int(r.final.size()));
  auto cell = [](const QString& text, bool right = true) {
    auto* item = new QTableWidgetItem(text);
    if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
  };
  for (size_t i = 0; i < r.final.size(); ++i) {
    const auto& f = r.final[i];
    const int row = int(i);
    ranking_->setItem(row, 0, cell(QString("#%1").arg(i + 1)));
    ranking_->setItem(row, 1, cell(QString::fromStdString(r.configText(f.config)), false));
    if (!f.error.empty()) {
      ranking_->setItem(row, 2, cell(tr("failed: %1").arg(QString::fromStdString(f.error).section('\n', 0, 0)), false));
      continue;
    }
    const bool last = i + 1 >= r.final.size() || !r.final[i + 1].error.empty();
    ranking_->setItem(row, 2, cell(scoreText(f.score)));
    ranking_->setItem(row, 3, cell(QString::fromStdString(ks::formatDuration(f.stats.median))));
    ranking_->setItem(row, 4, cell(QString::number(f.samples_ns.size())));
    ranking_->setItem(
        row, 5,
        cell(last ? QStringLiteral("–")
                  : QString::number(f.p_vs_next, f.p_vs_next < 0.0001 ? 'e' : 'f', f.p_vs_next < 0.0001 ? 1 : 4)));
    if (i == 0 && r.winner && *r.winner == f.config)
      for (int c = 0; c < ranking_->columnCount(); ++c)
        if (auto* item = ranking_->item(row, c)) {
          QFont bold = item->font();
          bold.setBold(true);
          item->setFont(bold);
        }
  }
  ranking_->resizeColumnsToContents();
  ranking_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);  // the configuration takes the rest
}

void TunePanel::showVerdict() {
  if (!record_) return;
  const auto& r = *record_;
  QString text = tr("<b>Verdict:</b> %1").arg(QString::fromStdString(r.verdict).toHtmlEscaped());
  if (r.winner) {
    const ks::KernelInfo* k = ks::Registry::instance().find(r.kernel);
    if (k) text += "<br>" + tr("Best: <b>%1</b>").arg(QString::fromStdString(r.configText(*r.winner)).toHtmlEscaped());
  }
  verdict_->setText(text);
  const bool tie = !r.decided && !r.final.empty() && r.final.front().error.empty() && r.final.size() > 1;
  // Decided: green; a tie: amber (the two are interchangeable); no final round: grey.
  verdict_->setStyleSheet(
      r.decided ? "QLabel { background: #e6f4ea; color: #1e4620; border: 1px solid #a8d5b5; padding: 6px; }"
      : tie     ? "QLabel { background: #fff4e5; color: #6d4500; border: 1px solid #f0c987; padding: 6px; }"
                : "QLabel { background: #f1f1f1; color: #404040; border: 1px solid #d0d0d0; padding: 6px; }");
  verdict_->setProperty("decided", r.decided);
  verdict_->setProperty("tie", tie);
}

QString TunePanel::saveTunedDefault() {
  QString why;
  if (tuning_)
    why = tr("the tune is still running");
  else if (!record_)
    why = tr("there is no tune");
  else if (!recordDevice_)
    why = tr("the tune has no device");
  if (why.isEmpty()) {
    auto entry = ks::tunedDefaultOf(*record_, *recordDevice_);
    if (!entry) {
      why = QString::fromStdString(entry.error().message);
    } else {
      const std::string path = ks::defaultTunedPath();
      if (auto st = ks::saveTunedDefault(path, *entry); !st) {
        why = QString::fromStdString(st.error().message);
      } else {
        const QString done = tr("Saved %1 as the tuned default of %2 on %3 for size class %4 in %5")
                                 .arg(QString::fromStdString(entry->params.str(true)),
                                      QString::fromStdString(entry->kernel), QString::fromStdString(entry->device))
                                 .arg(entry->size_class)
                                 .arg(QString::fromStdString(path));
        status_->setStyleSheet(QString());
        status_->setText(done);
        emit message(done);
        return {};
      }
    }
  }
  const QString text = tr("Nothing saved as tuned default: %1").arg(why);
  status_->setStyleSheet("color: #c62828;");
  status_->setText(text);
  emit message(text);
  return why;
}

}  // namespace ks::ui
