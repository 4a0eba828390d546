#include "ui/compare_panel.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>
#include <cmath>

#include "engine/bench/report.h"

namespace ks::ui {

namespace {

const QColor kFailedText(0xc6, 0x28, 0x28);  // as ResultsModel
const QColor kAmberText(0x9a, 0x67, 0x00);
const QColor kGreyText(0x80, 0x80, 0x80);
const QColor kFasterText(0x1b, 0x5e, 0x20);
const QColor kSlowerText(0xb7, 0x1c, 0x1c);

QString firstLine(const std::string& s) {
  const auto text = QString::fromStdString(s);
  const int eol = text.indexOf('\n');
  return eol < 0 ? text : text.left(eol) + QStringLiteral(" …");
}

QString side(bool ok, double median_ns, const std::string& status) {
  return ok ? QString::fromStdString(ks::formatDuration(median_ns)) : firstLine(status);
}

QColor statusColor(const std::string& status) {
  // "failed: ...", "verification failed" are errors; skipped and cancelled points are just absent.
  return status.rfind("failed", 0) == 0 || status.rfind("verification", 0) == 0 ? kFailedText : kGreyText;
}

QString pText(double p) { return QString::number(p, 'g', 2); }

// Three decimals, more where that would round a real difference to "1.000" (a significant 0.04%).
QString ratioText(double ratio) {
  QString t = QString::number(ratio, 'f', 3);
  for (int decimals = 4; decimals <= 6 && ratio != 1 && t.toDouble() == 1; ++decimals)
    t = QString::number(ratio, 'f', decimals);
  return t;
}

// How a geometric-mean ratio reads: "1.35× faster", "0.4% slower", "no overall change".
QString changeText(double g) {
  const double pct = 100 * (g - 1);
  if (std::abs(pct) < 0.05) return ComparePanel::tr("no overall change");
  if (std::abs(pct) < 10)
    return (pct < 0 ? ComparePanel::tr("%1% less time") : ComparePanel::tr("%1% more time"))
        .arg(std::abs(pct), 0, 'f', 1);
  return g < 1 ? ComparePanel::tr("%1× faster").arg(1 / g, 0, 'f', 2)
               : ComparePanel::tr("%1× slower").arg(g, 0, 'f', 2);
}

// Keeps the rest of the policy: a word-wrapped label's height-for-width.
void setVerticalPolicy(QWidget* w, QSizePolicy::Policy policy) {
  QSizePolicy sp = w->sizePolicy();
  sp.setVerticalPolicy(policy);
  w->setSizePolicy(sp);
}

constexpr int kMaxColumnWidth = 170;  // a long status is elided; the cell's tooltip has all of it

// Device differences make a ratio meaningless; the others make it less trustworthy.
bool severe(const std::string& warning) { return warning.rfind("device", 0) == 0; }

QString deviceOf(const ks::Session& s) {
  return s.device ? QString::fromStdString(s.device->name) : ComparePanel::tr("no Vulkan device");
}

}  // namespace

// ---- CompareModel

CompareModel::CompareModel(QObject* parent) : QAbstractTableModel(parent) {}

int CompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(comparison_.rows.size());
}

int CompareModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QColor CompareModel::fasterColor() { return QColor(0xc8, 0xe6, 0xc9); }
QColor CompareModel::slowerColor() { return QColor(0xff, 0xcd, 0xd2); }

QVariant CompareModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() < 0 || index.row() >= int(comparison_.rows.size())) return {};
  const ks::CompareRow& r = comparison_.rows[size_t(index.row())];
  const bool both = r.comparable();
  const int col = index.column();
  if (role == Qt::DisplayRole) {
    switch (col) {
      case Kernel:
        return QString::fromStdString(r.kernel);
      case Params:
        return QString::fromStdString(r.params);
      case Size:
        return QString::fromStdString(r.size.str());
      case BaselineMedian:
        return side(r.baseline_ok, r.baseline_median_ns, r.baseline_status);
      case CurrentMedian:
        return side(r.current_ok, r.current_median_ns, r.current_status);
      case Ratio:
        return both ? ratioText(r.ratio) : QStringLiteral("–");
      case Speedup:
        return both ? QString::number(r.speedup, 'f', 2) + QStringLiteral("×") : QStringLiteral("–");
      case P:
        return both ? pText(r.test.p) : QStringLiteral("–");
      case Significance:
        return both ? QString::fromStdString(ks::significanceMark(r.test.p)) : QString();
    }
  } else if (role == SortRole) {
    switch (col) {
      case Size:
        return double(r.size.m) * double(r.size.n) * double(r.size.k);
      case BaselineMedian:
        return r.baseline_ok ? r.baseline_median_ns : -1.0;
      case CurrentMedian:
        return r.current_ok ? r.current_median_ns : -1.0;
      case Ratio:
        return both ? r.ratio : -1.0;
      case Speedup:
        return both ? r.speedup : -1.0;
      case P:
        return both ? r.test.p : -1.0;
      case Significance:
        return both ? double(ks::significanceMark(r.test.p).size()) : -1.0;
      default:
        return data(index, Qt::DisplayRole);
    }
  } else if (role == Qt::ForegroundRole) {
    if (col == BaselineMedian && !r.baseline_ok) return QBrush(statusColor(r.baseline_status));
    if (col == CurrentMedian && !r.current_ok) return QBrush(statusColor(r.current_status));
    if ((col == Ratio || col == Significance) && r.significant()) {
      if (r.ratio < 1) return QBrush(kFasterText);
      if (r.ratio > 1) return QBrush(kSlowerText);
    }
    if (col >= Ratio && !both) return QBrush(kGreyText);
  } else if (role == Qt::BackgroundRole) {
    if (col == Ratio && r.significant()) {
      if (r.ratio < 1) return QBrush(fasterColor());
      if (r.ratio > 1) return QBrush(slowerColor());
    }
  } else if (role == Qt::FontRole) {
    if (col == Ratio && r.significant() && r.ratio != 1) {
      QFont f;
      f.setBold(true);
      return f;
    }
  } else if (role == Qt::ToolTipRole) {
    if (col == BaselineMedian)
      return r.baseline_ok ? tr("median of %1 samples").arg(r.baseline_samples)
                           : QString::fromStdString(r.baseline_status);
    if (col == CurrentMedian)
      return r.current_ok ? tr("median of %1 samples").arg(r.current_samples)
                          : QString::fromStdString(r.current_status);
    if (col >= Ratio) {
      if (!both)
        return tr("Not compared: the baseline is %1, the current point is %2")
            .arg(QString::fromStdString(r.baseline_status), QString::fromStdString(r.current_status));
      const QString verdict = !r.significant() ? tr("not significant (p ≥ %1)").arg(ks::kSignificanceLevel)
                              : r.ratio < 1    ? tr("significantly faster")
                                               : tr("significantly slower");
      return tr("%1\nMann-Whitney U = %2, z = %3, p = %4 (%5)\n%6 baseline vs %7 current samples")
          .arg(verdict)
          .arg(r.test.u, 0, 'f', 1)
          .arg(r.test.z, 0, 'f', 2)
          .arg(r.test.p, 0, 'g', 3)
          .arg(r.test.exact ? tr("exact") : tr("normal approximation"))
          .arg(r.baseline_samples)
          .arg(r.current_samples);
    }
  } else if (role == Qt::TextAlignmentRole) {
    if (col >= BaselineMedian && col <= P) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (col == Significance) return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
  }
  return {};
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::DisplayRole) {
    switch (section) {
      case Kernel:
        return tr("Kernel");
      case Params:
        return tr("Parameters");
      case Size:
        return tr("Size");
      case BaselineMedian:
        return tr("Baseline median");
      case CurrentMedian:
        return tr("Current median");
      case Ratio:
        return tr("Ratio");
      case Speedup:
        return tr("Speedup");
      case P:
        return tr("p");
      case Significance:
        return tr("Sig.");
    }
  } else if (role == Qt::ToolTipRole) {
    switch (section) {
      case Ratio:
        return tr("current median / baseline median: below 1 is faster now");
      case Speedup:
        return tr("baseline median / current median: above 1 is faster now");
      case P:
        return tr("two-sided Mann-Whitney U test of the current samples against the baseline samples");
      case Significance:
        return tr("* p < 0.05, ** p < 0.01, *** p < 0.001");
    }
  }
  return {};
}

void CompareModel::setComparison(ks::Comparison comparison) {
  beginResetModel();
  comparison_ = std::move(comparison);
  endResetModel();
}

void CompareModel::clear() { setComparison({}); }

// ---- ComparePanel

ComparePanel::ComparePanel(QWidget* parent) : QWidget(parent) {
  sessions_ = new QLabel;
  sessions_->setObjectName("compareSessions");
  sessions_->setWordWrap(true);
  sessions_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  sessions_->setStyleSheet(QStringLiteral("color: #505050;"));

  warnings_ = new QLabel;
  warnings_->setObjectName("compareWarnings");
  warnings_->setWordWrap(true);
  warnings_->setTextFormat(Qt::RichText);
  warnings_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  summary_ = new QLabel;
  summary_->setObjectName("compareSummary");
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont bold = summary_->font();
  bold.setBold(true);
  summary_->setFont(bold);

  model_ = new CompareModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(CompareModel::SortRole);
  table_ = new QTableView;
  table_->setObjectName("compareTable");
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(-1, Qt::AscendingOrder);  // the current session's order until a header is clicked
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->setVisible(false);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->horizontalHeader()->setStretchLastSection(true);
  // The verdict first, the two medians (which may be long status texts) after it.
  int to = CompareModel::Size + 1;
  for (int col : {CompareModel::Ratio, CompareModel::Speedup, CompareModel::P, CompareModel::Significance})
    table_->horizontalHeader()->moveSection(table_->horizontalHeader()->visualIndex(col), to++);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(sessions_);
  layout->addWidget(warnings_);
  layout->addWidget(summary_);
  layout->addWidget(table_, 1);
  showNoBaseline();
}

void ComparePanel::showNoBaseline() {
  has_baseline_ = false;
  model_->clear();
  warnings_text_.clear();
  warnings_->clear();
  warnings_->hide();
  sessions_->clear();
  sessions_->hide();
  summary_->setText(tr("No baseline: File > Open Baseline… to compare this session with another one."));
  summary_->setToolTip({});
  summary_->setAlignment(Qt::AlignCenter);  // alone in the panel
  setVerticalPolicy(summary_, QSizePolicy::Expanding);
  table_->hide();
}

void ComparePanel::clear() { showNoBaseline(); }

void ComparePanel::setSessions(const ks::Session* baseline, const ks::Session& current) {
  if (!baseline) return showNoBaseline();
  has_baseline_ = true;
  ks::Comparison c = ks::compareSessions(*baseline, current);

  sessions_->setText(tr("Baseline: %1 on %2  ·  Current: %3 on %4")
                         .arg(QString::fromStdString(baseline->created), deviceOf(*baseline),
                              QString::fromStdString(current.created), deviceOf(current)));
  sessions_->show();

  QStringList plain, html;
  for (const std::string& w : c.warnings) {
    const QString line = QString::fromStdString(w);
    plain << line;
    html << QStringLiteral("<span style=\"color:%1\">⚠ %2</span>")
                .arg((severe(w) ? kFailedText : kAmberText).name(), line.toHtmlEscaped());
  }
  warnings_text_ = plain.join('\n');
  warnings_->setText(html.join(QStringLiteral("<br>")));
  warnings_->setToolTip(plain.isEmpty() ? QString()
                                        : tr("The two runs differ in more than the kernels: ratios may "
                                             "reflect these differences too."));
  warnings_->setVisible(!plain.isEmpty());

  QStringList parts;
  if (c.compared == 0) {
    parts << tr("No point is ok in both sessions: nothing to compare");
  } else {
    const double g = c.geomean_ratio;
    QString mean = tr("Geometric mean ratio %1 (%2)").arg(ratioText(g), changeText(g));
    mean += c.compared == 1 ? tr(" over 1 point") : tr(" over %1 points").arg(c.compared);
    parts << mean;
    const size_t rest = c.compared - c.significantly_faster - c.significantly_slower;
    parts << tr("%1 faster / %2 slower (p < %3), %4 not significant")
                 .arg(c.significantly_faster)
                 .arg(c.significantly_slower)
                 .arg(ks::kSignificanceLevel)
                 .arg(rest);
  }
  const size_t not_compared = c.rows.size() - c.compared;
  if (not_compared) parts << tr("%1 not compared (failed, skipped or unverified)").arg(not_compared);
  if (!c.only_in_baseline.empty()) parts << tr("%1 only in baseline").arg(c.only_in_baseline.size());
  if (!c.only_in_current.empty()) parts << tr("%1 only in current").arg(c.only_in_current.size());
  summary_->setText(parts.join(QStringLiteral("  ·  ")));

  // The unmatched points by name, in the tooltip (there may be many).
  QStringList tip;
  const auto list = [&](const QString& title, const std::vector<std::string>& points) {
    if (points.empty()) return;
    tip << title;
    const size_t shown = std::min<size_t>(points.size(), 30);
    for (size_t i = 0; i < shown; ++i) tip << QStringLiteral("  ") + QString::fromStdString(points[i]);
    if (points.size() > shown) tip << tr("  … and %1 more").arg(points.size() - shown);
  };
  list(tr("Only in the baseline:"), c.only_in_baseline);
  list(tr("Only in the current session:"), c.only_in_current);
  summary_->setToolTip(tip.join('\n'));

  model_->setComparison(std::move(c));
  summary_->setAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  setVerticalPolicy(summary_, QSizePolicy::Preferred);
  table_->show();
  table_->resizeColumnsToContents();
  for (int col = 0; col < CompareModel::ColumnCount; ++col)
    if (table_->columnWidth(col) > kMaxColumnWidth) table_->setColumnWidth(col, kMaxColumnWidth);
}

bool ComparePanel::hasBaseline() const { return has_baseline_; }
CompareModel* ComparePanel::model() const { return model_; }
QSortFilterProxyModel* ComparePanel::proxy() const { return proxy_; }
QTableView* ComparePanel::view() const { return table_; }
QLabel* ComparePanel::warningsLabel() const { return warnings_; }
QString ComparePanel::warningsText() const { return warnings_text_; }
QString ComparePanel::summaryText() const { return summary_->text(); }
QString ComparePanel::sessionsText() const { return has_baseline_ ? sessions_->text() : QString(); }

}  // namespace ks::ui
