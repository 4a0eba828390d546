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

// The original two charts; kept for compatibility (Gflops = Metric::Gflops, Time = Metric::Time).
enum class ChartKind { Gflops, Time };

// What the y axis shows (x is always the problem size on a log2 axis, see sizeAxisValue()):
//   Gflops        GFLOPS from the median time, band from the min..max time (linear y, or log y: setLogY)
//   Gbps          GB/s from the median (each input read once, output written once), band likewise
//   Time          median time in ms with its min..max band, log-log
//   RelativeTime  each series' median time / the baseline series' median time at the same m, n, k,
//                 band = the series' min..max time / that baseline median; linear y (log with setLogY)
//                 with a dashed reference line at 1 (= the baseline). Sizes the baseline has no
//                 trustworthy point for are left out; no baseline chosen: no points, the title says so.
enum class Metric { Gflops, Gbps, Time, RelativeTime };

// One live chart of a session's measurements: one Metric at a time against the problem size.
//
// Trustworthy points (m.trustworthy()) form one line per series (kernel + workgroup shape + tunables)
// with point markers and a translucent min..max band. Failed or unverified points go to one red
// "failed / unverified" scatter series at the bottom of the y range; skipped and cancelled points
// are not drawn. Clicking a legend entry hides/shows its series (kept across metric changes);
// hovering a point shows its values. The measurements are kept, so setMetric(), setLogY() and
// setBaseline() re-plot them.
class ChartPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ChartPanel(ChartKind kind, QWidget* parent = nullptr);
  explicit ChartPanel(Metric metric, QWidget* parent = nullptr);
  ~ChartPanel() override;

  // Metric::Time => ChartKind::Time, every other metric => ChartKind::Gflops (use metric()).
  ChartKind kind() const;
  void clear();                                                  // remove all series
  void addMeasurement(const ks::Measurement& m);                 // live: appends one point, rescales axes
  void setMeasurements(const std::vector<ks::Measurement>& ms);  // clear + add all
  void setMetric(Metric m);  // re-plots the stored measurements; axis titles and units change
  Metric metric() const;
  // A log10 y axis (QLogValueAxis, min > 0; points <= 0 left out) instead of the linear one, for
  // series of very different magnitudes. Applies to Gflops, Gbps and RelativeTime (Time is always
  // log-log). Default off.
  void setLogY(bool on);
  bool logY() const;
  // The series RelativeTime divides by, by its name as in seriesNames(); empty = none chosen.
  // Kept across clear() / setMeasurements(), like the metric and log y.
  void setBaseline(const QString& seriesName);
  QString baseline() const;
  // A baseline session's points: each series the current data also has is drawn again, dashed,
  // in the same colour, named "<series> (baseline)" (not in RelativeTime). Kept across clear().
  void setOverlay(const std::vector<ks::Measurement>& baseline);
  void clearOverlay();
  QStringList overlayNames() const;  // the baseline series drawn now
  static QString overlaySuffix();    // " (baseline)"
  // Points with transfers (Plan::with_transfers) also go into "<series> (end to end)", dotted in
  // the series' colour: the kernel's time plus the median upload and download, in every metric.
  static QString endToEndSuffix();  // " (end to end)"

  // The chart of the current metric: a new QChart after setMetric/setLogY/setBaseline/clear.
  QChart* chart() const;
  QChartView* view() const;
  // Series names in legend order (one per kernel + workgroup shape + tunables, e.g.
  // "gemm.block_tiling 16x16 BK=4 BN=4"; CPU kernels without the shape: "cpu.gemm.openblas").
  QStringList seriesNames() const;
  // The (x, y) points of a named series as plotted in the current metric, in x order (for tests).
  QList<QPointF> seriesPoints(const QString& name) const;
  // The error bars of a named series as (low, high) in the current metric, in x order: the
  // median's 95% confidence interval (points with fewer than 6 samples have none).
  QList<QPointF> errorBars(const QString& name) const;
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

// The x value of a size: the geometric mean of the dimensions that are not 1, so dot {1,N,1} -> N,
// gemv {M,N,1} -> sqrt(M*N), gemm {M,N,K} -> cbrt(M*N*K) (N for squares).
double sizeAxisValue(const ks::ProblemSize& s);
QString seriesName(const ks::PlanItem& item);  // as above
// A point with transfers as its end-to-end point: samples + median upload + median download.
ks::Measurement endToEndMeasurement(const ks::Measurement& m);
// The hover text of a point: kernel, params, size, times, GFLOPS, GB/s, CV, verification (plain text lines).
QString measurementToolTip(const ks::Measurement& m);

}  // namespace ks::ui
