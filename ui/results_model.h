#pragma once
// The results table: one row per measured point, sortable on raw values.
#include <QAbstractTableModel>
#include <vector>

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
    Min,
    Max,
    Cv,
    Gflops,
    Gbps,
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
  // Tab-separated text of the given rows with a header line (for the clipboard).
  QString rowsAsText(const QList<int>& rows) const;

 private:
  std::vector<ks::Measurement> rows_;
};

}  // namespace ks::ui
