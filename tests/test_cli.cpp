// End to end: the real kernelscope-cli binary on lavapipe.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/bench/report.h"
#include "engine/kernels/registry.h"
#include "engine/session/journal.h"
#include "engine/session/session.h"
#include "engine/vulkan/shader_compiler.h"
#include "synthetic_session.h"

#ifndef KS_CLI_PATH
#error "KS_CLI_PATH must name the kernelscope-cli binary"
#endif

namespace {

namespace fs = std::filesystem;

// A temporary directory for the whole test program, removed at exit.
const fs::path& tempDir() {
  struct Dir {
    fs::path path;
    Dir() {
      std::string tmpl = (fs::temp_directory_path() / "ks_test_cli_XXXXXX").string();
      if (!mkdtemp(tmpl.data())) std::abort();
      path = tmpl;
    }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static Dir dir;
  return dir.path;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct CliResult {
  int rc = -1;
  std::string out;  // stdout
  std::string err;  // stderr
  std::string all() const { return out + err; }
};

// Runs the CLI with `args` (already shell-quoted where needed); stdout and
// stderr go to separate files so each can be checked.
CliResult runCli(const std::string& args) {
  static int counter = 0;
  const fs::path out = tempDir() / ("out" + std::to_string(counter) + ".txt");
  const fs::path err = tempDir() / ("err" + std::to_string(counter) + ".txt");
  ++counter;
  const std::string cmd =
      quote(KS_CLI_PATH) + " " + args + " >" + quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.rc = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  r.out = readFile(out);
  r.err = readFile(err);
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

size_t countOf(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + needle.size())) ++n;
  return n;
}

// The summary table: from its header line ("kernel  params  size ...") to the
// line before `end_marker` (or to the end of the text).
std::string summaryTable(const std::string& text, const std::string& end_marker) {
  const size_t start = text.find("kernel  ");
  if (start == std::string::npos) return {};
  size_t end = end_marker.empty() ? std::string::npos : text.find(end_marker, start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// A usage error: exit status 2, nothing on stdout, and exactly one line on stderr
// ("kernelscope-cli: error: ...") that mentions every one of `reasons`.
void expectUsageError(const std::string& args, std::initializer_list<std::string> reasons) {
  SCOPED_TRACE("kernelscope-cli " + args);
  const CliResult r = runCli(args);
  EXPECT_EQ(r.rc, 2) << r.all();
  EXPECT_EQ(r.out, "") << "a usage error printed to stdout";
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(countOf(r.err, "\n"), 1u) << "stderr is not a single line: " << r.err;
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_EQ(r.err.rfind("kernelscope-cli: error: ", 0), 0u) << r.err;
  for (const auto& reason : reasons) EXPECT_TRUE(contains(r.err, reason)) << "stderr: " << r.err << "lacks: " << reason;
}

// ---------------------------------------------------------------- devices, kernels

TEST(CliDevices, ListsLavapipeWithTimestamps) {
  const CliResult r = runCli("devices");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_TRUE(contains(r.out, "llvmpipe")) << r.out;
  EXPECT_TRUE(contains(r.out, "timestamps")) << r.out;
  EXPECT_TRUE(contains(r.out, "* = default device")) << r.out;
  EXPECT_TRUE(contains(r.out, "host: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "glslang ")) << r.out;
}

TEST(CliKernels, ListsGpuAndCpuKernels) {
  const CliResult r = runCli("kernels");
  EXPECT_EQ(r.rc, 0) << r.all();
  for (const char* id :
       {"gemm.naive", "gemm.naive_coalesced", "gemm.tiled_shared", "gemm.tiled_shared_unroll", "gemm.reg4x4",
        "gemm.reg8x4", "gemm.block_tiling", "cpu.gemm.naive", "cpu.gemm.blocked", "cpu.gemm.openblas"})
    EXPECT_TRUE(contains(r.out, std::string(id) + " ")) << id << " missing from:\n" << r.out;
  EXPECT_TRUE(contains(r.out, "BK=1/2/4/8/16")) << r.out;
  EXPECT_TRUE(contains(r.out, "on 0: llvmpipe")) << r.out;
  // Only the tensor-core kernel needs what lavapipe lacks, and it says what.
  for (const auto& line : lines(r.out))
    if (contains(line, "unsupported")) {
      EXPECT_TRUE(contains(line, "gemm.coopmat") && contains(line, "unsupported: no VK_NV_cooperative_matrix")) << line;
    }
  EXPECT_TRUE(contains(r.out, "unsupported: no VK_NV_cooperative_matrix")) << r.out;
}

TEST(CliKernels, FamilyFilter) {
  const CliResult r = runCli("kernels --family gemm");
  EXPECT_EQ(r.rc, 0) << r.all();
  for (const char* id : {"gemm.naive", "gemm.block_tiling", "cpu.gemm.openblas"})
    EXPECT_TRUE(contains(r.out, id)) << id << " missing from:\n" << r.out;
  // Header + rule + one row per gemm kernel, and nothing of the other families.
  size_t gemm = 0;
  for (const auto& k : ks::Registry::instance().all()) gemm += k.family == "gemm";
  EXPECT_EQ(lines(r.out).size(), 2 + gemm) << r.out;
  EXPECT_FALSE(contains(r.out, "dot.")) << r.out;
}

TEST(CliKernels, UnknownFamilyIsAUsageError) { expectUsageError("kernels --family fft", {"unknown family 'fft'"}); }

// ---------------------------------------------------------------- run, show

// One run shared by the tests below (lavapipe is slow; run it once).
class CliRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    session_ = new fs::path(tempDir() / "sweep.json");
    csv_ = new fs::path(tempDir() / "sweep.csv");
    result_ =
        new CliResult(runCli("run --kernels gemm.naive,gemm.tiled_shared --sizes 32,64 --wg 8x8,16x16 "
                             "--reps 3 --warmup 1 -o " +
                             quote(session_->string()) + " --csv " + quote(csv_->string())));
  }
  static void TearDownTestSuite() {
    delete session_;
    delete csv_;
    delete result_;
  }
  static fs::path* session_;
  static fs::path* csv_;
  static CliResult* result_;
};
fs::path* CliRun::session_ = nullptr;
fs::path* CliRun::csv_ = nullptr;
CliResult* CliRun::result_ = nullptr;

TEST_F(CliRun, ExitsZero) {
  EXPECT_EQ(result_->rc, 0) << result_->all();
  EXPECT_EQ(result_->err, "");
}

TEST_F(CliRun, PrintsOneLinePerPointInOrder) {
  const std::string& out = result_->out;
  EXPECT_TRUE(contains(out, "device: llvmpipe")) << out;
  EXPECT_TRUE(contains(out, "8 points, 1+ warm-up runs (at least 200 ms) + 3 timed repetitions each")) << out;
  size_t last = 0;
  for (int i = 1; i <= 8; ++i) {
    const std::string tag = "[" + std::to_string(i) + "/8] ";
    EXPECT_EQ(countOf(out, tag), 1u) << tag << " in:\n" << out;
    const size_t pos = out.find(tag);
    ASSERT_NE(pos, std::string::npos);
    EXPECT_GT(pos, last) << tag << " out of order";
    last = pos;
    const std::string line = out.substr(pos, out.find('\n', pos) - pos);
    EXPECT_TRUE(contains(line, "median ")) << line;
    EXPECT_TRUE(contains(line, "GFLOPS")) << line;
    EXPECT_TRUE(contains(line, "verified ok")) << line;
  }
  EXPECT_FALSE(contains(out, "[9/8]"));
  // Order: sizes outermost, then kernels, then shapes.
  const std::vector<std::regex> expect = {
      std::regex(R"(\[1/8\] gemm\.naive\s+8x8\s+32 )"),
      std::regex(R"(\[2/8\] gemm\.naive\s+16x16\s+32 )"),
      std::regex(R"(\[3/8\] gemm\.tiled_shared\s+8x8\s+32 )"),
      std::regex(R"(\[4/8\] gemm\.tiled_shared\s+16x16\s+32 )"),
      std::regex(R"(\[5/8\] gemm\.naive\s+8x8\s+64 )"),
      std::regex(R"(\[6/8\] gemm\.naive\s+16x16\s+64 )"),
      std::regex(R"(\[7/8\] gemm\.tiled_shared\s+8x8\s+64 )"),
      std::regex(R"(\[8/8\] gemm\.tiled_shared\s+16x16\s+64 )"),
  };
  for (size_t i = 0; i < expect.size(); ++i)
    EXPECT_TRUE(std::regex_search(out, expect[i])) << "point " << i + 1 << " is not where expected:\n" << out;
}

TEST_F(CliRun, PrintsSummaryTable) {
  const std::string& out = result_->out;
  const std::string table = summaryTable(out, "8 points: 8 ran");
  ASSERT_FALSE(table.empty()) << out;
  const auto rows = lines(table);
  ASSERT_EQ(rows.size(), 2 + 8u) << table;
  for (const char* col : {"kernel", "params", "size", "median", "GFLOPS", "verified", "clock", "status"})
    EXPECT_TRUE(contains(rows[0], col)) << rows[0];
  for (size_t i = 2; i < rows.size(); ++i) {
    EXPECT_TRUE(contains(rows[i], "gpu_timestamp")) << rows[i];
    EXPECT_EQ(rows[i].substr(rows[i].size() - 4), "  ok") << rows[i];
  }
  EXPECT_TRUE(contains(out, "8 points: 8 ran (8 ok, 0 failed), 0 skipped")) << out;
  // Two sizes per series: a slope of log time vs log size for each of the 4 series.
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(complexity: slope[^\n]*\n)"))) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(gemm\.tiled_shared 16x16\s+2\s+\d\.\d\d)"))) << out;
  EXPECT_TRUE(contains(out, "session written to " + session_->string())) << out;
  EXPECT_TRUE(contains(out, "CSV written to " + csv_->string())) << out;
}

TEST_F(CliRun, SessionFileLoads) {
  auto s = ks::loadSession(session_->string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->points.size(), 8u);
  EXPECT_EQ(s->plan.items.size(), 8u);
  EXPECT_EQ(s->plan.reps, 3u);
  EXPECT_EQ(s->plan.warmup, 1u);
  ASSERT_TRUE(s->device.has_value());
  EXPECT_TRUE(contains(s->device->name, "llvmpipe")) << s->device->name;
  for (size_t i = 0; i < s->points.size(); ++i) {
    const auto& m = s->points[i];
    SCOPED_TRACE("point " + std::to_string(i));
    EXPECT_EQ(m.status, ks::PointStatus::Ok) << m.error;
    EXPECT_TRUE(m.trustworthy());
    EXPECT_EQ(m.samples_ns.size(), 3u);
    EXPECT_EQ(m.clock, "gpu_timestamp");
    EXPECT_GT(m.gflops, 0);
    EXPECT_EQ(m.item, s->plan.items[i]);
  }
  EXPECT_EQ(s->points[0].item.kernel, "gemm.naive");
  EXPECT_EQ(s->points[0].item.size, (ks::ProblemSize{32, 32, 32}));
  EXPECT_EQ(s->points[0].item.params.wg, (ks::WorkgroupShape{8, 8, 1}));
  EXPECT_EQ(s->points[7].item.kernel, "gemm.tiled_shared");
  EXPECT_EQ(s->points[7].item.size, (ks::ProblemSize{64, 64, 64}));
  EXPECT_EQ(s->points[7].item.params.wg, (ks::WorkgroupShape{16, 16, 1}));
  EXPECT_FALSE(fs::exists(session_->string() + ".tmp"));
  EXPECT_FALSE(fs::exists(session_->string() + ".partial")) << "the journal outlived the session it became";
}

TEST_F(CliRun, CsvHasHeaderAndOneRowPerPoint) {
  const auto rows = lines(readFile(*csv_));
  ASSERT_EQ(rows.size(), 1 + 8u) << readFile(*csv_);
  EXPECT_EQ(rows[0].rfind("kernel,params,m,n,k,status,", 0), 0u) << rows[0];
  const size_t columns = countOf(rows[0], ",");
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(countOf(rows[i], ","), columns) << rows[i];
    EXPECT_TRUE(contains(rows[i], ",ok,")) << rows[i];
  }
  EXPECT_EQ(rows[1].rfind("gemm.naive,8x8,32,32,32,ok,", 0), 0u) << rows[1];
  EXPECT_EQ(rows[8].rfind("gemm.tiled_shared,16x16,64,64,64,ok,", 0), 0u) << rows[8];
}

TEST_F(CliRun, ShowReprintsTheSameTable) {
  const CliResult r = runCli("show " + quote(session_->string()));
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_TRUE(contains(r.out, "session " + session_->string())) << r.out;
  EXPECT_TRUE(contains(r.out, "device: llvmpipe")) << r.out;
  EXPECT_TRUE(contains(r.out, "1 warm-up + 3 timed repetitions")) << r.out;
  const std::string shown = summaryTable(r.out, "\ncomplexity:");
  const std::string ran = summaryTable(result_->out, "8 points: 8 ran");
  ASSERT_FALSE(shown.empty()) << r.out;
  EXPECT_EQ(shown, ran);
}

TEST_F(CliRun, PrintsTheDriftCheckAndKeepsItInTheSession) {
  // Whether lavapipe stayed within 3% depends on the machine; that a verdict
  // is printed, after the tables, and stored with its checks does not.
  const std::string& out = result_->out;
  const std::regex line(
      R"((^|\n)(warning: )?drift check: (stable: reference time within \+-|UNSTABLE: reference time moved ))");
  EXPECT_TRUE(std::regex_search(out, line)) << out;
  EXPECT_GT(out.find("drift check: "), out.find("8 points: 8 ran")) << out;
  auto s = ks::loadSession(session_->string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s->drift.has_value());
  EXPECT_TRUE(s->plan.drift_check);
  EXPECT_DOUBLE_EQ(s->drift->threshold, 0.03);
  ASSERT_GE(s->drift->checks.size(), 2u);
  EXPECT_EQ(s->drift->checks.front().when, "start");
  EXPECT_EQ(s->drift->checks.back().when, "end");
  EXPECT_EQ(s->drift->checks.back().after_points, 8u);
  EXPECT_TRUE(contains(out, ks::formatDriftLine(*s->drift) + "\n")) << out;
  // show prints the stored verdict the same way.
  const CliResult shown = runCli("show " + quote(session_->string()));
  EXPECT_TRUE(contains(shown.out, ks::formatDriftLine(*s->drift) + "\n")) << shown.out;
}

TEST_F(CliRun, ShowFitsComplexityFromAChosenSize) {
  const CliResult all = runCli("show " + quote(session_->string()) + " --fit-from 32");
  EXPECT_EQ(all.rc, 0) << all.all();
  EXPECT_NE(all.out.find("complexity: slope of log(median time) vs log(size), sizes from 32"), std::string::npos)
      << all.out;
  // From 64 up each series has one size left: nothing to fit, no table.
  const CliResult one = runCli("show " + quote(session_->string()) + " --fit-from 64");
  EXPECT_EQ(one.rc, 0) << one.all();
  EXPECT_EQ(one.out.find("complexity:"), std::string::npos) << one.out;
  expectUsageError("show " + quote(session_->string()) + " --fit-from big", {"--fit-from must be"});
}

TEST_F(CliRun, ShowWritesTheSameCsv) {
  const fs::path csv = tempDir() / "shown.csv";
  const CliResult r = runCli("show " + quote(session_->string()) + " --csv " + quote(csv.string()));
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_EQ(readFile(csv), readFile(*csv_));
}

TEST(CliRunAll, RegisterKernelsRunWhenTheSizeFits) {
  // 64 % 8 == 0, 48 % 4 == 0, 32 % 4 == 0: reg4x4 and reg8x4 both fit.
  // gemv and dot kernels take N or MxN: they are left out, with a note.
  const CliResult r = runCli("run --kernels all --mnk 64x48x32 --reps 2 --warmup 0");
  EXPECT_EQ(r.rc, 0) << r.all();
  size_t n = 0;
  for (const auto& k : ks::Registry::instance().all()) n += k.family == "gemm";
  EXPECT_TRUE(contains(r.err, "note: dot.two_pass_global takes sizes N (elements), not 64x48x32; left out")) << r.err;
  // The tile kernels need multiples of their tiles and coopmat needs the extension: skipped, not failed.
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(std::to_string(n) + R"( points: \d+ ran \(\d+ ok, 0 failed\), \d+ skipped)")))
      << r.out;
  for (const char* id : {"gemm.reg4x4", "gemm.reg8x4", "gemm.block_tiling", "cpu.gemm.openblas"}) {
    const std::regex line("\\[\\d+/" + std::to_string(n) + "\\] " + std::regex_replace(id, std::regex("\\."), "\\.") +
                          R"(\s.*64x48x32\s+median .* verified ok)");
    EXPECT_TRUE(std::regex_search(r.out, line)) << id << " did not run ok:\n" << r.out;
  }
  for (const auto& line : lines(r.out))
    if (contains(line, "skipped:") && line.rfind("[", 0) == 0) {
      EXPECT_TRUE(contains(line, "gemm.tile2d") || contains(line, "gemm.warptile") || contains(line, "gemm.coopmat"))
          << line;
    }
  EXPECT_FALSE(contains(r.out, "FAILED")) << r.out;
}

TEST(CliRunSkips, SizeNotAMultipleIsSkippedNotFailed) {
  const fs::path session = tempDir() / "skip17.json";
  const CliResult r =
      runCli("run --kernels gemm.reg4x4,cpu.gemm.naive --sizes 17 --reps 1 --warmup 0 -o " + quote(session.string()));
  EXPECT_EQ(r.rc, 0) << "a skipped point is not a failure:\n" << r.all();
  EXPECT_TRUE(contains(r.out, "skipped")) << r.out;
  EXPECT_TRUE(contains(r.out, "not a multiple of 4")) << r.out;
  EXPECT_TRUE(contains(r.out, "2 points: 1 ran (1 ok, 0 failed), 1 skipped")) << r.out;
  auto s = ks::loadSession(session.string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->points.size(), 2u);
  EXPECT_EQ(s->points[0].status, ks::PointStatus::Skipped);
  EXPECT_TRUE(contains(s->points[0].error, "not a multiple of 4")) << s->points[0].error;
  EXPECT_EQ(s->points[1].status, ks::PointStatus::Ok) << s->points[1].error;
  // show of a session with a skipped point still succeeds.
  const CliResult shown = runCli("show " + quote(session.string()));
  EXPECT_EQ(shown.rc, 0) << shown.all();
  EXPECT_TRUE(contains(shown.out, "not a multiple of 4")) << shown.out;
}

TEST(CliRunSkips, WorkgroupOverInvocationLimitIsSkipped) {
  // 64 x 32 = 2048 invocations; lavapipe allows 1024.
  const CliResult r = runCli("run --kernels gemm.naive --sizes 16 --wg 64x32,8x8 --reps 1 --warmup 0");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(\[1/2\] gemm\.naive\s+64x32\s+16\s+skipped: .*maxComputeWorkGroupInvocations)")))
      << r.out;
  EXPECT_TRUE(contains(r.out, "2048")) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\[2/2\] gemm\.naive\s+8x8\s+16\s+median)"))) << r.out;
  EXPECT_TRUE(contains(r.out, "2 points: 1 ran (1 ok, 0 failed), 1 skipped")) << r.out;
}

TEST(CliRunSkips, NoPointThatCanRunIsAUsageErrorWithTheReasons) {
  // 4096 x 4096 workgroups are over every limit: nothing would be measured.
  const fs::path session = tempDir() / "nothing.json";
  const CliResult r = runCli("run --kernels gemm.naive,gemm.tiled_shared --sizes 64 --wg 4096x4096 --reps 1 -o " +
                             quote(session.string()));
  EXPECT_EQ(r.rc, 2) << r.all();
  EXPECT_TRUE(contains(r.err, "none of the 2 points can run")) << r.err;
  EXPECT_TRUE(contains(r.err, "gemm.naive: ")) << r.err;
  EXPECT_TRUE(contains(r.err, "gemm.tiled_shared: ")) << r.err;
  EXPECT_TRUE(contains(r.err, "maxComputeWorkGroup")) << r.err;
  EXPECT_FALSE(fs::exists(session)) << "nothing ran, so no session is written";
}

TEST(CliRunLines, PointLinesAlignHoweverLongTheParameters) {
  // Two series with parameter texts of different lengths: the median column
  // starts at the same place on every line.
  const CliResult r = runCli(
      "run --kernels gemm.tiled_shared_unroll,cpu.gemm.naive --sizes 32,64 --param UNROLL=2,16 --reps 2 --warmup 0 "
      "--no-drift-check");
  ASSERT_EQ(r.rc, 0) << r.all();
  std::set<size_t> columns;
  for (const auto& line : lines(r.out))
    if (line.rfind("[", 0) == 0 && contains(line, "median")) columns.insert(line.find("median"));
  EXPECT_EQ(columns.size(), 1u) << r.out;
}

TEST(CliRunRanges, GeometricSizeRangeRuns) {
  // The usage text advertises 64:4096:x2.
  const CliResult r = runCli("run --kernels cpu.gemm.naive --sizes 16:32:x2 --reps 1 --warmup 0");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_TRUE(contains(r.out, "2 points: 2 ran (2 ok, 0 failed), 0 skipped")) << r.out;
}

TEST(CliRunRanges, LinearSizeRangeRuns) {
  const CliResult r = runCli("run --kernels cpu.gemm.naive --sizes 8:24:+8 --reps 1 --warmup 0");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_TRUE(contains(r.out, "3 points: 3 ran (3 ok, 0 failed), 0 skipped")) << r.out;
}

// ---------------------------------------------------------------- usage errors

const std::string kRun = "run --kernels gemm.naive --reps 1 --warmup 0 ";

TEST(CliUsage, SizeZero) { expectUsageError(kRun + "--sizes 0", {"--sizes", "size 0"}); }
TEST(CliUsage, SizeNegative) { expectUsageError(kRun + "--sizes -3", {"--sizes", "negative", "-3"}); }
TEST(CliUsage, SizeNotANumber) { expectUsageError(kRun + "--sizes abc", {"--sizes", "'abc'"}); }
TEST(CliUsage, UnknownKernel) {
  expectUsageError("run --kernels gemm.nope --sizes 16", {"unknown kernel 'gemm.nope'"});
}
TEST(CliUsage, MalformedWorkgroup) { expectUsageError(kRun + "--sizes 16 --wg 16xx", {"workgroup", "16xx"}); }

TEST(CliUsage, ReversedSizeRangeSaysWhy) {
  expectUsageError(kRun + "--sizes 64:32:x2", {"--sizes", "64:32:x2", "ends before it starts"});
}

TEST(CliUsage, SingleValueOptionGivenTwice) {
  expectUsageError(kRun + "--sizes 16 --reps 1", {"--reps given more than once"});
}

TEST(CliUsage, IllegalTunableValue) {
  expectUsageError("run --kernels gemm.block_tiling --sizes 16 --param BK=3",
                   {"BK=3", "gemm.block_tiling", "1,2,4,8,16"});
}
TEST(CliUsage, UnknownTunable) { expectUsageError(kRun + "--sizes 16 --param BK=4", {"tunable named BK"}); }
TEST(CliUsage, MalformedParam) { expectUsageError(kRun + "--sizes 16 --param BK=", {"malformed parameter 'BK='"}); }
TEST(CliUsage, ShowMissingFile) { expectUsageError("show /nonexistent.json", {"/nonexistent.json", "cannot open"}); }
TEST(CliUsage, ShowNeedsAFile) { expectUsageError("show", {"show needs exactly one session file"}); }
TEST(CliUsage, UnknownCommand) { expectUsageError("frobnicate", {"unknown command 'frobnicate'"}); }
TEST(CliUsage, NoCommand) { expectUsageError("", {"no command given"}); }
TEST(CliUsage, UnknownOption) { expectUsageError(kRun + "--sizes 16 --bogus 3", {"unknown option --bogus"}); }
TEST(CliUsage, RunNeedsKernels) { expectUsageError("run --sizes 16", {"--kernels"}); }
TEST(CliUsage, RunNeedsSizes) { expectUsageError("run --kernels gemm.naive", {"--sizes"}); }
TEST(CliUsage, RepsZero) { expectUsageError("run --kernels gemm.naive --sizes 16 --reps 0", {"--reps", "at least 1"}); }
TEST(CliUsage, OptionWithoutValue) { expectUsageError("run --kernels gemm.naive --sizes", {"--sizes needs a value"}); }

TEST(CliUsage, ShowOfABrokenSessionNamesTheField) {
  const fs::path path = tempDir() / "broken.json";
  { std::ofstream(path) << R"({"format": "kernelscope-session", "version": 7})"; }
  expectUsageError("show " + quote(path.string()), {path.string(), "version", "newer"});
}

}  // namespace

// ---------------------------------------------------------------- failures

TEST(CliFailures, ShowOfASessionWithAFailedPointExitsOneAndSaysWhy) {
  const fs::path good = tempDir() / "to-fail.json";
  const CliResult r =
      runCli("run --kernels cpu.gemm.naive,cpu.gemm.openblas --sizes 8 --reps 2 --warmup 0 -o " + quote(good.string()));
  ASSERT_EQ(r.rc, 0) << r.all();
  auto s = ks::loadSession(good.string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  // As a lost device leaves a point: failed, with the reason and no samples.
  auto& p = s->points[0];
  p.status = ks::PointStatus::Failed;
  p.error = "vkQueueSubmit: the device was lost (VK_ERROR_DEVICE_LOST)";
  p.samples_ns.clear();
  p.stats = {};
  p.gflops = p.gbps = 0;
  p.verification = {};
  const fs::path bad = tempDir() / "failed.json";
  ASSERT_TRUE(ks::saveSession(*s, bad.string()).ok());
  const CliResult shown = runCli("show " + quote(bad.string()));
  EXPECT_EQ(shown.rc, 1) << shown.all();
  EXPECT_TRUE(contains(shown.out, "failed: vkQueueSubmit: the device was lost")) << shown.out;
  EXPECT_TRUE(std::regex_search(shown.out, std::regex(R"(cpu\.gemm\.openblas\s+-\s+8\s+\S+)"))) << shown.out;
}

TEST(CliFailures, UnwritableOutputIsRefusedBeforeTheSweep) {
  const CliResult r = runCli("run --kernels cpu.gemm.naive --sizes 8 --reps 1 -o /nonexistent-dir/s.json");
  EXPECT_EQ(r.rc, 2) << r.all();
  EXPECT_TRUE(contains(r.err, "cannot write /nonexistent-dir/s.json")) << r.err;
  EXPECT_FALSE(contains(r.out, "[1/1]")) << "nothing should have run:\n" << r.out;
}

TEST(CliFailures, WorkgroupWithAZDimensionIsRefusedForTwoDimensionalKernels) {
  // The only point cannot run: exit 2 with the reason, as the app keeps Run off.
  const CliResult r = runCli("run --kernels gemm.naive --sizes 16 --wg 8x8x2 --reps 1 --warmup 0");
  EXPECT_EQ(r.rc, 2) << r.all();
  EXPECT_TRUE(contains(r.err, "z must be 1")) << r.err;
  // Beside a shape that fits, it is skipped with the reason and the sweep runs.
  const CliResult mixed = runCli("run --kernels gemm.naive --sizes 16 --wg 8x8x2,8x8 --reps 1 --warmup 0");
  EXPECT_EQ(mixed.rc, 0) << mixed.all();
  EXPECT_TRUE(contains(mixed.out, "z must be 1")) << mixed.out;
}

TEST(CliFailures, InterruptKeepsFinishedPointsAndExits130) {
  // Each point warms up for at least 200 ms, so 40 points take over 8 s;
  // SIGINT arrives after about 1.5 s.
  const fs::path session = tempDir() / "interrupted.json";
  const fs::path out = tempDir() / "interrupted.txt";
  const std::string cmd = "(" + quote(KS_CLI_PATH) + " run --kernels cpu.gemm.naive --sizes 16:640:+16 --reps 2 -o " +
                          quote(session.string()) + " >" + quote(out.string()) +
                          " 2>&1 & pid=$!; sleep 1.5; kill -INT $pid; wait $pid; exit $?)";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130) << readFile(out);
  EXPECT_TRUE(contains(readFile(out), "interrupted, the rest did not run")) << readFile(out);
  auto s = ks::loadSession(session.string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->plan.items.size(), 40u);
  ASSERT_GE(s->points.size(), 2u);
  EXPECT_LT(s->points.size(), 40u);
  EXPECT_EQ(s->points.front().status, ks::PointStatus::Ok);
  EXPECT_FALSE(fs::exists(session.string() + ".partial")) << "Ctrl-C wrote the session but kept the journal";
}

// ---------------------------------------------------------------- journal, recover

// The whole point lines of a journal's text (its header is line 1; a line cut
// short by the kill has no newline).
std::vector<nlohmann::json> journalPoints(const std::string& text) {
  std::vector<nlohmann::json> points;
  size_t start = text.find('\n');
  while (start != std::string::npos && start + 1 < text.size()) {
    const size_t end = text.find('\n', start + 1);
    if (end == std::string::npos) break;
    const auto record = nlohmann::json::parse(text.substr(start + 1, end - start - 1), nullptr, false);
    if (record.is_object() && record.contains("point")) points.push_back(record["point"]);
    start = end;
  }
  return points;
}

TEST(CliJournal, KillNineLosesAtMostThePointInFlightAndRecoverWritesTheRest) {
  const fs::path session = tempDir() / "killed.json";
  const fs::path journal = tempDir() / "killed.json.partial";
  const fs::path log = tempDir() / "killed.txt";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(KS_CLI_PATH, KS_CLI_PATH, "run", "--kernels", "gemm.naive,gemm.tiled_shared,cpu.gemm.naive", "--sizes",
          "64,96,128,160", "--reps", "5", "-o", session.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill it once the journal holds two points (each point warms up for 200 ms: 12 take seconds).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  bool exited = false;
  while (journalPoints(readFile(journal)).size() < 2 && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  int status = 0;
  if (!exited) waitpid(pid, &status, 0);
  ASSERT_FALSE(exited) << "the sweep ended before it could be killed: " << readFile(log);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << readFile(log);
  ASSERT_FALSE(fs::exists(session)) << "a killed run cannot have written its session";
  ASSERT_TRUE(fs::exists(journal)) << readFile(log);

  const auto journaled = journalPoints(readFile(journal));
  ASSERT_GE(journaled.size(), 2u);
  ASSERT_LT(journaled.size(), 12u);

  // show reads the journal as it is, and says the run did not finish.
  const CliResult shown = runCli("show " + quote(journal.string()));
  EXPECT_EQ(shown.rc, 0) << shown.all();
  EXPECT_TRUE(contains(shown.out, "interrupted run " + journal.string())) << shown.out;
  EXPECT_TRUE(contains(shown.out, std::to_string(journaled.size()) + " of 12 points finished")) << shown.out;
  EXPECT_TRUE(contains(shown.out, "device: llvmpipe")) << shown.out;
  EXPECT_TRUE(contains(summaryTable(shown.out, ""), "gemm.naive")) << shown.out;

  const CliResult recovered = runCli("recover " + quote(journal.string()));
  ASSERT_EQ(recovered.rc, 0) << recovered.all();
  EXPECT_TRUE(contains(recovered.out, std::to_string(journaled.size()) + " of 12 points finished (" +
                                          std::to_string(journaled.size()) + " ok, 0 failed, 0 skipped)"))
      << recovered.out;
  EXPECT_TRUE(contains(recovered.out, "session written to " + session.string())) << recovered.out;
  EXPECT_TRUE(fs::exists(journal)) << "recover keeps the journal";

  // The session holds every journaled point with its samples, statistics and verification.
  auto s = ks::loadSession(session.string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->plan.items.size(), 12u);
  EXPECT_EQ(s->plan.reps, 5u);
  ASSERT_TRUE(s->device.has_value());
  EXPECT_TRUE(contains(s->device->name, "llvmpipe"));
  ASSERT_EQ(s->points.size(), journaled.size());
  for (size_t i = 0; i < s->points.size(); ++i) {
    SCOPED_TRACE("point " + std::to_string(i));
    const ks::Measurement& m = s->points[i];
    EXPECT_EQ(m.item, s->plan.items[i]);
    EXPECT_EQ(m.status, ks::PointStatus::Ok) << m.error;
    EXPECT_TRUE(m.trustworthy());
    ASSERT_EQ(m.samples_ns.size(), 5u);
    EXPECT_EQ(m.samples_ns, journaled[i]["samples_ns"].get<std::vector<double>>());
    EXPECT_EQ(m.stats.count, 5u);
    EXPECT_GT(m.stats.median, 0);
    EXPECT_DOUBLE_EQ(m.stats.median, journaled[i]["stats"]["median_ns"].get<double>());
    EXPECT_EQ(m.verification.status, ks::VerifyStatus::Ok);
    EXPECT_LE(m.verification.rel_error, m.verification.tolerance);
    EXPECT_GT(m.gflops, 0);
  }
  EXPECT_TRUE(s->drift.has_value()) << "the drift check at the start was journaled";
  EXPECT_TRUE(contains(s->notes, "Recovered from the journal")) << s->notes;

  // An existing session is not replaced without --force.
  expectUsageError("recover " + quote(journal.string()), {session.string() + " exists", "--force"});
  const CliResult forced = runCli("recover --force " + quote(journal.string()));
  EXPECT_EQ(forced.rc, 0) << forced.all();
  const fs::path other = tempDir() / "other.json";
  EXPECT_EQ(runCli("recover " + quote(journal.string()) + " -o " + quote(other.string())).rc, 0);
  EXPECT_TRUE(ks::loadSession(other.string()).ok());

  // A new run to the same file does not overwrite the journal of the killed one.
  expectUsageError("run --kernels cpu.gemm.naive --sizes 16 -o " + quote(session.string()),
                   {journal.string() + " exists", "recover"});
}

TEST(CliJournal, RecoverUsageErrors) {
  expectUsageError("recover", {"recover needs exactly one journal"});
  expectUsageError("recover /nonexistent.json.partial", {"/nonexistent.json.partial", "cannot open"});
  const fs::path named = tempDir() / "journal.txt";
  std::ofstream(named) << "{}\n";
  expectUsageError("recover " + quote(named.string()), {"does not end in .partial", "-o"});
  const fs::path garbage = tempDir() / "garbage.json.partial";
  std::ofstream(garbage) << "not a journal\n";
  expectUsageError("recover " + quote(garbage.string()), {garbage.string(), "line 1", "not a kernelscope journal"});
  expectUsageError("show " + quote(garbage.string()), {garbage.string()});
}

TEST(CliAdaptive, TargetCiRepeatsUntilTheIntervalIsTightAndTheSessionLoads) {
  const fs::path session = tempDir() / "adaptive.json";
  const CliResult r = runCli("run --kernels cpu.gemm.naive --sizes 16 --reps 6 --warmup 0 --target-ci 50% -o " +
                             quote(session.string()));
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_TRUE(contains(r.out, "(ci_target)")) << r.out;
  auto s = ks::loadSession(session.string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_DOUBLE_EQ(s->plan.target_ci, 0.5);
  EXPECT_EQ(s->points[0].stop_reason, "ci_target");
  expectUsageError("run --kernels cpu.gemm.naive --sizes 16 --target-ci abc", {"--target-ci", "'abc'"});
}

TEST(CliDrift, ALoadStartedMidSweepIsFlaggedAndStillExitsZero) {
  // A real change: after the first point, every core gets a busy loop (another
  // job started on the machine). The lavapipe reference shares the cores with
  // it, its time moves far past its noise, and the sweep is flagged; its
  // points are still ok, so the exit status stays 0.
  const fs::path session = tempDir() / "drift.json";
  const fs::path err = tempDir() / "drift-err.txt";
  const std::string cmd = quote(KS_CLI_PATH) +
                          " run --kernels dot.two_pass_shared,dot.two_pass_subgroup_add,dot.two_pass_global "
                          "--sizes 4096 --reps 3 --warmup 0 --drift-interval-ms 0 -o " +
                          quote(session.string()) + " 2>" + quote(err.string());
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe)) {
    out += line;
    if (load.empty() && std::string(line).find("[1/3]") != std::string::npos)
      for (unsigned i = 0; i < 2 * std::max(2u, std::thread::hardware_concurrency()); ++i)
        load.emplace_back([&stop] {
          volatile uint64_t x = 0;
          while (!stop.load(std::memory_order_relaxed)) x = x + 1;
        });
  }
  const int status = pclose(pipe);
  stop.store(true);
  for (auto& t : load) t.join();
  ASSERT_FALSE(load.empty()) << out;
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "an unstable sweep whose points are ok still exits 0:\n" << out << readFile(err);
  EXPECT_TRUE(std::regex_search(
      out, std::regex(R"(\nwarning: drift check: UNSTABLE: reference time moved \+[0-9.]+% by check \d )"
                      R"(\(after \d points?, (between kernels|at the end)\); threshold 3%, noise floor 25%\n)")))
      << out;
  auto s = ks::loadSession(session.string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s->drift.has_value());
  EXPECT_TRUE(s->drift->unstable);
  EXPECT_EQ(s->drift->rule, ks::DriftRule::ThresholdAndCi);
  EXPECT_EQ(s->drift->checks.size(), 4u) << s->drift->summary();
  EXPECT_EQ(s->drift->clock, "gpu_timestamp");
  EXPECT_EQ(s->plan.drift_interval_ms, 0u);
  const CliResult shown = runCli("show " + quote(session.string()));
  EXPECT_EQ(shown.rc, 0) << shown.all();
  EXPECT_TRUE(contains(shown.out, "warning: drift check: UNSTABLE: ")) << shown.out;
}

TEST(CliDrift, BadThresholdsAreUsageErrors) {
  const std::string run = "run --kernels cpu.dot.naive --sizes 64 ";
  for (const char* bad : {"abc", "0", "0%", "-3%", "1", "100%", "3%%", ""})
    expectUsageError(
        run + "--drift-threshold " + quote(bad),
        {"--drift-threshold must be a fraction like 0.03 or a percentage like 3%", "'" + std::string(bad) + "'"});
  expectUsageError(run + "--no-drift-check --drift-threshold 5%", {"--drift-threshold", "--no-drift-check"});
  expectUsageError(run + "--drift-interval-ms soon", {"--drift-interval-ms"});
}

TEST(CliDrift, NoDriftCheckRunsNoReference) {
  const fs::path session = tempDir() / "no-drift.json";
  const CliResult r = runCli("run --kernels cpu.dot.naive --sizes 64 --reps 2 --warmup 0 --no-drift-check -o " +
                             quote(session.string()));
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_FALSE(contains(r.out, "drift check")) << r.out;
  auto s = ks::loadSession(session.string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_FALSE(s->plan.drift_check);
  EXPECT_FALSE(s->drift.has_value());
}

TEST(CliDrift, UsageTextDocumentsTheOptionsAndTheExitStatus) {
  const CliResult r = runCli("--help");
  EXPECT_EQ(r.rc, 0);
  for (const char* text : {"--drift-threshold PCT", "--no-drift-check", "--drift-interval-ms",
                           "an unstable drift check warns but does not change the exit status"})
    EXPECT_TRUE(contains(r.out, text)) << text << " missing from:\n" << r.out;
}

TEST(CliProvenance, TheSessionRecordsCompilerEnvironmentAndShaderHashes) {
  const fs::path session = tempDir() / "provenance.json";
  const CliResult r = runCli(
      "run --kernels gemm.naive,gemm.naive_coalesced,cpu.gemm.naive --sizes 16 --reps 2 "
      "--warmup 0 -o " +
      quote(session.string()));
  ASSERT_EQ(r.rc, 0) << r.all();
  auto s = ks::loadSession(session.string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->glslang_version, ks::vk::glslangVersion());
  // Variables that change OpenBLAS, Mesa or the loader are kept; others are not.
  for (const auto& [name, value] : s->environment)
    EXPECT_TRUE(name.rfind("OPENBLAS_", 0) == 0 || name.rfind("MESA_", 0) == 0 || name.rfind("LP_", 0) == 0 ||
                name.rfind("GALLIUM_", 0) == 0 || name.rfind("VK_", 0) == 0 || name.rfind("OMP_", 0) == 0 ||
                name.rfind("GOTO_", 0) == 0)
        << name;
  // The same shader with a different define hashes differently; CPU kernels have none.
  ASSERT_EQ(s->points.size(), 3u);
  EXPECT_EQ(s->points[0].shader_hash.size(), 16u);
  EXPECT_NE(s->points[0].shader_hash, s->points[1].shader_hash);
  EXPECT_TRUE(s->points[2].shader_hash.empty());
}

TEST(CliPeaks, PrintsTheTableAndWritesThemIntoASession) {
  const auto path = std::filesystem::temp_directory_path() / "ks_cli_peaks.json";
  const CliResult r = runCli("peaks --reps 3 --copy-mib 8 --stream-mib 48 -o " + quote(path.string()));
  ASSERT_EQ(r.rc, 0) << r.all();
  for (const char* text :
       {"fp32 FMA (vec4 chains)", "vkCmdCopyBuffer", "empty dispatch", "GFLOP/s", "GB/s", "8 MiB buffers",
        "peaks written to", "host CPU fp32 FMA", "STREAM triad", "STREAM copy", "3 arrays of 16 MiB"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.all();
  auto s = ks::loadSession(path.string());
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_TRUE(s->peaks);
  EXPECT_GT(s->peaks->fp32Gflops(), 0);
  EXPECT_GT(s->peaks->bandwidthGbps(), 0);
  EXPECT_GT(s->peaks->cpuFp32Gflops(), 0);
  EXPECT_GT(s->peaks->cpuBandwidthGbps(), 0);
  EXPECT_TRUE(s->points.empty());
  const CliResult shown = runCli("show " + quote(path.string()));
  EXPECT_EQ(shown.rc, 0) << shown.all();
  EXPECT_NE(shown.out.find("fp32 FMA (vec4 chains)"), std::string::npos) << shown.all();
  std::filesystem::remove(path);
}

// Only CPU kernels: --peaks measures the host CPU alone (no Vulkan device is opened) and the
// "% peak" column puts the CPU points under the CPU's roofs.
TEST(CliPeaks, CpuOnlyRunMeasuresTheHostCpu) {
  const auto path = std::filesystem::temp_directory_path() / "ks_cli_cpu_peaks.json";
  const CliResult r = runCli(
      "run --kernels cpu.dot.openblas,cpu.gemm.openblas --sizes 256 --reps 3 --warmup 0 "
      "--no-drift-check --peaks -o " +
      quote(path.string()));
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_EQ(r.out.find("device:"), std::string::npos) << r.all();
  for (const char* text : {"host CPU fp32 FMA", "STREAM triad", "STREAM copy", "% peak", "% memory", "% compute"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.all();
  auto s = ks::loadSession(path.string());
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_FALSE(s->device);
  ASSERT_TRUE(s->peaks);
  EXPECT_EQ(s->peaks->results.size(), 3u);
  EXPECT_GT(s->peaks->cpuFp32Gflops(), 0);
  EXPECT_GT(s->peaks->cpuBandwidthGbps(), 0);
  const CliResult shown = runCli("show " + quote(path.string()));
  EXPECT_EQ(shown.rc, 0) << shown.all();
  EXPECT_NE(shown.out.find("% memory"), std::string::npos) << shown.all();
  std::filesystem::remove(path);
}

TEST(CliPeaks, RejectsBadOptions) {
  expectUsageError("peaks --reps 1", {"--reps must be at least 3"});
  expectUsageError("peaks --stream-mib 1", {"--stream-mib must be at least 3"});
  expectUsageError("peaks extra", {"unexpected argument 'extra'"});
}

// ---------------------------------------------------------------- compare

namespace {

// Two saved sessions of one CPU point: the current one twice as fast, on a newer driver.
struct ComparedFiles {
  fs::path baseline = tempDir() / "compare-baseline.json";
  fs::path current = tempDir() / "compare-current.json";
  ComparedFiles() {
    using namespace ks::testing;
    const auto item = planItem("cpu.gemm.naive", 16);
    std::vector<double> fast = samplesAround(100, 10);
    for (double& x : fast) x *= 0.5;
    auto current_session = syntheticSession({okPoint(item, fast)});
    current_session.device->driver_version = "24.0.0";
    const auto saved_baseline = ks::saveSession(syntheticSession({okPoint(item, samplesAround(100, 10))}), baseline);
    const auto saved_current = ks::saveSession(current_session, current);
    EXPECT_TRUE(saved_baseline.ok()) << saved_baseline.error().message;
    EXPECT_TRUE(saved_current.ok()) << saved_current.error().message;
  }
};

}  // namespace

TEST(CliCompare, PrintsTheRatioAndWhatDiffers) {
  const ComparedFiles files;
  const CliResult r = runCli("compare " + quote(files.baseline.string()) + " " + quote(files.current.string()));
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_TRUE(contains(r.out, "baseline: " + files.baseline.string() + ": created 2024-05-06T07:08:09Z")) << r.out;
  EXPECT_TRUE(contains(r.out, "warning: device driver version differs: baseline '23.2.1', current '24.0.0'")) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(cpu\.gemm\.naive\s+-\s+16\s+\S+ ns\s+\S+ ns\s+0\.500\s+2\.00x\s+\S+\s+\*\*\*)")))
      << r.out;
  EXPECT_TRUE(contains(r.out, "geometric mean ratio over 1 compared point: 0.500 (2.00x faster)")) << r.out;
  EXPECT_TRUE(contains(r.out, "1 faster, 0 slower")) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(CliCompare, WritesCsv) {
  const ComparedFiles files;
  const fs::path csv = tempDir() / "compare.csv";
  const CliResult r = runCli("compare " + quote(files.baseline.string()) + " " + quote(files.current.string()) +
                             " --csv " + quote(csv.string()));
  EXPECT_EQ(r.rc, 0) << r.all();
  const auto rows = lines(readFile(csv));
  ASSERT_EQ(rows.size(), 2u) << readFile(csv);
  EXPECT_EQ(rows[0].rfind("kernel,params,m,n,k,", 0), 0u) << rows[0];
  EXPECT_TRUE(contains(rows[1], ",0.500000,2.000000,")) << rows[1];
}

TEST(CliCompare, AMissingFileIsAUsageErrorNamingIt) {
  const ComparedFiles files;
  expectUsageError("compare /nonexistent/base.json " + quote(files.current.string()),
                   {"baseline: cannot open /nonexistent/base.json"});
  expectUsageError("compare " + quote(files.baseline.string()) + " /nonexistent/cur.json",
                   {"current: cannot open /nonexistent/cur.json"});
}

TEST(CliCompare, AnInvalidSessionIsAUsageErrorNamingTheFileAndField) {
  const ComparedFiles files;
  const fs::path broken = tempDir() / "compare-broken.json";
  { std::ofstream(broken) << R"({"format": "kernelscope-session", "version": 7})"; }
  expectUsageError("compare " + quote(files.baseline.string()) + " " + quote(broken.string()),
                   {"current: " + broken.string() + ": version: 7 is not supported"});
}

TEST(CliCompare, NeedsExactlyTwoFiles) {
  const ComparedFiles files;
  expectUsageError("compare " + quote(files.baseline.string()), {"compare needs two session files", "got 1"});
  expectUsageError("compare", {"compare needs two session files", "got 0"});
}

// Linux kills a process that touches more memory than there is instead of
// failing the allocation: a point that cannot fit is skipped with the reason.
TEST(CliHostMemory, APointLargerThanHostMemoryIsSkippedNotKilled) {
  const CliResult r = runCli("run --kernels cpu.gemm.openblas --sizes 200000,16 --reps 2 --no-drift-check");
  EXPECT_EQ(r.rc, 0) << r.all();
  EXPECT_NE(r.out.find("skipped: needs about"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GiB of host memory"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 points: 1 ran (1 ok, 0 failed), 1 skipped"), std::string::npos) << r.out;
}

// ---- Kernel files: the user's own kernels through the CLI ----

namespace {

// A fresh XDG config folder for the CLI runs of one test (its default kernels folder inside).
fs::path freshConfigHome(const std::string& name) {
  const fs::path home = tempDir() / name;
  fs::create_directories(home / "kernelscope" / "kernels");
  setenv("XDG_CONFIG_HOME", home.c_str(), 1);
  return home;
}

int lineContaining(const std::string& text, const std::string& needle) {
  const auto all = lines(text);
  for (size_t i = 0; i < all.size(); ++i)
    if (contains(all[i], needle)) return int(i) + 1;
  return 0;
}

}  // namespace

TEST(CliKernelFiles, ATemplateRunsVerifiedSavesItsSourceAndReRunsFromTheSession) {
  const fs::path home = freshConfigHome("xdg-template");
  const fs::path file = tempDir() / "my_gemm.comp";
  auto made = runCli("kernel-template gemm -o " + quote(file.string()));
  ASSERT_EQ(made.rc, 0) << made.all();
  EXPECT_TRUE(contains(made.out, "run --kernel-file")) << made.out;
  EXPECT_EQ(runCli("kernel-template gemm -o " + quote(file.string())).rc, 2) << "never overwrites";
  const std::string text = readFile(file);
  ASSERT_TRUE(contains(text, "id:          user.my_gemm")) << text;

  auto listed = runCli("kernels --family gemm --kernel-file " + quote(file.string()));
  ASSERT_EQ(listed.rc, 0) << listed.all();
  EXPECT_TRUE(contains(listed.out, "user.my_gemm")) << listed.out;
  EXPECT_TRUE(contains(listed.out, "kernel files:")) << listed.out;
  EXPECT_TRUE(contains(listed.out, file.string())) << listed.out;

  const fs::path session = tempDir() / "user_kernel.json";
  auto r = runCli("run --kernel-file " + quote(file.string()) +
                  " --kernels user.my_gemm,gemm.tiled_shared --sizes 32,48 --reps 3 --warmup-ms 0 "
                  "--no-drift-check -o " +
                  quote(session.string()));
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n') > 4, true);
  EXPECT_TRUE(contains(r.out, "4 points: 4 ran (4 ok, 0 failed)")) << r.out;

  auto shown = runCli("show " + quote(session.string()));
  ASSERT_EQ(shown.rc, 0) << shown.all();
  EXPECT_TRUE(contains(shown.out, "kernel file: user.my_gemm from " + file.string())) << shown.out;
  auto source = runCli("show " + quote(session.string()) + " --kernel-source user.my_gemm");
  ASSERT_EQ(source.rc, 0) << source.all();
  EXPECT_EQ(source.out, text);

  // The file is then broken on disk, and sits in the default folder too: a
  // re-run of the session still compiles what the session measured.
  std::string broken = std::regex_replace(text, std::regex(R"(acc \+= tileA\[)"), "acc += tileQ[");
  ASSERT_NE(broken, text);
  std::ofstream(file) << broken;
  std::ofstream(home / "kernelscope" / "kernels" / "my_gemm.comp") << broken;
  const fs::path again = tempDir() / "user_kernel_again.json";
  auto rerun = runCli("run --rerun " + quote(session.string()) + " -o " + quote(again.string()));
  ASSERT_EQ(rerun.rc, 0) << rerun.all();
  EXPECT_TRUE(contains(rerun.out, "re-running " + session.string())) << rerun.out;
  EXPECT_TRUE(contains(rerun.out, "4 points: 4 ran (4 ok, 0 failed)")) << rerun.out;
  auto compared = runCli("compare " + quote(session.string()) + " " + quote(again.string()));
  ASSERT_EQ(compared.rc, 0) << compared.all();
  EXPECT_TRUE(contains(compared.out, "over 4 compared points")) << compared.out;
  EXPECT_EQ(runCli("run --rerun " + quote(session.string()) + " --sizes 64").rc, 2);

  // Run from the broken file itself: the point fails with the line in the file, the sweep goes on.
  const int line = lineContaining(broken, "tileQ");
  auto failed = runCli("run --kernel-file " + quote(file.string()) +
                       " --kernels user.my_gemm,gemm.naive --sizes 32 --reps 2 --warmup-ms 0 --no-drift-check");
  EXPECT_EQ(failed.rc, 1) << failed.all();
  EXPECT_TRUE(contains(failed.out, "line " + std::to_string(line) + ": 'tileQ' : undeclared identifier")) << failed.out;
  EXPECT_TRUE(contains(failed.out, "2 points: 2 ran (1 ok, 1 failed)")) << failed.out;
  auto compiled = runCli("compile --kernel-file " + quote(file.string()));
  EXPECT_EQ(compiled.rc, 1) << compiled.all();
  EXPECT_TRUE(contains(compiled.err, "my_gemm.comp:" + std::to_string(line) + ": 'tileQ'")) << compiled.err;
}

TEST(CliKernelFiles, TheDefaultFolderIsLoadedAndABadFileThereIsAWarning) {
  const fs::path home = freshConfigHome("xdg-default");
  const fs::path dir = home / "kernelscope" / "kernels";
  ASSERT_EQ(runCli("kernel-template custom -o " + quote((dir / "saxpy.comp").string())).rc, 0);
  std::ofstream(dir / "bad.comp") << "/* kernelscope kernel\nid: user.bad\nworkload: gemm\n*/\n#version 450\n";
  auto listed = runCli("kernels --family custom");
  ASSERT_EQ(listed.rc, 0) << listed.all();
  EXPECT_TRUE(contains(listed.out, "user.my_custom")) << listed.out;
  EXPECT_TRUE(contains(listed.err, "warning: bad.comp:1: grid: missing")) << listed.err;
  // Named on the command line, the same file is an error.
  auto named = runCli("kernels --kernel-file " + quote((dir / "bad.comp").string()));
  EXPECT_EQ(named.rc, 2) << named.all();
  EXPECT_TRUE(contains(named.err, "bad.comp:1: grid: missing")) << named.err;

  // Every sweep option works on it: --param and --wg; the points are marked unverified.
  auto r = runCli(
      "run --kernels user.my_custom --sizes 4096 --param ITEMS=1,4 --wg 64x1,128x1 --reps 2 "
      "--warmup-ms 0 --no-drift-check");
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_TRUE(contains(r.out, "4 points: 4 ran (4 ok, 0 failed)")) << r.out;
  EXPECT_EQ(lines(r.out).size() > 4, true);
  size_t unverified = 0;
  for (const auto& l : lines(r.out)) unverified += contains(l, "UNVERIFIED (custom workload: no reference)");
  EXPECT_EQ(unverified, 4u) << r.out;
}

TEST(CliKernelFiles, AManifestErrorNamesTheFileTheLineAndTheField) {
  freshConfigHome("xdg-manifest");
  const fs::path file = tempDir() / "typo.comp";
  ASSERT_EQ(runCli("kernel-template dot -o " + quote(file.string())).rc, 0);
  std::string text = readFile(file);
  text = std::regex_replace(text, std::regex(R"(grid:        GROUPS, 1, 1)"), "grid:        GROUP, 1, 1");
  std::ofstream(file) << text;
  auto r = runCli("run --kernel-file " + quote(file.string()) + " --kernels user.my_dot --sizes 1024");
  EXPECT_EQ(r.rc, 2) << r.all();
  const int line = lineContaining(text, "grid:        GROUP, 1, 1");
  ASSERT_GT(line, 0);
  EXPECT_TRUE(contains(r.err, "typo.comp:" + std::to_string(line) + ": grid: Unexpected token \"GROUP\"")) << r.err;
}

// ---------------------------------------------------------------- tune

TEST(CliTune, BadRequestsAreUsageErrors) {
  expectUsageError("tune --size 64", {"tune needs --kernel"});
  expectUsageError("tune --kernel gemm.block_tiling", {"tune needs --size"});
  expectUsageError("tune --kernel gemm.nope --size 64", {"unknown kernel 'gemm.nope'"});
  expectUsageError("tune --kernel gemm.block_tiling --size 64,128", {"one --size"});
  expectUsageError("tune --kernel gemm.block_tiling --size 64 --cache x --no-cache", {"exclude each other"});
  expectUsageError("tune --kernel gemm.block_tiling --size 64 --strategy exhaustive", {"unknown strategy"});
  expectUsageError("tune --kernel gemm.block_tiling --size 64 --param BK=3", {"BK=3 is not a legal value"});
  expectUsageError("tune --kernel gemm.block_tiling --size 64 --param TILE=3", {"no tunable TILE"});
  expectUsageError("tune --kernel cpu.gemm.openblas --size 64", {"nothing to tune"});
  expectUsageError("tune --kernel gemm.tile2d --size 64 --wg 8x8", {"no workgroup shape to tune"});
  expectUsageError("tune --kernel gemm.block_tiling --size 64 --time-budget soon",
                   {"--time-budget must be a duration"});
}

TEST(CliTune, TunesWritesASessionResumesFromTheCacheAndSavesTunedDefaults) {
  const fs::path home = freshConfigHome("xdg-tune");
  setenv("XDG_CACHE_HOME", (home / "cache").c_str(), 1);
  const fs::path session = tempDir() / "tune.json";
  const std::string tune =
      "tune --kernel gemm.block_tiling --size 64 --wg 8x8 --param BK=2,4 --param BN=2,4 --reps 3 --warmup-ms 0 "
      "--top 2 --final-rounds 2 -o " +
      quote(session.string());
  auto r = runCli(tune);
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_TRUE(contains(r.out, "4 configurations, 4 valid after pruning; grid search, 4 evaluations")) << r.out;
  EXPECT_EQ(countOf(r.out, "GFLOP/s   best "), 4u) << r.out;
  EXPECT_EQ(countOf(r.out, "(cached)"), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, "final round: the best 2 measured again, 2 interleaved rounds")) << r.out;
  EXPECT_TRUE(contains(r.out, "verdict: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "run it: kernelscope-cli run --kernels gemm.block_tiling --sizes 64 --wg 8x8")) << r.out;
  // The cache is the default one, under XDG_CACHE_HOME.
  size_t cache_files = 0;
  for (const auto& e : fs::directory_iterator(home / "cache" / "kernelscope" / "tune"))
    cache_files += e.path().filename().string().rfind("gemm.block_tiling-64-", 0) == 0;
  EXPECT_EQ(cache_files, 1u);

  // The session keeps the tune; show prints it.
  auto show = runCli("show " + quote(session.string()));
  EXPECT_TRUE(contains(show.out, "tune of gemm.block_tiling at 64: grid search (seed 1)")) << show.all();
  EXPECT_TRUE(contains(show.out, "verdict: ")) << show.out;

  // Again: everything from the cache, and the winner saved as a tuned default.
  const fs::path tuned = tempDir() / "tuned.json";
  r = runCli(tune + " --save-defaults --tuned-file " + quote(tuned.string()));
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_EQ(countOf(r.out, "(cached)"), 4u) << r.out;
  EXPECT_TRUE(contains(r.out, "evaluated 4 (4 from the cache, 0 failed)")) << r.out;
  EXPECT_TRUE(contains(r.out, "saved as the tuned default of gemm.block_tiling")) << r.out;
  auto saved = nlohmann::json::parse(readFile(tuned));
  ASSERT_EQ(saved["entries"].size(), 1u);
  const auto& params = saved["entries"][0]["params"];

  // run --tuned uses it; a --param the user gives still wins.
  auto run = runCli("run --kernels gemm.block_tiling --sizes 64 --tuned --tuned-file " + quote(tuned.string()) +
                    " --reps 2 --warmup-ms 0 --no-drift-check");
  ASSERT_EQ(run.rc, 0) << run.all();
  const std::string expect =
      "8x8 BK=" + std::to_string(params["BK"].get<int>()) + " BN=" + std::to_string(params["BN"].get<int>());
  EXPECT_TRUE(contains(run.out, "tuned: gemm.block_tiling (size class 64): tuned " + expect)) << run.out;
  EXPECT_TRUE(contains(run.out, expect)) << run.out;
  run = runCli("run --kernels gemm.block_tiling --sizes 64 --tuned --tuned-file " + quote(tuned.string()) +
               " --param BK=16 --reps 2 --warmup-ms 0 --no-drift-check");
  ASSERT_EQ(run.rc, 0) << run.all();
  EXPECT_TRUE(contains(run.out, "8x8 BK=16 BN=" + std::to_string(params["BN"].get<int>()))) << run.out;
  expectUsageError("run --kernels gemm.block_tiling --sizes 64 --tuned-file x.json", {"give --tuned too"});

  // The session of a complete grid replays the other strategies.
  auto replay = runCli("tune-replay " + quote(session.string()) + " --seeds 3 --fraction 50%");
  ASSERT_EQ(replay.rc, 0) << replay.all();
  for (const char* s : {"random", "anneal", "genetic"}) EXPECT_TRUE(contains(replay.out, s)) << replay.out;
  EXPECT_TRUE(contains(replay.out, "4 valid configurations; exhaustive best")) << replay.out;
}

TEST(CliTune, DryRunShowsThePruningWithoutRunning) {
  auto r = runCli("tune --kernel gemm.warptile --size 128 --dry-run --no-cache");
  ASSERT_EQ(r.rc, 0) << r.all();
  EXPECT_TRUE(contains(r.out, "5832 configurations of gemm.warptile at 128")) << r.out;
  EXPECT_TRUE(contains(r.out, "pruned ")) << r.out;
  EXPECT_TRUE(contains(r.out, "BM and BN must be multiples of WM and WN")) << r.out;
  EXPECT_FALSE(contains(r.out, "GFLOP/s")) << r.out;
}
