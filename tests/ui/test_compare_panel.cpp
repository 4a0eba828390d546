// ComparePanel and CompareModel: ratios, marks and colours from two synthetic sessions, warnings,
// the summary, sorting on raw numbers, and the panel without a baseline.
#include <QAbstractItemModelTester>
#include <QBrush>
#include <QColor>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QtTest>
#include <cmath>

#include "engine/bench/compare.h"
#include "tests/synthetic_session.h"
#include "ui/compare_panel.h"

using ks::testing::failedPoint;
using ks::testing::okPoint;
using ks::testing::planItem;
using ks::testing::samplesAround;
using ks::testing::syntheticSession;
using ks::ui::CompareModel;
using ks::ui::ComparePanel;

namespace {

std::vector<double> scaled(const std::vector<double>& v, double factor) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * factor);
  return out;
}

const std::vector<double> kSamples = samplesAround(100000, 11);  // 100 us, 11 distinct samples

const ks::PlanItem kTwiceAsFast = planItem("gemm.naive", 32, {16, 16, 1});
const ks::PlanItem kTwiceAsSlow = planItem("gemm.naive", 64, {16, 16, 1});
const ks::PlanItem kUnchanged = planItem("gemm.naive_coalesced", 32, {16, 16, 1});
const ks::PlanItem kTenTimesSlower = planItem("gemm.naive_coalesced", 64, {16, 16, 1});
const ks::PlanItem kFailsNow = planItem("cpu.gemm.naive", 16);
const ks::PlanItem kOnlyBaseline = planItem("cpu.gemm.blocked", 16);
const ks::PlanItem kOnlyCurrent = planItem("cpu.gemm.naive", 32);

ks::Session baselineSession() {
  return syntheticSession({okPoint(kTwiceAsFast, kSamples), okPoint(kTwiceAsSlow, kSamples),
                           okPoint(kUnchanged, kSamples), okPoint(kTenTimesSlower, kSamples),
                           okPoint(kFailsNow, kSamples), okPoint(kOnlyBaseline, kSamples)});
}

// Rows in this order: 0.5x, 2x, unchanged, 10x, failed; plus one point only here.
ks::Session currentSession() {
  return syntheticSession({okPoint(kTwiceAsFast, scaled(kSamples, 0.5)), okPoint(kTwiceAsSlow, scaled(kSamples, 2)),
                           okPoint(kUnchanged, kSamples), okPoint(kTenTimesSlower, scaled(kSamples, 10)),
                           failedPoint(kFailsNow, "vkQueueSubmit: the device was lost (VK_ERROR_DEVICE_LOST)"),
                           okPoint(kOnlyCurrent, kSamples)});
}

QString cell(const QAbstractItemModel* m, int row, int col, int role = Qt::DisplayRole) {
  return m->data(m->index(row, col), role).toString();
}

QColor background(const QAbstractItemModel* m, int row, int col) {
  return m->data(m->index(row, col), Qt::BackgroundRole).value<QBrush>().color();
}

int rowOf(const QAbstractItemModel* m, const QString& kernel, const QString& size) {
  for (int r = 0; r < m->rowCount(); ++r)
    if (cell(m, r, CompareModel::Kernel) == kernel && cell(m, r, CompareModel::Size) == size) return r;
  return -1;
}

}  // namespace

class TestComparePanel : public QObject {
  Q_OBJECT

 private slots:
  void ratiosMarksAndColours() {
    ComparePanel panel;
    QAbstractItemModelTester tester(panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    const ks::Session baseline = baselineSession(), current = currentSession();
    panel.setSessions(&baseline, current);
    QVERIFY(panel.hasBaseline());
    const CompareModel* m = panel.model();
    QCOMPARE(m->rowCount(), 5);
    QCOMPARE(m->columnCount(), int(CompareModel::ColumnCount));
    QCOMPARE(m->headerData(CompareModel::Ratio, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("Ratio"));

    // Twice as fast: ratio 0.5, speedup 2, fully separated samples: p = 2 / C(22, 11), "***", green.
    const int fast = rowOf(m, "gemm.naive", "32");
    QCOMPARE(fast, 0);
    QCOMPARE(cell(m, fast, CompareModel::Params), QStringLiteral("16x16"));
    QCOMPARE(cell(m, fast, CompareModel::BaselineMedian), QStringLiteral("100 us"));
    QCOMPARE(cell(m, fast, CompareModel::CurrentMedian), QStringLiteral("50 us"));
    QCOMPARE(cell(m, fast, CompareModel::Ratio), QStringLiteral("0.500"));
    QCOMPARE(cell(m, fast, CompareModel::Speedup), QStringLiteral("2.00×"));
    QCOMPARE(m->data(m->index(fast, CompareModel::Ratio), CompareModel::SortRole).toDouble(), 0.5);
    const double p = m->data(m->index(fast, CompareModel::P), CompareModel::SortRole).toDouble();
    QVERIFY2(std::abs(p - 2.0 / 705432) < 1e-12, qPrintable(QString::number(p)));
    QCOMPARE(cell(m, fast, CompareModel::P), QString::number(p, 'g', 2));
    QCOMPARE(cell(m, fast, CompareModel::Significance), QStringLiteral("***"));
    QCOMPARE(background(m, fast, CompareModel::Ratio), CompareModel::fasterColor());
    QVERIFY(CompareModel::fasterColor().green() > CompareModel::fasterColor().red());
    QVERIFY(cell(m, fast, CompareModel::Ratio, Qt::ToolTipRole).contains("significantly faster"));
    QVERIFY(cell(m, fast, CompareModel::Ratio, Qt::ToolTipRole).contains("Mann-Whitney U"));

    // Twice as slow: ratio 2, red.
    const int slow = rowOf(m, "gemm.naive", "64");
    QCOMPARE(cell(m, slow, CompareModel::Ratio), QStringLiteral("2.000"));
    QCOMPARE(cell(m, slow, CompareModel::Speedup), QStringLiteral("0.50×"));
    QCOMPARE(cell(m, slow, CompareModel::Significance), QStringLiteral("***"));
    QCOMPARE(background(m, slow, CompareModel::Ratio), CompareModel::slowerColor());
    QVERIFY(CompareModel::slowerColor().red() > CompareModel::slowerColor().green());

    // The same samples: ratio 1, p = 1, no mark, no colour.
    const int same = rowOf(m, "gemm.naive_coalesced", "32");
    QCOMPARE(cell(m, same, CompareModel::Ratio), QStringLiteral("1.000"));
    QCOMPARE(cell(m, same, CompareModel::P), QStringLiteral("1"));
    QCOMPARE(cell(m, same, CompareModel::Significance), QString());
    QVERIFY(!m->data(m->index(same, CompareModel::Ratio), Qt::BackgroundRole).isValid());
    QVERIFY(cell(m, same, CompareModel::Ratio, Qt::ToolTipRole).contains("not significant"));

    // Failed now: the current side says so, no ratio, speedup, p or mark.
    const int failed = rowOf(m, "cpu.gemm.naive", "16");
    QCOMPARE(cell(m, failed, CompareModel::BaselineMedian), QStringLiteral("100 us"));
    QVERIFY2(cell(m, failed, CompareModel::CurrentMedian).startsWith("failed"),
             qPrintable(cell(m, failed, CompareModel::CurrentMedian)));
    QVERIFY(cell(m, failed, CompareModel::CurrentMedian).contains("device was lost"));
    QCOMPARE(m->data(m->index(failed, CompareModel::CurrentMedian), Qt::ForegroundRole).value<QBrush>().color(),
             QColor(0xc6, 0x28, 0x28));
    for (int col : {int(CompareModel::Ratio), int(CompareModel::Speedup), int(CompareModel::P)}) {
      QCOMPARE(cell(m, failed, col), QStringLiteral("–"));
      QCOMPARE(m->data(m->index(failed, col), CompareModel::SortRole).toDouble(), -1.0);
    }
    QCOMPARE(cell(m, failed, CompareModel::Significance), QString());
    QVERIFY(!m->data(m->index(failed, CompareModel::Ratio), Qt::BackgroundRole).isValid());
    QCOMPARE(cell(m, failed, CompareModel::Params), QStringLiteral("-"));  // CPU kernels have no workgroup

    // The summary: geometric mean of 0.5, 2, 1 and 10 = 10^(1/4).
    const QString summary = panel.summaryText();
    QVERIFY2(summary.contains(QStringLiteral("Geometric mean ratio %1").arg(std::pow(10.0, 0.25), 0, 'f', 3)),
             qPrintable(summary));
    QVERIFY2(summary.contains("1.78× slower"), qPrintable(summary));
    QVERIFY2(summary.contains("over 4 points"), qPrintable(summary));
    QVERIFY2(summary.contains("1 faster / 2 slower (p < 0.05), 1 not significant"), qPrintable(summary));
    QVERIFY2(summary.contains("1 only in baseline"), qPrintable(summary));
    QVERIFY2(summary.contains("1 only in current"), qPrintable(summary));
    QVERIFY2(summary.contains("1 not compared (failed, skipped or unverified)"), qPrintable(summary));
    QVERIFY(panel.findChild<QLabel*>("compareSummary")->toolTip().contains("cpu.gemm.blocked"));
    QVERIFY(panel.sessionsText().contains("llvmpipe"));

    // Identical devices and builds: no warnings, the label hidden.
    QCOMPARE(panel.warningsText(), QString());
    QVERIFY(panel.warningsLabel()->isHidden());
    QVERIFY(!panel.view()->isHidden());
  }

  void sortsOnRawNumbers() {
    ComparePanel panel;
    QAbstractItemModelTester tester(panel.proxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    const ks::Session baseline = baselineSession(), current = currentSession();
    panel.setSessions(&baseline, current);
    QSortFilterProxyModel* proxy = panel.proxy();
    QCOMPARE(proxy->rowCount(), 5);
    // Clicking the header: as text "10.000" would sort before "2.000".
    panel.view()->sortByColumn(CompareModel::Ratio, Qt::AscendingOrder);
    QStringList ratios;
    for (int r = 0; r < proxy->rowCount(); ++r) ratios << cell(proxy, r, CompareModel::Ratio);
    QCOMPARE(ratios, (QStringList{"–", "0.500", "1.000", "2.000", "10.000"}));
    panel.view()->sortByColumn(CompareModel::Ratio, Qt::DescendingOrder);
    QCOMPARE(cell(proxy, 0, CompareModel::Ratio), QStringLiteral("10.000"));
    QCOMPARE(cell(proxy, 1, CompareModel::Ratio), QStringLiteral("2.000"));
    QCOMPARE(cell(proxy, 4, CompareModel::Ratio), QStringLiteral("–"));
    // Times sort by nanoseconds ("1 ms" after "200 us"), sizes by m*n*k.
    panel.view()->sortByColumn(CompareModel::CurrentMedian, Qt::DescendingOrder);
    QCOMPARE(cell(proxy, 0, CompareModel::CurrentMedian), QStringLiteral("1 ms"));
    QCOMPARE(cell(proxy, 1, CompareModel::CurrentMedian), QStringLiteral("200 us"));
    panel.view()->sortByColumn(CompareModel::Significance, Qt::DescendingOrder);
    QCOMPARE(cell(proxy, 0, CompareModel::Significance), QStringLiteral("***"));
    QCOMPARE(cell(proxy, 3, CompareModel::Significance), QString());  // p = 1
    // A new comparison keeps the table working (the tester checks the reset).
    panel.setSessions(&current, baseline);
    QCOMPARE(proxy->rowCount(), 5);
    panel.clear();
    QCOMPARE(proxy->rowCount(), 0);
  }

  void warningsWhenTheRunsDiffer() {
    ComparePanel panel;
    const ks::Session baseline = baselineSession();
    ks::Session current = currentSession();
    current.device->name = "NVIDIA H200";
    current.environment["OPENBLAS_NUM_THREADS"] = "1";
    panel.setSessions(&baseline, current);
    const QStringList lines = panel.warningsText().split('\n');
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[0].startsWith("device differs") && lines[0].contains("NVIDIA H200") && lines[0].contains("llvmpipe"),
             qPrintable(lines[0]));
    QVERIFY(lines[1].contains("OPENBLAS_NUM_THREADS"));
    QVERIFY(!panel.warningsLabel()->isHidden());
    // The device line in red, the environment in amber.
    const QString html = panel.warningsLabel()->text();
    QVERIFY2(html.contains("#c62828") && html.contains("#9a6700"), qPrintable(html));
    QVERIFY(html.indexOf("#c62828") < html.indexOf("device differs"));
    QVERIFY(html.indexOf("#9a6700") < html.indexOf("OPENBLAS_NUM_THREADS"));
    QVERIFY(panel.sessionsText().contains("NVIDIA H200"));

    // The same runs again: the warnings go.
    const ks::Session same = currentSession();
    panel.setSessions(&baseline, same);
    QCOMPARE(panel.warningsText(), QString());
    QVERIFY(panel.warningsLabel()->isHidden());
  }

  void noBaseline() {
    ComparePanel panel;
    QAbstractItemModelTester tester(panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(!panel.hasBaseline());
    QVERIFY2(panel.summaryText().contains("No baseline") && panel.summaryText().contains("Open Baseline"),
             qPrintable(panel.summaryText()));
    QVERIFY(panel.view()->isHidden());
    QVERIFY(panel.warningsLabel()->isHidden());
    QCOMPARE(panel.model()->rowCount(), 0);

    const ks::Session baseline = baselineSession(), current = currentSession();
    panel.setSessions(&baseline, current);
    QCOMPARE(panel.model()->rowCount(), 5);
    QVERIFY(!panel.view()->isHidden());
    panel.setSessions(nullptr, current);
    QVERIFY(!panel.hasBaseline());
    QCOMPARE(panel.model()->rowCount(), 0);
    QVERIFY(panel.summaryText().contains("No baseline"));
    QVERIFY(panel.view()->isHidden());
    QCOMPARE(panel.sessionsText(), QString());

    panel.setSessions(&baseline, current);
    panel.clear();
    QVERIFY(!panel.hasBaseline());
    QCOMPARE(panel.model()->rowCount(), 0);
    QVERIFY(panel.summaryText().contains("No baseline"));
  }

  void smallDifferencesStayVisible() {
    ComparePanel panel;
    const ks::PlanItem item = planItem("cpu.gemm.naive", 16);
    const ks::Session baseline = syntheticSession({okPoint(item, kSamples)});
    const struct {
      double factor;
      QString ratio, change;
    } cases[] = {{1.0004, "1.0004", "(no overall change)"},
                 {1.003, "1.003", "(0.3% more time)"},
                 {0.95, "0.950", "(5.0% less time)"},
                 {0.25, "0.250", "(4.00× faster)"}};
    for (const auto& c : cases) {
      const ks::Session current = syntheticSession({okPoint(item, scaled(kSamples, c.factor))});
      panel.setSessions(&baseline, current);
      QCOMPARE(cell(panel.model(), 0, CompareModel::Ratio), c.ratio);
      QVERIFY2(panel.summaryText().startsWith("Geometric mean ratio " + c.ratio + " " + c.change + " over 1 point"),
               qPrintable(panel.summaryText()));
    }
  }

  void nothingComparable() {
    ComparePanel panel;
    const ks::PlanItem item = planItem("cpu.gemm.naive", 16);
    const ks::Session baseline = syntheticSession({failedPoint(item, "out of memory")});
    ks::Measurement unverified = okPoint(item, kSamples);
    unverified.verification.status = ks::VerifyStatus::Failed;
    const ks::Session current = syntheticSession({unverified});
    panel.setSessions(&baseline, current);
    QVERIFY2(panel.summaryText().contains("nothing to compare"), qPrintable(panel.summaryText()));
    QCOMPARE(panel.model()->rowCount(), 1);
    const CompareModel* m = panel.model();
    QCOMPARE(cell(m, 0, CompareModel::BaselineMedian), QStringLiteral("failed: out of memory"));
    QCOMPARE(cell(m, 0, CompareModel::CurrentMedian), QStringLiteral("verification failed"));
    QCOMPARE(cell(m, 0, CompareModel::Ratio), QStringLiteral("–"));
  }
};

QTEST_MAIN(TestComparePanel)
#include "test_compare_panel.moc"
