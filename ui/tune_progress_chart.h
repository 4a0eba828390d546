#pragma once
// A tune's progress (Qt Charts): each evaluation's score in the order it ran,
// and the best score so far.
#include <QList>
#include <QPointF>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <optional>

#include "engine/tune/tune_record.h"

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
QT_END_NAMESPACE

namespace ks::ui {

// x = evaluation number (1, 2, ...; the axis spans the budget, so a live tune
// fills it from the left), y = the objective's score in its unit. Series, in
// legend order:
//   "measured"        scatter, one point per evaluation timed by this tune
//   "from the cache"  scatter (diamonds), evaluations taken from the result cache
//   "failed"          red crosses on the x axis (y = 0), evaluations with no score
//   "best so far"     step line through TuneRecord::bestSoFar(), from the first success
// Hovering a point shows its configuration and score.
class TuneProgressChart : public QWidget {
  Q_OBJECT
 public:
  explicit TuneProgressChart(QWidget* parent = nullptr);
  ~TuneProgressChart() override;

  void setRecord(const ks::TuneRecord& record);  // re-plots (a live tune calls it with each snapshot)
  void clear();

  QChart* chart() const;
  QChartView* view() const;
  QStringList seriesNames() const;
  QList<QPointF> seriesPoints(const QString& name) const;  // as plotted
  QString titleText() const;

  static QString measuredName();  // "measured"
  static QString cachedName();    // "from the cache"
  static QString failedName();    // "failed"
  static QString bestName();      // "best so far"

  // Render to a PNG without a window. Empty on success, else a readable reason.
  QString exportPng(const QString& path, QSize size, qreal scale) const;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};

}  // namespace ks::ui
