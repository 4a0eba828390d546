#include "ui/tune_progress_chart.h"

#include <QChart>
#include <QChartView>
#include <QCoreApplication>
#include <QCursor>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QImage>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPainter>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>
#include <cmath>

#include "ui/chart_export.h"

namespace ks::ui {

namespace {

const QColor kMeasured(0x1f, 0x77, 0xb4);
const QColor kCached(0x17, 0xbe, 0xcf);
const QColor kFailed(0xc6, 0x28, 0x28);
const QColor kBest(0xff, 0x7f, 0x0e);
const QColor kLabel(0x20, 0x20, 0x20);
constexpr double kFailedMarkerSize = 12;

// The failed series' marker: a red cross (Qt Charts has no cross shape).
QImage crossMarker() {
  const int px = 48;  // drawn large, scaled down to the marker size: crisp at any pixel scale
  QImage image(px, px, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::transparent);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(kFailed, px / 6.0, Qt::SolidLine, Qt::RoundCap));
  p.drawLine(QPointF(px * 0.18, px * 0.18), QPointF(px * 0.82, px * 0.82));
  p.drawLine(QPointF(px * 0.82, px * 0.18), QPointF(px * 0.18, px * 0.82));
  return image;
}

struct Parts {
  QChart* chart = nullptr;
  QValueAxis* x = nullptr;
  QValueAxis* y = nullptr;
  QScatterSeries* measured = nullptr;
  QScatterSeries* cached = nullptr;
  QScatterSeries* failed = nullptr;
  QLineSeries* best = nullptr;
};

QValueAxis* valueAxis(const QString& title) {
  auto* a = new QValueAxis;
  a->setTitleText(title);
  QFont f = a->titleFont();
  f.setBold(false);
  a->setTitleFont(f);
  a->setTitleBrush(kLabel);
  a->setMinorGridLineVisible(false);
  return a;
}

void build(Parts& p) {
  p.chart = newChart();
  QChart* c = p.chart;
  c->legend()->setAlignment(Qt::AlignBottom);
  c->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
  p.x = valueAxis(TuneProgressChart::tr("evaluation"));
  p.x->setLabelFormat("%d");
  p.x->setTickType(QValueAxis::TicksDynamic);
  p.x->setTickAnchor(0);
  p.y = valueAxis(QString());
  c->addAxis(p.x, Qt::AlignBottom);
  c->addAxis(p.y, Qt::AlignLeft);
  auto attach = [&](QXYSeries* s, const QString& name) {
    s->setName(name);
    c->addSeries(s);
    s->attachAxis(p.x);
    s->attachAxis(p.y);
  };
  // The best-so-far line under the points.
  p.best = new QLineSeries;
  attach(p.best, TuneProgressChart::bestName());
  p.best->setPen(QPen(kBest, 2.5, Qt::SolidLine, Qt::FlatCap, Qt::MiterJoin));
  p.measured = new QScatterSeries;
  attach(p.measured, TuneProgressChart::measuredName());
  p.measured->setMarkerShape(QScatterSeries::MarkerShapeCircle);
  p.measured->setMarkerSize(9);
  p.measured->setColor(kMeasured);
  p.measured->setBorderColor(kMeasured.darker(150));
  p.cached = new QScatterSeries;
  attach(p.cached, TuneProgressChart::cachedName());
  p.cached->setMarkerShape(QScatterSeries::MarkerShapeRotatedRectangle);
  p.cached->setMarkerSize(11);
  p.cached->setColor(kCached);
  p.cached->setBorderColor(kCached.darker(160));
  p.failed = new QScatterSeries;
  attach(p.failed, TuneProgressChart::failedName());
  p.failed->setMarkerSize(kFailedMarkerSize);
  p.failed->setColor(kFailed);
  p.failed->setBorderColor(kFailed);
  p.failed->setLightMarker(crossMarker());
}

// The title's two parts: what was tuned, and how far the search is.
std::pair<QString, QString> titleOf(const ks::TuneRecord* r) {
  if (!r) return {TuneProgressChart::tr("Tune progress"), QString()};
  size_t failed = 0, cached = 0;
  for (const auto& e : r->evaluations) {
    failed += !e.score;
    cached += e.cached;
  }
  const QString what = QString::fromStdString(r->kernel) + ' ' + QString::fromStdString(ks::SizeSpec(r->size).str());
  QString how = TuneProgressChart::tr("%1 search, %2 of %3 evaluations")
                    .arg(QString::fromStdString(ks::strategyName(r->strategy)))
                    .arg(r->evaluations.size())
                    .arg(std::max(r->budget, r->evaluations.size()));
  QStringList extra;
  if (failed) extra << TuneProgressChart::tr("%1 failed").arg(failed);
  if (cached) extra << TuneProgressChart::tr("%1 from the cache").arg(cached);
  if (!extra.isEmpty()) how += " (" + extra.join(", ") + ')';
  return {what, how};
}

// Bottom when the visible entries fit on one row, else right (a bottom legend elides).
void placeLegend(Parts& p, double chart_width) {
  QLegend* legend = p.chart->legend();
  const QFontMetricsF fm(legend->font());
  double need = 0;
  for (QLegendMarker* m : legend->markers())
    if (m->isVisible()) need += fm.horizontalAdvance(m->label()) + 2.5 * fm.height() + 8;
  const Qt::Alignment want = need <= 0.92 * chart_width ? Qt::AlignBottom : Qt::AlignRight;
  if (legend->alignment() != want) legend->setAlignment(want);
}

// The series' points and the axes' ranges for a record (nullptr: empty).
void fill(Parts& p, const ks::TuneRecord* r) {
  // Two lines: a narrow chart would elide one long line.
  const auto [what, how] = titleOf(r);
  p.chart->setTitle(how.isEmpty()
                        ? what.toHtmlEscaped()
                        : QStringLiteral("%1<br><span style=\"font-weight:normal; font-size:small\">%2</span>")
                              .arg(what.toHtmlEscaped(), how.toHtmlEscaped()));
  QList<QPointF> measured, cached, failed, best;
  double top = 0;
  size_t n = 0;
  if (r) {
    n = r->evaluations.size();
    const auto so_far = r->bestSoFar();
    for (size_t i = 0; i < n; ++i) {
      const auto& e = r->evaluations[i];
      const double x = double(i + 1);
      if (!e.score) {
        failed << QPointF(x, 0);
      } else {
        (e.cached ? cached : measured) << QPointF(x, *e.score);
        top = std::max(top, *e.score);
      }
      // A step: the best so far holds until the evaluation that beats it.
      if (!std::isnan(so_far[i])) {
        if (!best.isEmpty() && best.last().y() != so_far[i]) best << QPointF(x, best.last().y());
        best << QPointF(x, so_far[i]);
      }
    }
    if (!best.isEmpty()) best << QPointF(double(n) + 0.5, best.last().y());
    p.y->setTitleText(QString::fromStdString(ks::objectiveUnit(r->objective)));
  }
  p.measured->replace(measured);
  p.cached->replace(cached);
  p.failed->replace(failed);
  p.best->replace(best);
  // Only the kinds of point this tune has are explained in the legend; the
  // legend does not lay itself out again when a marker comes or goes.
  bool changed = false;
  for (QXYSeries* s : std::initializer_list<QXYSeries*>{p.measured, p.cached, p.failed, p.best})
    for (QLegendMarker* m : p.chart->legend()->markers(s))
      if (m->isVisible() != (s->count() > 0)) {
        m->setVisible(s->count() > 0);
        changed = true;
      }
  if (changed) {
    if (p.chart->legend()->layout()) p.chart->legend()->layout()->invalidate();
    if (p.chart->layout()) p.chart->layout()->invalidate();
  }
  // Tick intervals before ranges: a wide range with the old, fine interval
  // would first lay out tens of thousands of ticks (a GFLOP/s axis to 48000).
  const double span = double(std::max<size_t>({n, r ? r->budget : 0, 1}));
  p.x->setTickInterval(std::max(1.0, niceStep(span, 8)));
  p.x->setRange(0, span + 0.5);
  const double step = niceStep(top > 0 ? top * 1.08 : 1, 5);
  const double y_top = top > 0 ? std::ceil(top * 1.08 / step) * step : 1;
  p.y->setTickType(QValueAxis::TicksDynamic);
  p.y->setTickAnchor(0);
  p.y->setTickInterval(step);
  p.y->setRange(0, y_top);
  p.y->setLabelFormat(step >= 1 ? "%.0f" : step >= 0.1 ? "%.1f" : "%.2f");
}

}  // namespace

struct TuneProgressChart::Impl {
  std::optional<ks::TuneRecord> record;
  Parts live;
  QChartView* view = nullptr;
  TuneProgressChart* widget = nullptr;

  void hover(const QPointF& pt, bool state) {
    if (!state || !record) return QToolTip::hideText();
    const long i = std::lround(pt.x()) - 1;
    if (i < 0 || size_t(i) >= record->evaluations.size()) return QToolTip::hideText();
    const auto& e = record->evaluations[size_t(i)];
    QString text = tr("evaluation %1: %2").arg(i + 1).arg(QString::fromStdString(record->configText(e.config)));
    text += '\n' + (e.score ? QString("%1 %2")
                                  .arg(*e.score, 0, 'f', 2)
                                  .arg(QString::fromStdString(ks::objectiveUnit(record->objective)))
                            : tr("failed"));
    if (e.cached) text += '\n' + tr("from the result cache");
    QToolTip::showText(QCursor::pos(), text, view);
  }
  static QString tr(const char* s) { return TuneProgressChart::tr(s); }
};

TuneProgressChart::TuneProgressChart(QWidget* parent) : QWidget(parent), d_(std::make_unique<Impl>()) {
  d_->widget = this;
  d_->view = addChartView(this);
  build(d_->live);
  d_->view->setChart(d_->live.chart);
  fill(d_->live, nullptr);
  for (QScatterSeries* s : {d_->live.measured, d_->live.cached, d_->live.failed})
    connect(s, &QScatterSeries::hovered, this, [this](const QPointF& pt, bool state) { d_->hover(pt, state); });
}

TuneProgressChart::~TuneProgressChart() = default;

void TuneProgressChart::setRecord(const ks::TuneRecord& record) {
  d_->record = record;
  fill(d_->live, &*d_->record);
  placeLegend(d_->live, d_->view->width());
}

void TuneProgressChart::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  placeLegend(d_->live, d_->view->width());
}

void TuneProgressChart::clear() {
  d_->record.reset();
  fill(d_->live, nullptr);
}

QChart* TuneProgressChart::chart() const { return d_->live.chart; }
QChartView* TuneProgressChart::view() const { return d_->view; }
QString TuneProgressChart::titleText() const {
  const auto [what, how] = titleOf(d_->record ? &*d_->record : nullptr);
  return how.isEmpty() ? what : what + ": " + how;
}

QStringList TuneProgressChart::seriesNames() const {
  QStringList names;
  for (QAbstractSeries* s : d_->live.chart->series()) names << s->name();
  return names;
}

QList<QPointF> TuneProgressChart::seriesPoints(const QString& name) const {
  for (QAbstractSeries* s : d_->live.chart->series())
    if (s->name() == name)
      if (auto* xy = qobject_cast<QXYSeries*>(s)) return xy->points();
  return {};
}

QString TuneProgressChart::measuredName() { return tr("measured"); }
QString TuneProgressChart::cachedName() { return tr("from the cache"); }
QString TuneProgressChart::failedName() { return tr("failed"); }
QString TuneProgressChart::bestName() { return tr("best so far"); }

QString TuneProgressChart::exportPng(const QString& path, QSize size, qreal scale) const {
  return writeChartPng(path, size, scale, [&](QPainter& painter) {
    QGraphicsScene scene;  // owns the copy
    Parts copy;
    build(copy);
    fill(copy, d_->record ? &*d_->record : nullptr);
    placeLegend(copy, size.width());
    scene.addItem(copy.chart);
    copy.chart->setGeometry(QRectF(QPointF(0, 0), QSizeF(size)));
    if (copy.chart->layout()) copy.chart->layout()->activate();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    if (copy.chart->layout()) copy.chart->layout()->activate();
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
    scene.render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), copy.chart->geometry(), Qt::IgnoreAspectRatio);
  });
}

}  // namespace ks::ui
