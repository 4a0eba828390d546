// Kernel files: a user's GLSL with a manifest becomes a kernel that is timed,
// verified, saved and re-run like a built-in one (on lavapipe).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "engine/bench/compile.h"
#include "engine/bench/runner.h"
#include "engine/kernels/kernel_file.h"
#include "engine/session/session.h"
#include "engine/tune/space.h"
#include "tests/lavapipe.h"

using namespace ks;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string templateOf(const std::string& workload) {
  auto text = kernelTemplate(workload);
  if (!text) throw std::runtime_error(text.error().message);
  return *text;
}

std::string exampleFile(const std::string& name) {
  for (const auto& [file, text] : exampleKernelFiles())
    if (file == name) return text;
  throw std::runtime_error("no example " + name);
}

// The text with the first match of `pattern` replaced.
std::string edited(const std::string& text, const std::string& pattern, const std::string& replacement) {
  std::string out = std::regex_replace(text, std::regex(pattern), replacement, std::regex_constants::format_first_only);
  if (out == text) throw std::runtime_error("pattern not found: " + pattern);
  return out;
}

// 1-based line of the first line containing `needle`.
int lineOf(const std::string& text, const std::string& needle) {
  std::stringstream ss(text);
  std::string line;
  for (int n = 1; std::getline(ss, line); ++n)
    if (contains(line, needle)) return n;
  return 0;
}

const KernelInfo* registered(const std::string& text, const std::string& path) {
  auto k = parseKernelFile(text, path);
  if (!k) throw std::runtime_error(k.error().message);
  auto added = Registry::instance().addUserKernel(std::move(*k));
  if (!added) throw std::runtime_error(added.error().message);
  return *added;
}

Plan quickPlan() {
  Plan plan;
  plan.reps = 3;
  plan.warmup = 1;
  plan.warmup_ms = 0;
  plan.drift_check = false;
  return plan;
}

Measurement runOne(const KernelInfo& k, uint64_t size, Params params = {}, Plan plan = quickPlan()) {
  if (params.values.empty() && params.wg == WorkgroupShape{}) params = k.defaultParams();
  PlanItem item{k.id, params, problemSize(k, {size}).value()};
  Runner runner(&ks::testing::device());
  std::atomic<bool> cancel{false};
  return runner.runPoint(item, plan, cancel);
}

}  // namespace

TEST(KernelFile, EveryTemplateParsesWithItsWorkload) {
  for (const auto& w : kernelTemplateWorkloads()) {
    SCOPED_TRACE(w);
    auto k = parseKernelFile(templateOf(w), w + ".comp");
    ASSERT_TRUE(k.ok()) << k.error().message;
    EXPECT_EQ(k->id, "user.my_" + w);
    EXPECT_EQ(k->workload, w);
    EXPECT_EQ(k->family, w);
    EXPECT_EQ(k->backend, Backend::Vulkan);
    EXPECT_FALSE(k->source.empty());
    EXPECT_TRUE(k->flops && k->bytes && k->buffers && k->steps);
  }
  EXPECT_FALSE(kernelTemplate("fft").ok());
}

TEST(KernelFile, TemplatesOfEachWorkloadCompileRunAndVerify) {
  for (const auto& w : kernelTemplateWorkloads()) {
    SCOPED_TRACE(w);
    const KernelInfo* k = registered(templateOf(w), w + ".comp");
    const uint64_t size = w == "gemm" ? 64 : w == "gemv" ? 256 : 4096;
    auto m = runOne(*k, size);
    ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
    EXPECT_EQ(m.samples_ns.size(), 3u);
    EXPECT_GT(m.stats.median, 0);
    EXPECT_GT(m.gbps, 0);
    if (w == "custom") {
      // No reference: timed, never "ok".
      EXPECT_EQ(m.verification.status, VerifyStatus::Unverified);
      EXPECT_FALSE(m.trustworthy());
      EXPECT_TRUE(m.timed());
      EXPECT_TRUE(contains(m.verification.note, "0 of 4096 output floats still hold the NaN poison"))
          << m.verification.note;
    } else {
      EXPECT_EQ(m.verification.status, VerifyStatus::Ok) << m.verification.note;
      EXPECT_TRUE(m.trustworthy());
    }
  }
}

// The shipped file versions of built-in kernels compute exactly what the
// registry versions compute: same counts, buffers and grids, bit-identical
// outputs (the same error against the reference), comparable times.
TEST(KernelFile, FileVersionsMeasureAndVerifyLikeTheBuiltInKernels) {
  struct Pair {
    std::string file, builtin;
    uint64_t size;
  };
  for (const Pair& p : {Pair{"gemm_tiled_shared.comp", "gemm.tiled_shared", 96},
                        Pair{"gemv_row_per_thread.comp", "gemv.row_per_thread", 300},
                        Pair{"dot_two_pass_shared.comp", "dot.two_pass_shared", 100000}}) {
    SCOPED_TRACE(p.file);
    const KernelInfo* file = registered(exampleFile(p.file), p.file);
    const KernelInfo* builtin = Registry::instance().find(p.builtin);
    ASSERT_NE(builtin, nullptr);
    EXPECT_EQ(file->id, "user." + std::regex_replace(p.builtin, std::regex("\\."), "_"));
    const ProblemSize size = problemSize(*builtin, {p.size}).value();
    const Params params = builtin->defaultParams();
    ASSERT_EQ(file->defaultParams(), params);
    EXPECT_DOUBLE_EQ(file->flops(size), builtin->flops(size));
    EXPECT_DOUBLE_EQ(file->bytes(size, params), builtin->bytes(size, params));
    const auto fb = file->buffers(size, params), bb = builtin->buffers(size, params);
    ASSERT_EQ(fb.size(), bb.size());
    for (size_t i = 0; i < fb.size(); ++i) {
      EXPECT_EQ(fb[i].bytes, bb[i].bytes) << i;
      EXPECT_EQ(fb[i].role, bb[i].role) << i;
    }
    const auto& dev = ks::testing::device().info();
    const auto fs = dispatchSteps(*file, size, params, dev), bs = dispatchSteps(*builtin, size, params, dev);
    ASSERT_EQ(fs.size(), bs.size());
    for (size_t i = 0; i < fs.size(); ++i) EXPECT_EQ(fs[i].groups, bs[i].groups) << "pass " << i;

    Plan plan = quickPlan();
    plan.reps = 5;
    auto mf = runOne(*file, p.size, params, plan);
    auto mb = runOne(*builtin, p.size, params, plan);
    ASSERT_TRUE(mf.trustworthy()) << mf.error << mf.verification.note;
    ASSERT_TRUE(mb.trustworthy()) << mb.error << mb.verification.note;
    EXPECT_EQ(mf.verification.rel_error, mb.verification.rel_error);
    EXPECT_EQ(mf.verification.max_error, mb.verification.max_error);
    EXPECT_EQ(mf.verification.tolerance, mb.verification.tolerance);
    // Same work on a shared 2-core machine: within a factor of 3, not more.
    EXPECT_LT(mf.stats.median, 3 * mb.stats.median);
    EXPECT_LT(mb.stats.median, 3 * mf.stats.median);
  }
}

// `workgroup: fixed`: the shader sizes its own workgroup from its tiles, so
// there is no shape to sweep or tune; the shipped fast SGEMM is one, and it
// verifies with every pipeline mode and a launch order whose last group is short.
TEST(KernelFile, AFixedWorkgroupKernelTakesNoShapesAndTheQuadrantSgemmVerifies) {
  const KernelInfo* k = registered(exampleFile("sgemm_quadrants.comp"), "sgemm_quadrants.comp");
  EXPECT_EQ(k->id, "user.sgemm_quadrants");
  EXPECT_FALSE(k->uses_workgroup);
  auto dims = tuneDimensions(*k, {{"PIPE", {0, 1}}}, {});
  ASSERT_TRUE(dims.ok()) << dims.error().message;
  for (const auto& d : *dims) EXPECT_FALSE(d.isWorkgroup()) << d.name;
  auto shapes = tuneDimensions(*k, {}, {WorkgroupShape{16, 16, 1}});
  ASSERT_FALSE(shapes.ok());
  EXPECT_NE(shapes.error().message.find("no workgroup shape to tune"), std::string::npos) << shapes.error().message;

  for (int pipe : {0, 1}) {
    SCOPED_TRACE("PIPE=" + std::to_string(pipe));
    Params p = k->defaultParams();
    p.values["BK"] = 8;  // 12.8 KiB of shared memory: fits lavapipe's 32 KiB
    p.values["BM"] = 64;
    p.values["PIPE"] = pipe;
    p.values["GROUP_M"] = 4;  // 384 / 64 = 6 tile rows: a group of 4, then one of 2
    auto m = runOne(*k, 384, p);
    ASSERT_EQ(m.status, PointStatus::Ok) << m.error;
    EXPECT_EQ(m.verification.status, VerifyStatus::Ok) << m.verification.note;
  }
  // 2 x 16 x (132 + 132) x 4 bytes: over lavapipe's 32 KiB, refused with the limit.
  auto big = runOne(*k, 256);
  EXPECT_EQ(big.status, PointStatus::Skipped) << big.error;
}

TEST(KernelFile, ABrokenShaderFailsItsPointWithTheLineInTheUsersFile) {
  const std::string good = templateOf("gemm");
  const int line = lineOf(good, "acc += tileA[");
  ASSERT_GT(line, 40);  // below the manifest: numbering must survive it and the injected defines
  const std::string broken = edited(good, R"(acc \+= tileA\[)", "acc += tileQ[");
  const KernelInfo* k = registered(edited(broken, "user.my_gemm", "user.broken_gemm"), "broken.comp");
  auto m = runOne(*k, 32);
  ASSERT_EQ(m.status, PointStatus::Failed);
  const std::string first = m.error.substr(0, m.error.find('\n'));
  EXPECT_TRUE(contains(first, "line " + std::to_string(line) + ": 'tileQ' : undeclared identifier")) << first;
  const auto diags = sourceDiagnostics(m.error);
  ASSERT_FALSE(diags.empty());
  EXPECT_EQ(diags.front().line, line);
  EXPECT_TRUE(contains(diags.front().message, "tileQ"));

  // compileKernel says the same, without running anything.
  auto compiled = compileKernel(ks::testing::device(), *k, k->defaultParams(), {64, 64, 64});
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(sourceDiagnostics(compiled.error().message).front().line, line);
  // The fixed file compiles, one pass with its grid.
  const KernelInfo* fixed = registered(edited(good, "user.my_gemm", "user.broken_gemm"), "broken.comp");
  auto ok = compileKernel(ks::testing::device(), *fixed, fixed->defaultParams(), {64, 64, 64});
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  ASSERT_EQ(ok->passes.size(), 1u);
  EXPECT_EQ(ok->passes[0].groups, (std::array<uint32_t, 3>{4, 4, 1}));
}

TEST(KernelFile, ManifestErrorsNameTheFieldAndTheLine) {
  const std::string good = templateOf("gemm");
  struct Case {
    std::string pattern, replacement, expect;
    std::string at;  // the line's text in the edited file ("" = first line)
  };
  const Case cases[] = {
      {R"(grid:[^\n]*)", "grid:        ceil(N / TILES), 1, 1", "grid: Unexpected token \"TILES\"", "grid:"},
      {R"(workgroup:[^\n]*)", "workgroup:   16y16", "workgroup: malformed workgroup shape", "workgroup:"},
      {R"(workload:[^\n]*)", "workload:    fft", "workload: 'fft' is not a workload", "workload:"},
      {R"(shared:[^\n]*)", "shared:      2 * WG_X *", "shared: Unexpected end of expression", "shared:"},
      {R"(shared:[^\n]*)", "sharde:      1", "sharde: unknown field", "sharde:"},
      {R"(shared:[^\n]*)", "tunable:     T = 3 in 1, 2", "tunable: the default 3 is not one of its values", "tunable:"},
      {R"(shared:[^\n]*)", "tunable:     M = 1 in 1, 2", "tunable: M is reserved", "tunable:"},
      {R"(shared:[^\n]*)", "tunable:     T = 1 in 1, x", "tunable: 'x' is not an integer", "tunable:"},
      {R"(shared:[^\n]*)", "buffer:      input extra = 4", "buffer: the gemm workload binds its own", "buffer:"},
      {R"(shared:[^\n]*)", "feature:     warp_drive", "feature: unknown feature 'warp_drive'", "feature:"},
      {R"(id:[^\n]*)", "id:          gemm.naive", "id: 'gemm.naive' is a built-in kernel's id", "id:"},
      {R"(id:[^\n]*)", "id:          My Kernel", "id: 'My Kernel' is not an id", "id:"},
      {R"(title:[^\n]*)", "id:          user.twice", "id: given twice", "id:          user.twice"},
      {R"(grid:[^\n]*\n)", "", "grid: missing", "/* kernelscope"},
      {R"(\*/)", "", "the manifest block is not closed", "/* kernelscope"},
      {R"(/\* kernelscope kernel)", "/* my kernel", "no manifest", ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.replacement);
    const std::string text = edited(good, c.pattern, c.replacement);
    auto k = parseKernelFile(text, "/some/where/mine.comp");
    ASSERT_FALSE(k.ok());
    const std::string& msg = k.error().message;
    EXPECT_TRUE(contains(msg, c.expect)) << msg;
    const int line = c.at.empty() ? 1 : lineOf(text, c.at);
    EXPECT_TRUE(msg.rfind("mine.comp:" + std::to_string(line) + ": ", 0) == 0) << msg << " (line " << line << ")";
    const auto diags = sourceDiagnostics(msg);
    ASSERT_EQ(diags.size(), 1u) << msg;
    EXPECT_EQ(diags[0].line, line);
  }
}

TEST(KernelFile, ConstraintsAndCountsAreCheckedBeforeAPointRuns) {
  const KernelInfo* k = registered(edited(templateOf("gemm"), "user.my_gemm", "user.constrained"), "c.comp");
  const auto& dev = ks::testing::device().info();
  Params p = k->defaultParams();
  p.wg = {16, 8, 1};
  auto why = checkPoint(*k, {64, 64, 64}, p, &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(contains(*why, "the tile is the workgroup: use a square shape")) << *why;
  // A grid that is not a whole number says which field, where and at which point.
  const std::string text = edited(templateOf("custom"), R"(grid:[^\n]*)", "grid:        N / WG_X, 1, 1");
  const KernelInfo* frac = registered(edited(text, "user.my_custom", "user.fractional"), "f.comp");
  why = checkPoint(*frac, problemSize(*frac, {1000}).value(), frac->defaultParams(), &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(
      contains(*why, "f.comp:" + std::to_string(lineOf(text, "grid:")) + ": grid: 'N / WG_X, 1, 1' gives 3.90625"))
      << *why;
  EXPECT_TRUE(contains(*why, "not a whole number")) << *why;
  EXPECT_FALSE(checkPoint(*frac, problemSize(*frac, {1024}).value(), frac->defaultParams(), &dev).has_value());
  // Shared memory over the device's limit is refused as for built-in kernels.
  const std::string greedy = edited(templateOf("gemm"), R"(shared:[^\n]*)", "shared:      1024 * 1024 * 1024");
  const KernelInfo* g = registered(edited(greedy, "user.my_gemm", "user.greedy"), "g.comp");
  why = checkPoint(*g, {64, 64, 64}, g->defaultParams(), &dev);
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(contains(*why, "over maxComputeSharedMemorySize")) << *why;
}

TEST(KernelFile, AKernelThatWritesWrongResultsFailsVerification) {
  const std::string wrong = edited(templateOf("gemm"), R"(C\[row \* N \+ col\] = acc;)",
                                   "C[row * N + col] = (row == 7 && col == 3) ? acc + 1.0 : acc;");
  const KernelInfo* k = registered(edited(wrong, "user.my_gemm", "user.wrong_gemm"), "wrong.comp");
  auto m = runOne(*k, 64);
  EXPECT_EQ(m.status, PointStatus::Failed);
  EXPECT_EQ(m.verification.status, VerifyStatus::Failed);
  EXPECT_TRUE(contains(m.error, "verification failed")) << m.error;
  EXPECT_FALSE(m.timed());
}

TEST(KernelFile, AHangingKernelIsStoppedByTheWatchdogAndTheSweepGoesOn) {
  // Every invocation spins on a flag nothing sets (see test_watchdog.cpp).
  const std::string endless = R"(/* kernelscope kernel
id:       user.endless
workload: custom
size:     N
buffer:   input x = 4 * N
buffer:   output out = 4 * N
workgroup: 1x1
grid:     65535, 65535, 1
flops:    0
bytes:    8 * N
*/
#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Out { uint v[]; } flag;
void main() {
  uint spins = 0u;
  while (atomicOr(flag.v[0], 0u) != 0u) spins++;
  atomicAdd(flag.v[1], spins);
}
)";
  // The output starts as the NaN poison, never 0: the loop never ends.
  const KernelInfo* hang = registered(endless, "endless.comp");
  const KernelInfo* good = registered(edited(templateOf("custom"), "user.my_custom", "user.after_hang"), "ok.comp");
  Plan plan = quickPlan();
  // Long enough for the next point: the abandoned lavapipe device's threads
  // go on spinning beside it.
  plan.dispatch_timeout_ms = 3000;
  plan.items = {{hang->id, hang->defaultParams(), problemSize(*hang, {64}).value()},
                {good->id, good->defaultParams(), problemSize(*good, {4096}).value()}};
  Runner runner(&ks::testing::device());
  std::atomic<bool> cancel{false};
  auto points = runner.run(plan, {}, cancel);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].status, PointStatus::Failed);
  EXPECT_TRUE(contains(points[0].error, "watchdog")) << points[0].error;
  EXPECT_EQ(points[1].status, PointStatus::Ok) << points[1].error;
}

TEST(KernelFile, ASessionEmbedsTheSourceAndReRunsExactlyThatKernel) {
  const std::string v1 = edited(templateOf("gemm"), "user.my_gemm", "user.session_gemm");
  const KernelInfo* k = registered(v1, "/home/someone/session_gemm.comp");
  Session s = newSession();
  s.plan = quickPlan();
  s.plan.items = {{k->id, k->defaultParams(), {48, 48, 48, 3}}};
  embedKernelFiles(s);
  ASSERT_EQ(s.kernel_files.size(), 1u);
  Runner runner(&ks::testing::device());
  std::atomic<bool> cancel{false};
  s.points = runner.run(s.plan, {}, cancel);
  ASSERT_TRUE(s.points.at(0).trustworthy()) << s.points[0].error;
  const std::string json = sessionToJson(s);

  // The file is edited (a broken version is loaded under the same id) ...
  const std::string v2 = edited(v1, R"(acc \+= tileA\[)", "acc += tileQ[");
  registered(v2, "/home/someone/session_gemm.comp");
  ASSERT_EQ(Registry::instance().find(k->id)->source, v2);
  // ... and the session brings back what it measured.
  auto loaded = sessionFromJson(json);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->kernel_files.size(), 1u);
  EXPECT_EQ(loaded->kernel_files[0].source, v1);
  EXPECT_EQ(loaded->kernel_files[0].path, "/home/someone/session_gemm.comp");
  EXPECT_EQ(Registry::instance().find(k->id)->source, v1);
  auto again = runner.run(loaded->plan, {}, cancel);
  ASSERT_TRUE(again.at(0).trustworthy()) << again[0].error;
  EXPECT_EQ(again[0].shader_hash, s.points[0].shader_hash);
  EXPECT_EQ(again[0].verification.rel_error, s.points[0].verification.rel_error);

  // A source edited inside the file is refused, not silently trusted.
  const std::string tampered = std::regex_replace(json, std::regex("acc \\+= tileA\\["), "acc -= tileA[",
                                                  std::regex_constants::format_first_only);
  ASSERT_NE(tampered, json);
  auto refused = sessionFromJson(tampered);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(contains(refused.error().message, "kernel_files[0].hash")) << refused.error().message;
}

TEST(KernelFile, OnlyACustomWorkloadsPointsMayBeUnverified) {
  const KernelInfo* custom = registered(edited(templateOf("custom"), "user.my_custom", "user.unverified"), "u.comp");
  Session s = newSession();
  s.plan = quickPlan();
  s.plan.items = {{custom->id, custom->defaultParams(), problemSize(*custom, {2048}).value()}};
  Runner runner(&ks::testing::device());
  std::atomic<bool> cancel{false};
  s.points = runner.run(s.plan, {}, cancel);
  ASSERT_EQ(s.points.at(0).verification.status, VerifyStatus::Unverified);
  auto loaded = sessionFromJson(sessionToJson(s));
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->points.at(0).verification.status, VerifyStatus::Unverified);
  EXPECT_EQ(loaded->points[0].status, PointStatus::Ok);

  // A gemm point cannot claim to be unverified and ok.
  Session g = newSession();
  g.plan = quickPlan();
  const KernelInfo* naive = Registry::instance().find("gemm.naive");
  g.plan.items = {{naive->id, naive->defaultParams(), {32, 32, 32, 3}}};
  g.points = runner.run(g.plan, {}, cancel);
  ASSERT_TRUE(g.points.at(0).trustworthy());
  g.points[0].verification.status = VerifyStatus::Unverified;
  auto refused = sessionFromJson(sessionToJson(g));
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(contains(refused.error().message, "only a custom workload's points can be unverified"))
      << refused.error().message;
}

TEST(KernelFile, AFolderLoadsEveryFileAndReportsTheOnesThatFail) {
  const auto dir = std::filesystem::temp_directory_path() / ("ks-kernels-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; };
  write("a.comp", edited(templateOf("dot"), "user.my_dot", "user.dir_a"));
  write("b.comp", edited(templateOf("gemv"), R"(grid:[^\n]*)", "grid: ceil(M / WG)"));
  write("notes.txt", "not a kernel");
  auto loaded = registerKernelDir(dir.string());
  ASSERT_EQ(loaded.kernels.size(), 1u);
  EXPECT_EQ(loaded.kernels[0]->id, "user.dir_a");
  EXPECT_EQ(loaded.kernels[0]->source_path, (dir / "a.comp").string());
  ASSERT_EQ(loaded.errors.size(), 1u);
  EXPECT_TRUE(contains(loaded.errors[0], "b.comp:")) << loaded.errors[0];
  EXPECT_TRUE(contains(loaded.errors[0], "grid: Unexpected token \"WG\"")) << loaded.errors[0];
  std::filesystem::remove_all(dir);
}

TEST(KernelFile, UserKernelsJoinTheRegistryAndReplaceTheirOwnEarlierVersion) {
  auto& reg = Registry::instance();
  const size_t before = reg.all().size();
  const KernelInfo* first = registered(edited(templateOf("dot"), "user.my_dot", "user.versioned"), "v.comp");
  EXPECT_EQ(reg.all().size(), before + 1);
  const KernelInfo* second = registered(edited(templateOf("dot"), "user.my_dot", "user.versioned"), "v2.comp");
  EXPECT_EQ(reg.all().size(), before + 1);  // replaced, not added
  EXPECT_EQ(reg.find("user.versioned"), second);
  EXPECT_EQ(first->id, "user.versioned");  // the old record stays alive for a sweep that holds it
  auto matched = reg.match("user.versioned");
  ASSERT_TRUE(matched.ok());
  EXPECT_EQ(matched->front(), second);
  // Built-in ids cannot be taken, even bypassing the file parser.
  KernelInfo clash = *reg.find("gemm.naive");
  EXPECT_FALSE(reg.addUserKernel(clash).ok());
}

TEST(KernelFile, DiagnosticsAreReadFromGlslangAndManifestMessages) {
  const std::string glslang =
      "GLSL parse failed for my gemm.comp: line 74: 'tileQ' : undeclared identifier\n"
      "ERROR: my gemm.comp:74: 'tileQ' : undeclared identifier\n"
      "ERROR: my gemm.comp:74: '' : compilation terminated\n"
      "ERROR: my gemm.comp:80: 'x' : no such field\n"
      "  74: acc += tileQ[0];\n";
  const auto d = sourceDiagnostics(glslang);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], (SourceDiagnostic{74, "'tileQ' : undeclared identifier"}));
  EXPECT_EQ(d[1], (SourceDiagnostic{80, "'x' : no such field"}));
  EXPECT_EQ(sourceDiagnostics("my kernels/a b.comp:7: grid: missing"),
            (std::vector<SourceDiagnostic>{{7, "grid: missing"}}));
  EXPECT_EQ(sourceDiagnostics("the device was lost"), (std::vector<SourceDiagnostic>{{0, "the device was lost"}}));
}
