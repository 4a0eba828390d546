#include "ui/chart_export.h"

#include <QChart>
#include <QChartView>
#include <QDir>
#include <QFileInfo>
#include <QGraphicsLayout>
#include <QGuiApplication>
#include <QImage>
#include <QImageWriter>
#include <QScreen>
#include <QVBoxLayout>
#include <cmath>

namespace ks::ui {

QChart* newChart() {
  auto* c = new QChart;
  c->setTheme(QChart::ChartThemeLight);
  c->setBackgroundRoundness(0);
  c->setMargins(QMargins(4, 4, 8, 4));
  if (c->layout()) c->layout()->setContentsMargins(0, 0, 0, 0);  // no grey frame around the chart
  QFont title_font = c->titleFont();
  title_font.setBold(true);
  title_font.setPointSizeF(title_font.pointSizeF() * 1.15);
  c->setTitleFont(title_font);
  return c;
}

QChartView* addChartView(QWidget* owner) {
  auto* view = new QChartView(owner);
  view->setRenderHint(QPainter::Antialiasing);
  view->setRenderHint(QPainter::TextAntialiasing);
  view->setMinimumSize(360, 240);
  view->setFrameShape(QFrame::NoFrame);
  auto* layout = new QVBoxLayout(owner);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view);
  return view;
}

qreal layoutDpi() {
  const QScreen* screen = QGuiApplication::primaryScreen();
  return screen ? screen->logicalDotsPerInchY() : 96.0;
}

double niceStep(double span, int ticks) {
  if (!(span > 0) || !std::isfinite(span) || ticks < 1) return 1;
  const double raw = span / ticks;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * decade >= raw) return m * decade;
  return 10 * decade;
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

QString writeChartPng(const QString& path, QSize size, qreal scale, const std::function<void(QPainter&)>& draw) {
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
    QPainter painter(&image);
    draw(painter);
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

}  // namespace ks::ui
