#pragma once
// What every chart widget shares: its view, and writing the chart to an image file.
#include <QFile>
#include <QPainter>
#include <QSize>
#include <QString>
#include <functional>

class QChart;
class QChartView;
class QWidget;

namespace ks::ui {

// A new chart in the app's look: light theme, square corners, tight margins, no grey frame, a
// bold title a little larger than the text.
QChart* newChart();

// An antialiased, frameless chart view filling `owner` (which takes it into a margin-free layout).
QChartView* addChartView(QWidget* owner);

// The DPI the chart's text was laid out for (font metrics without a device use the screen's): an
// export device must use it too, or point-sized text is drawn at another pixel size than measured.
qreal layoutDpi();

// A step of 1, 2 or 5 times a power of ten giving about `ticks` intervals over `span` (1 for no span).
double niceStep(double span, int ticks);

// Empty when a chart of `size` logical pixels can be written to `path`, else why not.
QString checkExportArgs(const QString& path, QSize size);

// Opens `file` for writing; empty on success, else a readable reason (folder missing, a folder, ...).
QString openForWrite(QFile& file);

// Renders `draw` (a chart laid out at `size`) onto white at `scale` pixels per logical pixel and
// writes it as PNG. Empty on success, else a readable reason; no partial file is left behind.
QString writeChartPng(const QString& path, QSize size, qreal scale, const std::function<void(QPainter&)>& draw);

}  // namespace ks::ui
