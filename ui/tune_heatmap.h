#pragma once
// A tune's scores over two of its dimensions, as a grid of coloured cells
// (Qt Charts has no heatmap: this one is painted by hand).
#include <QSize>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/bench/runner.h"
#include "engine/tune/tune_record.h"

namespace ks::ui {

// x and y are two dimensions of the tune (tunables or "wg"); every other
// dimension is held at one value, the slice: by default the winner's (else the
// best evaluation's), or a value chosen per dimension. A cell is one
// configuration of the slice, in one of four states:
//   Measured    evaluated and timed: coloured by its score (viridis over the
//               range of every score of the tune, so slices compare), the
//               value written in it when it fits
//   Failed      evaluated but not timed (compile, verification, device): a red cross
//   Invalid     pruned before running (record.pruned): grey hatch; the tooltip says why
//   Unmeasured  valid but not evaluated (the search did not reach it): white with a dot
// The winner's cell is outlined. Column i is x's i-th value (left to right);
// row j is y's j-th value, drawn from the bottom up. A tune of one dimension
// has one row (y is "").
class TuneHeatmap : public QWidget {
  Q_OBJECT
 public:
  enum class CellState { Measured, Failed, Invalid, Unmeasured };

  explicit TuneHeatmap(QWidget* parent = nullptr);

  // The record as it stands (called again with each snapshot of a live tune).
  // `points` are the session's, for the medians and errors in the tooltips
  // (evaluations[i].point indexes them); they may be left out. The axes and
  // slice stay while their dimensions and values do.
  void setRecord(const ks::TuneRecord& record, const std::vector<ks::Measurement>& points = {});
  void clear();
  bool hasRecord() const { return record_.has_value(); }

  QStringList dimensionNames() const;
  QStringList valueLabels(const QString& dimension) const;

  // Two different dimensions; y may be "" only when the tune has one dimension.
  // Empty on success, else why not (naming the valid dimensions); nothing changes then.
  QString setAxes(const QString& x, const QString& y);
  QString xDimension() const;
  QString yDimension() const;
  // A non-axis dimension at the value with this label, or "" for the best
  // configuration's value. Empty on success, else why not.
  QString setSliceValue(const QString& dimension, const QString& label);
  // "wg=16x16,TM=8": several at once (the rest keep theirs). Empty on success, else why not.
  QString setSlice(const QString& spec);
  // The label a non-axis dimension is held at now, and whether it follows the best configuration.
  QString sliceLabel(const QString& dimension) const;
  bool sliceFollowsBest(const QString& dimension) const;

  int columns() const;
  int rows() const;
  CellState cellState(int column, int row) const;
  std::optional<double> cellScore(int column, int row) const;
  bool isWinnerCell(int column, int row) const;
  QString cellToolTip(int column, int row) const;
  // The colour a cell is filled with (a measured cell's score colour, else its state's background).
  QColor cellFill(int column, int row) const;
  // "gemm.block_tiling 256: BK × BN (wg=16x16)"
  QString titleText() const;
  QString unitText() const;  // the objective's unit
  // Where a cell is drawn when the heatmap is laid out at `size` (the widget's, or an export's).
  QRectF cellRect(int column, int row, QSizeF size) const;

  // Viridis at 0..1 (dark purple for the lowest score, yellow for the highest).
  static QColor scoreColor(double fraction);
  static QColor stateFill(CellState state);   // the background of a Failed, Invalid or Unmeasured cell
  static QString stateName(CellState state);  // "measured", "failed", "invalid (pruned)", "not measured"

  // Renders without a window. size = logical pixels, scale = device pixel ratio.
  // Empty on success, else a readable reason.
  QString exportPng(const QString& path, QSize size, qreal scale) const;

  QSize sizeHint() const override { return {520, 420}; }
  QSize minimumSizeHint() const override { return {200, 200}; }

 signals:
  void changed();  // the record, axes or slice changed

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  struct Layout;
  int dimensionIndex(const QString& name) const;
  std::optional<ks::TuneConfig> bestConfig() const;
  ks::TuneConfig cellConfig(int column, int row) const;
  const ks::TuneEvaluation* evaluationOf(const ks::TuneConfig& config) const;
  const std::string* prunedReason(const ks::TuneConfig& config) const;
  Layout layout(QSizeF size) const;
  void paint(QPainter& painter, QSizeF size) const;
  void defaultAxes();

  std::optional<ks::TuneRecord> record_;
  std::vector<ks::Measurement> points_;
  int x_ = -1, y_ = -1;                         // dimension indices; y -1: one row
  std::map<std::string, uint32_t> chosen_;      // slice values chosen by the user (others at the best)
  std::map<ks::TuneConfig, size_t> evaluated_;  // config -> index into record.evaluations
  std::map<ks::TuneConfig, size_t> pruned_;     // config -> index into record.pruned
  double low_ = 0, high_ = 0;                   // the range of the scores
};

}  // namespace ks::ui
