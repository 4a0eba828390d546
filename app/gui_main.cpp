// kernelscope: the desktop app. With --export-png/--export-svg it renders a
// session's chart to a file without opening a window (works headless).
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QTimer>
#include <cstdio>
#include <map>

#include "engine/kernels/kernel_file.h"
#include "engine/session/session.h"
#include "ui/chart_panel.h"
#include "ui/main_window.h"
#include "ui/roofline_chart.h"
#include "ui/tune_heatmap.h"
#include "ui/tune_progress_chart.h"

namespace {

int fail(const QString& message) {
  std::fprintf(stderr, "kernelscope: error: %s\n", qPrintable(message));
  return 2;
}

// A tune's heatmap or progress chart, PNG only.
int exportTuneChart(const QCommandLineParser& args, const ks::Session& session, const QString& which, QSize size,
                    double scale) {
  if (args.isSet("export-svg")) return fail("--chart " + which + " exports as PNG only (--export-png)");
  if (!session.tune)
    return fail(QString("%1 has no tune: --chart %2 draws a session written by kernelscope-cli tune or the Tune tab")
                    .arg(args.positionalArguments().first(), which));
  const QString path = args.value("export-png");
  QString err, title;
  if (which == "heatmap") {
    ks::ui::TuneHeatmap heatmap;
    heatmap.resize(size);
    heatmap.setRecord(*session.tune, session.points);
    const QStringList dims = heatmap.dimensionNames();
    if (dims.size() == 1 && args.isSet("y"))
      return fail(QString("--y: the tune has one dimension (%1): it is the x axis, leave --y out").arg(dims.first()));
    // Left out: the first two dimensions (one given: the other is the first one left).
    QString x = args.value("x"), y = args.value("y");
    if (x.isEmpty()) x = y == heatmap.xDimension() ? heatmap.yDimension() : heatmap.xDimension();
    if (y.isEmpty()) y = x == heatmap.yDimension() ? heatmap.xDimension() : heatmap.yDimension();
    if (QString why = heatmap.setAxes(x, y); !why.isEmpty()) return fail("--x/--y: " + why);
    if (QString why = heatmap.setSlice(args.value("slice")); !why.isEmpty()) return fail("--slice: " + why);
    err = heatmap.exportPng(path, size, scale);
    title = heatmap.titleText();
  } else {
    ks::ui::TuneProgressChart chart;
    chart.resize(size);
    chart.setRecord(*session.tune);
    err = chart.exportPng(path, size, scale);
    title = chart.titleText();
  }
  if (!err.isEmpty()) {
    std::fprintf(stderr, "kernelscope: error: %s\n", qPrintable(err));
    return 1;
  }
  std::printf("wrote %s (%dx%d at %gx): %s\n", qPrintable(path), size.width(), size.height(), scale, qPrintable(title));
  return 0;
}

int exportCharts(const QCommandLineParser& args) {
  const QStringList files = args.positionalArguments();
  if (files.size() != 1) {
    std::fprintf(stderr, "kernelscope: error: --export-png/--export-svg need exactly one session file\n");
    return 2;
  }
  auto session = ks::loadSession(files.first().toStdString());
  if (!session) {
    std::fprintf(stderr, "kernelscope: error: %s\n", session.error().message.c_str());
    return 2;
  }
  const QString which = args.value("chart");
  const std::map<QString, ks::ui::Metric> metrics = {{"gflops", ks::ui::Metric::Gflops},
                                                     {"gbps", ks::ui::Metric::Gbps},
                                                     {"time", ks::ui::Metric::Time},
                                                     {"relative", ks::ui::Metric::RelativeTime}};
  const bool tune_chart = which == "heatmap" || which == "tune-progress";
  if (!metrics.count(which) && which != "roofline" && !tune_chart)
    return fail(QString("--chart must be gflops, gbps, time, relative, roofline, heatmap or tune-progress, not '%1'")
                    .arg(which));
  if (which != "heatmap")
    for (const char* option : {"x", "y", "slice"})
      if (args.isSet(option)) return fail(QString("--%1 applies to --chart heatmap only").arg(option));
  const QStringList wh = args.value("size").split('x');
  bool okW = false, okH = false;
  const int w = wh.size() == 2 ? wh[0].toInt(&okW) : 0, h = wh.size() == 2 ? wh[1].toInt(&okH) : 0;
  if (!okW || !okH || w < 100 || h < 100 || w > 10000 || h > 10000) {
    std::fprintf(stderr, "kernelscope: error: --size must be WIDTHxHEIGHT between 100 and 10000, not '%s'\n",
                 qPrintable(args.value("size")));
    return 2;
  }
  bool okScale = false;
  const double scale = args.value("scale").toDouble(&okScale);
  if (!okScale || scale < 1 || scale > 4) {
    std::fprintf(stderr, "kernelscope: error: --scale must be between 1 and 4\n");
    return 2;
  }
  if (tune_chart) return exportTuneChart(args, *session, which, QSize(w, h), scale);
  if (which == "roofline") {  // PNG only; the ceilings come from the session's measured peaks
    if (args.isSet("export-svg")) {
      std::fprintf(stderr, "kernelscope: error: the roofline exports as PNG only\n");
      return 2;
    }
    ks::ui::RooflineChart roofline;
    roofline.resize(w, h);
    roofline.setData(session->points, session->peaks ? &*session->peaks : nullptr);
    const QString err = roofline.exportPng(args.value("export-png"), QSize(w, h), scale);
    if (!err.isEmpty()) {
      std::fprintf(stderr, "kernelscope: error: %s\n", qPrintable(err));
      return 1;
    }
    // The chart's own note: no peaks at all, or none for the host CPU's (or the device's) points.
    const QString note = roofline.noteText();
    std::printf("wrote %s (%dx%d at %gx)%s\n", qPrintable(args.value("export-png")), w, h, scale,
                note.isEmpty() ? "" : qPrintable("; " + note));
    return 0;
  }
  ks::ui::ChartPanel panel(metrics.at(which));
  panel.resize(w, h);
  panel.setLogY(args.isSet("log-y"));
  panel.setMeasurements(session->points);
  if (args.isSet("compare")) {
    auto baseline = ks::loadSession(args.value("compare").toStdString());
    if (!baseline) {
      std::fprintf(stderr, "kernelscope: error: --compare: %s\n", baseline.error().message.c_str());
      return 2;
    }
    panel.setOverlay(baseline->points);
  }
  if (which == "relative") {
    const QStringList names = panel.seriesNames();
    QString base = args.value("baseline");
    if (base.isEmpty())
      for (const QString& n : names)
        if (n.contains("openblas")) base = n;
    if (base.isEmpty() && !names.isEmpty()) base = names.first();
    if (!names.contains(base)) {
      std::fprintf(stderr, "kernelscope: error: no series '%s' in the session (series: %s)\n", qPrintable(base),
                   qPrintable(names.join(", ")));
      return 2;
    }
    panel.setBaseline(base);
  }
  int rc = 0;
  if (args.isSet("export-png")) {
    const QString err = panel.exportPng(args.value("export-png"), QSize(w, h), scale);
    if (!err.isEmpty()) {
      std::fprintf(stderr, "kernelscope: error: %s\n", qPrintable(err));
      rc = 1;
    } else {
      std::printf("wrote %s (%dx%d at %gx)\n", qPrintable(args.value("export-png")), w, h, scale);
    }
  }
  if (args.isSet("export-svg")) {
    const QString err = panel.exportSvg(args.value("export-svg"), QSize(w, h));
    if (!err.isEmpty()) {
      std::fprintf(stderr, "kernelscope: error: %s\n", qPrintable(err));
      rc = 1;
    } else {
      std::printf("wrote %s\n", qPrintable(args.value("export-svg")));
    }
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  // Chart export needs no display: use the offscreen platform when there is none.
  bool exporting = false;
  for (int i = 1; i < argc; ++i) exporting |= QByteArray(argv[i]).startsWith("--export-");
  if (exporting && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
      qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
    qputenv("QT_QPA_PLATFORM", "offscreen");

  QApplication app(argc, argv);
  QApplication::setApplicationName("kernelscope");
  QApplication::setOrganizationName("kernelscope");
  QApplication::setApplicationVersion(KS_VERSION);
  QApplication::setWindowIcon(QIcon(":/kernelscope/kernelscope.svg"));

  QCommandLineParser args;
  args.setApplicationDescription("kernelscope: GPU compute kernels, timed and verified");
  args.addHelpOption();
  args.addVersionOption();
  args.addPositionalArgument("session", "a session file to open");
  args.addOption({"export-png", "Render a chart of the session to a PNG file and exit.", "file"});
  args.addOption({"export-svg", "Render a chart of the session to an SVG file and exit.", "file"});
  args.addOption({"chart",
                  "Which chart to export: gflops, gbps, time, relative or roofline; of a tune session also heatmap "
                  "or tune-progress.",
                  "kind", "gflops"});
  args.addOption({"x", "The heatmap's x dimension (a tunable or wg; default: the tune's first).", "dimension"});
  args.addOption({"y", "The heatmap's y dimension (default: the tune's second).", "dimension"});
  args.addOption({"slice",
                  "The heatmap's other dimensions, e.g. wg=16x16,TM=8 (default: each at the best configuration's "
                  "value).",
                  "values"});
  args.addOption({"baseline", "The series the relative chart divides by (default: an OpenBLAS series).", "series"});
  args.addOption({"log-y", "A log y axis (gflops, gbps, relative)."});
  args.addOption(
      {"compare", "A baseline session: its matching series drawn dashed, ratios in the Compare tab.", "file"});
  args.addOption({"size", "Exported chart size in logical pixels.", "WxH", "1600x900"});
  args.addOption({"scale", "Pixel scale of the PNG (2 = twice the pixels, crisp).", "factor", "2"});
  args.process(app);

  if (args.isSet("export-png") || args.isSet("export-svg")) return exportCharts(args);

  ks::ui::MainWindow window;
  window.show();
  // The user's kernel files, before a session: a session's own version of a
  // kernel replaces the folder's. A file that does not load is logged, not fatal.
  window.loadKernelDir(QString::fromStdString(ks::defaultKernelDir()));
  if (!args.positionalArguments().isEmpty()) window.openSession(args.positionalArguments().first());
  if (args.isSet("compare")) window.openBaseline(args.value("compare"));
  // Once the window is up: a sweep an earlier start lost (crash, kill) is offered back.
  QTimer::singleShot(0, &window, &ks::ui::MainWindow::offerRestore);
  return app.exec();
}
