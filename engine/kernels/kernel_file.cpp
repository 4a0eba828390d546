#include "engine/kernels/kernel_file.h"

#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <set>

#include "engine/kernels/shader_sources.h"
#include "engine/kernels/workload.h"
#include "engine/session/durable_file.h"

namespace ks {

namespace {

// An expression of the manifest, with where it was written.
struct Expr {
  std::string text;
  std::string field;
  int line = 0;
};

struct Constraint {
  Expr expr;
  std::string message;
};

struct BufferDecl {
  BufferRole role = BufferRole::Scratch;
  std::string name;
  Expr bytes;
  bool zero = false;
};

// The manifest as written, each expression with its line.
struct Manifest {
  std::string id, title, description, origin, workload;
  int id_line = 0;
  uint32_t size_rank = 0;  // custom: from `size:`
  WorkgroupShape workgroup{64, 1, 1};
  bool fixed_workgroup = false;  // `workgroup: fixed`: the shader sets its own local size
  std::vector<Tunable> tunables;
  std::vector<Expr> grids;  // one per pass
  std::optional<Expr> flops, bytes, shared, push;
  std::vector<Constraint> constraints;
  std::vector<BufferDecl> buffers;
  std::vector<std::string> extensions, features;
  std::optional<bool> memory_bound;
  bool zero_output = false;
};

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t\r"));
  s.erase(s.find_last_not_of(" \t\r") + 1);
  return s;
}

// "expression ; note" -> both parts, trimmed.
std::pair<std::string, std::string> splitNote(const std::string& value) {
  const auto semi = value.find(';');
  if (semi == std::string::npos) return {trim(value), ""};
  return {trim(value.substr(0, semi)), trim(value.substr(semi + 1))};
}

std::string baseName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The variables an expression may use, with their values for one point.
struct Scope {
  std::vector<std::string> names;
  std::vector<double> values;
};

Scope scopeOf(const std::vector<Tunable>& tunables, const ProblemSize* size, const Params* params) {
  Scope s;
  auto add = [&](const std::string& name, double v) {
    s.names.push_back(name);
    s.values.push_back(v);
  };
  add("M", size ? double(size->m) : 1);
  add("N", size ? double(size->n) : 1);
  add("K", size ? double(size->k) : 1);
  add("WG_X", params ? params->wg.x : 1);
  add("WG_Y", params ? params->wg.y : 1);
  add("WG_Z", params ? params->wg.z : 1);
  for (const auto& t : tunables) add(t.name, params ? params->get(t.name, t.default_value) : t.default_value);
  return s;
}

double ceilFn(double v) { return std::ceil(v); }
double floorFn(double v) { return std::floor(v); }
double modFn(double a, double b) { return std::fmod(a, b); }

// Evaluates a muParser expression (comma-separated parts give several values).
Result<std::vector<double>> evaluate(const std::string& text, Scope scope) {
  try {
    mu::Parser parser;
    parser.DefineFun("ceil", ceilFn);
    parser.DefineFun("floor", floorFn);
    parser.DefineOprt("%", modFn, mu::prMUL_DIV, mu::oaLEFT);
    for (size_t i = 0; i < scope.names.size(); ++i) parser.DefineVar(scope.names[i], &scope.values[i]);
    parser.SetExpr(text);
    int count = 0;
    const double* v = parser.Eval(count);
    return std::vector<double>(v, v + count);
  } catch (const mu::Parser::exception_type& e) {
    return makeError(e.GetMsg());
  }
}

std::string located(const std::string& path, int line, const std::string& field, const std::string& message) {
  return baseName(path) + ":" + std::to_string(line) + ": " + (field.empty() ? "" : field + ": ") + message;
}

std::string fmtValue(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// The point's values, for messages: "M=100 N=64 TILE=16".
std::string scopeText(const Scope& s) {
  std::string out;
  for (size_t i = 0; i < s.names.size(); ++i)
    out += (out.empty() ? "" : " ") + s.names[i] + "=" + fmtValue(s.values[i]);
  return out;
}

const std::set<std::string>& knownFeatures() {
  static const std::set<std::string> f = {"float64",
                                          "int64",
                                          "float16",
                                          "float32_atomic_add",
                                          "float64_atomic_add",
                                          "int64_atomics",
                                          "memory_model",
                                          "subgroup_arithmetic",
                                          "subgroup_shuffle",
                                          "cooperative_matrix"};
  return f;
}

std::optional<std::string> missingFeature(const std::string& f, const vk::DeviceInfo& d) {
  const bool has = f == "float64"               ? d.shader_float64
                   : f == "int64"               ? d.shader_int64
                   : f == "float16"             ? d.float16_storage
                   : f == "float32_atomic_add"  ? d.float32_atomic_add
                   : f == "float64_atomic_add"  ? d.float64_atomic_add
                   : f == "int64_atomics"       ? d.int64_atomics
                   : f == "memory_model"        ? d.memory_model
                   : f == "subgroup_arithmetic" ? d.hasSubgroupArithmetic()
                   : f == "subgroup_shuffle"    ? d.hasSubgroupShuffle()
                   : f == "cooperative_matrix"  ? !d.coopmat_shapes.empty()
                                                : false;
  if (has) return std::nullopt;
  return "no " + f + " on this device";
}

Result<std::vector<int>> parseValues(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    part = trim(part);
    static const std::regex single(R"(-?\d{1,9})"), range(R"((-?\d{1,9})\s*\.\.\s*(-?\d{1,9}))");
    std::smatch m;
    if (std::regex_match(part, single)) {
      out.push_back(std::stoi(part));
    } else if (std::regex_match(part, m, range)) {
      const int lo = std::stoi(m[1]), hi = std::stoi(m[2]);
      if (hi < lo || hi - lo > 4096) return makeError("range '" + part + "' is empty or longer than 4096 values");
      for (int v = lo; v <= hi; ++v) out.push_back(v);
    } else {
      return makeError("'" + part + "' is not an integer or a range like 1..8");
    }
  }
  if (out.empty()) return makeError("no values");
  return out;
}

// `tunable: NAME = DEFAULT in V1, V2, A..B ; help`
Result<Tunable> parseTunable(const std::string& value) {
  const auto [spec, help] = splitNote(value);
  static const std::regex form(R"(([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(-?\d+)\s+in\s+(.+))");
  std::smatch m;
  if (!std::regex_match(spec, m, form))
    return makeError("expected 'NAME = DEFAULT in V1, V2, ... ; help', e.g. 'TILE = 16 in 8, 16, 32 ; tile edge'");
  Tunable t;
  t.name = m[1];
  t.default_value = std::stoi(m[2]);
  t.help = help;
  auto values = parseValues(m[3]);
  if (!values) return makeError(values.error().message);
  t.values = *values;
  static const std::set<std::string> reserved = {"M", "N", "K", "WG_X", "WG_Y", "WG_Z", "PASS"};
  if (reserved.count(t.name)) return makeError(t.name + " is reserved (sizes, workgroup and PASS are given already)");
  if (std::find(t.values.begin(), t.values.end(), t.default_value) == t.values.end())
    return makeError("the default " + std::to_string(t.default_value) + " is not one of its values");
  return t;
}

// Reads the leading /* kernelscope ... */ block.
Result<Manifest> readManifest(const std::string& text, const std::string& path) {
  std::vector<std::string> lines;
  {
    std::stringstream ss(text);
    std::string l;
    while (std::getline(ss, l)) lines.push_back(l);
  }
  size_t first = 0;
  while (first < lines.size() && trim(lines[first]).empty()) ++first;
  static const std::regex opening(R"(\s*/\*+\s*kernelscope\b.*)");
  if (first == lines.size() || !std::regex_match(lines[first], opening))
    return makeError(located(path, int(first < lines.size() ? first + 1 : 1), "",
                             "no manifest: a kernel file starts with a '/* kernelscope' comment block (write one "
                             "with `kernelscope-cli kernel-template gemm`)"));
  Manifest m;
  std::set<std::string> seen;
  std::string last_field;
  std::string* continued = nullptr;
  static const std::regex field_line(R"(([a-z_]+)\s*:(.*))");
  bool closed = false;
  for (size_t i = first + 1; i < lines.size() && !closed; ++i) {
    const int line_no = int(i) + 1;
    std::string raw = lines[i];
    if (const auto end = raw.find("*/"); end != std::string::npos) {
      raw = raw.substr(0, end);
      closed = true;
    }
    std::string line = trim(raw);
    if (line.rfind("#version", 0) == 0)
      return makeError(
          located(path, int(first) + 1, "",
                  "the manifest block is not closed with */ before #version on line " + std::to_string(line_no)));
    if (line.empty() || line[0] == '#') continue;  // blank lines and manifest comments
    const bool indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    std::smatch fm;
    if (!std::regex_match(line, fm, field_line)) {
      if (indented && continued) {  // a long description or title goes on
        *continued += " " + line;
        continue;
      }
      return makeError(located(path, line_no, "", "expected 'field: value', not '" + line + "'"));
    }
    const std::string field = fm[1];
    const std::string value = trim(fm[2]);
    auto fail = [&](const std::string& why) { return makeError(located(path, line_no, field, why)); };
    static const std::set<std::string> repeatable = {"tunable", "grid", "constraint", "buffer", "extension", "feature"};
    if (seen.count(field) && !repeatable.count(field)) return fail("given twice");
    seen.insert(field);
    last_field = field;
    continued = nullptr;
    if (value.empty()) return fail("has no value");
    auto expr = [&](const std::string& t) { return Expr{t, field, line_no}; };
    if (field == "id") {
      static const std::regex id_form(R"([a-z][a-z0-9_]*\.[a-z0-9_][a-z0-9_.-]*)");
      if (!std::regex_match(value, id_form))
        return fail("'" + value + "' is not an id like user.my_gemm (lower case, family.name)");
      m.id = value;
      m.id_line = line_no;
    } else if (field == "title") {
      m.title = value;
      continued = &m.title;
    } else if (field == "description") {
      m.description = value;
      continued = &m.description;
    } else if (field == "origin") {
      m.origin = value;
      continued = &m.origin;
    } else if (field == "workload") {
      if (value != "gemm" && value != "gemv" && value != "dot" && value != "custom")
        return fail("'" + value + "' is not a workload (gemm, gemv, dot or custom)");
      m.workload = value;
    } else if (field == "size") {
      m.size_rank = value == "N" ? 1 : value == "MxN" ? 2 : value == "MxNxK" ? 3 : 0;
      if (!m.size_rank) return fail("'" + value + "' is not N, MxN or MxNxK");
    } else if (field == "workgroup" && value == "fixed") {
      m.fixed_workgroup = true;
      m.workgroup = WorkgroupShape{1, 1, 1};
    } else if (field == "workgroup") {
      auto wg = WorkgroupShape::parse(value);
      if (!wg) return fail(wg.error().message);
      m.workgroup = *wg;
    } else if (field == "tunable") {
      auto t = parseTunable(value);
      if (!t) return fail(t.error().message);
      for (const auto& other : m.tunables)
        if (other.name == t->name) return fail(t->name + " is declared twice");
      m.tunables.push_back(*t);
    } else if (field == "grid") {
      m.grids.push_back(expr(value));
    } else if (field == "flops") {
      m.flops = expr(value);
    } else if (field == "bytes") {
      m.bytes = expr(value);
    } else if (field == "shared") {
      m.shared = expr(value);
    } else if (field == "push") {
      m.push = expr(value);
    } else if (field == "constraint") {
      const auto [e, message] = splitNote(value);
      m.constraints.push_back({expr(e), message});
    } else if (field == "buffer") {
      // buffer: ROLE NAME = BYTES [; zero]
      const auto [spec, note] = splitNote(value);
      static const std::regex form(R"((input|output|scratch)\s+([A-Za-z_][A-Za-z0-9_ ]*?)\s*=\s*(.+))");
      std::smatch bm;
      if (!std::regex_match(spec, bm, form))
        return fail("expected 'input|output|scratch NAME = BYTES [; zero]', e.g. 'scratch partials = 4 * GROUPS'");
      BufferDecl b;
      b.role = bm[1] == "input" ? BufferRole::Input : bm[1] == "output" ? BufferRole::Output : BufferRole::Scratch;
      b.name = bm[2];
      b.bytes = expr(bm[3]);
      if (!note.empty() && note != "zero") return fail("unknown buffer option '" + note + "' (only 'zero')");
      b.zero = note == "zero";
      m.buffers.push_back(b);
    } else if (field == "extension") {
      if (value.rfind("VK_", 0) != 0) return fail("'" + value + "' is not a Vulkan device extension (VK_...)");
      m.extensions.push_back(value);
    } else if (field == "feature") {
      if (!knownFeatures().count(value)) {
        std::string known;
        for (const auto& f : knownFeatures()) known += (known.empty() ? "" : ", ") + f;
        return fail("unknown feature '" + value + "' (known: " + known + ")");
      }
      m.features.push_back(value);
    } else if (field == "memory_bound" || field == "zero_output") {
      if (value != "yes" && value != "no") return fail("expected yes or no");
      if (field == "memory_bound") m.memory_bound = value == "yes";
      if (field == "zero_output") m.zero_output = value == "yes";
    } else {
      return fail(
          "unknown field (fields: id, title, description, origin, workload, size, workgroup, tunable, "
          "grid, push, flops, bytes, shared, buffer, constraint, extension, feature, memory_bound, "
          "zero_output)");
    }
  }
  if (!closed) return makeError(located(path, int(first) + 1, "", "the manifest block is not closed with */"));
  const int top = int(first) + 1;
  if (m.id.empty()) return makeError(located(path, top, "id", "missing (e.g. 'id: user.my_gemm')"));
  if (m.workload.empty()) return makeError(located(path, top, "workload", "missing (gemm, gemv, dot or custom)"));
  if (m.grids.empty())
    return makeError(located(path, top, "grid", "missing: the workgroups to dispatch, e.g. 'ceil(N / WG_X), 1, 1'"));
  if (m.workload == "custom") {
    if (!m.size_rank) return makeError(located(path, top, "size", "missing for a custom workload (N, MxN or MxNxK)"));
    if (!m.flops) return makeError(located(path, top, "flops", "missing for a custom workload (write 0 if none)"));
    if (!m.bytes) return makeError(located(path, top, "bytes", "missing for a custom workload"));
    const auto outputs = std::count_if(m.buffers.begin(), m.buffers.end(),
                                       [](const BufferDecl& b) { return b.role == BufferRole::Output; });
    if (outputs != 1)
      return makeError(located(path, top, "buffer",
                               "a custom workload declares exactly one output buffer, not " + std::to_string(outputs)));
  } else {
    if (m.size_rank) return makeError(located(path, top, "size", "only a custom workload declares its size"));
    for (const auto& b : m.buffers)
      if (b.role != BufferRole::Scratch)
        return makeError(located(path, b.bytes.line, "buffer",
                                 "the " + m.workload +
                                     " workload binds its own inputs and output (bindings 0-2); "
                                     "declare only scratch buffers (bound from 3 on)"));
  }
  return m;
}

// Checks every expression once with placeholder values: syntax and names are
// wrong before any point runs, with the field and line.
Status checkExpressions(const Manifest& m, const std::string& path) {
  std::vector<const Expr*> all;
  for (const auto& g : m.grids) all.push_back(&g);
  for (const auto* e : {&m.flops, &m.bytes, &m.shared, &m.push})
    if (*e) all.push_back(&**e);
  for (const auto& c : m.constraints) all.push_back(&c.expr);
  for (const auto& b : m.buffers) all.push_back(&b.bytes);
  const Scope scope = scopeOf(m.tunables, nullptr, nullptr);
  for (const Expr* e : all) {
    auto v = evaluate(e->text, scope);
    if (!v) return makeError(located(path, e->line, e->field, v.error().message + " in '" + e->text + "'"));
    const size_t want_max = e->field == "grid" ? 3 : e->field == "push" ? 8 : 1;
    if (v->size() > want_max)
      return makeError(
          located(path, e->line, e->field, std::to_string(v->size()) + " values, at most " + std::to_string(want_max)));
  }
  return Ok{};
}

// A value for one point; the message names the field, its line and the point.
Result<std::vector<double>> pointValues(const Expr& e, const std::vector<Tunable>& tunables, const ProblemSize& s,
                                        const Params& p, const std::string& path) {
  const Scope scope = scopeOf(tunables, &s, &p);
  auto v = evaluate(e.text, scope);
  if (!v) return makeError(located(path, e.line, e.field, v.error().message));
  for (double x : *v)
    if (!std::isfinite(x))
      return makeError(located(path, e.line, e.field, "'" + e.text + "' is not finite at " + scopeText(scope)));
  return v;
}

// A whole, non-negative count (grid, push constant, bytes).
Result<uint64_t> countOf(double v, const Expr& e, const std::vector<Tunable>& tunables, const ProblemSize& s,
                         const Params& p, const std::string& path, uint64_t limit) {
  if (v < 0 || v != std::floor(v) || v > double(limit))
    return makeError(
        located(path, e.line, e.field,
                "'" + e.text + "' gives " + fmtValue(v) + " at " + scopeText(scopeOf(tunables, &s, &p)) +
                    (v != std::floor(v) ? ", not a whole number (round with ceil() or floor())" : ", out of range")));
  return uint64_t(v);
}

KernelInfo buildKernel(const Manifest& m, const std::string& text, const std::string& path) {
  KernelInfo k;
  k.id = m.id;
  k.family = m.workload;
  k.backend = Backend::Vulkan;
  k.title = m.title.empty() ? m.id : m.title;
  k.description = m.description;
  k.origin = m.origin.empty() ? "kernel file " + baseName(path) : m.origin;
  k.shader = baseName(path);
  k.source = text;
  k.source_path = path;
  k.tunables = m.tunables;
  k.default_wg = m.workgroup;
  k.uses_workgroup = !m.fixed_workgroup;  // no shapes to sweep or tune where the shader fixes its own
  k.workgroup_dims = 3;
  k.required_extensions = m.extensions;
  if (m.workload == "gemm") useGemmWorkload(k);
  if (m.workload == "gemv") useGemvWorkload(k);
  if (m.workload == "dot") useDotWorkload(k);
  if (m.workload == "custom") {
    k.workload = "custom";
    k.size_rank = m.size_rank;
  }
  if (m.memory_bound) k.memory_bound = *m.memory_bound;
  const auto tunables = m.tunables;
  // Values the engine's interface cannot fail on: errors surface in check_size first.
  auto scalar = [tunables, path](const Expr& e) {
    return [tunables, path, e](const ProblemSize& s, const Params& p) {
      auto v = pointValues(e, tunables, s, p, path);
      return v && !v->empty() ? std::max(0.0, v->front()) : 0.0;
    };
  };
  if (m.flops) {
    auto f = scalar(*m.flops);
    k.flops = [f](const ProblemSize& s) {
      Params none;
      return f(s, none);
    };
    // FLOPs by tunables would be unusual; M, N and K are what they count.
  }
  if (m.bytes) k.bytes = scalar(*m.bytes);
  if (m.shared) {
    auto f = scalar(*m.shared);
    k.shared_bytes = [f](const Params& p) { return uint64_t(f(ProblemSize{1, 1, 1}, p)); };
  }
  // Buffers: the workload's own (bindings 0-2), then the declared ones.
  const auto workload_buffers = k.buffers;
  const auto decls = m.buffers;
  const bool zero_output = m.zero_output;
  k.buffers = [workload_buffers, decls, tunables, path, zero_output](const ProblemSize& s, const Params& p) {
    std::vector<BufferSpec> out;
    if (workload_buffers) out = workload_buffers(s, p);
    for (const auto& d : decls) {
      auto v = pointValues(d.bytes, tunables, s, p, path);
      out.push_back({d.name, v && !v->empty() ? uint64_t(std::max(0.0, v->front())) : 0, d.role, d.zero});
    }
    if (zero_output)
      for (auto& b : out)
        if (b.role == BufferRole::Output) b.zero_each_run = true;
    return out;
  };
  // Every dispatch: one per grid line (PASS = 1, 2, ... when there are several).
  const auto grids = m.grids;
  const Expr push = m.push.value_or(Expr{"M, N, K", "push", 0});
  const std::string name = k.shader;
  k.steps = [grids, push, tunables, path, text, name](const ProblemSize& s, const Params& p, const vk::DeviceInfo&) {
    std::vector<DispatchStep> steps;
    for (size_t i = 0; i < grids.size(); ++i) {
      DispatchStep step;
      step.shader = name;
      step.source = text;
      for (const auto& [key, v] : p.values) step.defines.emplace_back(key, std::to_string(v));
      if (grids.size() > 1) step.defines.emplace_back("PASS", std::to_string(i + 1));
      step.spec_constants = {p.wg.x, p.wg.y, p.wg.z};
      if (auto g = pointValues(grids[i], tunables, s, p, path))
        for (size_t d = 0; d < g->size() && d < 3; ++d) step.groups[d] = uint32_t(std::max(0.0, (*g)[d]));
      if (auto words = pointValues(push, tunables, s, p, path))
        for (double w : *words) step.push.push_back(uint32_t(std::max(0.0, w)));
      steps.push_back(std::move(step));
    }
    return steps;
  };
  k.groups = [steps = k.steps](const ProblemSize& s, const Params& p) { return steps(s, p, {}).front().groups; };
  // Constraints, and every value of the point must be a proper count.
  const auto constraints = m.constraints;
  const auto flops = m.flops, bytes = m.bytes;
  k.check_size = [=](const ProblemSize& s, const Params& p) -> std::optional<std::string> {
    for (const auto& c : constraints) {
      auto v = pointValues(c.expr, tunables, s, p, path);
      if (!v) return v.error().message;
      if (v->empty() || v->front() == 0)
        return c.message.empty()
                   ? "constraint '" + c.expr.text + "' does not hold at " + scopeText(scopeOf(tunables, &s, &p))
                   : c.message;
    }
    for (const auto& g : grids) {
      auto v = pointValues(g, tunables, s, p, path);
      if (!v) return v.error().message;
      for (double x : *v) {
        auto n = countOf(x, g, tunables, s, p, path, 0xFFFFFFFFull);
        if (!n) return n.error().message;
        if (*n == 0)
          return located(path, g.line, "grid",
                         "'" + g.text + "' gives 0 workgroups at " + scopeText(scopeOf(tunables, &s, &p)));
      }
    }
    {
      auto v = pointValues(push, tunables, s, p, path);
      if (!v) return v.error().message;
      for (double x : *v)
        if (auto n = countOf(x, push, tunables, s, p, path, 0xFFFFFFFFull); !n) return n.error().message;
    }
    for (const auto& e : {flops, bytes})
      if (e) {
        auto v = pointValues(*e, tunables, s, p, path);
        if (!v) return v.error().message;
        if (v->front() < 0)
          return located(path, e->line, e->field, "negative at " + scopeText(scopeOf(tunables, &s, &p)));
      }
    for (const auto& d : decls) {
      auto v = pointValues(d.bytes, tunables, s, p, path);
      if (!v) return v.error().message;
      auto n = countOf(v->front(), d.bytes, tunables, s, p, path, ~0ull >> 12);
      if (!n) return n.error().message;
      if (*n == 0 || *n % 4)
        return located(
            path, d.bytes.line, "buffer",
            d.name + " is " + std::to_string(*n) + " bytes; a buffer holds a positive number of 4-byte words");
    }
    return std::nullopt;
  };
  const auto features = m.features;
  k.check_device = [features](const Params& p, const vk::DeviceInfo& d) -> std::optional<std::string> {
    if (precisionOf(p) == 64 && !d.shader_float64) return std::string("no shaderFloat64");
    for (const auto& f : features)
      if (auto why = missingFeature(f, d)) return why;
    return std::nullopt;
  };
  // The summary `kernels` shows.
  for (const auto& c : m.constraints)
    k.constraints += (k.constraints.empty() ? "" : "; ") + (c.message.empty() ? c.expr.text : c.message);
  if (k.constraints.empty()) k.constraints = "-";
  return k;
}

}  // namespace

Result<KernelInfo> parseKernelFile(const std::string& text, const std::string& path) {
  auto manifest = readManifest(text, path);
  if (!manifest) return manifest.error();
  const Manifest& m = *manifest;
  if (auto st = checkExpressions(m, path); !st) return st.error();
  if (const KernelInfo* taken = Registry::instance().find(m.id); taken && !taken->user)
    return makeError(located(path, m.id_line, "id",
                             "'" + m.id + "' is a built-in kernel's id: choose another (e.g. user." +
                                 m.id.substr(m.id.find('.') + 1) + ")"));
  // The manifest lives in a comment before #version: glslang sees it as one.
  bool has_version = false;
  {
    std::stringstream ss(text);
    std::string l;
    while (std::getline(ss, l))
      if (trim(l).rfind("#version", 0) == 0) has_version = true;
  }
  if (!has_version)
    return makeError(located(path, 1, "", "no #version line: the shader must start with e.g. #version 450"));
  return buildKernel(m, text, path);
}

Result<KernelInfo> loadKernelFile(const std::string& path) {
  auto text = readWholeFile(path);
  if (!text) return text.error();
  return parseKernelFile(*text, path);
}

Result<const KernelInfo*> registerKernelFile(const std::string& path) {
  auto kernel = loadKernelFile(path);
  if (!kernel) return kernel.error();
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  if (!ec) kernel->source_path = absolute.lexically_normal().string();
  return Registry::instance().addUserKernel(std::move(*kernel));
}

KernelDirLoad registerKernelDir(const std::string& dir) {
  KernelDirLoad out;
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".comp") files.push_back(entry.path().string());
  if (ec) {
    out.errors.push_back(dir + ": " + ec.message());
    return out;
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto k = registerKernelFile(f);
    if (k)
      out.kernels.push_back(*k);
    else
      out.errors.push_back(k.error().message);
  }
  return out;
}

std::string defaultKernelDir() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  std::string base;
  if (xdg && *xdg == '/') {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    base = std::string(home && *home ? home : ".") + "/.config";
  }
  return base + "/kernelscope/kernels";
}

const std::vector<std::pair<std::string, std::string>>& exampleKernelFiles() {
  static const auto files = [] {
    std::vector<std::pair<std::string, std::string>> out;
    const std::string prefix = "kernel-files/";
    for (const auto& [name, text] : embeddedShaders())
      if (name.rfind(prefix, 0) == 0) out.emplace_back(name.substr(prefix.size()), text);
    return out;
  }();
  return files;
}

const std::vector<std::string>& kernelTemplateWorkloads() {
  static const std::vector<std::string> w = {"gemm", "gemv", "dot", "custom"};
  return w;
}

Result<std::string> kernelTemplate(const std::string& workload) {
  static const std::map<std::string, std::string> file_of = {{"gemm", "gemm_tiled_shared.comp"},
                                                             {"gemv", "gemv_row_per_thread.comp"},
                                                             {"dot", "dot_two_pass_shared.comp"},
                                                             {"custom", "custom_saxpy.comp"}};
  auto it = file_of.find(workload);
  if (it == file_of.end()) return makeError("no template for '" + workload + "' (gemm, gemv, dot or custom)");
  for (const auto& [name, text] : exampleKernelFiles())
    if (name == it->second) {
      // The example's id becomes the user's own, so that both can be loaded.
      static const std::regex id_line(R"((\n\s*id:\s*)[^\n]*)");
      return std::regex_replace(text, id_line, "$1user.my_" + workload, std::regex_constants::format_first_only);
    }
  return makeError("the " + it->second + " example is not embedded in this build");
}

std::vector<SourceDiagnostic> sourceDiagnostics(const std::string& error_message) {
  std::vector<SourceDiagnostic> out;
  std::stringstream ss(error_message);
  std::string line;
  // glslang: "ERROR: 0:23: 'x' : undeclared identifier"; manifest: "file.comp:7: grid: ..."
  static const std::regex glslang(R"((?:ERROR|WARNING): .*?:(\d+): (.*))");
  static const std::regex headline(R"(GLSL .* failed for .*: line \d+: .*)");  // repeats the first ERROR
  static const std::regex manifest(R"(.*?\.[A-Za-z0-9]+:(\d+): (.*))");        // names may hold spaces
  while (std::getline(ss, line)) {
    std::smatch m;
    if (std::regex_match(line, headline)) continue;
    if (std::regex_search(line, m, glslang) || std::regex_match(line, m, manifest)) {
      SourceDiagnostic d{std::stoi(m[1]), trim(m[2])};
      if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    }
  }
  // glslang's "'' : compilation terminated" follows a real error; alone it is all there is.
  if (out.size() > 1)
    std::erase_if(
        out, [](const SourceDiagnostic& d) { return d.message.find("compilation terminated") != std::string::npos; });
  if (out.empty() && !error_message.empty()) {
    std::stringstream first(error_message);
    std::getline(first, line);
    out.push_back({0, line});
  }
  return out;
}

}  // namespace ks
