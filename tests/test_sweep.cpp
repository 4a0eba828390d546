// Sweep parsing (sizes, M x N x K, workgroup shapes, tunables) and plan expansion.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/bench/sweep.h"
#include "engine/kernels/registry.h"

namespace {

using ks::ProblemSize;
using ks::WorkgroupShape;

// Asserts that `r` failed and that its message contains every one of `needles`.
template <typename T>
void expectError(const ks::Result<T>& r, const std::string& input, std::initializer_list<std::string> needles) {
  ASSERT_FALSE(r.ok()) << "'" << input << "' was accepted";
  const std::string& msg = r.error().message;
  EXPECT_FALSE(msg.empty()) << "'" << input << "'";
  for (const auto& n : needles)
    EXPECT_NE(msg.find(n), std::string::npos)
        << "error for '" << input << "' is \"" << msg << "\"; expected it to mention \"" << n << "\"";
}

const ks::KernelInfo* kernel(const std::string& id) {
  const ks::KernelInfo* k = ks::Registry::instance().find(id);
  EXPECT_NE(k, nullptr) << id << " is not registered";
  return k;
}

ProblemSize sq(uint64_t s) { return {s, s, s}; }

// ---------------------------------------------------------------- parseSizeList

TEST(ParseSizeList, CommaSeparatedList) {
  auto r = ks::parseSizeList("128,256,512");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<uint64_t>{128, 256, 512}));
}

TEST(ParseSizeList, SingleValueAndOrderIsKept) {
  auto r = ks::parseSizeList("7");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<uint64_t>{7}));
  auto r2 = ks::parseSizeList("512,128,256");
  ASSERT_TRUE(r2.ok()) << r2.error().message;
  EXPECT_EQ(*r2, (std::vector<uint64_t>{512, 128, 256}));
}

TEST(ParseSizeList, GeometricRange) {
  auto r = ks::parseSizeList("64:4096:x2");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<uint64_t>{64, 128, 256, 512, 1024, 2048, 4096}));
}

TEST(ParseSizeList, GeometricRangeStopsAtOrBelowTheEnd) {
  auto r = ks::parseSizeList("10:1000:x3");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<uint64_t>{10, 30, 90, 270, 810}));
  auto one = ks::parseSizeList("64:100:x2");
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(*one, (std::vector<uint64_t>{64}));
}

TEST(ParseSizeList, LinearRange) {
  auto r = ks::parseSizeList("256:2048:+256");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->size(), 8u);
  EXPECT_EQ(*r, (std::vector<uint64_t>{256, 512, 768, 1024, 1280, 1536, 1792, 2048}));
}

TEST(ParseSizeList, LinearRangeWhoseStepOvershootsTheEnd) {
  auto r = ks::parseSizeList("100:350:+100");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<uint64_t>{100, 200, 300}));
}

TEST(ParseSizeList, RangeWithEqualEnds) {
  auto r = ks::parseSizeList("32:32:x2");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<uint64_t>{32}));
}

TEST(ParseSizeList, MixedListsAndRanges) {
  auto r = ks::parseSizeList("16,64:256:x2,1000:1200:+100,3");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<uint64_t>{16, 64, 128, 256, 1000, 1100, 1200, 3}));
}

TEST(ParseSizeList, MalformedInputsNameTheProblem) {
  expectError(ks::parseSizeList("0"), "0", {"size 0"});
  expectError(ks::parseSizeList("-5"), "-5", {"negative", "-5"});
  expectError(ks::parseSizeList("abc"), "abc", {"'abc'", "not a size"});
  expectError(ks::parseSizeList("64:32:x2"), "64:32:x2", {"64:32:x2", "ends before it starts"});
  expectError(ks::parseSizeList("1:10:x1"), "1:10:x1", {"1:10:x1", "factor must be at least 2"});
  expectError(ks::parseSizeList("1:10:y2"), "1:10:y2", {"malformed range", "1:10:y2"});
  expectError(ks::parseSizeList("1x2"), "1x2", {"'1x2'", "not a size"});
  expectError(ks::parseSizeList(""), "", {"no sizes"});
  expectError(ks::parseSizeList("128,"), "128,", {"empty size"});
  expectError(ks::parseSizeList("128,,256"), "128,,256", {"empty size"});
  expectError(ks::parseSizeList("1:10"), "1:10", {"malformed range", "1:10"});
  expectError(ks::parseSizeList("1:10:x"), "1:10:x", {"malformed range"});
  expectError(ks::parseSizeList("1:10:+0"), "1:10:+0", {"1:10:+0"});
  expectError(ks::parseSizeList("0:10:+1"), "0:10:+1", {"size 0"});
  expectError(ks::parseSizeList("99999999999"), "99999999999", {"too large"});
  expectError(ks::parseSizeList("5000000000"), "5000000000", {"over the limit of 4294967295"});
  // Large sizes parse; whether they fit is the device's to say.
  auto big = ks::parseSizeList("268435456");
  ASSERT_TRUE(big.ok()) << big.error().message;
}

TEST(ParseSizeList, HugeLinearRangeIsRefused) {
  expectError(ks::parseSizeList("1:16000000:+1"), "1:16000000:+1", {"too many sizes"});
}

// ---------------------------------------------------------------- parseMnkList

TEST(ParseMnkList, ExplicitShapes) {
  auto r = ks::parseMnkList("1024x768x512,3000x5000x4000");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0], (ProblemSize{1024, 768, 512}));
  EXPECT_EQ((*r)[1], (ProblemSize{3000, 5000, 4000}));
  EXPECT_EQ((*r)[0].m, 1024u);
  EXPECT_EQ((*r)[0].n, 768u);
  EXPECT_EQ((*r)[0].k, 512u);
}

TEST(ParseMnkList, PlainSizesBecomeSquares) {
  auto r = ks::parseMnkList("256,512");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<ProblemSize>{sq(256), sq(512)}));
}

TEST(ParseMnkList, MixOfSquaresShapesAndLinearRanges) {
  auto r = ks::parseMnkList("32,64x48x32,100:300:+100");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<ProblemSize>{sq(32), {64, 48, 32}, sq(100), sq(200), sq(300)}));
}

TEST(ParseMnkList, GeometricRangeOfSquares) {
  // --sizes goes through parseMnkList in the CLI, and its help advertises
  // "64:4096:x2"; the 'x' of the factor must not be taken for an MxNxK separator.
  auto r = ks::parseMnkList("64:256:x2");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<ProblemSize>{sq(64), sq(128), sq(256)}));
  auto mixed = ks::parseMnkList("16,64:256:x2,8x4x2");
  ASSERT_TRUE(mixed.ok()) << mixed.error().message;
  EXPECT_EQ(*mixed, (std::vector<ProblemSize>{sq(16), sq(64), sq(128), sq(256), {8, 4, 2}}));
}

TEST(ParseMnkList, ReversedGeometricRangeSaysSo) {
  expectError(ks::parseMnkList("64:32:x2"), "64:32:x2", {"ends before it starts"});
}

TEST(ParseMnkList, MalformedInputsNameTheProblem) {
  expectError(ks::parseMnkList("1x2"), "1x2", {"malformed size '1x2'", "MxNxK"});
  expectError(ks::parseMnkList("16x"), "16x", {"malformed size '16x'"});
  expectError(ks::parseMnkList("x16"), "x16", {"malformed size 'x16'"});
  expectError(ks::parseMnkList("1x2x3x4"), "1x2x3x4", {"malformed size '1x2x3x4'"});
  expectError(ks::parseMnkList("16x0x8"), "16x0x8", {"16x0x8", "size 0"});
  expectError(ks::parseMnkList("16xabcx8"), "16xabcx8", {"16xabcx8", "'abc'"});
  expectError(ks::parseMnkList("16x-4x8"), "16x-4x8", {"16x-4x8", "negative"});
  expectError(ks::parseMnkList("0"), "0", {"size 0"});
  expectError(ks::parseMnkList("-5"), "-5", {"negative"});
  expectError(ks::parseMnkList("abc"), "abc", {"'abc'"});
  expectError(ks::parseMnkList(""), "", {"no sizes"});
  expectError(ks::parseMnkList("64x48x32,"), "64x48x32,", {"empty size"});
}

// ---------------------------------------------------------------- parseShapeList

TEST(ParseShapeList, OneTwoAndThreeDimensions) {
  auto r = ks::parseShapeList("8x8,16x16,64,4x4x4,1x2");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<WorkgroupShape>{{8, 8, 1}, {16, 16, 1}, {64, 1, 1}, {4, 4, 4}, {1, 2, 1}}));
}

TEST(ParseShapeList, DuplicatesAreDropped) {
  auto r = ks::parseShapeList("8x8,16x16,8x8,8x8x1");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<WorkgroupShape>{{8, 8, 1}, {16, 16, 1}}));
}

TEST(ParseShapeList, MalformedInputsNameTheProblem) {
  expectError(ks::parseShapeList("16x"), "16x", {"malformed workgroup shape '16x'"});
  expectError(ks::parseShapeList("x16"), "x16", {"malformed workgroup shape 'x16'"});
  expectError(ks::parseShapeList("16xx"), "16xx", {"malformed workgroup shape '16xx'"});
  expectError(ks::parseShapeList("1x2x3x4"), "1x2x3x4", {"'1x2x3x4'"});
  expectError(ks::parseShapeList("0x8"), "0x8", {"'0x8'", "zero"});
  expectError(ks::parseShapeList("abc"), "abc", {"'abc'"});
  expectError(ks::parseShapeList("8x8,"), "8x8,", {"malformed workgroup shape ''"});
  expectError(ks::parseShapeList(""), "", {"no workgroup shapes"});
}

// ---------------------------------------------------------------- parseParamSweep

TEST(ParseParamSweep, NameAndValues) {
  auto r = ks::parseParamSweep("BK=4,8");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->first, "BK");
  EXPECT_EQ(r->second, (std::vector<int>{4, 8}));
}

TEST(ParseParamSweep, SingleValueAndDuplicates) {
  auto one = ks::parseParamSweep("UNROLL=16");
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->first, "UNROLL");
  EXPECT_EQ(one->second, (std::vector<int>{16}));
  auto dup = ks::parseParamSweep("BN=8,2,8,4");
  ASSERT_TRUE(dup.ok()) << dup.error().message;
  EXPECT_EQ(dup->second, (std::vector<int>{8, 2, 4}));
}

TEST(ParseParamSweep, MalformedInputsNameTheProblem) {
  expectError(ks::parseParamSweep("BK="), "BK=", {"malformed parameter 'BK='", "NAME="});
  expectError(ks::parseParamSweep("=4"), "=4", {"malformed parameter '=4'"});
  expectError(ks::parseParamSweep("BK"), "BK", {"malformed parameter 'BK'"});
  expectError(ks::parseParamSweep("BK=a"), "BK=a", {"'a'", "not an integer", "BK"});
  expectError(ks::parseParamSweep("BK=4,x"), "BK=4,x", {"'x'", "BK"});
  expectError(ks::parseParamSweep("BK=4,"), "BK=4,", {"''", "BK"});
  expectError(ks::parseParamSweep("BK=-"), "BK=-", {"'-'", "BK"});
}

// ---------------------------------------------------------------- buildPlan

ks::PlanItem item(const std::string& k, ProblemSize size, WorkgroupShape wg, std::map<std::string, int> values = {}) {
  ks::PlanItem it;
  it.kernel = k;
  it.size = size;
  it.params.wg = wg;
  it.params.values = std::move(values);
  return it;
}

TEST(BuildPlan, SizesOutermostThenKernelsThenShapes) {
  ks::SweepSpec spec;
  spec.kernels = {kernel("gemm.naive"), kernel("gemm.tiled_shared")};
  spec.sizes = {sq(32), sq(64)};
  spec.shapes = {{8, 8, 1}, {16, 16, 1}};
  auto r = ks::buildPlan(spec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::vector<ks::PlanItem> expect = {
      item("gemm.naive", sq(32), {8, 8, 1}),        item("gemm.naive", sq(32), {16, 16, 1}),
      item("gemm.tiled_shared", sq(32), {8, 8, 1}), item("gemm.tiled_shared", sq(32), {16, 16, 1}),
      item("gemm.naive", sq(64), {8, 8, 1}),        item("gemm.naive", sq(64), {16, 16, 1}),
      item("gemm.tiled_shared", sq(64), {8, 8, 1}), item("gemm.tiled_shared", sq(64), {16, 16, 1}),
  };
  EXPECT_EQ(*r, expect);
}

TEST(BuildPlan, TunableValuesAreInnermostInDeclarationOrder) {
  ks::SweepSpec spec;
  spec.kernels = {kernel("gemm.block_tiling")};
  spec.sizes = {sq(64)};
  spec.shapes = {{8, 8, 1}, {16, 16, 1}};
  spec.params = {{"BN", {2, 4}}, {"BK", {4, 8}}};
  auto r = ks::buildPlan(spec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::vector<ks::PlanItem> expect;
  for (WorkgroupShape wg : {WorkgroupShape{8, 8, 1}, WorkgroupShape{16, 16, 1}})
    for (int bk : {4, 8})
      for (int bn : {2, 4}) expect.push_back(item("gemm.block_tiling", sq(64), wg, {{"BK", bk}, {"BN", bn}}));
  EXPECT_EQ(*r, expect);
}

TEST(BuildPlan, DefaultsWhenNothingIsSwept) {
  ks::SweepSpec spec;
  spec.kernels = {kernel("gemm.naive"), kernel("gemm.tiled_shared_unroll"), kernel("gemm.reg8x4"),
                  kernel("gemm.block_tiling")};
  spec.sizes = {{64, 48, 32}};
  auto r = ks::buildPlan(spec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::vector<ks::PlanItem> expect = {
      item("gemm.naive", {64, 48, 32}, {8, 8, 1}),
      item("gemm.tiled_shared_unroll", {64, 48, 32}, {16, 16, 1}, {{"UNROLL", 4}}),
      item("gemm.reg8x4", {64, 48, 32}, {16, 8, 1}),
      item("gemm.block_tiling", {64, 48, 32}, {16, 16, 1}, {{"BK", 4}, {"BN", 4}}),
  };
  EXPECT_EQ(*r, expect);
}

TEST(BuildPlan, CpuKernelsGetOneShapeRegardlessOfWg) {
  ks::SweepSpec spec;
  spec.kernels = {kernel("gemm.naive"), kernel("cpu.gemm.naive"), kernel("cpu.gemm.blocked"),
                  kernel("cpu.gemm.openblas")};
  spec.sizes = {sq(16)};
  spec.shapes = {{8, 8, 1}, {16, 16, 1}, {32, 4, 1}};
  auto r = ks::buildPlan(spec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::vector<ks::PlanItem> expect = {
      item("gemm.naive", sq(16), {8, 8, 1}),
      item("gemm.naive", sq(16), {16, 16, 1}),
      item("gemm.naive", sq(16), {32, 4, 1}),
      item("cpu.gemm.naive", sq(16), {1, 1, 1}),
      item("cpu.gemm.blocked", sq(16), {1, 1, 1}, {{"BLOCK", 64}}),
      item("cpu.gemm.openblas", sq(16), {1, 1, 1}),
  };
  EXPECT_EQ(*r, expect);
}

TEST(BuildPlan, CpuTunableIsSweptButShapeStaysSingle) {
  ks::SweepSpec spec;
  spec.kernels = {kernel("cpu.gemm.blocked")};
  spec.sizes = {sq(16)};
  spec.shapes = {{8, 8, 1}, {16, 16, 1}};
  spec.params = {{"BLOCK", {32, 128}}};
  auto r = ks::buildPlan(spec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<ks::PlanItem>{item("cpu.gemm.blocked", sq(16), {1, 1, 1}, {{"BLOCK", 32}}),
                                           item("cpu.gemm.blocked", sq(16), {1, 1, 1}, {{"BLOCK", 128}})}));
}

TEST(BuildPlan, SweptTunableOnlyTouchesKernelsThatHaveIt) {
  ks::SweepSpec spec;
  spec.kernels = {kernel("gemm.naive"), kernel("gemm.block_tiling")};
  spec.sizes = {sq(32)};
  spec.params = {{"BK", {8, 16}}};
  auto r = ks::buildPlan(spec);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<ks::PlanItem>{
                    item("gemm.naive", sq(32), {8, 8, 1}),
                    item("gemm.block_tiling", sq(32), {16, 16, 1}, {{"BK", 8}, {"BN", 4}}),
                    item("gemm.block_tiling", sq(32), {16, 16, 1}, {{"BK", 16}, {"BN", 4}}),
                }));
}

TEST(BuildPlan, UnknownTunableIsAnError) {
  ks::SweepSpec spec;
  spec.kernels = {kernel("gemm.naive"), kernel("cpu.gemm.openblas")};
  spec.sizes = {sq(32)};
  spec.params = {{"BK", {4}}};
  expectError(ks::buildPlan(spec), "BK with gemm.naive", {"none of the selected kernels has a tunable named BK"});

  spec.kernels = {kernel("gemm.block_tiling")};
  spec.params = {{"FOO", {1}}};
  expectError(ks::buildPlan(spec), "FOO", {"none of the selected kernels has a tunable named FOO"});
}

TEST(BuildPlan, IllegalTunableValueNamesTheLegalValues) {
  ks::SweepSpec spec;
  spec.kernels = {kernel("gemm.naive"), kernel("gemm.block_tiling")};
  spec.sizes = {sq(32)};
  spec.params = {{"BK", {4, 3}}};
  expectError(ks::buildPlan(spec), "BK=4,3", {"BK=3", "gemm.block_tiling", "1,2,4,8,16"});

  spec.kernels = {kernel("cpu.gemm.blocked")};
  spec.params = {{"BLOCK", {48}}};
  expectError(ks::buildPlan(spec), "BLOCK=48", {"BLOCK=48", "cpu.gemm.blocked", "32,64,128,256"});
}

TEST(BuildPlan, EmptySelectionsAreErrors) {
  ks::SweepSpec spec;
  spec.sizes = {sq(32)};
  expectError(ks::buildPlan(spec), "no kernels", {"no kernels"});
  spec.kernels = {kernel("gemm.naive")};
  spec.sizes.clear();
  expectError(ks::buildPlan(spec), "no sizes", {"no sizes"});
}

TEST(BuildPlan, TooManyPointsIsRefused) {
  ks::SweepSpec spec;
  spec.kernels = {kernel("gemm.block_tiling")};
  for (uint64_t s = 1; s <= 6000; ++s) spec.sizes.push_back(sq(s));
  spec.params = {{"BK", {1, 2, 4, 8, 16}}};  // 6000 sizes x 5 = 30000: fine
  auto ok = ks::buildPlan(spec);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->size(), 30000u);
  spec.params["BN"] = {1, 2, 4, 8};  // x 4 = 120000: over the limit
  expectError(ks::buildPlan(spec), "120000 points", {"more than 100000 points"});
}

}  // namespace
