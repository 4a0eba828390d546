#pragma once
// A live chart of a session's measurements (Qt Charts), one per metric.
#include <QList>
#include <QPointF>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <vector>

#include "engine/bench/runner.h"

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
QT_END_NAMESPACE

namespace ks::ui {

enum class ChartKind { Gflops, Time };

// One live chart of a session's measurements: Gflops = GFLOPS vs size (x log2 axis, y linear),
// Time = median time vs size, log-log (QLogValueAxis on both axes).
//
// Trustworthy points (m.trustworthy()) form one line per series (kernel + workgroup shape + tunables)
// with point markers and a translucent min..max band. Failed or unverified points go to one red
// "failed / unverified" scatter series at the bottom of the y range; skipped and cancelled points
// are not drawn. Clicking a legend entry hides/shows its series; hovering a point shows its values.
class ChartPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ChartPanel(ChartKind kind, QWidget* parent = nullptr);
  ~ChartPanel() override;

  ChartKind kind() const;
  void clear();                                                  // remove all series
  void addMeasurement(const ks::Measurement& m);                 // live: appends one point, rescales axes
  void setMeasurements(const std::vector<ks::Measurement>& ms);  // clear + add all
  QChart* chart() const;
  QChartView* view() const;
  // Series names in legend order (one per kernel + workgroup shape + tunables, e.g.
  // "gemm.block_tiling 16x16 BK=4 BN=4"; CPU kernels without the shape: "cpu.gemm.openblas").
  QStringList seriesNames() const;
  // The (x, y) points of a named series, in x order (for tests).
  QList<QPointF> seriesPoints(const QString& name) const;
  int failedPointCount() const;  // failed/unverified points drawn as such
  // Render to image files. size = logical pixels, scale = device pixel ratio (2 => image is 2x size,
  // crisp text/lines, not an upscaled bitmap). Return an empty string on success, else a readable reason.
  QString exportPng(const QString& path, QSize size, qreal scale) const;
  QString exportSvg(const QString& path, QSize size) const;

  static QString failedSeriesName();  // "failed / unverified"

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};

double sizeAxisValue(const ks::ProblemSize& s);  // N for squares, cbrt(M*N*K) otherwise
QString seriesName(const ks::PlanItem& item);    // as above
// The hover text of a point: kernel, params, size, times, GFLOPS, CV, verification (plain text lines).
QString measurementToolTip(const ks::Measurement& m);

}  // namespace ks::ui
