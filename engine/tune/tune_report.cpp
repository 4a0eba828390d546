#include "engine/tune/tune_report.h"

#include <cmath>
#include <cstdio>

#include "engine/bench/report.h"

namespace ks {

namespace {

std::string number(double v, const char* fmt = "%.1f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

}  // namespace

std::string formatTuneEvaluation(const TuneRecord& record, const TuneEvaluation& e, const Measurement& m) {
  const size_t n = record.evaluations.size();
  const auto best = record.bestSoFar();
  // The evaluation is the record's last while a tune runs: look from the end.
  size_t index = n;
  while (index > 0 && !(record.evaluations[index - 1] == e)) --index;
  index = index > 0 ? index - 1 : n;
  char head[32];
  const int width = int(std::to_string(record.budget).size());
  std::snprintf(head, sizeof head, "[%*zu/%zu]", width, index + 1, record.budget);
  std::string line = std::string(head) + " " + record.configText(e.config);
  if (line.size() < 48) line.resize(48, ' ');
  if (e.score) {
    line += " " + number(*e.score) + " " + objectiveUnit(record.objective);
    if (index < best.size() && !std::isnan(best[index])) line += "   best " + number(best[index]);
  } else {
    std::string why = m.error.empty() ? "verification " + verifyStatusName(m.verification.status) : m.error;
    if (auto nl = why.find('\n'); nl != std::string::npos) why = why.substr(0, nl);
    line += " " + pointStatusName(m.status) + ": " + why;
  }
  if (e.cached) line += "   (cached)";
  return line;
}

std::string formatTuneSummary(const TuneRecord& t) {
  std::string out;
  size_t cached = 0, failed = 0;
  for (const auto& e : t.evaluations) {
    cached += e.cached;
    failed += !e.score;
  }
  out += "tune of " + t.kernel + " at " + t.size.str() + ": " + strategyName(t.strategy) + " search (seed " +
         std::to_string(t.seed) + "), objective " + objectiveName(t.objective) + " (" + objectiveUnit(t.objective) +
         ")\n";
  out += "space: " + std::to_string(t.space_size) + " configurations, " + std::to_string(t.valid) +
         " valid after pruning by the kernel's rules and the device's limits\n";
  for (size_t i = 0; i < t.pruned.size() && i < 5; ++i)
    out += "  pruned " + std::to_string(t.pruned[i].configs.size()) + ": " + t.pruned[i].reason + "\n";
  if (t.pruned.size() > 5) out += "  ... and " + std::to_string(t.pruned.size() - 5) + " more reasons\n";
  out += "evaluated " + std::to_string(t.evaluations.size()) + " (" + std::to_string(cached) + " from the cache, " +
         std::to_string(failed) + " failed); stopped: " + t.stop_reason + "\n";
  if (!t.final.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < t.final.size(); ++i) {
      const auto& f = t.final[i];
      if (!f.error.empty()) {
        rows.push_back({"#" + std::to_string(i + 1), t.configText(f.config), "failed: " + f.error, "", "", ""});
        continue;
      }
      const bool last = i + 1 >= t.final.size() || !t.final[i + 1].error.empty();
      rows.push_back({"#" + std::to_string(i + 1), t.configText(f.config), number(f.score),
                      formatDuration(f.stats.median), std::to_string(f.samples_ns.size()),
                      last ? "-" : number(f.p_vs_next, f.p_vs_next < 0.0001 ? "%.1e" : "%.4f")});
    }
    out += "\nfinal round: the best " + std::to_string(t.final.size()) + " measured again, " +
           std::to_string(t.final_rounds) + " interleaved rounds\n";
    out += renderTable({"rank", "configuration", objectiveUnit(t.objective), "median", "samples", "p vs next"}, rows);
  }
  out += "\nverdict: " + t.verdict + "\n";
  if (t.winner) out += "best: " + t.configText(*t.winner) + "\n";
  return out;
}

}  // namespace ks
