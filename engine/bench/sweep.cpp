#include "engine/bench/sweep.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace ks {

namespace {

// Sizes reach the shaders as 32-bit push constants; what fits in memory and in
// a binding is the device's to say (checkPoint, Runner::whySkipped).
constexpr uint64_t kMaxDimension = 0xFFFFFFFFull;
constexpr size_t kMaxPoints = 100000;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, sep)) out.push_back(part);
  if (!text.empty() && text.back() == sep) out.emplace_back();
  return out;
}

Result<uint64_t> parseSize(const std::string& token) {
  if (token.empty()) return makeError("empty size in the list");
  if (token[0] == '-') return makeError("negative size '" + token + "': sizes start at 1");
  if (!std::all_of(token.begin(), token.end(), [](unsigned char c) { return std::isdigit(c); }))
    return makeError("'" + token + "' is not a size (expected a positive integer)");
  if (token.size() > 10) return makeError("size " + token + " is too large");
  const uint64_t v = std::stoull(token);
  if (v == 0) return makeError("size 0 is not allowed: sizes start at 1");
  if (v > kMaxDimension) return makeError("size " + token + " is over the limit of " + std::to_string(kMaxDimension));
  return v;
}

Result<int> parseInt(const std::string& token, const std::string& what) {
  if (token.empty() || token.size() > 9 ||
      !std::all_of(token.begin() + (token[0] == '-'), token.end(), [](unsigned char c) { return std::isdigit(c); }) ||
      token == "-")
    return makeError("'" + token + "' is not an integer value for " + what);
  return std::stoi(token);
}

}  // namespace

Result<std::vector<uint64_t>> parseSizeList(const std::string& text) {
  std::vector<uint64_t> out;
  if (text.empty()) return makeError("no sizes given");
  for (const auto& item : split(text, ',')) {
    if (item.find(':') == std::string::npos) {
      auto v = parseSize(item);
      if (!v) return v.error();
      out.push_back(*v);
      continue;
    }
    const auto parts = split(item, ':');
    const std::string form = "malformed range '" + item + "' (expected FROM:TO:xFACTOR or FROM:TO:+STEP)";
    if (parts.size() != 3 || parts[2].size() < 2) return makeError(form);
    auto from = parseSize(parts[0]);
    if (!from) return from.error();
    auto to = parseSize(parts[1]);
    if (!to) return to.error();
    if (*to < *from) return makeError("range '" + item + "' ends before it starts");
    auto step = parseSize(parts[2].substr(1));
    if (!step) return makeError(form);
    if (parts[2][0] == 'x') {
      if (*step < 2) return makeError("range '" + item + "': the factor must be at least 2");
      for (uint64_t v = *from; v <= *to; v *= *step) out.push_back(v);
    } else if (parts[2][0] == '+') {
      for (uint64_t v = *from; v <= *to; v += *step) {
        out.push_back(v);
        if (out.size() > kMaxPoints) return makeError("range '" + item + "' has too many sizes");
      }
    } else {
      return makeError(form);
    }
  }
  return out;
}

Result<std::vector<SizeSpec>> parseSizeSpecs(const std::string& text) {
  std::vector<SizeSpec> out;
  if (text.empty()) return makeError("no sizes given");
  for (const auto& item : split(text, ',')) {
    if (item.empty()) return makeError("empty size in the list");
    const auto parts = split(item, 'x');
    // Plain sizes and ranges (a geometric range has an 'x' too) are single numbers.
    if (parts.size() == 1 || item.find(':') != std::string::npos) {
      auto sizes = parseSizeList(item);
      if (!sizes) return sizes.error();
      for (auto s : *sizes) out.push_back({s});
      continue;
    }
    if (parts.size() > 3 || std::any_of(parts.begin(), parts.end(), [](const auto& p) { return p.empty(); }))
      return makeError("malformed size '" + item + "' (expected N, MxN or MxNxK, e.g. 1024x768x512)");
    SizeSpec spec;
    for (const auto& part : parts) {
      auto v = parseSize(part);
      if (!v) return makeError("in '" + item + "': " + v.error().message);
      spec.dims.push_back(*v);
    }
    out.push_back(spec);
  }
  return out;
}

// gemm sizes only: N (square) or MxNxK.
Result<std::vector<ProblemSize>> parseMnkList(const std::string& text) {
  auto specs = parseSizeSpecs(text);
  if (!specs) return specs.error();
  std::vector<ProblemSize> out;
  for (const auto& spec : *specs) {
    if (spec.dims.size() == 2)
      return makeError("malformed size '" + spec.str() + "' (expected MxNxK, e.g. 1024x768x512)");
    const auto& d = spec.dims;
    out.push_back(d.size() == 1 ? ProblemSize{d[0], d[0], d[0]} : ProblemSize{d[0], d[1], d[2]});
  }
  return out;
}

Result<std::vector<WorkgroupShape>> parseShapeList(const std::string& text) {
  std::vector<WorkgroupShape> out;
  if (text.empty()) return makeError("no workgroup shapes given");
  for (const auto& item : split(text, ',')) {
    auto s = WorkgroupShape::parse(item);
    if (!s) return s.error();
    if (std::find(out.begin(), out.end(), *s) == out.end()) out.push_back(*s);
  }
  return out;
}

Result<std::pair<std::string, std::vector<int>>> parseParamSweep(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 >= text.size())
    return makeError("malformed parameter '" + text + "' (expected NAME=V1,V2, e.g. BK=4,8)");
  const std::string name = text.substr(0, eq);
  std::vector<int> values;
  for (const auto& token : split(text.substr(eq + 1), ',')) {
    auto v = parseInt(token, name);
    if (!v) return v.error();
    if (std::find(values.begin(), values.end(), *v) == values.end()) values.push_back(*v);
  }
  return std::make_pair(name, values);
}

Result<std::vector<PlanItem>> buildPlan(const SweepSpec& spec, std::vector<std::string>* notes) {
  if (spec.kernels.empty()) return makeError("no kernels selected");
  if (spec.sizes.empty()) return makeError("no sizes selected");
  for (const auto& [name, values] : spec.params) {
    bool used = false;
    for (const auto* k : spec.kernels) {
      const Tunable* t = k->tunable(name);
      if (!t) continue;
      used = true;
      for (int v : values)
        if (std::find(t->values.begin(), t->values.end(), v) == t->values.end()) {
          std::string legal;
          for (int l : t->values) legal += (legal.empty() ? "" : ",") + std::to_string(l);
          return makeError(name + "=" + std::to_string(v) + " is not legal for " + k->id + " (legal: " + legal + ")");
        }
    }
    if (!used) return makeError("none of the selected kernels has a tunable named " + name);
  }

  std::vector<PlanItem> items;
  std::map<const KernelInfo*, int> fitted;
  for (const auto& sizeSpec : spec.sizes)
    for (const auto* k : spec.kernels) {
      // A size form a family does not take (MxNxK for a dot product) is left out for that kernel.
      auto mapped = problemSize(*k, sizeSpec);
      if (!mapped) continue;
      const ProblemSize size = *mapped;
      ++fitted[k];
      std::vector<WorkgroupShape> shapes;
      if (!k->uses_workgroup)
        shapes = {WorkgroupShape{1, 1, 1}};
      else if (spec.shapes.empty())
        shapes = {k->default_wg};
      else
        shapes = spec.shapes;
      for (const auto& shape : shapes) {
        // Cartesian product of this kernel's tunables (swept, or the default for this device and shape).
        std::vector<std::map<std::string, int>> combos(1);
        for (const auto& t : k->tunables) {
          auto it = spec.params.find(t.name);
          const std::vector<int> values =
              it != spec.params.end() ? it->second : std::vector<int>{t.defaultFor(spec.device, shape)};
          std::vector<std::map<std::string, int>> next;
          for (const auto& c : combos)
            for (int v : values) {
              auto n = c;
              n[t.name] = v;
              next.push_back(std::move(n));
            }
          combos = std::move(next);
        }
        for (const auto& c : combos) {
          PlanItem item;
          item.kernel = k->id;
          item.size = size;
          item.params.wg = shape;
          item.params.values = c;
          items.push_back(std::move(item));
          if (items.size() > kMaxPoints) return makeError("the sweep has more than 100000 points");
        }
      }
    }
  std::string firstWhy;
  for (const auto* k : spec.kernels)
    if (!fitted.count(k)) {
      auto why = problemSize(*k, spec.sizes.front());
      const std::string text = why ? k->id + ": none of the sizes fit" : why.error().message;
      if (firstWhy.empty()) firstWhy = text;
      if (notes) notes->push_back(text + "; left out");
    }
  if (items.empty()) return makeError(firstWhy.empty() ? "the sweep is empty" : firstWhy);
  return items;
}

}  // namespace ks
