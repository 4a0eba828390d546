#pragma once
// The roofline (Qt Charts): every trustworthy point at its arithmetic intensity and GFLOP/s, under
// the ceilings of the measured peaks (engine/bench/roofline.h): GPU points under the device's, CPU
// points under the host CPU's.
#include <QList>
#include <QPointF>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <vector>

#include "engine/bench/peaks.h"
#include "engine/bench/runner.h"

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
QT_END_NAMESPACE

namespace ks::ui {

// x = arithmetic intensity (FLOP/byte, from the kernel's own counts), y = GFLOP/s, both log10.
//
// Points: one scatter series per series name (ks::seriesKey: kernel + workgroup + tunables), GPU
// kernels as circles, CPU kernels as triangles (the host CPU's roofs bound them). Only trustworthy
// points with a known intensity and GFLOP/s > 0 are drawn; failed, unverified, skipped and
// cancelled points are not. Hovering a point shows its kernel, size, intensity, GFLOP/s and, with
// peaks, its fraction of the roof that bounds it (ks::fractionOfPeak).
//
// Ceilings from the peaks, each named with its value in the legend:
//   "memory 4 TB/s"            y = bandwidth * x, from the left edge to the ridge (the right edge
//                              without an fp32 peak)
//   "fp32 FMA 51 TFLOP/s"      horizontal from the ridge (the left edge without a bandwidth) to the
//                              right edge
//   "fp16 FMA ...", "coopmat fp16→fp32 ..."  where measured: horizontal from their own ridge
//                              (compute / bandwidth) to the right edge; the memory roof continues
//                              dashed (no legend entry) from the fp32 ridge up to the highest one.
//   "CPU: memory 25 GB/s", "CPU: fp32 FMA 190 GFLOP/s"   the host CPU's, dashed in their own
//                              colours, laid out as the device's memory and fp32 roofs; with them
//                              the device's are named "GPU: memory ...", "GPU: fp32 FMA ...".
// Without peaks (nullptr, or nothing measured) only the points are drawn and the chart title says
// so (noteText()); so it does when CPU points have no CPU roof (peaks from before the host CPU
// was measured) or GPU points no GPU roof.
class RooflineChart : public QWidget {
  Q_OBJECT
 public:
  explicit RooflineChart(QWidget* parent = nullptr);
  ~RooflineChart() override;

  // Re-plots everything; nothing is kept pointing into the arguments.
  void setData(const std::vector<ks::Measurement>& points, const ks::DevicePeaks* peaks);
  void clear();

  QChart* chart() const;  // a new QChart after every setData / clear
  QChartView* view() const;
  // Legend order: the ceilings (drawn under the points), then the point series in order of first
  // appearance. The memory roof's dashed continuation has no name and is not listed.
  QStringList seriesNames() const;
  QStringList ceilingNames() const;  // the ceilings only, e.g. "memory 4 TB/s", "CPU: fp32 FMA 190 GFLOP/s"
  // The (x, y) points of a named series as plotted (points in x order; ceilings left to right).
  QList<QPointF> seriesPoints(const QString& name) const;
  // fp32 FMA GFLOP/s / bandwidth GB/s: where the memory roof meets the fp32 roof; 0 when either
  // peak is missing.
  double ridgeIntensity() const;
  double cpuRidgeIntensity() const;  // the same for the host CPU's roofs
  // "No measured peaks: Measure peaks to draw the ceilings" when there are none, a note when CPU (or
  // GPU) points have no roof of their own, else "".
  QString noteText() const;
  // Render to a PNG. size = logical pixels, scale = device pixel ratio (2 => an image of twice the
  // size with crisp text). Returns an empty string on success, else a readable reason.
  QString exportPng(const QString& path, QSize size, qreal scale) const;

  // The hover text of a point: kernel, params, size, intensity, GFLOP/s and, with peaks, the
  // fraction of the roof that bounds it.
  static QString toolTip(const ks::Measurement& m, const ks::DevicePeaks* peaks);
  static QString ceilingName(const QString& what, double value, const QString& unit);  // "fp32 FMA 51 TFLOP/s"

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};

}  // namespace ks::ui
