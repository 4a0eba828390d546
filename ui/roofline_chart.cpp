#include "ui/roofline_chart.h"

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
#include <QPointer>
#include <QScatterSeries>
#include <QScreen>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "engine/bench/complexity.h"
#include "engine/bench/report.h"
#include "engine/bench/roofline.h"
#include "engine/kernels/registry.h"
#include "ui/chart_export.h"

namespace ks::ui {

namespace {

constexpr double kHoverRadiusPx = 14;
constexpr double kMargin = 1.5;  // data at least this factor inside the axis ends

// Qualitative colours, red left out (as ChartPanel).
const QColor kPalette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                           QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2),
                           QColor(0x17, 0xbe, 0xcf), QColor(0x7f, 0x7f, 0x7f), QColor(0xbc, 0xbd, 0x22),
                           QColor(0x39, 0x3b, 0x79)};
constexpr int kPaletteSize = int(sizeof(kPalette) / sizeof(kPalette[0]));
// GPU series take the next shape once the palette has gone round (gemm.naive and gemm.coopmat must
// not look alike); CPU series are always triangles.
const QScatterSeries::MarkerShape kGpuShapes[] = {
    QScatterSeries::MarkerShapeCircle, QScatterSeries::MarkerShapeRotatedRectangle,
    QScatterSeries::MarkerShapeRectangle, QScatterSeries::MarkerShapePentagon, QScatterSeries::MarkerShapeStar};
constexpr int kGpuShapeCount = int(sizeof(kGpuShapes) / sizeof(kGpuShapes[0]));
const QColor kLabelColor(0x20, 0x20, 0x20);
const QColor kMemoryColor(0x45, 0x5a, 0x64);
const QColor kComputeColor(0x10, 0x10, 0x10);
// The host CPU's roofs: dashed, in maroon (no point series takes it), apart from the device's.
const QColor kCpuMemoryColor(0xb0, 0x3a, 0x4e);
const QColor kCpuComputeColor(0x7a, 0x10, 0x28);
const QColor kNoteColor(0x9a, 0x67, 0x00);

struct Entry {
  double x = 0, y = 0;
  ks::Measurement m;
};

struct PointSeries {
  QString name;
  QColor color;
  QScatterSeries::MarkerShape shape = QScatterSeries::MarkerShapeCircle;
  bool cpu = false;
  std::vector<Entry> entries;  // in x order
};

struct Ceiling {
  QString name;  // empty: no legend entry (the dashed continuation of the memory roof)
  QList<QPointF> points;
  QPen pen;
};

// What the chart shows, independent of the Qt objects that show it.
struct Model {
  std::vector<PointSeries> series;
  std::optional<ks::DevicePeaks> peaks;
  double bandwidth = 0, fp32 = 0, fp16 = 0, coopmat = 0;  // the device's measured peaks, 0 = not measured
  double cpu_bandwidth = 0, cpu_fp32 = 0;                 // the host CPU's

  bool hasGpuCeilings() const { return bandwidth > 0 || fp32 > 0 || fp16 > 0 || coopmat > 0; }
  bool hasCpuCeilings() const { return cpu_bandwidth > 0 || cpu_fp32 > 0; }
  bool hasCeilings() const { return hasGpuCeilings() || hasCpuCeilings(); }
  bool hasPoints(bool cpu) const {
    return std::any_of(series.begin(), series.end(), [&](const PointSeries& s) { return s.cpu == cpu; });
  }
  double ridge() const { return bandwidth > 0 && fp32 > 0 ? fp32 / bandwidth : 0; }
  double cpuRidge() const { return cpu_bandwidth > 0 && cpu_fp32 > 0 ? cpu_fp32 / cpu_bandwidth : 0; }
};

QString noteOf(const Model& model) {
  if (!model.hasCeilings()) return RooflineChart::tr("No measured peaks: Measure peaks to draw the ceilings");
  // Peaks from before the host CPU was measured (or from a session without a device): one side has no roof.
  if (!model.hasCpuCeilings() && model.hasPoints(true))
    return RooflineChart::tr(
        "No host CPU peaks in this session: CPU points have no roof (measure peaks again to add them)");
  if (!model.hasGpuCeilings() && model.hasPoints(false))
    return RooflineChart::tr("No device peaks in this session: GPU points have no roof");
  return {};
}

QString peakText(double value, const char* unit) {
  ks::PeakResult r;
  r.value = value;
  r.unit = unit;
  return QString::fromStdString(ks::formatPeakValue(r));
}

struct Range {
  double x_lo = 0.1, x_hi = 1000, y_lo = 1, y_hi = 1e5;
};

// A power of ten at or below v / margin, or at or above v * margin: the axis ends on labelled ticks.
// A hair outside it: QLogValueAxis labels from ceil(log(min) / log(base)) to floor(log(max) / ...),
// and log(0.1) / log(10) is -0.99999...: the label at the end would be left out.
constexpr double kNudge = 1e-9;
double decadeBelow(double v) { return std::pow(10.0, std::floor(std::log10(v / kMargin))) * (1 - kNudge); }
double decadeAbove(double v) { return std::pow(10.0, std::ceil(std::log10(v * kMargin))) * (1 + kNudge); }

Range rangeOf(const Model& model) {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  const auto addX = [&](double x) { x0 = std::min(x0, x), x1 = std::max(x1, x); };
  const auto addY = [&](double y) { y0 = std::min(y0, y), y1 = std::max(y1, y); };
  for (const auto& s : model.series)
    for (const auto& e : s.entries) addX(e.x), addY(e.y);
  const double bw = model.bandwidth;
  for (double c : {model.fp32, model.fp16, model.coopmat})
    if (c > 0) {
      addY(c);
      if (bw > 0) addX(c / bw);  // every ridge in view
    }
  if (model.cpu_fp32 > 0) {
    addY(model.cpu_fp32);
    if (model.cpu_bandwidth > 0) addX(model.cpuRidge());
  }
  Range r;
  if (!std::isfinite(x0)) {  // nothing at all, or compute peaks only
    x0 = 1, x1 = 100;
  }
  r.x_lo = decadeBelow(x0);
  r.x_hi = decadeAbove(x1);
  if (bw > 0) {  // the memory roof from the bottom-left corner
    addY(bw * r.x_lo);
    if (!(model.fp32 > 0)) addY(bw * r.x_hi);
  }
  if (model.cpu_bandwidth > 0) {
    addY(model.cpu_bandwidth * r.x_lo);
    if (!(model.cpu_fp32 > 0)) addY(model.cpu_bandwidth * r.x_hi);
  }
  if (!std::isfinite(y0)) y0 = 1, y1 = 1000;
  r.y_lo = decadeBelow(y0);
  r.y_hi = decadeAbove(y1);
  return r;
}

// The ceilings in legend order, laid out over the axis range: the device's (solid; named "GPU: ..."
// when the host CPU's are drawn too), then the host CPU's ("CPU: ...", dashed).
std::vector<Ceiling> ceilingsOf(const Model& model, const Range& r) {
  std::vector<Ceiling> out;
  const double bw = model.bandwidth, fp32 = model.fp32, ridge = model.ridge();
  const QString gpu = model.hasCpuCeilings() ? RooflineChart::tr("GPU: ") : QString();
  if (bw > 0) {
    const double end = fp32 > 0 ? ridge : r.x_hi;
    out.push_back({RooflineChart::ceilingName(gpu + RooflineChart::tr("memory"), bw, QStringLiteral("GB/s")),
                   {QPointF(r.x_lo, bw * r.x_lo), QPointF(end, bw * end)},
                   QPen(kMemoryColor, 2.6, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin)});
  }
  if (fp32 > 0)
    out.push_back({RooflineChart::ceilingName(gpu + RooflineChart::tr("fp32 FMA"), fp32, QStringLiteral("GFLOP/s")),
                   {QPointF(bw > 0 ? ridge : r.x_lo, fp32), QPointF(r.x_hi, fp32)},
                   QPen(kComputeColor, 2.6, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin)});
  const struct {
    QString what;
    double value;
    Qt::PenStyle style;
  } extra[] = {{gpu + RooflineChart::tr("fp16 FMA"), model.fp16, Qt::DashDotLine},
               {gpu + RooflineChart::tr("coopmat fp16→fp32"), model.coopmat, Qt::DashLine}};
  double top = 0;
  for (const auto& e : extra) {
    if (!(e.value > 0)) continue;
    out.push_back({RooflineChart::ceilingName(e.what, e.value, QStringLiteral("GFLOP/s")),
                   {QPointF(bw > 0 ? e.value / bw : r.x_lo, e.value), QPointF(r.x_hi, e.value)},
                   QPen(kComputeColor, 1.8, e.style, Qt::FlatCap, Qt::RoundJoin)});
    top = std::max(top, e.value);
  }
  // The memory roof goes on up to the highest compute roof's ridge, dashed, beyond fp32's ridge.
  if (bw > 0 && fp32 > 0 && top > fp32) {
    QPen pen(kMemoryColor, 1.4, Qt::DotLine, Qt::FlatCap);
    out.push_back({QString(), {QPointF(ridge, fp32), QPointF(top / bw, top)}, pen});
  }
  const double cpu_bw = model.cpu_bandwidth, cpu_fp32 = model.cpu_fp32, cpu_ridge = model.cpuRidge();
  if (cpu_bw > 0) {
    const double end = cpu_fp32 > 0 ? cpu_ridge : r.x_hi;
    out.push_back({RooflineChart::ceilingName(RooflineChart::tr("CPU: memory"), cpu_bw, QStringLiteral("GB/s")),
                   {QPointF(r.x_lo, cpu_bw * r.x_lo), QPointF(end, cpu_bw * end)},
                   QPen(kCpuMemoryColor, 2.2, Qt::DashLine, Qt::FlatCap, Qt::RoundJoin)});
  }
  if (cpu_fp32 > 0)
    out.push_back({RooflineChart::ceilingName(RooflineChart::tr("CPU: fp32 FMA"), cpu_fp32, QStringLiteral("GFLOP/s")),
                   {QPointF(cpu_bw > 0 ? cpu_ridge : r.x_lo, cpu_fp32), QPointF(r.x_hi, cpu_fp32)},
                   QPen(kCpuComputeColor, 2.2, Qt::DashLine, Qt::FlatCap, Qt::RoundJoin)});
  return out;
}

QString measurementText(const ks::Measurement& m, double intensity, const ks::DevicePeaks* peaks) {
  const auto* k = ks::Registry::instance().find(m.item.kernel);
  QStringList lines;
  lines << QString::fromStdString(m.item.kernel);
  const std::string params = m.item.params.str(!k || k->uses_workgroup);
  if (params != "-") lines << RooflineChart::tr("params: %1").arg(QString::fromStdString(params));
  lines << RooflineChart::tr("size: %1").arg(QString::fromStdString(m.item.size.str()));
  lines << RooflineChart::tr("intensity: %1 FLOP/byte").arg(intensity, 0, 'g', 4);
  lines << RooflineChart::tr("%1 GFLOP/s   (median %2)")
               .arg(m.gflops, 0, 'f', m.gflops >= 100 ? 0 : 2)
               .arg(QString::fromStdString(ks::formatDuration(m.stats.median)));
  if (peaks) {
    const auto f = ks::fractionOfPeak(m, *peaks);
    const auto c = k ? ks::ceilingFor(*k, m.item.params, *peaks) : std::nullopt;
    if (f && c) {
      const QString roof =
          f->bound == "memory"
              ? RooflineChart::tr("memory-bound: %1%2 × %3 FLOP/byte")
                    .arg(c->cpu ? RooflineChart::tr("host CPU ") : QString(), peakText(c->bandwidth_gbps, "GB/s"))
                    .arg(f->intensity, 0, 'g', 3)
              : RooflineChart::tr("compute-bound: %1").arg(QString::fromStdString(c->compute_name));
      lines << RooflineChart::tr("%1 % of peak (%2 attainable here; %3)")
                   .arg(100 * f->fraction, 0, 'f', 1)
                   .arg(peakText(f->attainable, "GFLOP/s"), roof);
    } else if (k && k->backend == ks::Backend::Cpu) {
      lines << RooflineChart::tr("CPU kernel: no host CPU peaks in this session (the GPU ceilings do not apply)");
    } else {
      lines << RooflineChart::tr("no measured ceiling applies to this kernel");
    }
  }
  return lines.join('\n');
}

// The Qt objects of one rendering of a Model: the live chart, or a copy for export.
struct Parts {
  QChart* chart = nullptr;
  QLogValueAxis* x = nullptr;
  QLogValueAxis* y = nullptr;
  std::vector<QScatterSeries*> points;  // parallel to Model::series
  std::vector<QLineSeries*> ceilings;
  QLineSeries* continuation = nullptr;  // no legend entry
};

QLogValueAxis* logAxis(const QString& title) {
  auto* a = new QLogValueAxis;
  a->setBase(10);
  a->setLabelFormat("%g");
  a->setMinorTickCount(8);
  a->setMinorGridLineVisible(true);
  a->setMinorGridLinePen(QPen(QColor(0xec, 0xec, 0xec), 1));
  a->setTitleText(title);
  QFont f = a->titleFont();
  f.setBold(false);
  a->setTitleFont(f);
  a->setTitleBrush(kLabelColor);
  return a;
}

// Bottom when every entry fits on one row, else right (a bottom legend does not wrap, it elides).
void placeLegend(Parts& p, double chart_width) {
  QLegend* legend = p.chart->legend();
  const QFontMetricsF fm(legend->font());
  double need = 0;
  for (QLegendMarker* mk : legend->markers())
    if (mk->isVisible()) need += fm.horizontalAdvance(mk->label()) + 2.5 * fm.height() + 8;
  const Qt::Alignment want = need <= 0.92 * chart_width ? Qt::AlignBottom : Qt::AlignRight;
  if (legend->alignment() != want) legend->setAlignment(want);
}

QString titleOf(const Model& model) {
  QString title = RooflineChart::tr("Roofline");
  const QString note = noteOf(model);
  if (!note.isEmpty())
    title += QStringLiteral("<br><span style=\"font-weight:normal; font-size:small; color:%1\">%2</span>")
                 .arg(kNoteColor.name(), note.toHtmlEscaped());
  if (model.hasCeilings() && model.peaks && !model.peaks->measured_at.empty())
    title += QStringLiteral("<br><span style=\"font-weight:normal; font-size:small; color:#505050\">%1</span>")
                 .arg(RooflineChart::tr("ceilings: peaks measured %1")
                          .arg(QString::fromStdString(model.peaks->measured_at))
                          .toHtmlEscaped());
  return title;
}

void build(Parts& p, const Model& model) {
  p.chart = newChart();
  QChart* c = p.chart;
  c->setTitle(titleOf(model));
  QLegend* legend = c->legend();
  legend->setAlignment(Qt::AlignRight);
  legend->setShowToolTips(true);
  legend->setMarkerShape(QLegend::MarkerShapeFromSeries);

  const Range r = rangeOf(model);
  p.x = logAxis(RooflineChart::tr("Arithmetic intensity (FLOP/byte)"));
  p.y = logAxis(RooflineChart::tr("Performance (GFLOP/s)"));
  p.y->setLabelFormat(r.y_lo >= 1 ? "%.0f" : "%g");  // 1000000, not 1e+06
  c->addAxis(p.x, Qt::AlignBottom);
  c->addAxis(p.y, Qt::AlignLeft);
  p.x->setRange(r.x_lo, r.x_hi);
  p.y->setRange(r.y_lo, r.y_hi);

  const auto attach = [&](QAbstractSeries* s) {
    c->addSeries(s);
    s->attachAxis(p.x);
    s->attachAxis(p.y);
  };
  // The ceilings first: drawn under the points.
  for (const Ceiling& ceiling : ceilingsOf(model, r)) {
    auto* line = new QLineSeries;
    line->setName(ceiling.name);
    line->replace(ceiling.points);
    attach(line);
    line->setPen(ceiling.pen);  // after addSeries: the theme recolours a series when it is added
    if (ceiling.name.isEmpty()) {
      for (QLegendMarker* mk : legend->markers(line)) mk->setVisible(false);
      p.continuation = line;
    } else {
      p.ceilings.push_back(line);
    }
  }
  for (const PointSeries& s : model.series) {
    auto* scatter = new QScatterSeries;
    scatter->setName(s.name);
    QList<QPointF> pts;
    for (const Entry& e : s.entries) pts.append(QPointF(e.x, e.y));
    scatter->replace(pts);
    attach(scatter);
    scatter->setMarkerShape(s.shape);
    scatter->setMarkerSize(s.shape == QScatterSeries::MarkerShapeCircle ? 9 : 11);
    scatter->setColor(s.color);
    scatter->setBorderColor(s.color.darker(150));
    p.points.push_back(scatter);
  }
}

// A chart built from the model in its own scene, laid out at `size`, for export.
class ExportChart {
 public:
  ExportChart(const Model& model, QSize size) {
    build(parts_, model);
    scene_.addItem(parts_.chart);
    parts_.chart->setGeometry(QRectF(QPointF(0, 0), QSizeF(size)));
    placeLegend(parts_, size.width());
    if (parts_.chart->layout()) parts_.chart->layout()->activate();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    if (parts_.chart->layout()) parts_.chart->layout()->activate();
  }
  void render(QPainter* painter, QSize size) {
    painter->setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
    scene_.render(painter, QRectF(QPointF(0, 0), QSizeF(size)), parts_.chart->geometry(), Qt::IgnoreAspectRatio);
  }

 private:
  QGraphicsScene scene_;  // owns the chart
  Parts parts_;
};

}  // namespace

struct RooflineChart::Impl {
  RooflineChart* widget = nullptr;
  Model model;
  Parts live;
  QChartView* view = nullptr;

  void hover(size_t i, const QPointF& pt, bool state) {
    if (!state || i >= model.series.size()) return QToolTip::hideText();
    QScatterSeries* s = live.points[i];
    const Entry* best = nullptr;
    double best_d = kHoverRadiusPx;
    const QPointF at = live.chart->mapToPosition(pt, s);
    for (const Entry& e : model.series[i].entries) {
      const QPointF d = live.chart->mapToPosition(QPointF(e.x, e.y), s) - at;
      const double dist = std::hypot(d.x(), d.y());
      if (dist <= best_d) best_d = dist, best = &e;
    }
    if (!best) return QToolTip::hideText();
    QToolTip::showText(QCursor::pos(), toolTip(best->m, model.peaks ? &*model.peaks : nullptr), view);
  }

  void rebuild() {
    QChart* old = live.chart;
    live = Parts{};
    build(live, model);
    view->setChart(live.chart);  // releases (does not delete) the old chart
    delete old;
    placeLegend(live, view->width());
    for (size_t i = 0; i < live.points.size(); ++i)
      QObject::connect(live.points[i], &QScatterSeries::hovered, widget,
                       [this, i](const QPointF& pt, bool state) { hover(i, pt, state); });
  }
};

RooflineChart::RooflineChart(QWidget* parent) : QWidget(parent), d_(std::make_unique<Impl>()) {
  d_->widget = this;
  d_->view = addChartView(this);
  d_->rebuild();
}

RooflineChart::~RooflineChart() = default;

void RooflineChart::setData(const std::vector<ks::Measurement>& points, const ks::DevicePeaks* peaks) {
  Model model;
  if (peaks) {
    model.peaks = *peaks;
    model.bandwidth = peaks->bandwidthGbps();
    model.fp32 = peaks->fp32Gflops();
    model.fp16 = peaks->valueOf("fp16_fma");
    model.coopmat = peaks->coopmatGflops(32);
    model.cpu_bandwidth = peaks->cpuBandwidthGbps();
    model.cpu_fp32 = peaks->cpuFp32Gflops();
  }
  for (const ks::Measurement& m : points) {
    if (!m.trustworthy() || !(m.gflops > 0) || !std::isfinite(m.gflops)) continue;
    const ks::KernelInfo* k = ks::Registry::instance().find(m.item.kernel);
    if (!k) continue;  // no counts, no intensity
    const double x = ks::arithmeticIntensity(*k, m.item.size, m.item.params);
    if (!(x > 0) || !std::isfinite(x)) continue;
    const QString name = QString::fromStdString(ks::seriesKey(m.item));
    auto it = std::find_if(model.series.begin(), model.series.end(), [&](const auto& s) { return s.name == name; });
    if (it == model.series.end()) {
      PointSeries s;
      s.name = name;
      const size_t i = model.series.size();
      s.color = kPalette[i % kPaletteSize];
      s.cpu = k->backend == ks::Backend::Cpu;
      s.shape = s.cpu ? QScatterSeries::MarkerShapeTriangle : kGpuShapes[(i / kPaletteSize) % kGpuShapeCount];
      model.series.push_back(std::move(s));
      it = model.series.end() - 1;
    }
    Entry e{x, m.gflops, m};
    it->entries.insert(
        std::upper_bound(it->entries.begin(), it->entries.end(), x, [](double v, const Entry& o) { return v < o.x; }),
        std::move(e));
  }
  d_->model = std::move(model);
  d_->rebuild();
}

void RooflineChart::clear() {
  d_->model = Model{};
  d_->rebuild();
}

QChart* RooflineChart::chart() const { return d_->live.chart; }
QChartView* RooflineChart::view() const { return d_->view; }

QStringList RooflineChart::seriesNames() const {
  QStringList names;
  for (QAbstractSeries* s : d_->live.chart->series())
    if (!s->name().isEmpty()) names << s->name();
  return names;
}

QStringList RooflineChart::ceilingNames() const {
  QStringList names;
  for (QLineSeries* s : d_->live.ceilings) names << s->name();
  return names;
}

QList<QPointF> RooflineChart::seriesPoints(const QString& name) const {
  for (QAbstractSeries* s : d_->live.chart->series())
    if (s->name() == name)
      if (auto* xy = qobject_cast<QXYSeries*>(s)) return xy->points();
  return {};
}

double RooflineChart::ridgeIntensity() const { return d_->model.ridge(); }
double RooflineChart::cpuRidgeIntensity() const { return d_->model.cpuRidge(); }

QString RooflineChart::noteText() const { return noteOf(d_->model); }

QString RooflineChart::toolTip(const ks::Measurement& m, const ks::DevicePeaks* peaks) {
  const auto* k = ks::Registry::instance().find(m.item.kernel);
  const double x = k ? ks::arithmeticIntensity(*k, m.item.size, m.item.params) : 0;
  return measurementText(m, x, peaks);
}

QString RooflineChart::ceilingName(const QString& what, double value, const QString& unit) {
  ks::PeakResult r;
  r.value = value;
  r.unit = unit.toStdString();
  return what + QLatin1Char(' ') + QString::fromStdString(ks::formatPeakValue(r));
}

void RooflineChart::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  placeLegend(d_->live, d_->view->width());
}

QString RooflineChart::exportPng(const QString& path, QSize size, qreal scale) const {
  return writeChartPng(path, size, scale, [&](QPainter& painter) {
    ExportChart copy(d_->model, size);
    copy.render(&painter, size);
  });
}

}  // namespace ks::ui
