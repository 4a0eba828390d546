// The journal: written line by line as a run goes, read back into a session.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/session/journal.h"
#include "engine/session/session_json.h"
#include "synthetic_session.h"

namespace {

namespace fs = std::filesystem;
using namespace ks::testing;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ks_test_journal_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFile(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

std::string joinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + '\n';
  return out;
}

// Three points (gemm on the GPU clock, a CPU baseline, a failed one) and a
// drift report, as a run would journal them.
struct JournaledRun {
  ks::Session session;
  ks::DriftReport drift;
  JournaledRun() {
    const auto a = okPoint(planItem("gemm.naive", 64), samplesAround(1e6, 5));
    const auto b = okPoint(planItem("cpu.gemm.naive", 64), samplesAround(3e6, 5));
    const auto c = failedPoint(planItem("gemm.tiled_shared", 96), "device lost");
    session = syntheticSession({a, b, c});
    session.plan.items.push_back(planItem("gemm.naive", 128));  // a point the run never reached
    session.plan.drift_check = true;
    ks::DriftCheck first{"start", 0, samplesAround(5e5, 15), {}};
    ks::DriftCheck second{"between", 2, samplesAround(5.01e5, 15), {}};
    first.stats = ks::computeStats(first.samples_ns);
    second.stats = ks::computeStats(second.samples_ns);
    drift = ks::evaluateDrift("peak_fma.comp fp32, 16 workgroups x 64 iterations", {first, second},
                              session.plan.drift_threshold);
    drift.clock = "gpu_timestamp";
  }
  // The header, point 1, point 2, the drift report, point 3.
  std::string write(const fs::path& path) const {
    ks::Session header = session;
    header.points.clear();
    auto writer = ks::JournalWriter::create(path.string(), header);
    EXPECT_TRUE(writer.ok()) << writer.error().message;
    if (!writer) return {};
    EXPECT_TRUE(writer->append(session.points[0]).ok());
    EXPECT_TRUE(writer->append(session.points[1]).ok());
    EXPECT_TRUE(writer->append(drift).ok());
    EXPECT_TRUE(writer->append(session.points[2]).ok());
    return readFile(path);
  }
};

TEST(Journal, EachRecordIsOneLineTheHeaderFirstAndPointsInTheSessionFormat) {
  TempDir dir;
  const JournaledRun run;
  const auto lines = linesOf(run.write(dir.path / "s.json.partial"));
  ASSERT_EQ(lines.size(), 5u);
  const auto header = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(header["format"], "kernelscope-journal");
  EXPECT_EQ(header["version"], 1);
  EXPECT_EQ(header["session"]["format"], "kernelscope-session");
  EXPECT_EQ(header["session"]["plan"]["items"].size(), 4u);
  EXPECT_EQ(header["session"]["device"]["name"], "llvmpipe (LLVM 15.0.7, 256 bits)");
  EXPECT_FALSE(header["session"].contains("points"));
  // A point line holds exactly what the session file holds for that point.
  const auto session_json = nlohmann::json::parse(ks::sessionToJson(run.session));
  EXPECT_EQ(nlohmann::json::parse(lines[1])["point"], session_json["points"][0]);
  EXPECT_EQ(nlohmann::json::parse(lines[2])["point"], session_json["points"][1]);
  EXPECT_EQ(nlohmann::json::parse(lines[3])["drift"], ks::driftToJson(run.drift));
  EXPECT_EQ(nlohmann::json::parse(lines[4])["point"], session_json["points"][2]);
}

TEST(Journal, ReadsBackIntoTheSessionItWrote) {
  TempDir dir;
  const JournaledRun run;
  run.write(dir.path / "s.json.partial");
  auto read = ks::loadJournal((dir.path / "s.json.partial").string());
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->lines, 5u);
  EXPECT_EQ(read->dropped_lines, 0u);
  const ks::Session& s = read->session;
  EXPECT_EQ(s.created, run.session.created);
  EXPECT_EQ(s.plan.items.size(), 4u);
  ASSERT_EQ(s.points.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s.points[i].item.kernel, run.session.points[i].item.kernel);
    EXPECT_EQ(s.points[i].status, run.session.points[i].status);
    EXPECT_EQ(s.points[i].samples_ns, run.session.points[i].samples_ns);
    EXPECT_DOUBLE_EQ(s.points[i].stats.median, run.session.points[i].stats.median);
    EXPECT_EQ(s.points[i].verification.status, run.session.points[i].verification.status);
  }
  EXPECT_EQ(s.points[2].error, "device lost");
  ASSERT_TRUE(s.drift.has_value());
  EXPECT_EQ(s.drift->checks.size(), 2u);
  // What it holds is a session the strict loader takes.
  auto again = ks::sessionFromJson(ks::sessionToJson(s));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->points.size(), 3u);
}

TEST(Journal, AHeaderOnlyJournalIsARunWithNoPoints) {
  TempDir dir;
  const JournaledRun run;
  ks::Session header = run.session;
  header.points.clear();
  ASSERT_TRUE(ks::JournalWriter::create((dir.path / "j").string(), header).ok());
  auto read = ks::loadJournal((dir.path / "j").string());
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_TRUE(read->session.points.empty());
  EXPECT_EQ(read->session.plan.items.size(), 4u);
}

TEST(Journal, ATruncatedLastLineIsDroppedAndCounted) {
  TempDir dir;
  const JournaledRun run;
  const std::string text = run.write(dir.path / "j");
  // Killed in the middle of writing the last point: half a line, no newline.
  const size_t last_start = text.rfind('\n', text.size() - 2) + 1;
  const std::string cut = text.substr(0, last_start + (text.size() - last_start) / 2);
  auto read = ks::journalFromText(cut);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->dropped_lines, 1u);
  EXPECT_NE(read->dropped_reason.find("line 5"), std::string::npos) << read->dropped_reason;
  EXPECT_EQ(read->session.points.size(), 2u);
  EXPECT_EQ(read->lines, 4u);
  ASSERT_TRUE(read->session.drift.has_value());

  // Cut right before its newline: still not known to be whole.
  auto no_newline = ks::journalFromText(text.substr(0, text.size() - 1));
  ASSERT_TRUE(no_newline.ok()) << no_newline.error().message;
  EXPECT_EQ(no_newline->dropped_lines, 1u);
  EXPECT_EQ(no_newline->session.points.size(), 2u);

  // A power cut can leave the last line as zeros with its newline.
  auto torn = ks::journalFromText(text.substr(0, last_start) + std::string(40, '\0') + "\n");
  ASSERT_TRUE(torn.ok()) << torn.error().message;
  EXPECT_EQ(torn->dropped_lines, 1u);
  EXPECT_EQ(torn->session.points.size(), 2u);

  // The whole text drops nothing.
  auto whole = ks::journalFromText(text);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->dropped_lines, 0u);
  EXPECT_EQ(whole->session.points.size(), 3u);
}

TEST(Journal, AGarbageLineIsRefusedNamingItsLine) {
  TempDir dir;
  const JournaledRun run;
  auto lines = linesOf(run.write(dir.path / "j"));
  lines[2] = "this is not json";
  auto read = ks::journalFromText(joinLines(lines));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message.rfind("line 3: ", 0), 0u) << read.error().message;

  // JSON, but not a journal record.
  lines[2] = R"({"kernel": "gemm.naive"})";
  read = ks::journalFromText(joinLines(lines));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message.rfind("line 3: ", 0), 0u) << read.error().message;
  EXPECT_NE(read.error().message.find("unknown record \"kernel\""), std::string::npos) << read.error().message;

  // The file's own name leads the message.
  lines[2] = "[1, 2";
  writeFile(dir.path / "bad.partial", joinLines(lines));
  auto loaded = ks::loadJournal((dir.path / "bad.partial").string());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message.rfind((dir.path / "bad.partial").string() + ": line 3: ", 0), 0u)
      << loaded.error().message;
}

TEST(Journal, APointTheSessionLoaderWouldRefuseIsRefusedWithItsLineAndField) {
  TempDir dir;
  const JournaledRun run;
  auto lines = linesOf(run.write(dir.path / "j"));
  auto point = nlohmann::json::parse(lines[1]);
  point["point"]["stats"]["median_ns"] = 1.0;  // not the median of its samples
  lines[1] = point.dump();
  auto read = ks::journalFromText(joinLines(lines));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message.rfind("line 2: point.stats.median_ns: ", 0), 0u) << read.error().message;

  // An ok point that was not verified is no result.
  lines = linesOf(run.write(dir.path / "k"));
  point = nlohmann::json::parse(lines[2]);
  point["point"]["verification"]["status"] = "skipped";
  lines[2] = point.dump();
  read = ks::journalFromText(joinLines(lines));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message.rfind("line 3: point.verification.status: ", 0), 0u) << read.error().message;
}

TEST(Journal, AMissingHeaderIsRefused) {
  TempDir dir;
  const JournaledRun run;
  auto lines = linesOf(run.write(dir.path / "j"));
  lines.erase(lines.begin());  // starts with a point line
  auto read = ks::journalFromText(joinLines(lines));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message.rfind("line 1: not a kernelscope journal", 0), 0u) << read.error().message;

  // A session file is not a journal either.
  read = ks::journalFromText(ks::sessionToJson(run.session) + "\n");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message.rfind("line 1: not a kernelscope journal", 0), 0u) << read.error().message;

  // Nothing at all, or a header cut short.
  read = ks::journalFromText("");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message.find("empty"), std::string::npos) << read.error().message;
  read = ks::journalFromText(lines[0].substr(0, 30));
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message.find("header is incomplete"), std::string::npos) << read.error().message;
}

TEST(Journal, AHeaderOfAnotherVersionOrABrokenSessionIsRefused) {
  TempDir dir;
  const JournaledRun run;
  auto lines = linesOf(run.write(dir.path / "j"));
  auto header = nlohmann::json::parse(lines[0]);
  header["version"] = 2;
  lines[0] = header.dump();
  auto read = ks::journalFromText(joinLines(lines));
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message.find("line 1: version 2 is not supported"), std::string::npos) << read.error().message;

  header["version"] = 1;
  header["session"]["plan"]["reps"] = 0;
  lines[0] = header.dump();
  read = ks::journalFromText(joinLines(lines));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message.rfind("line 1: session: plan.reps", 0), 0u) << read.error().message;
}

TEST(Journal, NeverReplacesAnExistingFile) {
  TempDir dir;
  writeFile(dir.path / "j", "an earlier run's points\n");
  auto writer = ks::JournalWriter::create((dir.path / "j").string(), JournaledRun().session);
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.error().message.find("already exists"), std::string::npos) << writer.error().message;
  EXPECT_EQ(readFile(dir.path / "j"), "an earlier run's points\n");
}

TEST(Journal, TellsAJournalFromASessionFile) {
  TempDir dir;
  const JournaledRun run;
  run.write(dir.path / "j.partial");
  ASSERT_TRUE(ks::saveSession(run.session, (dir.path / "s.json").string()).ok());
  EXPECT_TRUE(ks::isJournalFile((dir.path / "j.partial").string()));
  EXPECT_FALSE(ks::isJournalFile((dir.path / "s.json").string()));
  EXPECT_FALSE(ks::isJournalFile((dir.path / "missing").string()));
}

}  // namespace
