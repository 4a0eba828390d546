#include "ui/chart_panel.h"

#include <QAreaSeries>
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
#include <QScatterSeries>
#include <QScreen>
#include <QSvgGenerator>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/kernels/registry.h"

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

// A trustworthy point of a series: x, the value at the median and the band (min..max time).
struct Point {
  double x = 0, y = 0, lo = 0, hi = 0;
  ks::Measurement m;
};

struct SeriesData {
  QString name;
  QColor color;
  Qt::PenStyle style = Qt::SolidLine;
  bool visible = true;
  std::vector<Point> points;  // in x order
};

struct FailedPoint {
  double x = 0;
  ks::Measurement m;
};

// What the chart shows, independent of the Qt objects that show it.
struct Model {
  ChartKind kind = ChartKind::Gflops;
  std::vector<SeriesData> series;  // in legend order
  std::vector<FailedPoint> failed;
  bool failed_visible = true;
};

// The Qt objects of one rendering of a Model: the live chart, or a copy for export.
struct Parts {
  QChart* chart = nullptr;
  QAbstractAxis* x = nullptr;
  QAbstractAxis* y = nullptr;
  struct Line {
    QLineSeries* line = nullptr;
    QAreaSeries* band = nullptr;
  };
  std::vector<Line> lines;  // parallel to Model::series
  QScatterSeries* failed = nullptr;
  double y_failed = 0;  // where failed points sit: just above the bottom of the y axis
};

double kernelFlops(const ks::Measurement& m) {
  const auto* k = ks::Registry::instance().find(m.item.kernel);
  if (k && k->flops) return k->flops(m.item.size);
  if (m.gflops > 0 && m.stats.median > 0) return m.gflops * m.stats.median;
  const auto& s = m.item.size;
  return 2.0 * double(s.m) * double(s.n) * double(s.k);
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

void initChart(Parts& p, ChartKind kind) {
  p.chart = new QChart;
  QChart* c = p.chart;
  c->setTheme(QChart::ChartThemeLight);
  c->setBackgroundRoundness(0);
  c->setMargins(QMargins(4, 4, 8, 4));
  if (c->layout()) c->layout()->setContentsMargins(0, 0, 0, 0);  // no grey frame around the chart
  c->setTitle(kind == ChartKind::Gflops ? QStringLiteral("GFLOPS vs problem size")
                                        : QStringLiteral("Median time vs problem size (log-log)"));
  QFont title_font = c->titleFont();
  title_font.setBold(true);
  title_font.setPointSizeF(title_font.pointSizeF() * 1.15);
  c->setTitleFont(title_font);

  QLegend* legend = c->legend();
  legend->setAlignment(Qt::AlignRight);
  legend->setShowToolTips(true);  // full names when a label is elided
  legend->setMarkerShape(QLegend::MarkerShapeFromSeries);

  auto* x = logAxis(2, 1);
  x->setTitleText(QString::fromUtf8("Problem size N (\u221b(M\u00b7N\u00b7K) when not square)"));
  p.x = x;
  if (kind == ChartKind::Gflops) {
    auto* y = new QValueAxis;
    y->setLabelFormat("%g");
    y->setTitleText(QStringLiteral("GFLOPS"));
    y->setMinorTickCount(1);
    y->setMinorGridLineVisible(true);
    y->setMinorGridLinePen(QPen(QColor(0xf0, 0xf0, 0xf0), 1));
    p.y = y;
  } else {
    auto* y = logAxis(10, 8);
    y->setLabelFormat("%.4g");
    y->setTitleText(QStringLiteral("Median time (ms)"));
    p.y = y;
  }
  for (QAbstractAxis* a : {p.x, p.y}) {
    QFont f = a->titleFont();
    f.setBold(false);
    a->setTitleFont(f);
    a->setTitleBrush(kLabelColor);
  }
  c->addAxis(p.x, Qt::AlignBottom);
  c->addAxis(p.y, Qt::AlignLeft);
}

void hideBandMarker(const Parts& p, QAreaSeries* band) {
  for (QLegendMarker* mk : p.chart->legend()->markers(band)) mk->setVisible(false);
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
  hideBandMarker(p, band);

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

void updateLine(Parts& p, size_t i, const SeriesData& sd) {
  QList<QPointF> mid, lo, hi;
  for (const auto& pt : sd.points) {
    mid.append(QPointF(pt.x, pt.y));
    lo.append(QPointF(pt.x, pt.lo));
    hi.append(QPointF(pt.x, pt.hi));
  }
  p.lines[i].line->replace(mid);
  p.lines[i].band->upperSeries()->replace(hi);
  p.lines[i].band->lowerSeries()->replace(lo);
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

// Bottom-left and top-right of the data, over visible series (all when none is visible).
void applyRanges(Parts& p, const Model& model) {
  double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min;
  double y_min = x_min, y_max = -x_min;
  bool any_visible = model.failed_visible && !model.failed.empty();
  for (const auto& s : model.series) any_visible = any_visible || (s.visible && !s.points.empty());
  for (const auto& s : model.series) {
    if (any_visible && !s.visible) continue;
    for (const auto& pt : s.points) {
      x_min = std::min(x_min, pt.x);
      x_max = std::max(x_max, pt.x);
      y_min = std::min({y_min, pt.lo, pt.y});
      y_max = std::max({y_max, pt.hi, pt.y});
    }
  }
  if (!any_visible || model.failed_visible)
    for (const auto& f : model.failed) {
      x_min = std::min(x_min, f.x);
      x_max = std::max(x_max, f.x);
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
  static_cast<QLogValueAxis*>(p.x)->setRange(std::exp2(lo), std::exp2(hi));

  const bool have_y = std::isfinite(y_min) && std::isfinite(y_max);
  if (model.kind == ChartKind::Gflops) {
    auto* y = static_cast<QValueAxis*>(p.y);
    double top = have_y ? y_max * 1.06 : 1.0;
    if (!(top > 0)) top = 1.0;
    // 0 .. a multiple of a 1/2/2.5/5 step, at most 10 intervals (applyNiceNumbers overshoots).
    double step = std::pow(10.0, std::floor(std::log10(top / 10)));
    for (double f : {1.0, 2.0, 2.5, 5.0, 10.0})
      if (top / (step * f) <= 10) {
        step *= f;
        break;
      }
    const int intervals = std::max(1, int(std::ceil(top / step - 1e-9)));
    y->setRange(0, intervals * step);
    y->setTickCount(intervals + 1);
    p.y_failed = y->min() + kFailedRow * (y->max() - y->min());
  } else {
    // y: log10 in ms; room below the fastest point for the failed markers, never <= 0.
    if (!have_y) y_min = 0.01, y_max = 100;
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
    if (mk->series() && mk->series()->type() == QAbstractSeries::SeriesTypeArea) continue;
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
    hideBandMarker(p, p.lines[i].band);
    for (QLegendMarker* mk : p.chart->legend()->markers(p.lines[i].line)) styleMarker(mk, model.series[i].color, v);
  }
  if (p.failed) {
    p.failed->setVisible(model.failed_visible);
    for (QLegendMarker* mk : p.chart->legend()->markers(p.failed)) styleMarker(mk, kFailedColor, model.failed_visible);
  }
}

// Builds every Qt object of the model on an empty chart.
void populate(Parts& p, const Model& model, const QImage& failed_marker) {
  for (size_t i = 0; i < model.series.size(); ++i) {
    addLine(p, model.series[i]);
    updateLine(p, i, model.series[i]);
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
    initChart(parts_, model.kind);
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

// The DPI the chart's text was laid out for (font metrics without a device use the screen's): an
// export device must use it too, or point-sized text is drawn at another pixel size than measured.
qreal layoutDpi() {
  const QScreen* screen = QGuiApplication::primaryScreen();
  return screen ? screen->logicalDotsPerInchY() : 96.0;
}

QString checkExportArgs(const QString& path, QSize size) {
  if (path.isEmpty()) return QStringLiteral("no file name given");
  if (size.width() <= 0 || size.height() <= 0)
    return QStringLiteral("invalid image size %1x%2").arg(size.width()).arg(size.height());
  if (size.width() > 20000 || size.height() > 20000)
    return QStringLiteral("image size %1x%2 is too large").arg(size.width()).arg(size.height());
  return {};
}

QString openForWrite(QFile& file) {
  const QFileInfo info(file.fileName());
  if (info.isDir()) return QStringLiteral("cannot write %1: it is a folder").arg(file.fileName());
  if (!info.absoluteDir().exists())
    return QStringLiteral("cannot write %1: folder %2 does not exist").arg(file.fileName(), info.absolutePath());
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
    return QStringLiteral("cannot write %1: %2").arg(file.fileName(), file.errorString());
  return {};
}

}  // namespace

double sizeAxisValue(const ks::ProblemSize& s) {
  if (s.m == s.n && s.n == s.k) return double(s.n);
  return std::cbrt(double(s.m) * double(s.n) * double(s.k));
}

QString seriesName(const ks::PlanItem& item) {
  const auto* k = ks::Registry::instance().find(item.kernel);
  const bool with_wg = k ? k->uses_workgroup : item.params.wg.invocations() > 1;
  QString name = QString::fromStdString(item.kernel);
  const std::string params = item.params.str(with_wg);
  if (params != "-") name += QLatin1Char(' ') + QString::fromStdString(params);
  return name;
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
  if (!(s.m == s.n && s.n == s.k)) size += QStringLiteral("  (x = %1)").arg(sizeAxisValue(s), 0, 'f', 1);
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
    QString cv = QStringLiteral("CV %1 %   %2 samples").arg(m.stats.cv * 100, 0, 'f', 2).arg(m.stats.count);
    if (!m.clock.empty()) cv += QStringLiteral(" (") + QString::fromStdString(m.clock) + QLatin1Char(')');
    lines << cv;
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
    const Point* best = nullptr;
    double best_d = kHoverRadiusPx;
    for (const auto& p : model.series[i].points) {
      const double d = screenDistance(line, QPointF(p.x, p.y), pt);
      if (d <= best_d) best_d = d, best = &p;
    }
    if (best)
      QToolTip::showText(QCursor::pos(), measurementToolTip(best->m), view);
    else
      QToolTip::hideText();
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
    live = Parts{};
    initChart(live, model.kind);
    populate(live, model, failed_marker);
    view->setChart(live.chart);  // deletes the old chart
    placeLegend(live, view->width());
    for (size_t i = 0; i < live.lines.size(); ++i) connectSeries(i);
    if (live.failed) connectFailed();
  }
};

ChartPanel::ChartPanel(ChartKind kind, QWidget* parent) : QWidget(parent), d_(std::make_unique<Impl>()) {
  d_->panel = this;
  d_->model.kind = kind;
  d_->view = new QChartView(this);
  d_->view->setRenderHint(QPainter::Antialiasing);
  d_->view->setRenderHint(QPainter::TextAntialiasing);
  d_->view->setMinimumSize(360, 240);
  d_->view->setFrameShape(QFrame::NoFrame);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(d_->view);
  d_->rebuild();
}

ChartPanel::~ChartPanel() = default;

ChartKind ChartPanel::kind() const { return d_->model.kind; }

void ChartPanel::clear() {
  d_->model.series.clear();
  d_->model.failed.clear();
  d_->model.failed_visible = true;
  d_->rebuild();
}

void ChartPanel::addMeasurement(const ks::Measurement& m) {
  if (m.status == ks::PointStatus::Skipped || m.status == ks::PointStatus::Cancelled) return;
  Model& model = d_->model;
  Parts& live = d_->live;
  const double x = sizeAxisValue(m.item.size);
  if (!(x > 0)) return;

  if (!m.trustworthy()) {
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

  Point pt;
  pt.x = x;
  pt.m = m;
  if (model.kind == ChartKind::Gflops) {
    const double flops = kernelFlops(m);
    pt.y = m.gflops;
    pt.lo = m.stats.max > 0 ? flops / m.stats.max : m.gflops;
    pt.hi = m.stats.min > 0 ? flops / m.stats.min : m.gflops;
  } else {
    pt.y = m.stats.median / kNsPerMs;
    pt.lo = m.stats.min / kNsPerMs;
    pt.hi = m.stats.max / kNsPerMs;
    if (!(pt.y > 0)) return;  // nothing to put on a log axis
    if (!(pt.lo > 0)) pt.lo = pt.y;
    if (!(pt.hi > 0)) pt.hi = pt.y;
  }

  const QString name = seriesName(m.item);
  size_t i = 0;
  while (i < model.series.size() && model.series[i].name != name) ++i;
  if (i == model.series.size()) {
    SeriesData sd;
    sd.name = name;
    sd.color = kPalette[i % kPaletteSize];
    sd.style = kStyles[(i / kPaletteSize) % 4];
    model.series.push_back(sd);
    addLine(live, model.series[i]);
    d_->connectSeries(i);
    if (live.failed) {  // keep "failed / unverified" last in the legend
      ensureFailedSeries(live, d_->failed_marker, true);
      d_->connectFailed();
    }
  }
  auto& pts = model.series[i].points;
  // A re-measured point (same size) replaces the old one; others are kept in x order.
  auto same = std::find_if(pts.begin(), pts.end(), [&](const Point& p) { return p.m.item.size == m.item.size; });
  if (same != pts.end()) pts.erase(same);
  pts.insert(std::upper_bound(pts.begin(), pts.end(), x, [](double v, const Point& p) { return v < p.x; }), pt);

  updateLine(live, i, model.series[i]);
  applyRanges(live, model);
  updateFailed(live, model);
  applyVisibility(live, model);
  placeLegend(live, d_->view->width());
}

void ChartPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  placeLegend(d_->live, d_->view->width());
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
    if (s && s->type() != QAbstractSeries::SeriesTypeArea && !names.contains(s->name())) names << s->name();
  }
  return names;
}

QList<QPointF> ChartPanel::seriesPoints(const QString& name) const {
  const Parts& live = d_->live;
  if (live.failed && name == failedSeriesName()) return live.failed->points();
  for (const auto& l : live.lines)
    if (l.line->name() == name) return l.line->points();
  return {};
}

int ChartPanel::failedPointCount() const { return int(d_->model.failed.size()); }

QString ChartPanel::failedSeriesName() { return QStringLiteral("failed / unverified"); }

QString ChartPanel::exportPng(const QString& path, QSize size, qreal scale) const {
  if (QString why = checkExportArgs(path, size); !why.isEmpty()) return why;
  if (!(scale > 0) || scale > 8) return QStringLiteral("invalid scale %1 (expected 0 < scale <= 8)").arg(scale);
  const QSize pixels(qRound(size.width() * scale), qRound(size.height() * scale));
  QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
  if (image.isNull()) return QStringLiteral("cannot allocate a %1x%2 image").arg(pixels.width()).arg(pixels.height());
  image.setDevicePixelRatio(scale);
  const int dots_per_meter = qRound(layoutDpi() / 0.0254);
  image.setDotsPerMeterX(dots_per_meter);
  image.setDotsPerMeterY(dots_per_meter);
  image.fill(Qt::white);
  {
    ExportChart copy(d_->model, d_->failed_marker, size);
    QPainter painter(&image);
    copy.render(&painter, size);
  }
  QFile file(path);
  if (QString why = openForWrite(file); !why.isEmpty()) return why;
  QImageWriter writer(&file, "png");
  if (!writer.write(image)) {
    const QString why = QStringLiteral("cannot write %1: %2").arg(path, writer.errorString());
    file.close();
    file.remove();
    return why;
  }
  return {};
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
