#pragma once
// The results table: one row per measured point, sortable on raw values.
#include <QAbstractTableModel>
#include <optional>
#include <vector>

#include "engine/bench/peaks.h"
#include "engine/bench/runner.h"

namespace ks::ui {

class ResultsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Kernel,
    Params,
    Size,
    Median,
    Transfer,  // upload + download medians (Plan::with_transfers); "–" without them
    EndToEnd,  // median + transfer
    Ci,
    Min,
    Max,
    Cv,
    Gflops,
    Gbps,
    PeakFraction,
    Verified,
    RelError,
    Clock,
    Status,
    ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole + 1;  // raw numbers for sorting

  explicit ResultsModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  void clear();
  void append(const ks::Measurement& m);
  void setMeasurements(std::vector<ks::Measurement> ms);
  const std::vector<ks::Measurement>& measurements() const { return rows_; }
  // Measured peaks of the device: the "% peak" column (empty without them).
  void setPeaks(std::optional<ks::DevicePeaks> peaks);
  // Tab-separated text of the given rows with a header line (for the clipboard).
  QString rowsAsText(const QList<int>& rows) const;

 private:
  std::vector<ks::Measurement> rows_;
  std::optional<ks::DevicePeaks> peaks_;
};

}  // namespace ks::ui
