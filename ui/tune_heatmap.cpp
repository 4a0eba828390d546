#include "ui/tune_heatmap.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QLinearGradient>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "engine/bench/report.h"
#include "ui/chart_export.h"

namespace ks::ui {

namespace {

// matplotlib's viridis at 0, 0.1, ..., 1: perceptually uniform and readable in grey.
const QColor kViridis[] = {QColor(0x44, 0x01, 0x54), QColor(0x48, 0x24, 0x75), QColor(0x41, 0x44, 0x87),
                           QColor(0x35, 0x5f, 0x8d), QColor(0x2a, 0x78, 0x8e), QColor(0x21, 0x91, 0x8c),
                           QColor(0x22, 0xa8, 0x84), QColor(0x44, 0xbf, 0x70), QColor(0x7a, 0xd1, 0x51),
                           QColor(0xbd, 0xdf, 0x26), QColor(0xfd, 0xe7, 0x25)};
constexpr int kViridisSteps = int(sizeof(kViridis) / sizeof(kViridis[0])) - 1;

const QColor kFailedFill(0xf6, 0xc6, 0xc1);
const QColor kFailedMark(0xc6, 0x28, 0x28);
const QColor kInvalidFill(0xd2, 0xd2, 0xd2);
const QColor kInvalidHatch(0x8c, 0x8c, 0x8c);
const QColor kUnmeasuredFill(Qt::white);
const QColor kUnmeasuredDot(0x9e, 0x9e, 0x9e);
const QColor kCellBorder(0xc8, 0xc8, 0xc8);
const QColor kWinnerOutline(0x10, 0x10, 0x10);
const QColor kText(0x20, 0x20, 0x20);
const QColor kMutedText(0x60, 0x60, 0x60);

constexpr double kMargin = 10;
constexpr double kBarWidth = 16;

QString scoreText(double v) {
  const double a = std::fabs(v);
  return QString::number(v, 'f', a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

bool darkFill(const QColor& c) { return 0.299 * c.red() + 0.587 * c.green() + 0.114 * c.blue() < 140; }

QString firstLine(const std::string& text) {
  const QString s = QString::fromStdString(text);
  return s.section('\n', 0, 0);
}

// A cell's look for its state, at `r`: shared by the grid and the legend's swatches.
void paintCellBackground(QPainter& p, const QRectF& r, TuneHeatmap::CellState state, const QColor& fill) {
  p.save();
  p.setPen(Qt::NoPen);
  p.setBrush(fill);
  p.drawRect(r);
  switch (state) {
    case TuneHeatmap::CellState::Measured:
      break;
    case TuneHeatmap::CellState::Failed: {
      const double side = std::min(r.width(), r.height()) * 0.42;
      const QRectF x(r.center() - QPointF(side / 2, side / 2), QSizeF(side, side));
      p.setPen(QPen(kFailedMark, std::clamp(side / 7, 1.5, 3.0), Qt::SolidLine, Qt::RoundCap));
      p.drawLine(x.topLeft(), x.bottomRight());
      p.drawLine(x.topRight(), x.bottomLeft());
      break;
    }
    case TuneHeatmap::CellState::Invalid: {
      // Diagonal hatch drawn as lines (a pattern brush would shrink with the pixel scale).
      p.setClipRect(r, Qt::IntersectClip);
      p.setPen(QPen(kInvalidHatch, 1.2));
      const double step = 7;
      for (double t = -r.height(); t < r.width(); t += step)
        p.drawLine(QPointF(r.left() + t, r.bottom()), QPointF(r.left() + t + r.height(), r.top()));
      break;
    }
    case TuneHeatmap::CellState::Unmeasured: {
      p.setPen(QPen(kCellBorder, 1));
      p.setBrush(Qt::NoBrush);
      p.drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
      p.setPen(Qt::NoPen);
      p.setBrush(kUnmeasuredDot);
      const double radius = std::clamp(std::min(r.width(), r.height()) * 0.05, 1.5, 3.0);
      p.drawEllipse(r.center(), radius, radius);
      break;
    }
  }
  p.restore();
}

void paintWinnerOutline(QPainter& p, const QRectF& r) {
  p.save();
  p.setBrush(Qt::NoBrush);
  p.setPen(QPen(kWinnerOutline, 3, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
  p.drawRect(r.adjusted(1.5, 1.5, -1.5, -1.5));
  p.setPen(QPen(Qt::white, 1));
  p.drawRect(r.adjusted(3.5, 3.5, -3.5, -3.5));
  p.restore();
}

struct LegendItem {
  TuneHeatmap::CellState state;
  QString text;
  bool outline;  // the winner's mark
};

std::vector<LegendItem> legendItems(bool winner) {
  using S = TuneHeatmap::CellState;
  return {{S::Measured, TuneHeatmap::stateName(S::Measured), false},
          {S::Failed, TuneHeatmap::stateName(S::Failed), false},
          {S::Invalid, TuneHeatmap::stateName(S::Invalid), false},
          {S::Unmeasured, TuneHeatmap::stateName(S::Unmeasured), false},
          {S::Measured, winner ? TuneHeatmap::tr("winner") : TuneHeatmap::tr("best so far"), true}};
}

double swatchWidth(const LegendItem& item, double side) { return side * (item.outline ? 1.6 : 1); }
double legendItemWidth(const LegendItem& item, const QFontMetricsF& fm) {
  return swatchWidth(item, std::round(fm.height())) + 5 + fm.horizontalAdvance(item.text) + 16;
}

}  // namespace

// Where everything goes at one size, from the fonts' metrics.
struct TuneHeatmap::Layout {
  QFont font, title_font, small_font, cell_font;
  bool cell_values = true;  // measured cells show their score
  QRectF title, grid, bar, legend;
  std::vector<std::vector<int>> legend_rows;  // indices into legendItems(), wrapped to the width
  double cell_w = 0, cell_h = 0;
  double y_labels_right = 0;  // the y tick labels end here
  double y_title_x = 0;       // centre of the rotated y title
  double x_labels_top = 0, x_title_top = 0;
  double bar_labels_left = 0, bar_title_x = 0;
  QRectF cell(int column, int row) const;
};

TuneHeatmap::TuneHeatmap(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void TuneHeatmap::clear() {
  record_.reset();
  points_.clear();
  evaluated_.clear();
  pruned_.clear();
  x_ = y_ = -1;
  chosen_.clear();
  update();
  emit changed();
}

void TuneHeatmap::setRecord(const ks::TuneRecord& record, const std::vector<ks::Measurement>& points) {
  const QString x = xDimension(), y = yDimension();
  const bool same_space = record_ && record_->dimensions == record.dimensions;
  record_ = record;
  points_ = points;
  evaluated_.clear();
  pruned_.clear();
  for (size_t i = 0; i < record.evaluations.size(); ++i) evaluated_[record.evaluations[i].config] = i;
  for (size_t i = 0; i < record.pruned.size(); ++i)
    for (const auto& c : record.pruned[i].configs) pruned_.emplace(c, i);
  low_ = high_ = 0;
  bool any = false;
  for (const auto& e : record.evaluations)
    if (e.score) {
      low_ = any ? std::min(low_, *e.score) : *e.score;
      high_ = any ? std::max(high_, *e.score) : *e.score;
      any = true;
    }
  if (!same_space) {
    chosen_.clear();
    x_ = y_ = -1;
    if (!x.isEmpty() && setAxes(x, y).isEmpty()) {
      update();
      emit changed();
      return;
    }
    defaultAxes();
  }
  update();
  emit changed();
}

void TuneHeatmap::defaultAxes() {
  const int n = record_ ? int(record_->dimensions.size()) : 0;
  x_ = n > 0 ? 0 : -1;
  y_ = n > 1 ? 1 : -1;
}

int TuneHeatmap::dimensionIndex(const QString& name) const {
  if (!record_) return -1;
  for (size_t i = 0; i < record_->dimensions.size(); ++i)
    if (QString::fromStdString(record_->dimensions[i].name) == name) return int(i);
  return -1;
}

QStringList TuneHeatmap::dimensionNames() const {
  QStringList names;
  if (record_)
    for (const auto& d : record_->dimensions) names << QString::fromStdString(d.name);
  return names;
}

QStringList TuneHeatmap::valueLabels(const QString& dimension) const {
  QStringList labels;
  const int d = dimensionIndex(dimension);
  if (d < 0) return labels;
  const auto& dim = record_->dimensions[size_t(d)];
  for (size_t i = 0; i < dim.size(); ++i) labels << QString::fromStdString(dim.label(i));
  return labels;
}

QString TuneHeatmap::setAxes(const QString& x, const QString& y) {
  if (!record_) return tr("there is no tune to draw");
  const QString valid = dimensionNames().join(", ");
  const int xi = dimensionIndex(x);
  if (xi < 0) return tr("the tune has no dimension '%1' (its dimensions: %2)").arg(x, valid);
  int yi = -1;
  if (!y.isEmpty()) {
    yi = dimensionIndex(y);
    if (yi < 0) return tr("the tune has no dimension '%1' (its dimensions: %2)").arg(y, valid);
    if (yi == xi) return tr("x and y must be two different dimensions (both are %1)").arg(x);
  } else if (record_->dimensions.size() > 1) {
    return tr("a y dimension is needed (the tune's dimensions: %1)").arg(valid);
  }
  x_ = xi;
  y_ = yi;
  update();
  emit changed();
  return {};
}

QString TuneHeatmap::xDimension() const {
  return record_ && x_ >= 0 ? QString::fromStdString(record_->dimensions[size_t(x_)].name) : QString();
}

QString TuneHeatmap::yDimension() const {
  return record_ && y_ >= 0 ? QString::fromStdString(record_->dimensions[size_t(y_)].name) : QString();
}

QString TuneHeatmap::setSliceValue(const QString& dimension, const QString& label) {
  if (!record_) return tr("there is no tune to draw");
  const int d = dimensionIndex(dimension);
  if (d < 0)
    return tr("the tune has no dimension '%1' (its dimensions: %2)").arg(dimension, dimensionNames().join(", "));
  if (d == x_ || d == y_) return tr("%1 is an axis of the heatmap, not a slice").arg(dimension);
  const std::string name = dimension.toStdString();
  if (label.isEmpty()) {
    chosen_.erase(name);
  } else {
    const QStringList labels = valueLabels(dimension);
    const int i = int(labels.indexOf(label));
    if (i < 0) return tr("%1 has no value %2 in the tune (its values: %3)").arg(dimension, label, labels.join(", "));
    chosen_[name] = uint32_t(i);
  }
  update();
  emit changed();
  return {};
}

QString TuneHeatmap::setSlice(const QString& spec) {
  // Check everything before changing anything.
  std::vector<std::pair<QString, QString>> parts;
  for (const QString& part : spec.split(',', Qt::SkipEmptyParts)) {
    const QString p = part.trimmed();
    const int eq = int(p.indexOf('='));
    if (eq <= 0 || eq == p.size() - 1) return tr("'%1' is not NAME=VALUE").arg(p);
    parts.emplace_back(p.left(eq).trimmed(), p.mid(eq + 1).trimmed());
  }
  const auto saved = chosen_;
  for (const auto& [name, label] : parts)
    if (QString why = setSliceValue(name, label); !why.isEmpty()) {
      chosen_ = saved;
      update();
      return why;
    }
  return {};
}

QString TuneHeatmap::sliceLabel(const QString& dimension) const {
  const int d = dimensionIndex(dimension);
  if (d < 0 || d == x_ || d == y_) return {};
  const ks::TuneConfig c = cellConfig(0, 0);
  return QString::fromStdString(record_->dimensions[size_t(d)].label(c[size_t(d)]));
}

bool TuneHeatmap::sliceFollowsBest(const QString& dimension) const { return !chosen_.count(dimension.toStdString()); }

std::optional<ks::TuneConfig> TuneHeatmap::bestConfig() const {
  if (!record_) return std::nullopt;
  if (record_->winner) return record_->winner;
  if (auto best = record_->bestEvaluation()) return record_->evaluations[*best].config;
  return std::nullopt;
}

int TuneHeatmap::columns() const { return record_ && x_ >= 0 ? int(record_->dimensions[size_t(x_)].size()) : 0; }
int TuneHeatmap::rows() const {
  if (!record_ || x_ < 0) return 0;
  return y_ >= 0 ? int(record_->dimensions[size_t(y_)].size()) : 1;
}

ks::TuneConfig TuneHeatmap::cellConfig(int column, int row) const {
  ks::TuneConfig c(record_ ? record_->dimensions.size() : 0, 0);
  if (!record_) return c;
  const auto best = bestConfig();
  for (size_t d = 0; d < c.size(); ++d) {
    if (int(d) == x_) {
      c[d] = uint32_t(column);
    } else if (int(d) == y_) {
      c[d] = uint32_t(row);
    } else if (auto it = chosen_.find(record_->dimensions[d].name); it != chosen_.end()) {
      c[d] = it->second;
    } else if (best && d < best->size()) {
      c[d] = (*best)[d];
    }
  }
  return c;
}

const ks::TuneEvaluation* TuneHeatmap::evaluationOf(const ks::TuneConfig& config) const {
  auto it = evaluated_.find(config);
  return it == evaluated_.end() ? nullptr : &record_->evaluations[it->second];
}

const std::string* TuneHeatmap::prunedReason(const ks::TuneConfig& config) const {
  auto it = pruned_.find(config);
  return it == pruned_.end() ? nullptr : &record_->pruned[it->second].reason;
}

TuneHeatmap::CellState TuneHeatmap::cellState(int column, int row) const {
  const ks::TuneConfig c = cellConfig(column, row);
  if (const auto* e = evaluationOf(c)) return e->score ? CellState::Measured : CellState::Failed;
  if (prunedReason(c)) return CellState::Invalid;
  return CellState::Unmeasured;
}

std::optional<double> TuneHeatmap::cellScore(int column, int row) const {
  const auto* e = evaluationOf(cellConfig(column, row));
  return e ? e->score : std::nullopt;
}

bool TuneHeatmap::isWinnerCell(int column, int row) const {
  const auto best = bestConfig();
  return best && *best == cellConfig(column, row);
}

QColor TuneHeatmap::scoreColor(double fraction) {
  const double t = std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0) * kViridisSteps;
  const int i = std::min(int(t), kViridisSteps - 1);
  const double f = t - i;
  const QColor &a = kViridis[i], &b = kViridis[i + 1];
  return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * f),
                          float(a.greenF() + (b.greenF() - a.greenF()) * f),
                          float(a.blueF() + (b.blueF() - a.blueF()) * f));
}

QColor TuneHeatmap::stateFill(CellState state) {
  switch (state) {
    case CellState::Failed:
      return kFailedFill;
    case CellState::Invalid:
      return kInvalidFill;
    case CellState::Unmeasured:
      return kUnmeasuredFill;
    default:
      return scoreColor(0.5);
  }
}

QString TuneHeatmap::stateName(CellState state) {
  switch (state) {
    case CellState::Measured:
      return tr("measured");
    case CellState::Failed:
      return tr("failed");
    case CellState::Invalid:
      return tr("invalid (pruned)");
    default:
      return tr("not measured");
  }
}

QColor TuneHeatmap::cellFill(int column, int row) const {
  const CellState s = cellState(column, row);
  if (s != CellState::Measured) return stateFill(s);
  const double score = *cellScore(column, row);
  return scoreColor(high_ > low_ ? (score - low_) / (high_ - low_) : 1.0);
}

QString TuneHeatmap::unitText() const {
  return record_ ? QString::fromStdString(ks::objectiveUnit(record_->objective)) : QString();
}

QString TuneHeatmap::titleText() const {
  if (!record_) return tr("No tune yet");
  QString title = QString::fromStdString(record_->kernel) + ' ' +
                  QString::fromStdString(ks::SizeSpec(record_->size).str()) + ": " + xDimension();
  if (y_ >= 0) title += QStringLiteral(" × ") + yDimension();
  QStringList slice;
  for (const QString& name : dimensionNames())
    if (name != xDimension() && name != yDimension()) slice << name + '=' + sliceLabel(name);
  if (!slice.isEmpty()) title += " (" + slice.join(", ") + ')';
  return title;
}

QString TuneHeatmap::cellToolTip(int column, int row) const {
  if (!record_) return {};
  const ks::TuneConfig c = cellConfig(column, row);
  QStringList lines{QString::fromStdString(record_->configText(c))};
  const QString unit = unitText();
  if (const auto* e = evaluationOf(c)) {
    const size_t number = size_t(e - record_->evaluations.data()) + 1;
    const ks::Measurement* m = e->point < points_.size() ? &points_[e->point] : nullptr;
    if (e->score) {
      lines << tr("%1 %2").arg(scoreText(*e->score), unit);
      if (m)
        lines << tr("median %1 over %2 samples")
                     .arg(QString::fromStdString(ks::formatDuration(m->stats.median)))
                     .arg(m->samples_ns.size());
    } else {
      QString why = tr("failed");
      if (m)
        why += ": " +
               (m->error.empty()
                    ? tr("verification %1").arg(QString::fromStdString(ks::verifyStatusName(m->verification.status)))
                    : firstLine(m->error));
      lines << why;
    }
    lines << tr("evaluation %1 of %2%3")
                 .arg(number)
                 .arg(record_->evaluations.size())
                 .arg(e->cached ? tr(", from the result cache") : QString());
    for (size_t i = 0; i < record_->final.size(); ++i)
      if (record_->final[i].config == c) {
        const auto& f = record_->final[i];
        lines << (f.error.empty()
                      ? tr("final round: #%1, %2 %3 (median %4)")
                            .arg(i + 1)
                            .arg(scoreText(f.score), unit, QString::fromStdString(ks::formatDuration(f.stats.median)))
                      : tr("final round: failed: %1").arg(firstLine(f.error)));
      }
  } else if (const std::string* reason = prunedReason(c)) {
    lines << tr("invalid: pruned before running") << QString::fromStdString(*reason);
  } else {
    lines << tr("not measured: the search did not evaluate it");
  }
  if (isWinnerCell(column, row)) lines << (record_->winner ? tr("the winner") : tr("the best so far"));
  return lines.join('\n');
}

TuneHeatmap::Layout TuneHeatmap::layout(QSizeF size) const {
  Layout l;
  l.font = font();
  l.title_font = l.font;
  l.title_font.setBold(true);
  l.title_font.setPointSizeF(l.font.pointSizeF() * 1.15);
  l.small_font = l.font;
  l.small_font.setPointSizeF(l.font.pointSizeF() * 0.9);
  const QFontMetricsF fm(l.font), title_fm(l.title_font), small_fm(l.small_font);
  const double line = fm.height();
  const double w = size.width(), h = size.height();

  // The title wraps (at most two lines) rather than losing its slice.
  const QRectF title_box =
      title_fm.boundingRect(QRectF(0, 0, w - 2 * kMargin, 1e6), Qt::AlignHCenter | Qt::TextWordWrap, titleText());
  l.title = QRectF(kMargin, kMargin, w - 2 * kMargin, std::min(title_box.height(), 2 * title_fm.lineSpacing()));
  // The legend wraps into rows.
  const auto items = legendItems(record_ && record_->winner);
  double row_width = 0;
  for (int i = 0; i < int(items.size()); ++i) {
    const double iw = legendItemWidth(items[size_t(i)], small_fm);
    if (l.legend_rows.empty() || (row_width + iw > w - 2 * kMargin && !l.legend_rows.back().empty())) {
      l.legend_rows.emplace_back();
      row_width = 0;
    }
    l.legend_rows.back().push_back(i);
    row_width += iw;
  }
  const double legend_h = double(l.legend_rows.size()) * (small_fm.height() + 4);
  l.legend = QRectF(kMargin, h - kMargin - legend_h, w - 2 * kMargin, legend_h);

  double y_labels = 0;
  if (record_ && y_ >= 0)
    for (const QString& s : valueLabels(yDimension())) y_labels = std::max(y_labels, fm.horizontalAdvance(s));
  const double y_title = y_ >= 0 ? line + 6 : 0;
  double bar_labels = fm.horizontalAdvance(QStringLiteral("0.000"));
  if (high_ > 0)
    bar_labels = std::max({bar_labels, fm.horizontalAdvance(scoreText(high_)), fm.horizontalAdvance(scoreText(low_))});
  const double bar_block = 14 + kBarWidth + 6 + bar_labels + 8 + line;

  const double left = kMargin + y_title + y_labels + 8;
  const double right = w - kMargin - bar_block;
  const double top = l.title.bottom() + 12;
  const double bottom = l.legend.top() - 10 - 2 * line - 10;  // x tick labels and the x title
  const int nx = std::max(1, columns()), ny = std::max(1, rows());
  double cw = std::max(1.0, (right - left) / nx), ch = std::max(1.0, (bottom - top) / ny);
  // Keep cells from turning into long strips.
  ch = std::min(ch, cw * 1.4);
  cw = std::min(cw, ch * 2.2);
  l.cell_w = cw;
  l.cell_h = ch;
  // The values in the cells: in the font, or a smaller one, or (where even that would not fit
  // the widest) none at all, so that no cell lacks a value another one shows.
  l.cell_font = l.font;
  l.cell_values = true;
  const auto fits = [&](const QFont& f) {
    const QFontMetricsF m(f);
    double widest = 0;
    if (record_)
      for (const auto& e : record_->evaluations)
        if (e.score) widest = std::max(widest, m.horizontalAdvance(scoreText(*e.score)));
    return widest + 6 <= cw && m.height() + 2 <= ch;
  };
  if (!fits(l.cell_font)) {
    l.cell_font.setPointSizeF(l.font.pointSizeF() * 0.8);
    l.cell_values = fits(l.cell_font);
  }
  const double gw = cw * nx, gh = ch * ny;
  const double gx = left + std::max(0.0, (right - left - gw) / 2);
  const double gy = top;  // under the title; the axis titles and the legend follow the grid
  l.grid = QRectF(gx, gy, gw, gh);
  l.y_labels_right = gx - 6;
  l.y_title_x = gx - 8 - y_labels - line / 2 - 4;
  l.x_labels_top = l.grid.bottom() + 4;
  l.x_title_top = l.x_labels_top + line + 2;
  l.bar = QRectF(l.grid.right() + 14, l.grid.top(), kBarWidth, std::max(gh, 3 * line));
  l.bar_labels_left = l.bar.right() + 6;
  l.bar_title_x = l.bar_labels_left + bar_labels + 8 + line / 2;
  l.legend.moveTop(std::max(l.x_title_top + line + 10, l.bar.bottom() + 10));
  return l;
}

QRectF TuneHeatmap::Layout::cell(int column, int row) const {
  return QRectF(grid.left() + column * cell_w, grid.bottom() - (row + 1) * cell_h, cell_w, cell_h);
}

QRectF TuneHeatmap::cellRect(int column, int row, QSizeF size) const { return layout(size).cell(column, row); }

void TuneHeatmap::paint(QPainter& p, QSizeF size) const {
  p.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  p.fillRect(QRectF(QPointF(0, 0), size), Qt::white);
  const Layout l = layout(size);
  const QFontMetricsF fm(l.font);
  p.setPen(kText);
  p.setFont(l.title_font);
  p.save();
  p.setClipRect(l.title.adjusted(-2, -2, 2, 2));
  p.drawText(l.title, Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap, titleText());
  p.restore();
  p.setFont(l.font);
  if (!record_ || columns() == 0) {
    p.setPen(kMutedText);
    p.drawText(QRectF(QPointF(0, 0), size), Qt::AlignCenter, tr("Start a tune or open a tune session"));
    return;
  }

  // Cells, with a hairline of white between them.
  for (int r = 0; r < rows(); ++r)
    for (int c = 0; c < columns(); ++c) {
      const QRectF cell = l.cell(c, r);
      const QRectF inner = cell.adjusted(0.5, 0.5, -0.5, -0.5);
      const CellState state = cellState(c, r);
      const QColor fill = cellFill(c, r);
      paintCellBackground(p, inner, state, fill);
      if (state == CellState::Measured) {
        const QString text = scoreText(*cellScore(c, r));
        if (l.cell_values) {
          p.setFont(l.cell_font);
          p.setPen(darkFill(fill) ? Qt::white : kText);
          p.drawText(inner, Qt::AlignCenter, text);
          p.setFont(l.font);
        }
      }
    }
  for (int r = 0; r < rows(); ++r)
    for (int c = 0; c < columns(); ++c)
      if (isWinnerCell(c, r)) paintWinnerOutline(p, l.cell(c, r));

  // Ticks and axis titles. Labels that would overlap are thinned.
  p.setPen(kText);
  const QStringList xs = valueLabels(xDimension());
  double widest = 0;
  for (const QString& s : xs) widest = std::max(widest, fm.horizontalAdvance(s));
  const int x_every = std::max(1, int(std::ceil((widest + 6) / l.cell_w)));
  for (int c = 0; c < xs.size(); c += x_every)
    p.drawText(QRectF(l.grid.left() + c * l.cell_w - 40, l.x_labels_top, l.cell_w + 80, fm.height()), Qt::AlignHCenter,
               xs[c]);
  p.drawText(QRectF(l.grid.left() - 100, l.x_title_top, l.grid.width() + 200, fm.height()), Qt::AlignHCenter,
             xDimension());
  if (y_ >= 0) {
    const QStringList ys = valueLabels(yDimension());
    const int y_every = std::max(1, int(std::ceil(fm.height() / l.cell_h)));
    for (int r = 0; r < ys.size(); r += y_every) {
      const QRectF cell = l.cell(0, r);
      p.drawText(QRectF(0, cell.top(), l.y_labels_right, cell.height()), Qt::AlignRight | Qt::AlignVCenter, ys[r]);
    }
    p.save();
    p.translate(l.y_title_x, l.grid.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-l.grid.height() / 2 - 100, -fm.height() / 2, l.grid.height() + 200, fm.height()),
               Qt::AlignCenter, yDimension());
    p.restore();
  }

  // The colour bar: the score range, low at the bottom.
  const bool scored = std::any_of(record_->evaluations.begin(), record_->evaluations.end(),
                                  [](const ks::TuneEvaluation& e) { return e.score.has_value(); });
  if (scored) {
    QLinearGradient g(l.bar.bottomLeft(), l.bar.topLeft());
    for (int i = 0; i <= kViridisSteps; ++i) g.setColorAt(double(i) / kViridisSteps, kViridis[i]);
    p.setPen(QPen(kCellBorder, 1));
    p.setBrush(g);
    p.drawRect(l.bar);
    p.setPen(kText);
    // Round values along the bar (the range's ends when it has none).
    std::vector<double> ticks;
    const double step = niceStep(high_ - low_, 5);
    if (high_ > low_)
      for (double v = std::ceil(low_ / step - 1e-9) * step; v <= high_ + step * 1e-9; v += step) ticks.push_back(v);
    if (ticks.empty()) ticks = {low_, high_};
    const int decimals = std::max(0, int(-std::floor(std::log10(step) + 1e-9)));
    for (double v : ticks) {
      const double f = high_ > low_ ? (v - low_) / (high_ - low_) : 1.0;
      const double y = l.bar.bottom() - f * l.bar.height();
      p.drawLine(QPointF(l.bar.right(), y), QPointF(l.bar.right() + 4, y));
      p.drawText(QRectF(l.bar_labels_left, y - fm.height() / 2, 200, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                 high_ > low_ ? QString::number(v, 'f', decimals) : scoreText(v));
    }
  }
  p.save();
  p.translate(l.bar_title_x, l.bar.center().y());
  p.rotate(90);
  p.setPen(kText);
  p.drawText(QRectF(-l.bar.height() / 2 - 100, -fm.height() / 2, l.bar.height() + 200, fm.height()), Qt::AlignCenter,
             scored ? unitText() : tr("%1: nothing measured yet").arg(unitText()));
  p.restore();

  // The legend: the four states and the outline, in rows centred under the grid.
  p.setFont(l.small_font);
  const QFontMetricsF sfm(l.small_font);
  const double sw = std::round(sfm.height());
  const auto items = legendItems(record_->winner.has_value());
  double y = l.legend.top();
  for (const auto& row : l.legend_rows) {
    double total = 0;
    for (int i : row) total += legendItemWidth(items[size_t(i)], sfm);
    double x = l.legend.left() + std::max(0.0, (l.legend.width() - total + 16) / 2);
    const QRectF band(l.legend.left(), y, l.legend.width(), sfm.height() + 4);
    for (int i : row) {
      const LegendItem& it = items[size_t(i)];
      const QRectF swatch(x, band.center().y() - sw / 2, swatchWidth(it, sw), sw);
      if (it.outline) {
        paintCellBackground(p, swatch, CellState::Measured, scoreColor(0.9));
        p.save();
        p.setPen(QPen(kWinnerOutline, 2.5));
        p.setBrush(Qt::NoBrush);
        p.drawRect(swatch.adjusted(1.25, 1.25, -1.25, -1.25));
        p.restore();
      } else if (it.state == CellState::Measured) {
        QLinearGradient g(swatch.topLeft(), swatch.topRight());
        for (int k = 0; k <= kViridisSteps; ++k) g.setColorAt(double(k) / kViridisSteps, kViridis[k]);
        p.fillRect(swatch, g);
      } else {
        paintCellBackground(p, swatch, it.state, stateFill(it.state));
        if (it.state != CellState::Unmeasured) {
          p.setPen(QPen(kCellBorder, 1));
          p.setBrush(Qt::NoBrush);
          p.drawRect(swatch);
        }
      }
      x = swatch.right() + 5;
      p.setPen(kText);
      p.drawText(QRectF(x, band.top(), sfm.horizontalAdvance(it.text) + 2, band.height()),
                 Qt::AlignLeft | Qt::AlignVCenter, it.text);
      x += sfm.horizontalAdvance(it.text) + 16;
    }
    y += band.height();
  }
}

void TuneHeatmap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  paint(p, size());
}

bool TuneHeatmap::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const Layout l = layout(size());
    for (int r = 0; r < rows(); ++r)
      for (int c = 0; c < columns(); ++c)
        if (l.cell(c, r).contains(help->pos())) {
          QToolTip::showText(help->globalPos(), cellToolTip(c, r), this);
          return true;
        }
    QToolTip::hideText();
    e->ignore();
    return true;
  }
  return QWidget::event(e);
}

QString TuneHeatmap::exportPng(const QString& path, QSize size, qreal scale) const {
  if (!record_) return tr("there is no tune to draw");
  return writeChartPng(path, size, scale, [&](QPainter& painter) { paint(painter, QSizeF(size)); });
}

}  // namespace ks::ui
