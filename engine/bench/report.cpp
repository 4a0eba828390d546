#include "engine/bench/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "engine/bench/complexity.h"
#include "engine/bench/roofline.h"

namespace ks {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string paramsText(const PlanItem& item) {
  const KernelInfo* k = Registry::instance().find(item.kernel);
  return item.params.str(!k || k->uses_workgroup);
}
std::string paramsText(const Measurement& m) { return paramsText(m.item); }

// Errors can hold a whole compile log; tables show its first line.
std::string firstLine(const std::string& s) {
  const auto eol = s.find('\n');
  return eol == std::string::npos ? s : s.substr(0, eol) + " ...";
}

std::string verifyText(const Measurement& m) {
  if (m.status == PointStatus::Skipped || m.status == PointStatus::Cancelled) return "-";
  const auto& v = m.verification;
  if (v.status == VerifyStatus::Skipped) return "not verified";
  if (v.status == VerifyStatus::Unverified) return "unverified";
  if (std::isnan(v.rel_error)) return verifyStatusName(v.status) + " (NaN)";
  return verifyStatusName(v.status) + " (" + fmt("%.1e", v.rel_error) + ")";
}

std::string csvQuote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string formatDuration(double ns) {
  if (!(ns > 0)) return "-";
  if (ns < 1e3) return fmt("%.0f ns", ns);
  if (ns < 1e6) return fmt("%.3g us", ns / 1e3);
  if (ns < 1e9) return fmt("%.3g ms", ns / 1e6);
  return fmt("%.3g s", ns / 1e9);
}

std::string formatRunTally(size_t planned, size_t ok, size_t failed, size_t skipped, bool interrupted) {
  const size_t ran = ok + failed;
  std::string text = std::to_string(planned) + (planned == 1 ? " point: " : " points: ") + std::to_string(ran) +
                     " ran (" + std::to_string(ok) + " ok, " + std::to_string(failed) + " failed), " +
                     std::to_string(skipped) + " skipped";
  const size_t not_run = planned - std::min(planned, ran + skipped);
  if (not_run) text += ", " + std::to_string(not_run) + " not run";
  if (interrupted) text += "; interrupted, the rest did not run";
  return text;
}

std::string formatDriftLine(const DriftReport& drift) {
  return std::string(drift.unstable ? "warning: " : "") + "drift check: " + drift.summary();
}

PointLineColumns pointLineColumns(const std::vector<PlanItem>& items) {
  PointLineColumns c;
  c.index = 2 * std::to_string(items.size()).size() + 3;  // "[12/34]"
  for (const auto& item : items) {
    c.kernel = std::max(c.kernel, item.kernel.size());
    c.params = std::max(c.params, paramsText(item).size());
    c.size = std::max(c.size, item.size.str().size());
  }
  return c;
}

std::string formatPointLine(const Measurement& m, size_t index, size_t total, const PointLineColumns& columns) {
  std::ostringstream out;
  auto padded = [](std::string text, size_t width) {
    if (text.size() < width) text.resize(width, ' ');
    return text + " ";
  };
  std::string counter = "[" + std::to_string(index) + "/" + std::to_string(total) + "]";
  if (counter.size() < columns.index) counter.insert(0, columns.index - counter.size(), ' ');  // right-aligned
  out << counter << " " << padded(m.item.kernel, columns.kernel) << padded(paramsText(m), columns.params)
      << padded(m.item.size.str(), columns.size);
  switch (m.status) {
    case PointStatus::Ok:
      out << "median " << formatDuration(m.stats.median);
      if (m.stats.count >= 6) out << " +-" << fmt("%.1f%%", 100 * m.stats.ciRelative());
      out << "  " << fmt("%.2f", m.gflops) << " GFLOPS  " << fmt("%.2f", m.gbps) << " GB/s  cv "
          << fmt("%.1f%%", 100 * m.stats.cv) << "  n=" << m.stats.count;
      if (m.stats.outliers)
        out << " (" << m.stats.outliers << (m.stats.outliers == 1 ? " outlier" : " outliers") << ", kept)";
      if (!m.stop_reason.empty() && m.stop_reason != "reps") out << " (" << m.stop_reason << ")";
      if (m.input_sets > 1) out << "  " << m.input_sets << " input sets";
      if (m.cache_resident) out << "  CACHE-RESIDENT";
      if (m.hasTransfers())
        out << "  + upload " << formatDuration(m.partMedian("upload")) << " + download "
            << formatDuration(m.partMedian("download")) << " = end to end " << formatDuration(m.endToEndNs());
      if (m.part("gpu"))
        out << "  (gpu " << formatDuration(m.partMedian("gpu")) << ", cpu " << formatDuration(m.partMedian("cpu"))
            << ", sync " << formatDuration(m.partMedian("sync")) << ")";
      out << (m.verification.status == VerifyStatus::Unverified ? "  UNVERIFIED (custom workload: no reference)"
                                                                : "  verified " + verifyText(m));
      break;
    case PointStatus::Failed:
      out << "FAILED: " << firstLine(m.error);
      break;
    case PointStatus::Skipped:
      out << "skipped: " << firstLine(m.error);
      break;
    case PointStatus::Cancelled:
      out << "cancelled";
      break;
  }
  return out.str();
}

std::string renderTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < header.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      s += cell;
      if (c + 1 < header.size()) s += std::string(width[c] - cell.size() + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << '\n';
  };
  line(header);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& r : rows) line(r);
  return out.str();
}

std::string formatPeakFraction(const Measurement& m, const DevicePeaks& peaks) {
  auto f = fractionOfPeak(m, peaks);
  return f ? fmt("%.0f%% ", 100 * f->fraction) + f->bound : "-";
}

std::string formatSummaryTable(const std::vector<Measurement>& points, const DevicePeaks* peaks) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : points) {
    const bool ok = m.status == PointStatus::Ok;
    std::string status = pointStatusName(m.status);
    if (!m.error.empty()) status += ": " + firstLine(m.error);
    rows.push_back({m.item.kernel, paramsText(m), m.item.size.str(), ok ? formatDuration(m.stats.median) : "-",
                    ok ? formatDuration(m.stats.min) : "-", ok ? formatDuration(m.stats.max) : "-",
                    ok ? fmt("%.1f%%", 100 * m.stats.cv) : "-", ok ? fmt("%.2f", m.gflops) : "-",
                    ok ? fmt("%.2f", m.gbps) + (m.cache_resident ? " (cache)" : "") : "-", verifyText(m),
                    m.clock.empty() ? "-" : m.clock, status});
    if (peaks) rows.back().insert(rows.back().begin() + 9, formatPeakFraction(m, *peaks));
  }
  std::vector<std::string> header{"kernel", "params", "size", "median",   "min",   "max",
                                  "cv",     "GFLOPS", "GB/s", "verified", "clock", "status"};
  if (peaks) header.insert(header.begin() + 9, "% peak");
  // With transfers: the kernel's median, then what moving its data costs, and the sum.
  if (std::any_of(points.begin(), points.end(), [](const Measurement& m) { return m.hasTransfers(); })) {
    header.insert(header.begin() + 4, {"upload", "download", "transfer", "end to end"});
    for (size_t i = 0; i < points.size(); ++i) {
      const auto& m = points[i];
      const bool has = m.status == PointStatus::Ok && m.hasTransfers();
      rows[i].insert(
          rows[i].begin() + 4,
          {has ? formatDuration(m.partMedian("upload")) : "-", has ? formatDuration(m.partMedian("download")) : "-",
           has ? formatDuration(m.transferNs()) : "-", has ? formatDuration(m.endToEndNs()) : "-"});
    }
  }
  return renderTable(header, rows);
}

std::string formatInterleaveTable(const std::vector<Measurement>& points) {
  // Per size, the placements side by side, fastest first.
  std::map<uint64_t, std::vector<const Measurement*>> by_size;
  for (const auto& m : points)
    if (m.status == PointStatus::Ok && m.part("gpu") && m.item.kernel.rfind("interleave.", 0) == 0)
      by_size[m.item.size.n].push_back(&m);
  if (by_size.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  std::string verdict;
  for (auto& [n, ms] : by_size) {
    std::sort(ms.begin(), ms.end(),
              [](const Measurement* a, const Measurement* b) { return a->stats.median < b->stats.median; });
    for (const Measurement* m : ms) {
      const double round = m->stats.median;
      rows.push_back({std::to_string(n), m->item.kernel.substr(std::string("interleave.").size()),
                      formatDuration(round), formatDuration(m->partMedian("gpu")), formatDuration(m->partMedian("cpu")),
                      formatDuration(m->partMedian("sync")), fmt("%.2f", m->gbps),
                      m == ms.front() ? "fastest" : fmt("x%.2f", round / ms.front()->stats.median)});
    }
    verdict += "interleave, N = " + std::to_string(n) + ": " + ms.front()->item.kernel.substr(11) + " wins (" +
               formatDuration(ms.front()->stats.median) + " per round)";
    if (ms.size() > 1)
      verdict += ", " + ms.back()->item.kernel.substr(11) + " is slowest at " +
                 fmt("%.2fx", ms.back()->stats.median / ms.front()->stats.median);
    verdict += "\n";
  }
  return renderTable({"N", "placement", "round", "gpu", "cpu", "sync", "GB/s", "vs fastest"}, rows) + verdict;
}

std::string formatDeviceTable(const std::vector<vk::DeviceInfo>& devices, int selected) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : devices) {
    const std::string wg = std::to_string(d.max_workgroup_size[0]) + "x" + std::to_string(d.max_workgroup_size[1]) +
                           "x" + std::to_string(d.max_workgroup_size[2]) + " (" + std::to_string(d.max_invocations) +
                           ")";
    std::string driver = d.driver_name.empty() ? d.driver_version : d.driver_name + " " + d.driver_version;
    if (!d.driver_info.empty()) driver += " [" + d.driver_info + "]";
    const std::string ts = d.timestamps ? "yes (" + std::to_string(d.timestamp_valid_bits) + " bits, " +
                                              fmt("%g", d.timestamp_period_ns) + " ns/tick)"
                                        : "no (wall clock)";
    rows.push_back({(int(d.index) == selected ? "*" : " ") + std::to_string(d.index), d.name, d.type, driver,
                    d.api_version, std::to_string(d.subgroup_size), std::to_string(d.max_shared_memory / 1024) + " KiB",
                    wg, ts});
  }
  return renderTable(
      {"index", "name", "type", "driver", "vulkan", "subgroup", "shared mem", "max workgroup", "timestamps"}, rows);
}

std::string formatComplexityTable(const std::vector<Measurement>& points, double min_scale) {
  const auto fits = fitComplexity(points, min_scale);
  if (fits.empty()) return {};
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : fits)
    rows.push_back({f.series, std::to_string(f.points),
                    fmt("%.2f", f.slope) + (f.points > 2 ? " +- " + fmt("%.2f", f.slope_error) : "")});
  const std::string over = min_scale > 0 ? "sizes from " + fmt("%g", min_scale) : "upper half of each series' sizes";
  return "complexity: slope of log(median time) vs log(size), " + over + "\n" +
         renderTable({"series", "points", "slope"}, rows);
}

std::string measurementsToCsv(const std::vector<Measurement>& points) {
  std::ostringstream out;
  out << "kernel,params,m,n,k,status,error,clock,reps,median_ns,min_ns,mean_ns,max_ns,stddev_ns,cv,gflops,gbps,"
         "verification,rel_error,tolerance,upload_ns,download_ns,end_to_end_ns\n";
  for (const auto& m : points) {
    const bool transfers = m.status == PointStatus::Ok && m.hasTransfers();
    out << csvQuote(m.item.kernel) << ',' << csvQuote(paramsText(m)) << ',' << m.item.size.m << ',' << m.item.size.n
        << ',' << m.item.size.k << ',' << pointStatusName(m.status) << ',' << csvQuote(m.error) << ',' << m.clock << ','
        << m.stats.count << ',' << fmt("%.1f", m.stats.median) << ',' << fmt("%.1f", m.stats.min) << ','
        << fmt("%.1f", m.stats.mean) << ',' << fmt("%.1f", m.stats.max) << ',' << fmt("%.1f", m.stats.stddev) << ','
        << fmt("%.5f", m.stats.cv) << ',' << fmt("%.4f", m.gflops) << ',' << fmt("%.4f", m.gbps) << ','
        << verifyStatusName(m.verification.status) << ',' << fmt("%.3e", m.verification.rel_error) << ','
        << fmt("%.3e", m.verification.tolerance) << ',' << (transfers ? fmt("%.1f", m.partMedian("upload")) : "") << ','
        << (transfers ? fmt("%.1f", m.partMedian("download")) : "") << ','
        << (transfers ? fmt("%.1f", m.endToEndNs()) : "") << '\n';
  }
  return out.str();
}

std::string formatPeakValue(const PeakResult& r) {
  if (!r.measured()) return "-";
  char buf[48];
  if (r.unit == "us") return formatDuration(r.value * 1e3);
  const bool big = r.value >= 1000;  // GFLOP/s -> TFLOP/s, GB/s -> TB/s
  std::string unit = r.unit;
  if (big) unit[0] = 'T';
  std::snprintf(buf, sizeof buf, "%.3g %s", big ? r.value / 1000 : r.value, unit.c_str());
  return buf;
}

std::string formatPeaksTable(const DevicePeaks& peaks) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : peaks.results) {
    char cv[32] = "-";
    if (r.measured()) std::snprintf(cv, sizeof cv, "%.1f%%", 100 * r.cv);
    rows.push_back({r.title, formatPeakValue(r), r.measured() ? std::to_string(r.runs) : "-", cv, r.note});
  }
  return "peaks measured " + peaks.measured_at + "\n" + renderTable({"measurement", "peak", "runs", "cv", "how"}, rows);
}

namespace {

std::string comparedSide(bool ok, double median_ns, const std::string& status) {
  return ok ? formatDuration(median_ns) : firstLine(status);
}

}  // namespace

std::string formatComparison(const Comparison& c) {
  std::ostringstream out;
  for (const auto& w : c.warnings) out << "warning: " << w << '\n';
  if (!c.warnings.empty()) out << '\n';
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : c.rows) {
    const bool both = r.comparable();
    rows.push_back({r.kernel, r.params, r.size.str(),
                    comparedSide(r.baseline_ok, r.baseline_median_ns, r.baseline_status),
                    comparedSide(r.current_ok, r.current_median_ns, r.current_status),
                    both ? fmt("%.3f", r.ratio) : "-", both ? fmt("%.2fx", r.speedup) : "-",
                    both ? fmt("%.2g", r.test.p) : "-", both ? significanceMark(r.test.p) : ""});
  }
  out << renderTable({"kernel", "params", "size", "baseline", "current", "ratio", "speedup", "p", "sig"}, rows);
  out << "ratio = current median / baseline median (< 1: faster now); p: Mann-Whitney U, two-sided; "
         "* p < 0.05, ** p < 0.01, *** p < 0.001\n\n";
  if (c.compared == 0) {
    out << "no point is ok in both sessions: nothing to compare\n";
  } else {
    const double g = c.geomean_ratio;
    out << "geometric mean ratio over " << c.compared << " compared point" << (c.compared == 1 ? "" : "s") << ": "
        << fmt("%.3f", g);
    if (g < 1)
      out << " (" << fmt("%.2fx", 1 / g) << " faster)";
    else if (g > 1)
      out << " (" << fmt("%.2fx", g) << " slower)";
    out << '\n';
    out << "significant at p < " << fmt("%g", kSignificanceLevel) << ": " << c.significantly_faster << " faster, "
        << c.significantly_slower << " slower, " << c.compared - c.significantly_faster - c.significantly_slower
        << " not significant\n";
  }
  for (const auto& p : c.only_in_baseline) out << "only in baseline: " << p << '\n';
  for (const auto& p : c.only_in_current) out << "only in current: " << p << '\n';
  return out.str();
}

std::string comparisonToCsv(const Comparison& c) {
  std::ostringstream out;
  out << "kernel,params,m,n,k,baseline_status,current_status,baseline_median_ns,current_median_ns,baseline_samples,"
         "current_samples,ratio,speedup,u,z,p\n";
  for (const auto& r : c.rows) {
    const bool both = r.comparable();
    out << csvQuote(r.kernel) << ',' << csvQuote(r.params) << ',' << r.size.m << ',' << r.size.n << ',' << r.size.k
        << ',' << csvQuote(r.baseline_status) << ',' << csvQuote(r.current_status) << ','
        << (r.baseline_ok ? fmt("%.1f", r.baseline_median_ns) : "") << ','
        << (r.current_ok ? fmt("%.1f", r.current_median_ns) : "") << ',' << r.baseline_samples << ','
        << r.current_samples << ',' << (both ? fmt("%.6f", r.ratio) : "") << ',' << (both ? fmt("%.6f", r.speedup) : "")
        << ',' << (both ? fmt("%.1f", r.test.u) : "") << ',' << (both ? fmt("%.4f", r.test.z) : "") << ','
        << (both ? fmt("%.4g", r.test.p) : "") << '\n';
  }
  return out.str();
}

}  // namespace ks
