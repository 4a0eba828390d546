#include "ui/results_model.h"

#include <QBrush>
#include <QColor>
#include <cmath>
#include <limits>

#include "engine/bench/report.h"
#include "engine/bench/roofline.h"
#include "engine/kernels/registry.h"

namespace ks::ui {

ResultsModel::ResultsModel(QObject* parent) : QAbstractTableModel(parent) {}

int ResultsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }
int ResultsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

namespace {
QString paramsText(const ks::Measurement& m) {
  const auto* k = ks::Registry::instance().find(m.item.kernel);
  return QString::fromStdString(m.item.params.str(!k || k->uses_workgroup));
}
QString firstLine(const std::string& s) {
  const auto text = QString::fromStdString(s);
  const int eol = text.indexOf('\n');
  return eol < 0 ? text : text.left(eol) + QStringLiteral(" …");
}
}  // namespace

QVariant ResultsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(rows_.size())) return {};
  const auto& m = rows_[size_t(index.row())];
  const bool ran = m.status == ks::PointStatus::Ok;
  const bool verified = m.verification.status != ks::VerifyStatus::Skipped && m.status != ks::PointStatus::Skipped &&
                        m.status != ks::PointStatus::Cancelled;
  if (role == Qt::DisplayRole) {
    auto dur = [&](double ns) { return ran ? QString::fromStdString(ks::formatDuration(ns)) : QStringLiteral("–"); };
    switch (index.column()) {
      case Kernel:
        return QString::fromStdString(m.item.kernel);
      case Params:
        return paramsText(m);
      case Size:
        return QString::fromStdString(m.item.size.str());
      case Median:
        return dur(m.stats.median);
      case Ci:  // half-width of the median's 95% confidence interval
        return ran && m.stats.count >= 6 ? QStringLiteral("±%1%").arg(100 * m.stats.ciRelative(), 0, 'f', 2)
                                         : QStringLiteral("–");
      case Min:
        return dur(m.stats.min);
      case Max:
        return dur(m.stats.max);
      case Cv:
        return ran ? QString::number(100 * m.stats.cv, 'f', 1) + "%" : QStringLiteral("–");
      case Gflops:
        return ran ? QString::number(m.gflops, 'f', 2) : QStringLiteral("–");
      case Gbps:
        if (!ran) return QStringLiteral("–");
        return QString::number(m.gbps, 'f', 2) + (m.cache_resident ? tr(" (cache)") : QString());
      case PeakFraction: {
        const auto f = peaks_ ? ks::fractionOfPeak(m, *peaks_) : std::nullopt;
        return f ? tr("%1% %2").arg(100 * f->fraction, 0, 'f', 0).arg(f->bound == "memory" ? tr("mem") : tr("comp"))
                 : QStringLiteral("–");
      }
      case Transfer:
        if (!ran || !m.hasTransfers()) return QStringLiteral("–");
        return QString::fromStdString(ks::formatDuration(m.transferNs()));
      case EndToEnd:
        if (!ran || !m.hasTransfers()) return QStringLiteral("–");
        return QString::fromStdString(ks::formatDuration(m.endToEndNs()));
      case Verified:
        return verified ? QString::fromStdString(ks::verifyStatusName(m.verification.status)) : QStringLiteral("–");
      case RelError:
        if (!verified) return QStringLiteral("–");
        return std::isnan(m.verification.rel_error) ? QStringLiteral("NaN")
                                                    : QString::number(m.verification.rel_error, 'e', 1);
      case Clock:
        return m.clock.empty() ? QStringLiteral("–") : QString::fromStdString(m.clock);
      case Status: {
        QString s = QString::fromStdString(ks::pointStatusName(m.status));
        if (!m.error.empty()) s += ": " + firstLine(m.error);
        return s;
      }
    }
  } else if (role == SortRole) {
    switch (index.column()) {
      case Size:
        return double(m.item.size.m) * double(m.item.size.n) * double(m.item.size.k);
      case Median:
        return ran ? m.stats.median : -1.0;
      case Transfer:
        return ran && m.hasTransfers() ? m.transferNs() : -1.0;
      case EndToEnd:
        return ran && m.hasTransfers() ? m.endToEndNs() : -1.0;
      case Ci:
        return ran && m.stats.count >= 6 ? m.stats.ciRelative() : -1.0;
      case PeakFraction: {
        const auto f = peaks_ ? ks::fractionOfPeak(m, *peaks_) : std::nullopt;
        return f ? f->fraction : -1.0;
      }
      case Min:
        return ran ? m.stats.min : -1.0;
      case Max:
        return ran ? m.stats.max : -1.0;
      case Cv:
        return ran ? m.stats.cv : -1.0;
      case Gflops:
        return ran ? m.gflops : -1.0;
      case Gbps:
        return ran ? m.gbps : -1.0;
      case RelError:  // NaN (a poisoned output) sorts as the worst
        if (!verified) return -1.0;
        return std::isnan(m.verification.rel_error) ? std::numeric_limits<double>::infinity()
                                                    : m.verification.rel_error;
      default:
        return data(index, Qt::DisplayRole);
    }
  } else if (role == Qt::ForegroundRole) {
    if (m.status == ks::PointStatus::Failed) return QBrush(QColor(0xc6, 0x28, 0x28));
    if (m.status == ks::PointStatus::Ok && !m.trustworthy()) return QBrush(QColor(0x9a, 0x67, 0x00));  // unverified
    if (index.column() == Gbps && m.cache_resident) return QBrush(QColor(0x9a, 0x67, 0x00));
    if (m.status != ks::PointStatus::Ok) return QBrush(QColor(0x80, 0x80, 0x80));
  } else if (role == Qt::ToolTipRole) {
    if (!m.error.empty()) return QString::fromStdString(m.error);
    if (index.column() == Gbps && m.cache_resident)
      return tr(
          "Cache-resident: the data touched between two uses of the inputs fits in the cache size of the "
          "sweep, so this is cache bandwidth, not memory bandwidth.");
    if (index.column() == Gbps && m.input_sets > 1)
      return tr("Inputs rotated among %1 copies so that each run reads them from memory.").arg(m.input_sets);
    if ((index.column() == Transfer || index.column() == EndToEnd) && ran && m.hasTransfers())
      return tr("upload %1 + download %2 (medians of %3 samples); %4")
          .arg(QString::fromStdString(ks::formatDuration(m.partMedian("upload"))),
               QString::fromStdString(ks::formatDuration(m.partMedian("download"))))
          .arg(m.part("upload")->samples_ns.size())
          .arg(QString::fromStdString(m.transfer_method));
    if (index.column() == Median && ran && m.part("gpu"))
      return tr("one round: GPU %1, CPU %2, synchronisation %3 (medians); %4")
          .arg(QString::fromStdString(ks::formatDuration(m.partMedian("gpu"))),
               QString::fromStdString(ks::formatDuration(m.partMedian("cpu"))),
               QString::fromStdString(ks::formatDuration(m.partMedian("sync"))), QString::fromStdString(m.method));
    if (index.column() == Ci && ran && m.stats.count >= 6)
      return tr("Median 95% confidence interval %1 .. %2 from %3 samples; %4 outliers (Tukey fences, kept)")
          .arg(QString::fromStdString(ks::formatDuration(m.stats.ci_low)),
               QString::fromStdString(ks::formatDuration(m.stats.ci_high)))
          .arg(m.stats.count)
          .arg(m.stats.outliers);
    if (index.column() == PeakFraction && peaks_)
      if (const auto f = ks::fractionOfPeak(m, *peaks_))
        return (f->cpu ? tr("%1 GFLOP/s of %2 attainable at %3 FLOP/byte (%4-bound on the host CPU's measured "
                            "roofline)")
                       : tr("%1 GFLOP/s of %2 attainable at %3 FLOP/byte (%4-bound on the device's measured roofline)"))
            .arg(m.gflops, 0, 'f', 1)
            .arg(f->attainable, 0, 'f', 1)
            .arg(f->intensity, 0, 'g', 3)
            .arg(QString::fromStdString(f->bound));
    if (index.column() == Verified || index.column() == RelError)
      return tr("%1; tolerance %2; worst element %3")
          .arg(QString::fromStdString(m.verification.note))
          .arg(m.verification.tolerance, 0, 'e', 2)
          .arg(m.verification.max_error, 0, 'e', 2);
  } else if (role == Qt::TextAlignmentRole) {
    if (index.column() >= Median && index.column() <= RelError)
      return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant ResultsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Kernel:
      return tr("Kernel");
    case Params:
      return tr("Parameters");
    case Size:
      return tr("Size");
    case Median:
      return tr("Median");
    case Transfer:
      return tr("Transfer");
    case EndToEnd:
      return tr("End to end");
    case Ci:
      return tr("95% CI");
    case Min:
      return tr("Min");
    case Max:
      return tr("Max");
    case Cv:
      return tr("CV");
    case Gflops:
      return tr("GFLOPS");
    case Gbps:
      return tr("GB/s");
    case PeakFraction:
      return tr("% peak");
    case Verified:
      return tr("Verified");
    case RelError:
      return tr("Rel. error");
    case Clock:
      return tr("Clock");
    case Status:
      return tr("Status");
  }
  return {};
}

void ResultsModel::setPeaks(std::optional<ks::DevicePeaks> peaks) {
  peaks_ = std::move(peaks);
  if (!rows_.empty()) emit dataChanged(index(0, PeakFraction), index(rowCount() - 1, PeakFraction));
}

void ResultsModel::clear() {
  if (rows_.empty()) return;
  beginResetModel();
  rows_.clear();
  endResetModel();
}

void ResultsModel::append(const ks::Measurement& m) {
  const int row = int(rows_.size());
  beginInsertRows({}, row, row);
  rows_.push_back(m);
  endInsertRows();
}

void ResultsModel::setMeasurements(std::vector<ks::Measurement> ms) {
  beginResetModel();
  rows_ = std::move(ms);
  endResetModel();
}

QString ResultsModel::rowsAsText(const QList<int>& rows) const {
  QStringList lines;
  QStringList header;
  for (int c = 0; c < ColumnCount; ++c) header << headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
  lines << header.join('\t');
  for (int r : rows) {
    if (r < 0 || r >= rowCount()) continue;
    QStringList cells;
    for (int c = 0; c < ColumnCount; ++c) cells << data(index(r, c), Qt::DisplayRole).toString();
    lines << cells.join('\t');
  }
  return lines.join('\n') + '\n';
}

}  // namespace ks::ui
