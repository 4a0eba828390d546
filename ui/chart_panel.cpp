#include "ui/chart_panel.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QCoreApplication>
#include <QCursor>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QGuiApplication>
#include <QImage>
#include <QImageWriter>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QPainterPath>
#include <QPointer>
#include <QScatterSeries>
#include <QScreen>
#include <QSvgGenerator>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/bench/complexity.h"
#include "engine/kernels/registry.h"
#include "ui/chart_export.h"

namespace ks::ui {

namespace {

constexpr double kNsPerMs = 1e6;
constexpr double kHoverRadiusPx = 16;  // a hover within this distance of a point shows its values
// Failed points sit this fraction of the plot height above the y axis minimum: on the axis line
// itself the plot area would clip half of each marker.
constexpr double kFailedRow = 0.025;

// Qualitative colours, red left out: red means failed.
const QColor kPalette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                           QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2),
                           QColor(0x17, 0xbe, 0xcf), QColor(0x7f, 0x7f, 0x7f), QColor(0xbc, 0xbd, 0x22),
                           QColor(0x39, 0x3b, 0x79)};
constexpr int kPaletteSize = int(sizeof(kPalette) / sizeof(kPalette[0]));
const Qt::PenStyle kStyles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine};

const QColor kFailedColor(0xd6, 0x27, 0x28);
const QColor kLabelColor(0x20, 0x20, 0x20);
const QColor kHiddenLabelColor(0xb0, 0xb0, 0xb0);

const QColor kReferenceColor(0x50, 0x50, 0x50);

// A trustworthy measurement of a series at its x.
struct Sample {
  double x = 0;
  ks::Measurement m;
};

// A plotted point in the current metric: the value at the median and the band (from min..max time).
struct Point {
  double x = 0, y = 0, lo = 0, hi = 0;
  double ci_lo = 0, ci_hi = 0;         // the median's 95% confidence interval in the metric (error bar)
  const ks::Measurement* m = nullptr;  // into the model; valid until it changes
};

struct SeriesData {
  QString name;
  QColor color;
  Qt::PenStyle style = Qt::SolidLine;
  bool visible = true;
  std::vector<Sample> samples;  // in x order, one per problem size
};

struct FailedPoint {
  double x = 0;
  ks::Measurement m;
};

// What the chart shows, independent of the Qt objects that show it.
struct Model {
  Metric metric = Metric::Gflops;
  bool log_y = false;              // Gflops, Gbps, RelativeTime (Time is always log)
  QString baseline;                // RelativeTime divides by this series
  std::vector<SeriesData> series;  // in legend order
  std::vector<FailedPoint> failed;
  bool failed_visible = true;
  // A baseline session's series, drawn dashed in the colour of the current
  // series of the same name (only those that have one); not in RelativeTime.
  std::vector<SeriesData> overlay;
};

// The Qt objects of one rendering of a Model: the live chart, or a copy for export.
struct Parts {
  QChart* chart = nullptr;
  QAbstractAxis* x = nullptr;         // log2, attached to the series; draws the grid, no labels
  QCategoryAxis* x_labels = nullptr;  // the labels and title of x: 256, 1K, 4M at powers of 2
  QAbstractAxis* y = nullptr;
  struct Line {
    QLineSeries* line = nullptr;
    QAreaSeries* band = nullptr;
    std::vector<QLineSeries*> bars;  // one error bar (the median's 95% CI) per point
  };
  std::vector<Line> lines;  // parallel to Model::series
  std::vector<QLineSeries*> overlays;
  QScatterSeries* failed = nullptr;
  QLineSeries* reference = nullptr;  // RelativeTime: the dashed line at 1, not in the legend
  double y_failed = 0;               // where failed points sit: just above the bottom of the y axis

  // A series drawn for a data series that has no legend entry of its own (a band, the reference line).
  bool auxiliary(const QAbstractSeries* s) const {
    return s && (s->type() == QAbstractSeries::SeriesTypeArea || s == reference || s->property(kErrorBar).toBool());
  }
  static constexpr const char* kErrorBar = "ks_error_bar";
};

bool sameSize(const ks::ProblemSize& a, const ks::ProblemSize& b) { return a.m == b.m && a.n == b.n && a.k == b.k; }

bool yIsLog(const Model& model) { return model.metric == Metric::Time || model.log_y; }

// Relative time without a baseline shows nothing, failed points included.
bool failedShown(const Model& model) {
  return !model.failed.empty() && !(model.metric == Metric::RelativeTime && model.baseline.isEmpty());
}

int baselineIndex(const Model& model) {
  if (model.baseline.isEmpty()) return -1;
  for (size_t i = 0; i < model.series.size(); ++i)
    if (model.series[i].name == model.baseline) return int(i);
  return -1;
}

double kernelFlops(const ks::Measurement& m) {
  const auto* k = ks::Registry::instance().find(m.item.kernel);
  if (k && k->flops) return k->flops(m.item.size);
  if (m.gflops > 0 && m.stats.median > 0) return m.gflops * m.stats.median;
  const auto& s = m.item.size;
  return 2.0 * double(s.m) * double(s.n) * double(s.k);
}

// Series i in the current metric. Points a metric cannot show are left out: no GB/s recorded, no
// baseline point at that size, or a value <= 0 on a log axis.
std::vector<Point> plotted(const Model& model, const SeriesData& series) {
  const SeriesData* base = nullptr;
  if (model.metric == Metric::RelativeTime) {
    const int b = baselineIndex(model);
    if (b < 0) return {};
    base = &model.series[size_t(b)];
  }
  const bool log = yIsLog(model);
  std::vector<Point> out;
  for (const Sample& s : series.samples) {
    const ks::Measurement& m = s.m;
    const ks::Stats& st = m.stats;
    Point p;
    p.x = s.x;
    p.m = &m;
    switch (model.metric) {
      case Metric::Gflops: {
        const double flops = kernelFlops(m);
        p.y = m.gflops;
        p.lo = st.max > 0 ? flops / st.max : m.gflops;
        p.hi = st.min > 0 ? flops / st.min : m.gflops;
        p.ci_lo = st.ci_high > 0 ? flops / st.ci_high : p.y;
        p.ci_hi = st.ci_low > 0 ? flops / st.ci_low : p.y;
        break;
      }
      case Metric::Gbps: {
        if (!(m.gbps > 0)) continue;  // not recorded (a session from before GB/s)
        const double bytes = m.gbps * st.median;
        p.y = m.gbps;
        p.lo = st.max > 0 && bytes > 0 ? bytes / st.max : m.gbps;
        p.hi = st.min > 0 && bytes > 0 ? bytes / st.min : m.gbps;
        p.ci_lo = st.ci_high > 0 && bytes > 0 ? bytes / st.ci_high : p.y;
        p.ci_hi = st.ci_low > 0 && bytes > 0 ? bytes / st.ci_low : p.y;
        break;
      }
      case Metric::Time:
        p.y = st.median / kNsPerMs;
        p.lo = st.min / kNsPerMs;
        p.hi = st.max / kNsPerMs;
        p.ci_lo = st.ci_low / kNsPerMs;
        p.ci_hi = st.ci_high / kNsPerMs;
        break;
      case Metric::RelativeTime: {
        auto b = std::find_if(base->samples.begin(), base->samples.end(),
                              [&](const Sample& bs) { return sameSize(bs.m.item.size, m.item.size); });
        if (b == base->samples.end() || !(b->m.stats.median > 0) || !(st.median > 0)) continue;
        const double ref = b->m.stats.median;
        p.y = st.median / ref;
        p.lo = st.min > 0 ? st.min / ref : p.y;
        p.hi = st.max > 0 ? st.max / ref : p.y;
        p.ci_lo = st.ci_low > 0 ? st.ci_low / ref : p.y;
        p.ci_hi = st.ci_high > 0 ? st.ci_high / ref : p.y;
        break;
      }
    }
    if (!std::isfinite(p.y)) continue;
    if (st.count < 6) p.ci_lo = p.ci_hi = p.y;  // no meaningful interval below 6 samples
    if (log) {
      if (!(p.y > 0)) continue;  // nothing to put on a log axis
      if (!(p.lo > 0)) p.lo = p.y;
      if (!(p.hi > 0)) p.hi = p.y;
      if (!(p.ci_lo > 0)) p.ci_lo = p.y;
      if (!(p.ci_hi > 0)) p.ci_hi = p.y;
    }
    out.push_back(p);
  }
  return out;
}

std::vector<Point> plotted(const Model& model, size_t i) { return plotted(model, model.series[i]); }

// How many of m, n, k are not 1: 1 for a dot product, 2 for a GEMV, 3 for a GEMM.
int sizeDims(const ks::ProblemSize& s) { return int(s.m != 1) + int(s.n != 1) + int(s.k != 1); }

// The x axis title: says how a size becomes x for the families on the chart (all three when empty).
QString xAxisTitle(const Model& model) {
  bool dims[4] = {false, false, false, false};
  for (const auto& sd : model.series)
    for (const auto& s : sd.samples) dims[std::max(1, sizeDims(s.m.item.size))] = true;
  for (const auto& f : model.failed) dims[std::max(1, sizeDims(f.m.item.size))] = true;
  const int kinds = int(dims[1]) + int(dims[2]) + int(dims[3]);
  if (kinds == 1 && dims[1]) return QStringLiteral("Problem size N (vector length)");
  if (kinds == 1 && dims[2]) return QString::fromUtf8("Problem size N (\u221a(M\u00b7N) when not square)");
  if (kinds == 1 && dims[3]) return QString::fromUtf8("Problem size N (\u221b(M\u00b7N\u00b7K) when not square)");
  QStringList parts;
  if (dims[1] || kinds == 0) parts << QStringLiteral("N for dot");
  if (dims[2] || kinds == 0) parts << QString::fromUtf8("\u221a(M\u00b7N) for gemv");
  if (dims[3] || kinds == 0) parts << QString::fromUtf8("\u221b(M\u00b7N\u00b7K) for gemm");
  return QStringLiteral("Problem size: ") + parts.join(QStringLiteral(", "));
}

QString chartTitle(const Model& model) {
  const QString log = model.log_y ? QStringLiteral(" (log y)") : QString();
  switch (model.metric) {
    case Metric::Gflops:
      return QStringLiteral("GFLOPS vs problem size") + log;
    case Metric::Gbps:
      return QStringLiteral("Bandwidth vs problem size") + log;
    case Metric::Time:
      return QStringLiteral("Median time vs problem size (log-log)");
    case Metric::RelativeTime:
      if (model.baseline.isEmpty()) return QStringLiteral("Relative time: choose a baseline series");
      return QStringLiteral("Median time relative to %1 (lower is faster%2)")
          .arg(model.baseline, model.log_y ? QStringLiteral(", log y") : QString());
  }
  return {};
}

QString yAxisTitle(const Model& model) {
  switch (model.metric) {
    case Metric::Gflops:
      return QStringLiteral("GFLOPS");
    case Metric::Gbps:
      return QStringLiteral("GB/s (each input read once, output written once)");
    case Metric::Time:
      return QStringLiteral("Median time (ms)");
    case Metric::RelativeTime:
      return model.baseline.isEmpty() ? QStringLiteral("time relative to the baseline")
                                      : QStringLiteral("time relative to %1").arg(model.baseline);
  }
  return {};
}

// A red "x" with a dark outline, drawn large so it stays crisp when exported at 2x or 3x.
QImage failedMarkerImage() {
  const int px = 48;
  QImage img(px, px, QImage::Format_ARGB32_Premultiplied);
  img.fill(Qt::transparent);
  QPainter p(&img);
  p.setRenderHint(QPainter::Antialiasing);
  QPainterPath cross;
  const double a = px * 0.18, b = px * 0.82;
  cross.moveTo(a, a);
  cross.lineTo(b, b);
  cross.moveTo(a, b);
  cross.lineTo(b, a);
  p.strokePath(cross, QPen(QColor(0x40, 0x00, 0x00), px * 0.30, Qt::SolidLine, Qt::RoundCap));
  p.strokePath(cross, QPen(kFailedColor, px * 0.17, Qt::SolidLine, Qt::RoundCap));
  return img;
}

QLogValueAxis* logAxis(double base, int minor_ticks) {
  auto* a = new QLogValueAxis;
  a->setBase(base);
  a->setLabelFormat("%g");
  a->setMinorTickCount(minor_ticks);
  a->setMinorGridLineVisible(true);
  a->setMinorGridLinePen(QPen(QColor(0xec, 0xec, 0xec), 1));
  return a;
}

// A power of two as an x label: plain up to 8192 when every label is, else 1K, 16K, 4M, 1G (binary).
QString powerOfTwoLabel(int e, bool short_form) {
  if (e < 0) return QString::number(std::exp2(e), 'g', 4);
  if (!short_form || e < 10) return QString::number(qulonglong(1) << std::min(e, 62));
  static const char* const kSuffix[] = {"K", "M", "G", "T", "P"};
  const int u = std::min(e / 10, 5);
  return QString::number(qulonglong(1) << (e - 10 * u)) + QLatin1String(kSuffix[u - 1]);
}

// Labels the powers of two inside the log2 x range on the category axis under it, every power when
// they fit, else every 2nd, 3rd... (exponents that are multiples of the step), so none is elided.
void applyXLabels(QChart* chart, QLogValueAxis* x, QCategoryAxis* labels) {
  const double lo = std::log2(x->min()), hi = std::log2(x->max());
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo)) return;
  const int e0 = int(std::ceil(lo - 1e-9)), e1 = int(std::floor(hi + 1e-9));
  const bool short_form = e1 >= 14;  // 16384 and up: 1K .. 16K, not 1024 .. 16384
  const QFontMetricsF fm(labels->labelsFont());
  double widest = 0;
  for (int e = e0; e <= e1; ++e) widest = std::max(widest, fm.horizontalAdvance(powerOfTwoLabel(e, short_form)));
  double width = chart->plotArea().width();
  if (!(width > 50)) width = std::max(200.0, chart->size().width() * 0.55);  // not laid out yet
  const double per_octave = width / (hi - lo);
  int step = 1;
  while (step < 64 && step * per_octave < widest + fm.height()) ++step;
  QStringList want;
  QList<double> at;
  for (int e = e0; e <= e1; ++e)
    if (((e % step) + step) % step == 0) {
      want << powerOfTwoLabel(e, short_form);
      at << std::exp2(e);
    }
  if (labels->min() == lo && labels->max() == hi && labels->categoriesLabels() == want) return;
  for (const QString& l : labels->categoriesLabels()) labels->remove(l);
  labels->setRange(lo, hi);
  labels->setStartValue(lo);
  for (int i = 0; i < want.size(); ++i) labels->append(want[i], std::log2(at[i]));
}

QValueAxis* linearAxis() {
  auto* a = new QValueAxis;
  a->setLabelFormat("%g");
  a->setMinorTickCount(1);
  a->setMinorGridLineVisible(true);
  a->setMinorGridLinePen(QPen(QColor(0xf0, 0xf0, 0xf0), 1));
  return a;
}

void initChart(Parts& p, const Model& model) {
  p.chart = newChart();
  QChart* c = p.chart;
  c->setTitle(chartTitle(model));

  QLegend* legend = c->legend();
  legend->setAlignment(Qt::AlignRight);
  legend->setShowToolTips(true);  // full names when a label is elided
  legend->setMarkerShape(QLegend::MarkerShapeFromSeries);

  // x: a log2 axis for the series and the grid, and under it a category axis on log2(x) for the
  // labels: a log axis can only printf its values, so 2^24 would read 1.67772e+07.
  auto* x = logAxis(2, 1);
  x->setTitleText(xAxisTitle(model));
  x->setTitleVisible(false);
  x->setLabelsVisible(false);
  p.x = x;
  auto* labels = new QCategoryAxis;
  labels->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  labels->setGridLineVisible(false);
  labels->setMinorGridLineVisible(false);
  labels->setLineVisible(false);
  labels->setTitleText(x->titleText());
  p.x_labels = labels;
  if (yIsLog(model)) {
    auto* y = logAxis(10, 8);
    y->setLabelFormat(model.metric == Metric::Time ? "%.4g" : "%g");
    p.y = y;
  } else {
    p.y = linearAxis();
  }
  p.y->setTitleText(yAxisTitle(model));
  for (QAbstractAxis* a : {p.x, static_cast<QAbstractAxis*>(p.x_labels), p.y}) {
    QFont f = a->titleFont();
    f.setBold(false);
    a->setTitleFont(f);
    a->setTitleBrush(kLabelColor);
  }
  c->addAxis(p.x, Qt::AlignBottom);  // first: axes(Qt::Horizontal).value(0) is the log axis
  c->addAxis(p.x_labels, Qt::AlignBottom);
  c->addAxis(p.y, Qt::AlignLeft);
  // The labels that fit depend on the plot width.
  QObject::connect(c, &QChart::plotAreaChanged, c, [c, x = QPointer<QLogValueAxis>(x), labels = QPointer(labels)] {
    if (x && labels) applyXLabels(c, x, labels);
  });
}

void hideMarkers(const Parts& p, QAbstractSeries* series) {
  for (QLegendMarker* mk : p.chart->legend()->markers(series)) mk->setVisible(false);
}

void attach(const Parts& p, QAbstractSeries* s) {
  s->attachAxis(p.x);
  s->attachAxis(p.y);
}

// Adds the Qt series of a new model series (the band first, so the line is drawn above it).
void addLine(Parts& p, const SeriesData& sd) {
  auto* upper = new QLineSeries;
  auto* lower = new QLineSeries;
  auto* band = new QAreaSeries(upper, lower);
  upper->setParent(band);
  lower->setParent(band);
  band->setName(sd.name + QStringLiteral(" (min..max)"));
  p.chart->addSeries(band);
  attach(p, band);
  QColor fill = sd.color;
  fill.setAlpha(45);
  band->setBrush(fill);
  QColor edge = sd.color;
  edge.setAlpha(90);
  band->setPen(QPen(edge, 0.8));
  hideMarkers(p, band);

  auto* line = new QLineSeries;
  line->setName(sd.name);
  p.chart->addSeries(line);
  attach(p, line);
  QPen pen(sd.color, 2.0, sd.style, Qt::RoundCap, Qt::RoundJoin);
  line->setPen(pen);
  line->setPointsVisible(true);
  line->setMarkerSize(4);
  p.lines.push_back({line, band});
}

// An error bar as one polyline: bottom cap, stem, top cap. Caps are a fixed
// fraction of an octave wide (x is a log2 axis).
QList<QPointF> errorBarPath(double x, double lo, double hi) {
  const double l = x / 1.045, r = x * 1.045;
  return {QPointF(l, lo), QPointF(r, lo), QPointF(x, lo), QPointF(x, hi), QPointF(l, hi), QPointF(r, hi)};
}

void updateLine(Parts& p, size_t i, const Model& model) {
  QList<QPointF> mid, lo, hi;
  std::vector<QList<QPointF>> bars;
  for (const auto& pt : plotted(model, i)) {
    mid.append(QPointF(pt.x, pt.y));
    lo.append(QPointF(pt.x, pt.lo));
    hi.append(QPointF(pt.x, pt.hi));
    if (pt.ci_hi > pt.ci_lo) bars.push_back(errorBarPath(pt.x, pt.ci_lo, pt.ci_hi));
  }
  auto& line = p.lines[i];
  line.line->replace(mid);
  line.band->upperSeries()->replace(hi);
  line.band->lowerSeries()->replace(lo);
  while (line.bars.size() > bars.size()) {
    p.chart->removeSeries(line.bars.back());
    delete line.bars.back();
    line.bars.pop_back();
  }
  while (line.bars.size() < bars.size()) {
    auto* bar = new QLineSeries;
    bar->setName(line.line->name() + QStringLiteral(" (95% CI of the median)"));
    bar->setProperty(Parts::kErrorBar, true);
    p.chart->addSeries(bar);
    attach(p, bar);
    bar->setPen(QPen(line.line->pen().color(), 1.2, Qt::SolidLine, Qt::FlatCap));
    bar->setVisible(line.line->isVisible());
    hideMarkers(p, bar);
    line.bars.push_back(bar);
  }
  for (size_t b = 0; b < bars.size(); ++b) line.bars[b]->replace(bars[b]);
}

// The dashed line at y = 1 of RelativeTime (its x extent is set with the axis range).
void addReference(Parts& p, const Model& model) {
  p.reference = new QLineSeries;
  p.reference->setName(model.baseline + QStringLiteral(" = 1"));
  p.chart->addSeries(p.reference);
  attach(p, p.reference);
  QPen pen(kReferenceColor, 1.5, Qt::DashLine, Qt::FlatCap);
  pen.setDashPattern({6, 4});
  p.reference->setPen(pen);
  p.reference->setPointsVisible(false);
  hideMarkers(p, p.reference);
}

// Creates the failed series, or moves it to the end of the legend when `to_end`.
void ensureFailedSeries(Parts& p, const QImage& marker, bool to_end) {
  if (p.failed && !to_end) return;
  if (p.failed) {
    if (p.chart->series().last() == p.failed) return;
    p.chart->removeSeries(p.failed);
  } else {
    p.failed = new QScatterSeries;
    p.failed->setName(ChartPanel::failedSeriesName());
    p.failed->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    p.failed->setMarkerSize(11);
    p.failed->setColor(kFailedColor);
    p.failed->setBorderColor(QColor(0x40, 0x00, 0x00));
    p.failed->setLightMarker(marker);
  }
  p.chart->addSeries(p.failed);
  attach(p, p.failed);
  // The theme recolours a series when it is added.
  p.failed->setColor(kFailedColor);
  p.failed->setBorderColor(QColor(0x40, 0x00, 0x00));
}

// y range of a linear axis: 0 .. a multiple of a 1/2/2.5/5 step, at most 10 intervals
// (applyNiceNumbers overshoots).
void linearRange(QValueAxis* y, double top) {
  if (!(top > 0) || !std::isfinite(top)) top = 1.0;
  double step = std::pow(10.0, std::floor(std::log10(top / 10)));
  for (double f : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (top / (step * f) <= 10) {
      step *= f;
      break;
    }
  const int intervals = std::max(1, int(std::ceil(top / step - 1e-9)));
  y->setRange(0, intervals * step);
  y->setTickCount(intervals + 1);
}

// Bottom-left and top-right of the data, over visible series (all when none is visible).
void applyRanges(Parts& p, const Model& model) {
  double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min;
  double y_min = x_min, y_max = -x_min;
  std::vector<std::vector<Point>> pts(model.series.size());
  for (size_t i = 0; i < model.series.size(); ++i) pts[i] = plotted(model, i);
  const bool failed = failedShown(model);
  bool any_visible = model.failed_visible && failed;
  for (size_t i = 0; i < model.series.size(); ++i)
    any_visible = any_visible || (model.series[i].visible && !pts[i].empty());
  for (size_t i = 0; i < model.series.size(); ++i) {
    if (any_visible && !model.series[i].visible) continue;
    for (const auto& pt : pts[i]) {
      x_min = std::min(x_min, pt.x);
      x_max = std::max(x_max, pt.x);
      y_min = std::min({y_min, pt.lo, pt.y});
      y_max = std::max({y_max, pt.hi, pt.y});
    }
  }
  if (model.metric != Metric::RelativeTime)  // a baseline drawn beside a visible series stays in view
    for (const SeriesData& o : model.overlay)
      for (const SeriesData& sd : model.series)
        if (sd.visible && o.name == sd.name + ChartPanel::overlaySuffix())
          for (const auto& pt : plotted(model, o)) {
            x_min = std::min(x_min, pt.x);
            x_max = std::max(x_max, pt.x);
            y_min = std::min(y_min, pt.y);
            y_max = std::max(y_max, pt.y);
          }
  if (failed && (!any_visible || model.failed_visible))
    for (const auto& f : model.failed) {
      x_min = std::min(x_min, f.x);
      x_max = std::max(x_max, f.x);
    }
  const bool relative = model.metric == Metric::RelativeTime;
  if (relative && p.reference) {  // the reference line at 1 is always in view
    y_min = std::min(y_min, 1.0);
    y_max = std::max(y_max, 1.0);
  }

  // Nothing plotted (relative time without a baseline point): x still spans the measured sizes.
  if (!std::isfinite(x_min)) {
    for (const auto& sd : model.series)
      for (const auto& smp : sd.samples) {
        x_min = std::min(x_min, smp.x);
        x_max = std::max(x_max, smp.x);
      }
    for (const auto& f : model.failed) {
      x_min = std::min(x_min, f.x);
      x_max = std::max(x_max, f.x);
    }
  }
  // x: log2 with a quarter octave of margin, always containing a power of two (a labelled tick).
  if (!(x_min > 0) || !std::isfinite(x_max)) x_min = 64, x_max = 4096;
  double lo = std::log2(x_min) - 0.25, hi = std::log2(x_max) + 0.25;
  if (std::floor(hi) < std::ceil(lo)) {
    if (lo - std::floor(lo) < std::ceil(hi) - hi)
      lo = std::floor(lo);
    else
      hi = std::ceil(hi);
  }
  auto* x = static_cast<QLogValueAxis*>(p.x);
  x->setRange(std::exp2(lo), std::exp2(hi));
  applyXLabels(p.chart, x, p.x_labels);
  const QString x_title = xAxisTitle(model);
  if (x->titleText() != x_title) {
    x->setTitleText(x_title);
    p.x_labels->setTitleText(x_title);
  }
  if (p.reference) p.reference->replace(QList<QPointF>{QPointF(x->min(), 1.0), QPointF(x->max(), 1.0)});

  const bool have_y = std::isfinite(y_min) && std::isfinite(y_max);
  if (!yIsLog(model)) {
    auto* y = static_cast<QValueAxis*>(p.y);
    linearRange(y, have_y ? y_max * 1.06 : 1.0);
    p.y_failed = y->min() + kFailedRow * (y->max() - y->min());
  } else {
    // y: log10; room below the lowest point for the failed markers, never <= 0.
    if (!have_y) {
      y_min = model.metric == Metric::Time ? 0.01 : 0.1;
      y_max = model.metric == Metric::Time ? 100 : 10;
    }
    if (!(y_max > 0)) y_max = 100;
    if (!(y_min > 0)) y_min = y_max / 100;
    const double l0 = std::log10(y_min), l1 = std::log10(std::max(y_max, y_min));
    const double span = std::max(l1 - l0, 0.5);
    const double ylo = l0 - 0.10 * span, yhi = l1 + 0.06 * span;  // >= 0.58 decades: a power of 2 inside
    // Under 2.5 decades base 10 labels too few ticks: label every power of 2 instead.
    auto* y = static_cast<QLogValueAxis*>(p.y);
    const bool decades = yhi - ylo >= 2.5;
    y->setBase(decades ? 10 : 2);
    y->setMinorTickCount(decades ? 8 : 1);
    y->setRange(std::pow(10.0, ylo), std::pow(10.0, yhi));
    p.y_failed = std::pow(10.0, ylo + kFailedRow * (yhi - ylo));
  }
}

void updateFailed(Parts& p, const Model& model) {
  if (!p.failed) return;
  QList<QPointF> pts;
  if (failedShown(model))
    for (const auto& f : model.failed) pts.append(QPointF(f.x, p.y_failed));
  std::sort(pts.begin(), pts.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
  p.failed->replace(pts);
}

// Bottom when every entry fits on one row, else right: a bottom legend does not wrap, it elides.
void placeLegend(Parts& p, double chart_width) {
  QLegend* legend = p.chart->legend();
  const QFontMetricsF fm(legend->font());
  double need = 0;
  for (QLegendMarker* mk : legend->markers()) {
    if (p.auxiliary(mk->series())) continue;
    need += fm.horizontalAdvance(mk->label()) + 2.5 * fm.height() + 8;
  }
  const Qt::Alignment want = need <= 0.92 * chart_width ? Qt::AlignBottom : Qt::AlignRight;
  if (legend->alignment() != want) legend->setAlignment(want);
}

void styleMarker(QLegendMarker* mk, const QColor& color, bool visible) {
  mk->setVisible(true);  // a hidden series keeps its legend entry, dimmed, to be clicked back on
  mk->setLabelBrush(visible ? kLabelColor : kHiddenLabelColor);
  QColor c = color;
  if (!visible) c.setAlpha(60);
  mk->setBrush(c);
  mk->setPen(QPen(c));
}

void applyVisibility(Parts& p, const Model& model) {
  for (size_t i = 0; i < model.series.size() && i < p.lines.size(); ++i) {
    const bool v = model.series[i].visible;
    // The legend draws a line series' entry with its pen: dim the pen of a hidden series.
    QPen pen = p.lines[i].line->pen();
    QColor c = model.series[i].color;
    if (!v) c.setAlpha(70);
    if (pen.color() != c) {
      pen.setColor(c);
      p.lines[i].line->setPen(pen);
    }
    p.lines[i].line->setVisible(v);
    p.lines[i].band->setVisible(v);
    hideMarkers(p, p.lines[i].band);
    for (QLineSeries* bar : p.lines[i].bars) {
      bar->setVisible(v);
      hideMarkers(p, bar);
    }
    for (QLegendMarker* mk : p.chart->legend()->markers(p.lines[i].line)) styleMarker(mk, model.series[i].color, v);
  }
  for (QLineSeries* o : p.overlays)
    for (size_t i = 0; i < model.series.size(); ++i)
      if (o->name() == model.series[i].name + ChartPanel::overlaySuffix()) o->setVisible(model.series[i].visible);
  if (p.reference) hideMarkers(p, p.reference);
  if (p.failed) {
    p.failed->setVisible(model.failed_visible);
    for (QLegendMarker* mk : p.chart->legend()->markers(p.failed)) styleMarker(mk, kFailedColor, model.failed_visible);
  }
}

// Builds every Qt object of the model on an empty chart.
void populate(Parts& p, const Model& model, const QImage& failed_marker) {
  // Drawn first, under the data.
  if (model.metric == Metric::RelativeTime && !model.baseline.isEmpty()) addReference(p, model);
  for (size_t i = 0; i < model.series.size(); ++i) {
    addLine(p, model.series[i]);
    updateLine(p, i, model);
  }
  if (model.metric != Metric::RelativeTime)
    for (const SeriesData& o : model.overlay) {
      const auto match = std::find_if(model.series.begin(), model.series.end(), [&](const SeriesData& sd) {
        return o.name == sd.name + ChartPanel::overlaySuffix();
      });
      if (match == model.series.end()) continue;
      auto* line = new QLineSeries;
      line->setName(o.name);
      p.chart->addSeries(line);
      attach(p, line);
      line->setPen(QPen(match->color, 1.6, Qt::DashLine, Qt::FlatCap, Qt::RoundJoin));
      line->setPointsVisible(true);
      line->setMarkerSize(3);
      QList<QPointF> pts;
      for (const auto& pt : plotted(model, o)) pts.append(QPointF(pt.x, pt.y));
      line->replace(pts);
      p.overlays.push_back(line);
    }
  if (!model.failed.empty()) ensureFailedSeries(p, failed_marker, true);
  applyRanges(p, model);
  updateFailed(p, model);
  applyVisibility(p, model);
}

QString fmtTime(double ns) {
  if (!std::isfinite(ns)) return QStringLiteral("-");
  const double a = std::abs(ns);
  if (a >= 1e9) return QString::number(ns / 1e9, 'g', 6) + QStringLiteral(" s");
  if (a >= 1e6) return QString::number(ns / 1e6, 'g', 6) + QStringLiteral(" ms");
  if (a >= 1e3) return QString::number(ns / 1e3, 'g', 6) + QString::fromUtf8(" \u00b5s");
  return QString::number(ns, 'g', 6) + QStringLiteral(" ns");
}

QString fmtGflops(double g) { return QString::number(g, 'f', g >= 100 ? 1 : 3); }

// A chart built from the model in its own scene, laid out at `size`, for export.
class ExportChart {
 public:
  ExportChart(const Model& model, const QImage& failed_marker, QSize size) {
    initChart(parts_, model);
    scene_.addItem(parts_.chart);
    parts_.chart->setGeometry(QRectF(QPointF(0, 0), QSizeF(size)));
    populate(parts_, model, failed_marker);
    placeLegend(parts_, size.width());
    if (parts_.chart->layout()) parts_.chart->layout()->activate();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    if (parts_.chart->layout()) parts_.chart->layout()->activate();
  }
  void render(QPainter* painter, QSize size) {
    const QRectF r(QPointF(0, 0), QSizeF(size));
    painter->setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
    scene_.render(painter, r, parts_.chart->geometry(), Qt::IgnoreAspectRatio);
  }

 private:
  QGraphicsScene scene_;  // owns the chart
  Parts parts_;
};

}  // namespace

double sizeAxisValue(const ks::ProblemSize& s) { return ks::problemScale(s); }

QString seriesName(const ks::PlanItem& item) {
  // A custom workload's kernel cannot be checked: its series says so in the legend.
  const auto* k = ks::Registry::instance().find(item.kernel);
  const QString suffix = k && k->workload == "custom" ? QStringLiteral(" (unverified)") : QString();
  return QString::fromStdString(ks::seriesKey(item)) + suffix;
}

QString measurementToolTip(const ks::Measurement& m) {
  const auto& s = m.item.size;
  const auto* k = ks::Registry::instance().find(m.item.kernel);
  const bool with_wg = k ? k->uses_workgroup : m.item.params.wg.invocations() > 1;
  QStringList lines;
  lines << QString::fromStdString(m.item.kernel);
  const std::string params = m.item.params.str(with_wg);
  if (params != "-") lines << QStringLiteral("params: ") + QString::fromStdString(params);
  QString size = QStringLiteral("size: %1x%2x%3").arg(s.m).arg(s.n).arg(s.k);
  if (!(s.m == s.n && s.n == s.k) && sizeDims(s) > 1)  // a dot product's x is its N
    size += QStringLiteral("  (x = %1)").arg(sizeAxisValue(s), 0, 'f', 1);
  lines << size;
  if (m.status != ks::PointStatus::Ok) {
    QString st = QStringLiteral("status: ") + QString::fromStdString(ks::pointStatusName(m.status));
    if (!m.error.empty()) st += QStringLiteral(" \u2014 ") + QString::fromStdString(m.error);
    lines << st;
  }
  if (m.stats.count > 0) {
    lines << QStringLiteral("median %1   min %2   max %3")
                 .arg(fmtTime(m.stats.median), fmtTime(m.stats.min), fmtTime(m.stats.max));
    lines << QStringLiteral("GFLOPS %1   (band %2 .. %3)")
                 .arg(fmtGflops(m.gflops), fmtGflops(m.stats.max > 0 ? kernelFlops(m) / m.stats.max : 0),
                      fmtGflops(m.stats.min > 0 ? kernelFlops(m) / m.stats.min : 0));
    if (m.gbps > 0) {
      const double bytes = m.gbps * m.stats.median;
      lines << QStringLiteral("GB/s %1   (band %2 .. %3)")
                   .arg(fmtGflops(m.gbps), fmtGflops(m.stats.max > 0 ? bytes / m.stats.max : 0),
                        fmtGflops(m.stats.min > 0 ? bytes / m.stats.min : 0));
    }
    QString cv = QStringLiteral("CV %1 %   %2 samples").arg(m.stats.cv * 100, 0, 'f', 2).arg(m.stats.count);
    if (!m.clock.empty()) cv += QStringLiteral(" (") + QString::fromStdString(m.clock) + QLatin1Char(')');
    if (!m.stop_reason.empty()) cv += QStringLiteral(", stopped: ") + QString::fromStdString(m.stop_reason);
    lines << cv;
    if (m.stats.count >= 6)
      lines << QStringLiteral("median 95% CI %1 .. %2 (±%3 %)   IQR %4   outliers %5 (kept)")
                   .arg(fmtTime(m.stats.ci_low), fmtTime(m.stats.ci_high))
                   .arg(m.stats.ciRelative() * 100, 0, 'f', 2)
                   .arg(fmtTime(m.stats.iqr))
                   .arg(m.stats.outliers);
    if (m.input_sets > 1)
      lines << QStringLiteral("inputs rotated among %1 copies (the sweep's cache size touched between reuses)")
                   .arg(m.input_sets);
    if (m.cache_resident) lines << QStringLiteral("CACHE-RESIDENT: its data fits in the cache between reuses");
  }
  const auto& v = m.verification;
  QString ver = QStringLiteral("verification: ") + QString::fromStdString(ks::verifyStatusName(v.status));
  if (v.status != ks::VerifyStatus::Skipped)
    ver += QStringLiteral(", rel error %1, max error %2, tolerance %3")
               .arg(v.rel_error, 0, 'g', 3)
               .arg(v.max_error, 0, 'g', 3)
               .arg(v.tolerance, 0, 'g', 3);
  lines << ver;
  if (!v.note.empty() && v.status != ks::VerifyStatus::Ok) lines << QString::fromStdString(v.note);
  return lines.join(QLatin1Char('\n'));
}

struct ChartPanel::Impl {
  ChartPanel* panel = nullptr;
  Model model;
  Parts live;
  QChartView* view = nullptr;
  QImage failed_marker = failedMarkerImage();

  void connectSeries(size_t i) {
    QLineSeries* line = live.lines[i].line;
    QObject::connect(line, &QXYSeries::hovered, panel,
                     [this, line](const QPointF& pt, bool state) { hoverLine(line, pt, state); });
    for (QLegendMarker* mk : live.chart->legend()->markers(line))
      QObject::connect(mk, &QLegendMarker::clicked, panel, [this, line] { toggle(line); });
  }

  void connectFailed() {
    QObject::disconnect(live.failed, nullptr, panel, nullptr);  // it may be re-added
    QObject::connect(live.failed, &QXYSeries::hovered, panel,
                     [this](const QPointF& pt, bool state) { hoverFailed(pt, state); });
    for (QLegendMarker* mk : live.chart->legend()->markers(live.failed))
      QObject::connect(mk, &QLegendMarker::clicked, panel, [this] { toggle(live.failed); });
  }

  void toggle(QAbstractSeries* series) {
    if (series == live.failed) {
      model.failed_visible = !model.failed_visible;
    } else {
      for (size_t i = 0; i < live.lines.size(); ++i)
        if (live.lines[i].line == series) model.series[i].visible = !model.series[i].visible;
    }
    applyVisibility(live, model);
    applyRanges(live, model);
    updateFailed(live, model);
  }

  double screenDistance(QAbstractSeries* s, const QPointF& a, const QPointF& b) const {
    const QPointF d = live.chart->mapToPosition(a, s) - live.chart->mapToPosition(b, s);
    return std::hypot(d.x(), d.y());
  }

  void hoverLine(QLineSeries* line, const QPointF& pt, bool state) {
    if (!state) return QToolTip::hideText();
    size_t i = 0;
    while (i < live.lines.size() && live.lines[i].line != line) ++i;
    if (i == live.lines.size()) return;
    const std::vector<Point> pts = plotted(model, i);
    const Point* best = nullptr;
    double best_d = kHoverRadiusPx;
    for (const auto& p : pts) {
      const double d = screenDistance(line, QPointF(p.x, p.y), pt);
      if (d <= best_d) best_d = d, best = &p;
    }
    if (!best) return QToolTip::hideText();
    QString text = measurementToolTip(*best->m);
    if (model.metric == Metric::RelativeTime)
      text += QStringLiteral("\ntime relative to %1: %2").arg(model.baseline).arg(best->y, 0, 'f', 3);
    QToolTip::showText(QCursor::pos(), text, view);
  }

  void hoverFailed(const QPointF& pt, bool state) {
    if (!state) return QToolTip::hideText();
    const FailedPoint* best = nullptr;
    double best_d = kHoverRadiusPx;
    for (const auto& f : model.failed) {
      const double d = screenDistance(live.failed, QPointF(f.x, live.y_failed), pt);
      if (d <= best_d) best_d = d, best = &f;
    }
    if (!best) return QToolTip::hideText();
    // Failed points at one size may overlap: list them all.
    QStringList texts;
    for (const auto& f : model.failed)
      if (f.x == best->x) texts << measurementToolTip(f.m);
    QToolTip::showText(QCursor::pos(), texts.join(QStringLiteral("\n\n")), view);
  }

  void rebuild() {
    QChart* old = live.chart;
    live = Parts{};
    initChart(live, model);
    populate(live, model, failed_marker);
    view->setChart(live.chart);  // takes the new chart, releases (does not delete) the old one
    delete old;
    placeLegend(live, view->width());
    for (size_t i = 0; i < live.lines.size(); ++i) connectSeries(i);
    if (live.failed) connectFailed();
  }
};

ChartPanel::ChartPanel(ChartKind kind, QWidget* parent)
    : ChartPanel(kind == ChartKind::Time ? Metric::Time : Metric::Gflops, parent) {}

ChartPanel::ChartPanel(Metric metric, QWidget* parent) : QWidget(parent), d_(std::make_unique<Impl>()) {
  d_->panel = this;
  d_->model.metric = metric;
  d_->view = addChartView(this);
  d_->rebuild();
}

ChartPanel::~ChartPanel() = default;

ChartKind ChartPanel::kind() const { return d_->model.metric == Metric::Time ? ChartKind::Time : ChartKind::Gflops; }

void ChartPanel::setMetric(Metric m) {
  if (d_->model.metric == m) return;
  d_->model.metric = m;
  d_->rebuild();
}

Metric ChartPanel::metric() const { return d_->model.metric; }

void ChartPanel::setLogY(bool on) {
  if (d_->model.log_y == on) return;
  d_->model.log_y = on;
  if (d_->model.metric != Metric::Time) d_->rebuild();
}

bool ChartPanel::logY() const { return d_->model.log_y; }

void ChartPanel::setBaseline(const QString& seriesName) {
  if (d_->model.baseline == seriesName) return;
  d_->model.baseline = seriesName;
  if (d_->model.metric == Metric::RelativeTime) d_->rebuild();
}

QString ChartPanel::baseline() const { return d_->model.baseline; }

void ChartPanel::clear() {
  d_->model.series.clear();
  d_->model.failed.clear();
  d_->model.failed_visible = true;
  d_->rebuild();
}

ks::Measurement endToEndMeasurement(const ks::Measurement& m) {
  ks::Measurement e = m;
  // The kernel's samples plus the median upload and download: the band keeps the kernel's spread.
  const double transfer = m.transferNs();
  for (double& ns : e.samples_ns) ns += transfer;
  e.wall_ns.clear();
  e.stats = ks::computeStats(e.samples_ns);
  if (e.stats.median > 0) {
    e.gflops = m.gflops * m.stats.median / e.stats.median;
    e.gbps = m.gbps * m.stats.median / e.stats.median;
  }
  e.parts.clear();
  return e;
}

void ChartPanel::addMeasurement(const ks::Measurement& m) {
  if (m.status == ks::PointStatus::Skipped || m.status == ks::PointStatus::Cancelled) return;
  Model& model = d_->model;
  Parts& live = d_->live;
  const double x = sizeAxisValue(m.item.size);
  if (!(x > 0)) return;

  if (!m.timed()) {
    model.failed.push_back({x, m});
    if (!live.failed) {
      ensureFailedSeries(live, d_->failed_marker, true);
      d_->connectFailed();
    }
    applyRanges(live, model);
    updateFailed(live, model);
    applyVisibility(live, model);
    placeLegend(live, d_->view->width());
    return;
  }

  // One point into the series `name` (made on first use; `like` gives its colour and line style).
  auto addTo = [&](const ks::Measurement& m, const QString& name, const SeriesData* like) {
    size_t i = 0;
    while (i < model.series.size() && model.series[i].name != name) ++i;
    if (i == model.series.size()) {
      SeriesData sd;
      sd.name = name;
      sd.color = like ? like->color : kPalette[i % kPaletteSize];
      sd.style = like ? Qt::DotLine : kStyles[(i / kPaletteSize) % 4];
      model.series.push_back(sd);
      const bool has_overlay = std::any_of(model.overlay.begin(), model.overlay.end(),
                                           [&](const SeriesData& o) { return o.name == name + overlaySuffix(); });
      if (has_overlay) {  // its baseline appears with it: build the chart again (new series are rare)
        model.series[i].samples.push_back(Sample{x, m});
        d_->rebuild();
        return i;
      }
      addLine(live, model.series[i]);
      d_->connectSeries(i);
      if (live.failed) {  // keep "failed / unverified" last in the legend
        ensureFailedSeries(live, d_->failed_marker, true);
        d_->connectFailed();
      }
    }
    auto& samples = model.series[i].samples;
    // A re-measured point (same size) replaces the old one; others are kept in x order.
    auto same = std::find_if(samples.begin(), samples.end(),
                             [&](const Sample& s) { return sameSize(s.m.item.size, m.item.size); });
    if (same != samples.end()) samples.erase(same);
    samples.insert(
        std::upper_bound(samples.begin(), samples.end(), x, [](double v, const Sample& s) { return v < s.x; }),
        Sample{x, m});

    if (model.metric == Metric::RelativeTime && name == model.baseline) {  // every ratio at this size changes
      for (size_t j = 0; j < model.series.size(); ++j) updateLine(live, j, model);
    } else {
      updateLine(live, i, model);
    }
    applyRanges(live, model);
    updateFailed(live, model);
    applyVisibility(live, model);
    placeLegend(live, d_->view->width());
    return i;
  };
  const size_t kernel_series = addTo(m, seriesName(m.item), nullptr);
  // With transfers measured, the end-to-end time beside the kernel-only one, dotted in the same colour.
  if (m.hasTransfers()) {
    const SeriesData like = model.series[kernel_series];
    addTo(endToEndMeasurement(m), seriesName(m.item) + endToEndSuffix(), &like);
  }
}

void ChartPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  placeLegend(d_->live, d_->view->width());
}

QString ChartPanel::endToEndSuffix() { return QStringLiteral(" (end to end)"); }

QString ChartPanel::overlaySuffix() { return QStringLiteral(" (baseline)"); }

void ChartPanel::setOverlay(const std::vector<ks::Measurement>& baseline) {
  Model& model = d_->model;
  model.overlay.clear();
  for (const auto& m : baseline) {
    if (!m.timed()) continue;  // a failed baseline point is no reference
    const double x = sizeAxisValue(m.item.size);
    if (!(x > 0)) continue;
    const QString name = seriesName(m.item) + overlaySuffix();
    auto it =
        std::find_if(model.overlay.begin(), model.overlay.end(), [&](const SeriesData& sd) { return sd.name == name; });
    if (it == model.overlay.end()) {
      model.overlay.push_back({});
      it = model.overlay.end() - 1;
      it->name = name;
      it->style = Qt::DashLine;
    }
    auto& samples = it->samples;
    samples.insert(
        std::upper_bound(samples.begin(), samples.end(), x, [](double v, const Sample& smp) { return v < smp.x; }),
        Sample{x, m});
  }
  d_->rebuild();
}

void ChartPanel::clearOverlay() {
  if (d_->model.overlay.empty()) return;
  d_->model.overlay.clear();
  d_->rebuild();
}

QStringList ChartPanel::overlayNames() const {
  QStringList names;
  for (const QLineSeries* o : d_->live.overlays) names << o->name();
  return names;
}

void ChartPanel::setMeasurements(const std::vector<ks::Measurement>& ms) {
  clear();
  for (const auto& m : ms) addMeasurement(m);
}

QChart* ChartPanel::chart() const { return d_->live.chart; }

QChartView* ChartPanel::view() const { return d_->view; }

QStringList ChartPanel::seriesNames() const {
  QStringList names;
  for (QLegendMarker* mk : d_->live.chart->legend()->markers()) {
    QAbstractSeries* s = mk->series();
    if (s && !d_->live.auxiliary(s) && !names.contains(s->name())) names << s->name();
  }
  return names;
}

QList<QPointF> ChartPanel::seriesPoints(const QString& name) const {
  const Parts& live = d_->live;
  if (live.failed && name == failedSeriesName()) return live.failed->points();
  for (const auto& l : live.lines)
    if (l.line->name() == name) return l.line->points();
  for (const QLineSeries* o : live.overlays)
    if (o->name() == name) return o->points();
  return {};
}

QList<QPointF> ChartPanel::errorBars(const QString& name) const {
  QList<QPointF> out;
  for (const auto& l : d_->live.lines)
    if (l.line->name() == name)
      for (const QLineSeries* bar : l.bars) out.append(QPointF(bar->at(2).y(), bar->at(3).y()));  // the stem
  return out;
}

int ChartPanel::failedPointCount() const { return int(d_->model.failed.size()); }

QString ChartPanel::failedSeriesName() { return QStringLiteral("failed / unverified"); }

QString ChartPanel::exportPng(const QString& path, QSize size, qreal scale) const {
  return writeChartPng(path, size, scale, [&](QPainter& painter) {
    ExportChart copy(d_->model, d_->failed_marker, size);
    copy.render(&painter, size);
  });
}

QString ChartPanel::exportSvg(const QString& path, QSize size) const {
  if (QString why = checkExportArgs(path, size); !why.isEmpty()) return why;
  QFile file(path);
  if (QString why = openForWrite(file); !why.isEmpty()) return why;
  QSvgGenerator generator;
  generator.setOutputDevice(&file);
  generator.setSize(size);
  generator.setViewBox(QRect(QPoint(0, 0), size));
  generator.setResolution(qRound(layoutDpi()));
  generator.setTitle(d_->live.chart->title());
  generator.setDescription(QStringLiteral("kernelscope chart"));
  {
    ExportChart copy(d_->model, d_->failed_marker, size);
    QPainter painter;
    if (!painter.begin(&generator)) {
      file.close();
      file.remove();
      return QStringLiteral("cannot write %1: the SVG painter did not start").arg(path);
    }
    painter.fillRect(QRect(QPoint(0, 0), size), Qt::white);
    copy.render(&painter, size);
    painter.end();
  }
  if (file.error() != QFileDevice::NoError) return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
  return {};
}

}  // namespace ks::ui
