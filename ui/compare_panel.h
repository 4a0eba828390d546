#pragma once
// A baseline session beside the current one: point-by-point ratios with a Mann-Whitney U test
// (engine/bench/compare.h), what differs between the two runs, and a summary.
#include <QAbstractTableModel>
#include <QString>
#include <QWidget>

#include "engine/bench/compare.h"
#include "engine/session/session.h"

QT_BEGIN_NAMESPACE
class QLabel;
class QSortFilterProxyModel;
class QTableView;
QT_END_NAMESPACE

namespace ks::ui {

// One row per matched point of a ks::Comparison. A side that is not ok (failed, skipped, cancelled,
// not verified) shows its status instead of a time, and the row has no ratio, speedup or p.
class CompareModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Kernel,
    Params,
    Size,
    BaselineMedian,
    CurrentMedian,
    Ratio,    // current median / baseline median: < 1 is faster now
    Speedup,  // baseline / current: > 1 is faster now
    P,        // Mann-Whitney U, two-sided
    Significance,
    ColumnCount
  };
  // Raw numbers for sorting (as ResultsModel): sizes as m*n*k, times in ns, the significance mark
  // by its number of stars; a value a row does not have sorts as -1 (before every real value).
  static constexpr int SortRole = Qt::UserRole + 1;

  explicit CompareModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  void setComparison(ks::Comparison comparison);
  void clear();
  const ks::Comparison& comparison() const { return comparison_; }

  // The ratio cell's background: significantly faster, significantly slower (else none).
  static QColor fasterColor();
  static QColor slowerColor();

 private:
  ks::Comparison comparison_;
};

// The compare view: what differs between the runs (warnings), a summary line, and the table.
// Without a baseline it says how to open one and shows no table.
class ComparePanel : public QWidget {
  Q_OBJECT
 public:
  explicit ComparePanel(QWidget* parent = nullptr);

  // Compares `current` against `baseline`; nullptr = no baseline (the panel says how to open one).
  // Nothing is kept pointing into either session.
  void setSessions(const ks::Session* baseline, const ks::Session& current);
  void clear();  // back to "no baseline"
  bool hasBaseline() const;

  CompareModel* model() const;
  QSortFilterProxyModel* proxy() const;  // what the table shows, sorted on CompareModel::SortRole
  QTableView* view() const;
  QLabel* warningsLabel() const;  // hidden when the runs differ in nothing but the kernels
  // The warnings as plain text, one per line ("" when there are none).
  QString warningsText() const;
  // The summary line as plain text: geometric-mean ratio, faster / slower / not significant counts,
  // points in one session only; without a baseline, how to open one.
  QString summaryText() const;
  // "Baseline: <created> on <device> · Current: ..." ("" without a baseline).
  QString sessionsText() const;

 private:
  void showNoBaseline();

  CompareModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* table_ = nullptr;
  QLabel* sessions_ = nullptr;
  QLabel* warnings_ = nullptr;
  QLabel* summary_ = nullptr;
  QString warnings_text_;
  bool has_baseline_ = false;
};

}  // namespace ks::ui
