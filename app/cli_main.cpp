// kernelscope-cli: the engine, headless. Usage errors exit 2, failed points 1.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/bench/compile.h"
#include "engine/bench/report.h"
#include "engine/bench/runner.h"
#include "engine/bench/sweep.h"
#include "engine/cpu/cpu_info.h"
#include "engine/kernels/kernel_file.h"
#include "engine/kernels/registry.h"
#include "engine/remote/remote.h"
#include "engine/session/durable_file.h"
#include "engine/session/journal.h"
#include "engine/session/session.h"
#include "engine/session/session_json.h"
#include "engine/tune/space.h"
#include "engine/tune/tune_report.h"
#include "engine/tune/tuned_defaults.h"
#include "engine/tune/tuner.h"
#include "engine/vulkan/shader_compiler.h"

namespace {

std::atomic<bool> g_cancel{false};

const char* kUsage = R"(kernelscope-cli: GPU compute kernels, timed and verified

usage:
  kernelscope-cli devices [--remote [user@]host[:port] [--remote-cli PATH]]
  kernelscope-cli kernels [--family gemm] [--device N|name] [KERNEL FILES]
  kernelscope-cli run --kernels LIST (--sizes LIST | --mnk LIST) [options] [KERNEL FILES]
  kernelscope-cli run --rerun SESSION.json [-o FILE] [--device N|name] [--quiet]
  kernelscope-cli run --remote [user@]host[:port] [--remote-cli PATH] [run options]
  kernelscope-cli fleet --hosts HOSTS.txt run [run options] -o DIR
  kernelscope-cli tune --kernel ID --size SIZE [--strategy grid|random|anneal|genetic]
                  [--budget N | --time-budget DURATION] [--objective gflops|gbps|time] [-o FILE]
  kernelscope-cli tune-replay GRID_TUNE.json [--fraction 25%] [--seeds 10]
  kernelscope-cli kernel-template gemm|gemv|dot|custom [-o FILE]
  kernelscope-cli kernel-template examples -o DIR
  kernelscope-cli compile --kernels LIST [--wg SHAPE] [--param NAME=V] [--size SIZE] [KERNEL FILES]
  kernelscope-cli show SESSION.json|SESSION.json.partial [--csv out.csv] [--fit-from N]
                  [--kernel-source ID [-o FILE]]
  kernelscope-cli recover SESSION.json.partial [-o SESSION.json] [--force]
  kernelscope-cli compare BASELINE.json CURRENT.json [--csv out.csv]
  kernelscope-cli overhead [--device N|name] [--reps N]
  kernelscope-cli peaks [--device N|name] [--reps N] [--copy-mib N] [--stream-mib N] [-o FILE]

run options:
  --kernels LIST     ids or globs, comma separated: gemm.naive,gemm.tiled_shared | gemm.* | all
  --sizes LIST       square sizes: 128,256,512 | 64:4096:x2 (geometric) | 256:2048:+256 (linear)
  --mnk LIST         M x N x K sizes (A is M x K, B is K x N): 1024x768x512,3000x5000x4000
  --wg LIST          workgroup shapes: 8x8,16x16 (default: each kernel's own)
  --param NAME=V,... sweep a tunable, e.g. --param BK=4,8 (repeatable)
  --reps N           timed repetitions per point (default 20)
  --warmup N         untimed repetitions first (default 3)
  --warmup-ms MS     ...lasting at least this long, for clocks to ramp up (default 200)
  --target-ci PCT    adaptive: after --reps, repeat until the median's 95% CI is within +-PCT
                     (e.g. 1%), --budget-ms per point (default 2000) or --max-reps (default 1000)
  --seed N           input seed (default 1)
  --cache-mib N      bandwidth kernels (gemv, dot) rotate among enough copies of their inputs
                     that N MiB are touched between two uses of one copy (default 256)
  --no-rotate        do not rotate; points whose data fits in --cache-mib are marked (cache)
  --with-transfers   also time each GPU point's upload of its inputs and download of its output
                     (host clock, --reps samples after warm-up): kernel, transfer and end-to-end times
  --drift-threshold PCT
                     drift check: a short reference kernel runs at the start, between kernels
                     (at most every --drift-interval-ms, default 1000) and at the end; if its
                     time moves by more than PCT (e.g. 3% or 0.03; default 3%) the sweep is
                     marked unstable: a warning after the tables and a flag in the session
  --no-drift-check   skip the reference runs
  --dispatch-timeout DURATION
                     the watchdog: a dispatch running longer (10s, 500ms) is stopped, its point
                     failed, the device recreated, and the sweep goes on (default: 5 s past a
                     pessimistic estimate of the point's run from its FLOP and byte counts)
  --peaks            measure the peaks first (see peaks) and keep them in the session; with only
                     CPU kernels, the host CPU's alone (no Vulkan device needed)
  --device N|name    device index or name substring (default: discrete > integrated > CPU)
  -o FILE            write the session (JSON); while the sweep runs, FILE.partial (a journal)
                     gets each point as it finishes and is removed once FILE is written
  --csv FILE         write a flat CSV table
  --quiet            no per-point lines
  --fit-from N       the complexity slope fits sizes from N up (default: each series' upper half)
  --tuned            use the tuned defaults saved by tune --save-defaults for this device (the
                     nearest size class tuned); --param and --wg still win; --tuned-file FILE
  --rerun SESSION    run a session's plan again (its kernels, sizes, parameters, repetitions and
                     seed), with the kernel files it embeds: exactly what it measured

tune searches a kernel's tunables x workgroup shapes at one size; configurations the kernel's
rules or the device's limits rule out are pruned before anything runs; each evaluated
configuration is a point (timed, verified; a failed one never wins). The best --top (5) are then
measured again in --final-rounds (5) interleaved rounds, and the verdict says whether #1 beats #2
(Mann-Whitney U, p < 0.05 and more than --tie-margin, default 1%) or that they tie.
  --strategy S       grid (every valid configuration, default), random, anneal, genetic
  --budget N         evaluations (default: grid all, others a quarter of the valid space)
  --time-budget D    stop searching after D (90s, 10m, 1h); the final round still runs
  --objective O      gflops (default), gbps (default for bandwidth kernels), time
  --seed N           the search's seed (default 1): the same seed and results, the same search
  --param NAME=V,..  search only these values of a tunable; --wg LIST: these shapes (default:
                     common shapes of the kernel's dimensionality)
  --top N, --final-rounds N, --tie-margin PCT   the final round (--top 0: none)
  --cache FILE       the result cache (default: one file per device, driver, kernel, size and
                     measurement settings under $XDG_CACHE_HOME/kernelscope/tune); an interrupted
                     tune resumes and a repeated one re-measures nothing it knows; --no-cache
  --save-defaults    keep the winner as this device's tuned default for the size class
                     ($XDG_CONFIG_HOME/kernelscope/tuned.json, or --tuned-file FILE)
  --input-seed N     the inputs' seed (run's --seed); --reps, --warmup, --target-ci ... as run
  --dry-run          print the space and what pruning leaves (with reasons), run nothing
tune-replay replays random, anneal and genetic search (seeds 1..--seeds) on the measurements
  of a complete grid tune, each with --fraction of its evaluations, and says how close each
  gets to the exhaustive best.

remote servers (over the system's ssh: your config, keys and agent; it never prompts):
  --remote TARGET    run the plan on [user@]host[:port]; the session is written here, with the host
                     in it. The server needs sshd and a Vulkan driver: this build's bundle
                     (scripts/make-bundle.sh, out/bundle or $KS_BUNDLE) is copied to
                     ~/.cache/kernelscope/remote/VERSION-COMMIT there ($KS_REMOTE_DIR) when it has
                     none of this version and commit. Ctrl-C stops the server's run; a lost
                     connection keeps the finished points too. --device picks among the server's
                     devices (devices --remote TARGET lists them); KS_SSH_CONFIG=FILE: ssh -F FILE
  --remote-cli PATH  a kernelscope-cli already on the server (same version) instead of the bundle
fleet runs the plan on every host of HOSTS.txt at once (a line: [user@]host[:port] [CLI PATH];
  # comments): DIR/HOST.json per host, and DIR/comparison.txt compares each host with the first
  (compare's ratios, Mann-Whitney U and device warnings).

kernel files (your own kernels; see README "Bring your own kernel"):
  --kernel-file FILE a GLSL compute shader with a kernelscope manifest (repeatable)
  --kernel-dir DIR   every *.comp kernel file in DIR (repeatable)
  the kernel files in $XDG_CONFIG_HOME/kernelscope/kernels (~/.config/kernelscope/kernels)
  are always loaded; one that does not load is a warning there, an error when named

kernel-template writes a complete, commented, working kernel file of a workload
  (gemm, gemv and dot are verified like the built-in kernels; custom declares its
  own buffers and its points are unverified); "examples" writes every shipped
  example file into DIR. compile builds a kernel's pipelines on the device without
  running them and prints the driver's statistics (registers, shared memory,
  spills; VK_KHR_pipeline_executable_properties) or the compiler's errors with
  the line in your file.

peaks measures fp32 and fp16 FMA throughput, cooperative-matrix throughput per
supported shape, memory bandwidth (a copy shader and vkCmdCopyBuffer) and the
empty-dispatch overhead of the device, then the host CPU's fp32 FMA throughput
(all hardware threads, its widest SIMD) and memory bandwidth (STREAM triad and
copy over --stream-mib MiB in all; default 8x the last-level cache, 256 MiB to
1 GiB); -o writes them into a session (device record) with no points.

recover: a run killed before it wrote its session leaves FILE.partial; recover writes
  the points it finished as a session (default: FILE; --force replaces an existing
  file) and keeps FILE.partial. show reads a FILE.partial directly.

compare: the points both sessions have (same kernel, parameters and size), the
  ratio of median times (current / baseline; < 1 is faster now) and a
  Mann-Whitney U test on the raw samples; warns where device, driver, app or
  OpenBLAS differ. Exits 0 once compared, whatever the result.

exit status: 0 all points ok, 1 a point failed, 2 usage error, 130 interrupted
  (an unstable drift check warns but does not change the exit status)
)";

struct UsageError {
  std::string message;
};

[[noreturn]] void usage(const std::string& message) { throw UsageError{message}; }

// argv after the command: "--name value" pairs and positionals.
struct Args {
  std::multimap<std::string, std::string> options;
  std::vector<std::string> positional;
  std::string get(const std::string& name, const std::string& fallback = "") const {
    auto it = options.find(name);
    return it == options.end() ? fallback : it->second;
  }
  bool has(const std::string& name) const { return options.count(name) > 0; }
};

Args parseArgs(int argc, char** argv, int first, const std::vector<std::string>& with_value,
               const std::vector<std::string>& flags) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() > 1 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1]))) {
      std::string value;
      bool inline_value = false;
      if (auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        inline_value = true;
      }
      if (std::find(flags.begin(), flags.end(), arg) != flags.end()) {
        a.options.emplace(arg, "1");
        continue;
      }
      if (std::find(with_value.begin(), with_value.end(), arg) == with_value.end()) usage("unknown option " + arg);
      if (!inline_value) {
        if (i + 1 >= argc) usage(arg + " needs a value");
        value = argv[++i];
      }
      static const std::vector<std::string> repeatable = {"--sizes", "--mnk", "--param", "--kernel-file",
                                                          "--kernel-dir"};
      if (arg == "--param")
        for (auto [it, end] = a.options.equal_range(arg); it != end; ++it)
          if (it->second.substr(0, it->second.find('=')) == value.substr(0, value.find('=')))
            usage("--param " + value.substr(0, value.find('=')) + " given more than once");
      if (a.has(arg) && std::find(repeatable.begin(), repeatable.end(), arg) == repeatable.end())
        usage(arg + " given more than once");
      a.options.emplace(arg, value);
    } else {
      a.positional.push_back(arg);
    }
  }
  return a;
}

uint32_t parseCount(const std::string& text, const std::string& what, uint32_t min) {
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    usage(what + " must be a non-negative integer, not '" + text + "'");
  const auto v = static_cast<uint32_t>(std::stoul(text));
  if (v < min) usage(what + " must be at least " + std::to_string(min));
  return v;
}

// "0.03" or "3%": a fraction above 0 and below 1.
double parseFraction(const std::string& text, const std::string& what, const std::string& example_percent) {
  std::string t = text;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end || !(v > 0) || v >= (percent ? 100 : 1)) {
    const double example = std::strtod(example_percent.c_str(), nullptr) / 100;
    char fraction[32];
    std::snprintf(fraction, sizeof fraction, "%g", example);
    usage(what + " must be a fraction like " + fraction + " or a percentage like " + example_percent + ", not '" +
          text + "'");
  }
  return percent ? v / 100 : v;
}

// A duration: "30" or "30s" (seconds), "500ms", "10m", "2h"; in milliseconds, at least 1.
uint32_t parseDuration(const std::string& text, const std::string& what = "--dispatch-timeout") {
  std::string t = text;
  double scale = 1000;
  if (t.size() > 2 && t.compare(t.size() - 2, 2, "ms") == 0) {
    t.resize(t.size() - 2);
    scale = 1;
  } else if (!t.empty() && (t.back() == 's' || t.back() == 'm' || t.back() == 'h')) {
    scale = t.back() == 's' ? 1000 : t.back() == 'm' ? 60e3 : 3600e3;
    t.pop_back();
  }
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end || !(v * scale >= 1) || v * scale > 86400e3)
    usage(what + " must be a duration like 10s, 500ms, 5m or 1h (at least 1 ms, at most a day), not '" + text + "'");
  return static_cast<uint32_t>(v * scale);
}

// --fit-from N: the complexity fit uses sizes from N up (N: the problem's scale,
// N for squares and vectors, sqrt(M*N) for gemv, cbrt(M*N*K) for gemm).
double parseFitFrom(const Args& a) {
  return a.has("--fit-from") ? double(parseCount(a.get("--fit-from"), "--fit-from", 1)) : 0.0;
}

// Kernel files: the default folder's (a file that does not load is a warning),
// then --kernel-dir's and --kernel-file's (an error: the user named them).
void loadKernelFiles(const Args& a) {
  const std::string default_dir = ks::defaultKernelDir();
  std::error_code ec;
  if (std::filesystem::is_directory(default_dir, ec))
    for (const auto& error : ks::registerKernelDir(default_dir).errors)
      std::fprintf(stderr, "warning: %s (in %s)\n", error.c_str(), default_dir.c_str());
  std::vector<std::string> errors;
  for (auto [it, end] = a.options.equal_range("--kernel-dir"); it != end; ++it) {
    if (!std::filesystem::is_directory(it->second, ec)) usage("--kernel-dir " + it->second + ": not a folder");
    auto loaded = ks::registerKernelDir(it->second);
    errors.insert(errors.end(), loaded.errors.begin(), loaded.errors.end());
  }
  for (auto [it, end] = a.options.equal_range("--kernel-file"); it != end; ++it)
    if (auto k = ks::registerKernelFile(it->second); !k) errors.push_back(k.error().message);
  if (errors.size() == 1) usage(errors.front());
  if (!errors.empty()) {
    std::string all;
    for (const auto& e : errors) all += "\n  " + e;
    usage(std::to_string(errors.size()) + " kernel files do not load:" + all);
  }
}

struct Engine {
  std::shared_ptr<ks::vk::Instance> instance;
  std::unique_ptr<ks::vk::Device> device;
  std::string vulkan_error;
};

// Opens the Vulkan device. With `required`, failing is fatal; otherwise CPU
// kernels still run and GPU points report why they cannot.
Engine openEngine(const std::string& spec, bool required) {
  Engine e;
  auto inst = ks::vk::Instance::create();
  if (!inst) {
    e.vulkan_error = inst.error().message;
    if (required) throw std::runtime_error(e.vulkan_error);
    return e;
  }
  e.instance = *inst;
  auto index = ks::vk::selectDevice(e.instance->devices(), spec);
  if (!index) usage(index.error().message);
  auto dev = ks::vk::Device::create(e.instance, *index);
  if (!dev) {
    e.vulkan_error = dev.error().message;
    if (required) throw std::runtime_error(e.vulkan_error);
    return e;
  }
  e.device = std::move(dev.value());
  return e;
}

void printHostLine(const ks::cpu::HostInfo& h) {
  std::printf("host: %s, %u logical cores (%s); OpenBLAS core %s, %d threads\n", h.cpu_model.c_str(), h.logical_cores,
              h.cpu_features.empty() ? "no SIMD detected" : h.cpu_features.c_str(), h.openblas_core.c_str(),
              h.openblas_threads);
  if (!h.openblas_warning.empty()) std::printf("warning: %s\n", h.openblas_warning.c_str());
}

// The device's peaks and the host CPU's; the host CPU's alone without a device.
ks::DevicePeaks measurePeaksOrThrow(ks::vk::Device* device, const ks::PeakOptions& options) {
  std::signal(SIGINT, [](int) { g_cancel.store(true); });
  // Progress on a terminal only: the table that follows says it all again.
  const bool progress = isatty(fileno(stderr));
  const auto each = [progress](const ks::PeakResult& r) {
    if (progress) std::fprintf(stderr, "  %-52s %s\n", r.title.c_str(), ks::formatPeakValue(r).c_str());
  };
  auto peaks =
      device ? ks::measurePeaks(*device, options, g_cancel, each) : ks::measureHostPeaks(options, g_cancel, each);
  std::signal(SIGINT, SIG_DFL);
  if (!peaks) throw std::runtime_error("measuring peaks: " + peaks.error().message);
  return *peaks;
}

ks::remote::Target targetFromOptions(const Args& a) {
  auto target = ks::remote::parseTarget(a.get("--remote"));
  if (!target) usage(target.error().message);
  target->cli = a.get("--remote-cli");
  return *target;
}

// devices --remote HOST: the server's devices, listed by its own CLI.
int remoteDevices(const Args& a) {
  const ks::remote::Target target = targetFromOptions(a);
  ks::remote::Setup setup = ks::remote::Setup::fromEnvironment();
  setup.log = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
  auto list = ks::remote::listDevices(target, setup);
  if (!list) throw std::runtime_error(list.error().message);
  std::printf("devices on %s (%s):\n", target.text.c_str(), list->cli.c_str());
  std::printf("%s", ks::formatDeviceTable(list->devices, list->default_index).c_str());
  std::printf("* = default device; run --remote %s --device N|name picks one\n", target.text.c_str());
  if (!list->host_cpu.empty()) std::printf("host: %s\n", list->host_cpu.c_str());
  return 0;
}

int cmdDevices(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, {"--remote", "--remote-cli"}, {"--json"});
  if (!a.positional.empty()) usage("devices takes no arguments but --remote, --remote-cli and --json");
  if (a.has("--remote-cli") && !a.has("--remote")) usage("--remote-cli names the CLI on the server: give --remote too");
  if (a.has("--remote")) return remoteDevices(a);
  auto inst = ks::vk::Instance::create();
  if (!inst) throw std::runtime_error(inst.error().message);
  auto sel = ks::vk::selectDevice((*inst)->devices(), "");
  if (a.has("--json")) {
    // For run --remote and the app's remote targets: the session's device records.
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : (*inst)->devices()) list.push_back(ks::deviceInfoToJson(d));
    const nlohmann::json out = {
        {"devices", list}, {"default", sel ? int(*sel) : -1}, {"host_cpu", ks::cpu::hostInfo().cpu_model}};
    std::printf("%s\n", ks::dumpJson(out, -1).c_str());
    return 0;
  }
  std::printf("%s", ks::formatDeviceTable((*inst)->devices(), sel ? int(*sel) : -1).c_str());
  std::printf("* = default device\n");
  printHostLine(ks::cpu::hostInfo());
  std::printf("glslang %s\n", ks::vk::glslangVersion().c_str());
  return 0;
}

int cmdKernels(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, {"--family", "--device", "--kernel-file", "--kernel-dir"}, {});
  if (!a.positional.empty()) usage("unexpected argument '" + a.positional.front() + "'");
  loadKernelFiles(a);
  const std::string family = a.get("--family");
  bool family_known = family.empty();
  Engine e = openEngine(a.get("--device"), false);
  const ks::vk::DeviceInfo* info = e.device ? &e.device->info() : nullptr;
  // Support per device: the kernel's defaults checked against each device's
  // features and limits (a size every kernel accepts, so only the device decides).
  std::vector<ks::vk::DeviceInfo> devices;
  if (e.instance) devices = e.instance->devices();
  if (a.has("--device") && info) devices = {*info};
  std::vector<std::vector<std::string>> rows;
  for (const auto& k : ks::Registry::instance().all()) {
    if (!family.empty() && k.family != family) continue;
    family_known = true;
    std::string tunables;
    for (const auto& t : k.tunables) {
      std::string vals;
      for (int v : t.values) vals += (vals.empty() ? "" : "/") + std::to_string(v);
      tunables += (tunables.empty() ? "" : " ") + t.name + "=" + vals;
    }
    if (k.uses_workgroup) tunables = "wg " + k.default_wg.str() + (tunables.empty() ? "" : "; " + tunables);
    std::vector<std::string> row = {
        k.id, k.family, ks::backendName(k.backend), k.title, tunables.empty() ? "-" : tunables, k.constraints};
    if (devices.empty()) row.push_back(k.backend == ks::Backend::Vulkan ? "unsupported: " + e.vulkan_error : "ok");
    for (const auto& d : devices) {
      std::string support = "ok";
      if (auto why = ks::checkPoint(k, ks::problemSize(k, {256}).value(), k.defaultParams(&d), &d))
        support = why->rfind("unsupported: ", 0) == 0 ? *why : "unsupported: " + *why;
      row.push_back(support);
    }
    rows.push_back(std::move(row));
  }
  if (!family_known) usage("unknown family '" + family + "' (families: gemm, gemv, dot, transfer, interleave, custom)");
  std::vector<std::string> header = {"id", "family", "backend", "title", "tunables", "constraints"};
  if (devices.empty()) header.push_back("support");
  for (const auto& d : devices) header.push_back("on " + std::to_string(d.index) + ": " + d.name);
  std::printf("%s", ks::renderTable(header, rows).c_str());
  std::vector<std::vector<std::string>> files;
  for (const auto& k : ks::Registry::instance().all())
    if (k.user && (family.empty() || k.family == family))
      files.push_back({k.id, k.source_path.empty() ? "(from a session)" : k.source_path});
  if (!files.empty()) std::printf("\nkernel files:\n%s", ks::renderTable({"id", "source"}, files).c_str());
  return 0;
}

ks::Plan measurementFromOptions(const Args& a);

// --wg's shapes (empty when not given).
std::vector<ks::WorkgroupShape> shapesOption(const Args& a) {
  if (!a.has("--wg")) return {};
  auto shapes = ks::parseShapeList(a.get("--wg"));
  if (!shapes) usage(shapes.error().message);
  return *shapes;
}

// Every --param NAME=V1,V2 (run sweeps them, tune searches only them).
std::map<std::string, std::vector<int>> paramsOption(const Args& a) {
  std::map<std::string, std::vector<int>> params;
  for (auto [it, end] = a.options.equal_range("--param"); it != end; ++it) {
    auto p = ks::parseParamSweep(it->second);
    if (!p) usage(p.error().message);
    params[p->first] = p->second;
  }
  return params;
}

// Appends a point or drift check to a run's journal; a failed write is said
// once and ends the journal, the sweep goes on.
template <typename Record>
void appendToJournal(std::optional<ks::JournalWriter>& journal, const Record& record) {
  if (!journal) return;
  if (auto st = journal->append(record); !st) {
    std::fprintf(stderr, "warning: journal: %s; the sweep goes on, but a crash would lose the points from here\n",
                 st.error().message.c_str());
    journal.reset();
  }
}

// The plan of `run` from its options; with a device, tunables not given take
// that device's defaults where they depend on it.
ks::Plan planFromOptions(const Args& a, const ks::vk::DeviceInfo* device = nullptr) {
  ks::SweepSpec spec;
  auto kernels = ks::Registry::instance().match(a.get("--kernels"));
  if (!kernels) usage(kernels.error().message);
  spec.kernels = *kernels;
  for (const char* opt : {"--sizes", "--mnk"})
    for (auto [it, end] = a.options.equal_range(opt); it != end; ++it) {
      auto sizes = ks::parseSizeSpecs(it->second);
      if (!sizes) usage(std::string(opt) + ": " + sizes.error().message);
      spec.sizes.insert(spec.sizes.end(), sizes->begin(), sizes->end());
    }
  spec.shapes = shapesOption(a);
  spec.params = paramsOption(a);
  spec.device = device;
  ks::Plan plan = measurementFromOptions(a);
  std::vector<std::string> notes;
  auto items = ks::buildPlan(spec, &notes);
  if (!items) usage(items.error().message);
  for (const auto& n : notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  plan.items = *items;
  return plan;
}

// How each point is measured (repetitions, warm-up, seed, rotation, drift, watchdog): a plan without items.
ks::Plan measurementFromOptions(const Args& a) {
  ks::Plan plan;
  plan.reps = parseCount(a.get("--reps", "20"), "--reps", 1);
  plan.warmup = parseCount(a.get("--warmup", "3"), "--warmup", 0);
  plan.warmup_ms = parseCount(a.get("--warmup-ms", "200"), "--warmup-ms", 0);
  if (a.has("--target-ci")) plan.target_ci = parseFraction(a.get("--target-ci"), "--target-ci", "1%");
  plan.budget_ms = parseCount(a.get("--budget-ms", "2000"), "--budget-ms", 1);
  plan.max_reps = parseCount(a.get("--max-reps", "1000"), "--max-reps", 1);
  plan.seed = parseCount(a.get("--seed", "1"), "--seed", 0);
  plan.cache_bytes = uint64_t(parseCount(a.get("--cache-mib", "256"), "--cache-mib", 1)) << 20;
  plan.rotate_inputs = !a.has("--no-rotate");
  plan.with_transfers = a.has("--with-transfers");
  plan.drift_check = !a.has("--no-drift-check");
  if (!plan.drift_check)
    for (const char* opt : {"--drift-threshold", "--drift-interval-ms"})
      if (a.has(opt)) usage(std::string(opt) + " has no effect with --no-drift-check");
  if (a.has("--drift-threshold"))
    plan.drift_threshold = parseFraction(a.get("--drift-threshold"), "--drift-threshold", "3%");
  plan.drift_interval_ms = parseCount(a.get("--drift-interval-ms", "1000"), "--drift-interval-ms", 0);
  if (a.has("--dispatch-timeout")) plan.dispatch_timeout_ms = parseDuration(a.get("--dispatch-timeout"));
  return plan;
}

// After a sweep (local or remote): the tables, the session file (then the
// journal goes), the CSV; the exit status.
int finishRun(ks::Session& session, bool interrupted, const std::string& out_path, const std::string& csv_path,
              std::optional<ks::JournalWriter>& journal, double fit_from) {
  std::printf("\n%s", ks::formatSummaryTable(session.points, session.peaks ? &*session.peaks : nullptr).c_str());
  size_t ok = 0, failed = 0, skipped = 0;
  for (const auto& m : session.points) {
    ok += m.status == ks::PointStatus::Ok;
    failed += m.status == ks::PointStatus::Failed;
    skipped += m.status == ks::PointStatus::Skipped;
  }
  std::printf("%s\n", ks::formatRunTally(session.plan.items.size(), ok, failed, skipped, interrupted).c_str());
  if (const auto table = ks::formatComplexityTable(session.points, fit_from); !table.empty())
    std::printf("\n%s\n", table.c_str());
  if (const auto table = ks::formatInterleaveTable(session.points); !table.empty()) std::printf("\n%s", table.c_str());
  if (session.drift) std::printf("%s\n", ks::formatDriftLine(*session.drift).c_str());
  int rc = interrupted ? 130 : (failed ? 1 : 0);
  const std::string journal_path = journal ? journal->path() : out_path + ".partial";
  if (!out_path.empty()) {
    if (auto st = ks::saveSession(session, out_path); !st) {
      std::fprintf(stderr, "kernelscope-cli: error: %s\n", st.error().message.c_str());
      std::fprintf(stderr, "kernelscope-cli: the finished points stay in %s (kernelscope-cli recover %s -o FILE)\n",
                   journal_path.c_str(), journal_path.c_str());
      rc = 1;
    } else {
      std::printf("session written to %s\n", out_path.c_str());
      journal.reset();
      std::remove(journal_path.c_str());  // the session has every point it held
    }
  }
  if (!csv_path.empty()) {
    std::ofstream csv(csv_path);
    csv << ks::measurementsToCsv(session.points);
    if (!csv) {
      std::fprintf(stderr, "kernelscope-cli: error: cannot write %s\n", csv_path.c_str());
      rc = 1;
    } else {
      std::printf("CSV written to %s\n", csv_path.c_str());
    }
  }
  return rc;
}

// run --remote: the same plan on a server; its points arrive as they finish and
// go to the journal and the terminal as a local run's do.
int runOnServer(const Args& a, const ks::Session& request, const std::string& out_path, const std::string& csv_path,
                double fit_from) {
  const ks::remote::Target target = targetFromOptions(a);
  ks::remote::Setup setup = ks::remote::Setup::fromEnvironment();
  setup.log = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  ks::remote::RunOptions options;
  options.device = a.get("--device");
  options.peaks = a.has("--peaks");
  const bool quiet = a.has("--quiet");
  const std::string journal_path = out_path.empty() ? std::string() : out_path + ".partial";
  std::optional<ks::JournalWriter> journal;
  auto journalAppend = [&](const auto& record) { appendToJournal(journal, record); };
  const size_t total = request.plan.items.size();
  const ks::PointLineColumns columns = ks::pointLineColumns(request.plan.items);
  size_t index = 0;
  ks::remote::RunCallbacks cb;
  cb.started = [&](const ks::Session& header) {
    if (header.device)
      std::printf("device: %s (%s, Vulkan %s, driver %s) on %s\n", header.device->name.c_str(),
                  header.device->type.c_str(), header.device->api_version.c_str(),
                  header.device->driver_version.c_str(), target.text.c_str());
    printHostLine(header.host);
    if (header.peaks) std::printf("%s\n", ks::formatPeaksTable(*header.peaks).c_str());
    std::printf("%zu points, %u+ warm-up runs (at least %u ms) + %u timed repetitions each, seed %llu\n", total,
                header.plan.warmup, header.plan.warmup ? header.plan.warmup_ms : 0, header.plan.reps,
                static_cast<unsigned long long>(header.plan.seed));
    std::fflush(stdout);
    if (!journal_path.empty()) {
      auto created = ks::JournalWriter::create(journal_path, header);
      if (!created)
        std::fprintf(stderr, "warning: cannot keep the run's journal: %s\n", created.error().message.c_str());
      else
        journal.emplace(std::move(*created));
    }
  };
  cb.drift = [&](const ks::DriftReport& d) { journalAppend(d); };
  cb.point = [&](const ks::Measurement& m) {
    journalAppend(m);
    ++index;
    if (!quiet) {
      std::printf("%s\n", ks::formatPointLine(m, index, total, columns).c_str());
      std::fflush(stdout);
    }
    if (m.error.find('\n') != std::string::npos) std::fprintf(stderr, "%s\n", m.error.c_str());
  };
  std::printf("remote: %s\n", target.text.c_str());
  std::fflush(stdout);
  std::signal(SIGINT, [](int) { g_cancel.store(true); });
  auto result = ks::remote::run(target, setup, request, options, cb, g_cancel);
  std::signal(SIGINT, SIG_DFL);
  if (!result) {
    std::fprintf(stderr, "kernelscope-cli: error: %s\n", result.error().message.c_str());
    return g_cancel.load() ? 130 : 1;
  }
  const bool interrupted = g_cancel.load() || result->interrupted;
  int rc = finishRun(result->session, interrupted, out_path, csv_path, journal, fit_from);
  if (!result->lost.empty()) {
    std::fprintf(stderr, "kernelscope-cli: error: %s; the %zu finished points are kept%s\n", result->lost.c_str(),
                 result->session.points.size(), out_path.empty() ? "" : (" in " + out_path).c_str());
    if (rc == 0) rc = 1;
  }
  return rc;
}

// run-stream: the server's half of run --remote (remote.h has the protocol).
int cmdRunStream(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, {"--device"}, {"--peaks"});
  if (!a.positional.empty()) usage("unexpected argument '" + a.positional.front() + "'");
  std::string line;
  if (!std::getline(std::cin, line)) usage("run-stream reads the session to run, as one JSON line, on stdin");
  auto request = ks::sessionFromJson(line);
  if (!request) usage("the session to run: " + request.error().message);
  const ks::Plan plan = request->plan;
  bool needs_gpu = false;
  for (const auto& item : plan.items)
    if (const auto* k = ks::Registry::instance().find(item.kernel)) needs_gpu |= k->backend == ks::Backend::Vulkan;
  Engine e = needs_gpu ? openEngine(a.get("--device"), true) : Engine{};
  ks::Session session = ks::newSession();
  if (e.device) session.device = e.device->info();
  session.plan = plan;
  session.kernel_files = request->kernel_files;
  ks::embedKernelFiles(session);
  if (a.has("--peaks")) session.peaks = measurePeaksOrThrow(e.device.get(), ks::PeakOptions{});
  ks::Runner runner(e.device.get());
  if (!plan.items.empty() &&
      std::all_of(plan.items.begin(), plan.items.end(), [&](const auto& item) { return runner.whySkipped(item); }))
    usage("none of the " + std::to_string(plan.items.size()) + " points can run here: " + plan.items.front().kernel +
          ": " + *runner.whySkipped(plan.items.front()));
  auto emit = [](const nlohmann::json& record) {
    const std::string text = ks::dumpJson(record, -1) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
  emit({{"format", ks::kJournalFormat},
        {"version", ks::kJournalVersion},
        {"session", ks::sessionHeaderToJson(session)}});
  // "stop", or the end of stdin (the connection is gone), stops the sweep between dispatches.
  std::thread([] {
    std::string command;
    while (std::getline(std::cin, command) && command != "stop") {
    }
    g_cancel.store(true);
  }).detach();
  std::signal(SIGINT, [](int) { g_cancel.store(true); });
  ks::RunCallbacks cb;
  cb.point = [&](const ks::Measurement& m) { emit({{"point", ks::pointToJson(m)}}); };
  cb.drift = [&](const ks::DriftReport& d) { emit({{"drift", ks::driftToJson(d)}}); };
  cb.progress = [&](size_t done, size_t total) { emit({{"progress", {{"done", done}, {"total", total}}}}); };
  const auto points = runner.run(plan, cb, g_cancel);
  if (plan.drift_check) emit({{"drift", ks::driftToJson(runner.drift())}});
  const bool interrupted = g_cancel.load() && points.size() < plan.items.size();
  emit({{"end", {{"interrupted", interrupted}, {"points", points.size()}}}});
  return 0;
}

const std::vector<std::string> kRunOptions = {"--kernels",
                                              "--sizes",
                                              "--mnk",
                                              "--wg",
                                              "--param",
                                              "--reps",
                                              "--warmup",
                                              "--warmup-ms",
                                              "--target-ci",
                                              "--budget-ms",
                                              "--max-reps",
                                              "--seed",
                                              "--cache-mib",
                                              "--drift-threshold",
                                              "--drift-interval-ms",
                                              "--dispatch-timeout",
                                              "--fit-from",
                                              "--device",
                                              "-o",
                                              "--output",
                                              "--csv",
                                              "--kernel-file",
                                              "--kernel-dir",
                                              "--rerun",
                                              "--tuned-file",
                                              "--remote",
                                              "--remote-cli"};
const std::vector<std::string> kRunFlags = {"--quiet",          "--peaks", "--no-rotate",
                                            "--no-drift-check", "--tuned", "--with-transfers"};

int cmdRun(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, kRunOptions, kRunFlags);
  if (a.has("--tuned-file") && !a.has("--tuned")) usage("--tuned-file names the file --tuned reads: give --tuned too");
  if (a.has("--tuned") && a.has("--rerun"))
    usage("--tuned cannot be combined with --rerun: it runs the session's plan as it was");
  if (!a.positional.empty()) usage("unexpected argument '" + a.positional.front() + "'");
  if (a.has("--remote-cli") && !a.has("--remote")) usage("--remote-cli names the CLI on the server: give --remote too");
  if (a.has("--remote") && a.has("--tuned"))
    usage(
        "--tuned cannot be combined with --remote: tuned defaults are per device, and this machine's are not the "
        "server's");
  loadKernelFiles(a);
  ks::Plan plan;
  std::optional<ks::Session> rerun;
  if (a.has("--rerun")) {
    for (const char* opt :
         {"--kernels", "--sizes", "--mnk", "--wg", "--param", "--reps", "--warmup", "--warmup-ms", "--target-ci",
          "--budget-ms", "--max-reps", "--seed", "--cache-mib", "--no-rotate", "--with-transfers", "--drift-threshold",
          "--drift-interval-ms", "--no-drift-check", "--dispatch-timeout"})
      if (a.has(opt))
        usage(std::string(opt) + " cannot be combined with --rerun: it runs the session's plan as it was");
    // Loading registers the kernel files the session embeds: the re-run compiles exactly those.
    auto old = ks::loadSession(a.get("--rerun"));
    if (!old) usage(a.get("--rerun") + ": " + old.error().message);
    if (old->plan.items.empty()) usage(a.get("--rerun") + " has no points to run again");
    plan = old->plan;
    rerun = std::move(*old);
  } else {
    if (!a.has("--kernels")) usage("run needs --kernels (e.g. --kernels gemm.naive,gemm.tiled_shared)");
    if (!a.has("--sizes") && !a.has("--mnk")) usage("run needs --sizes or --mnk");
    plan = planFromOptions(a);
  }
  const std::string out_path = a.has("-o") ? a.get("-o") : a.get("--output");
  const std::string csv_path = a.get("--csv");
  const bool quiet = a.has("--quiet");
  const double fit_from = parseFitFrom(a);

  bool needs_gpu = false;
  for (const auto& item : plan.items)
    if (const auto* k = ks::Registry::instance().find(item.kernel)) needs_gpu |= k->backend == ks::Backend::Vulkan;
  // Find out before a long sweep that the results cannot be written.
  for (const std::string& path : {out_path, csv_path}) {
    if (path.empty()) continue;
    const std::string probe = path + ".tmp";
    std::ofstream test(probe);
    if (!test) usage("cannot write " + path + ": " + std::strerror(errno));
    test.close();
    std::remove(probe.c_str());
  }
  // The journal beside the output: an existing one may hold the only copy of an earlier run's points.
  const std::string journal_path = out_path.empty() ? std::string() : out_path + ".partial";
  if (!journal_path.empty() && access(journal_path.c_str(), F_OK) == 0)
    usage(journal_path + " exists: an earlier run to " + out_path + " did not finish; recover its points (" +
          "kernelscope-cli recover " + journal_path + ") or remove it first");
  if (a.has("--remote")) {
    ks::Session request = ks::newSession();
    request.plan = plan;
    if (rerun) request.kernel_files = rerun->kernel_files;
    ks::embedKernelFiles(request);
    return runOnServer(a, request, out_path, csv_path, fit_from);
  }
  // GPU kernels were asked for: without a device nothing of that can be measured.
  Engine e = needs_gpu ? openEngine(a.get("--device"), true) : Engine{};
  if (!rerun && e.device) plan = planFromOptions(a, &e.device->info());

  if (a.has("--tuned")) {
    // Tuned defaults replace each kernel's own, except what --param and --wg set.
    const std::string path = a.has("--tuned-file") ? a.get("--tuned-file") : ks::defaultTunedPath();
    auto tuned = ks::loadTunedDefaults(path);
    if (!tuned) usage(tuned.error().message);
    if (!e.device) usage("--tuned applies to GPU kernels: tuned defaults are per device");
    std::vector<std::string> explicit_names;
    if (a.has("--wg")) explicit_names.push_back("wg");
    for (auto [it, end] = a.options.equal_range("--param"); it != end; ++it)
      explicit_names.push_back(it->second.substr(0, it->second.find('=')));
    for (const auto& line : ks::applyTunedDefaults(plan.items, *tuned, e.device->info(), explicit_names))
      std::printf("tuned: %s\n", line.c_str());
  }

  ks::Session session = ks::newSession();
  if (e.device) session.device = e.device->info();
  session.plan = plan;
  // The kernel files as they are now go into the session (and its journal).
  if (rerun) session.kernel_files = rerun->kernel_files;
  ks::embedKernelFiles(session);
  if (rerun)
    std::printf(
        "re-running %s: created %s by kernelscope %s%s\n", a.get("--rerun").c_str(), rerun->created.c_str(),
        rerun->app_version.c_str(),
        rerun->device ? (" on " + rerun->device->name + ", driver " + rerun->device->driver_version).c_str() : "");

  if (e.device)
    std::printf("device: %s (%s, Vulkan %s, driver %s)\n", e.device->info().name.c_str(), e.device->info().type.c_str(),
                e.device->info().api_version.c_str(), e.device->info().driver_version.c_str());
  printHostLine(session.host);
  if (a.has("--peaks")) {
    // Only CPU kernels: no device is opened, and the host CPU's peaks are all they need.
    session.peaks = measurePeaksOrThrow(e.device.get(), ks::PeakOptions{});
    std::printf("%s\n", ks::formatPeaksTable(*session.peaks).c_str());
  }
  std::printf("%zu points, %u+ warm-up runs (at least %u ms) + %u timed repetitions each, seed %llu\n",
              plan.items.size(), plan.warmup, plan.warmup ? plan.warmup_ms : 0, plan.reps,
              static_cast<unsigned long long>(plan.seed));
  std::fflush(stdout);

  ks::Runner runner(e.device.get());
  {
    // When no point can run (every one would be skipped), say why and stop, as
    // the app keeps Run off; nothing would be measured.
    std::vector<std::string> reasons;
    bool any_runs = false;
    for (const auto& item : plan.items) {
      auto why = runner.whySkipped(item);
      if (!why) {
        any_runs = true;
        break;
      }
      const std::string line = item.kernel + ": " + *why;
      if (std::find(reasons.begin(), reasons.end(), line) == reasons.end()) reasons.push_back(line);
    }
    if (!any_runs && !plan.items.empty()) {
      std::fprintf(stderr, "kernelscope-cli: error: none of the %zu points can run:\n", plan.items.size());
      for (size_t i = 0; i < reasons.size() && i < 20; ++i) std::fprintf(stderr, "  %s\n", reasons[i].c_str());
      if (reasons.size() > 20) std::fprintf(stderr, "  ... and %zu more reasons\n", reasons.size() - 20);
      return 2;
    }
  }
  // Each finished point goes to the journal before it is printed, so a kill loses at most the one in flight.
  std::optional<ks::JournalWriter> journal;
  if (!journal_path.empty()) {
    auto created = ks::JournalWriter::create(journal_path, session);
    if (!created) throw std::runtime_error("cannot keep the run's journal: " + created.error().message);
    journal.emplace(std::move(*created));
  }
  auto journalAppend = [&](const auto& record) { appendToJournal(journal, record); };

  std::signal(SIGINT, [](int) { g_cancel.store(true); });
  const ks::PointLineColumns columns = ks::pointLineColumns(plan.items);
  size_t index = 0;
  ks::RunCallbacks cb;
  cb.drift = [&](const ks::DriftReport& d) { journalAppend(d); };
  cb.point = [&](const ks::Measurement& m) {
    journalAppend(m);
    ++index;
    if (!quiet) {
      std::printf("%s\n", ks::formatPointLine(m, index, plan.items.size(), columns).c_str());
      std::fflush(stdout);
    }
    // Tables show one line; a compile log with its numbered source goes to stderr whole.
    if (m.error.find('\n') != std::string::npos) std::fprintf(stderr, "%s\n", m.error.c_str());
  };
  session.points = runner.run(plan, cb, g_cancel);
  std::signal(SIGINT, SIG_DFL);
  if (plan.drift_check) session.drift = runner.drift();

  return finishRun(session, g_cancel.load(), out_path, csv_path, journal, fit_from);
}

// A file name for a host's session: "alice@gpu1:2222" -> "alice@gpu1_2222".
std::string hostFileName(const std::string& target) {
  std::string name = target;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '@' && c != '.' && c != '-') c = '_';
  return name;
}

// fleet --hosts FILE run ...: the same plan on every host at once; a session per
// host and, against the first host that finished, a comparison of each other.
int cmdFleet(int argc, char** argv) {
  int run_at = 2;
  while (run_at < argc && std::string(argv[run_at]) != "run") ++run_at;
  if (run_at == argc) usage("fleet needs a command: fleet --hosts FILE run [run options] -o DIR");
  Args fleet_args = parseArgs(run_at, argv, 2, {"--hosts"}, {});
  if (!fleet_args.positional.empty()) usage("unexpected argument '" + fleet_args.positional.front() + "'");
  if (!fleet_args.has("--hosts")) usage("fleet needs --hosts FILE (one [user@]host[:port] per line)");
  Args a = parseArgs(argc, argv, run_at + 1, kRunOptions, kRunFlags);
  for (const char* opt : {"--remote", "--remote-cli", "--tuned", "--csv"})
    if (a.has(opt)) usage(std::string(opt) + " does not apply to fleet (the hosts file names the servers)");
  if (!a.positional.empty()) usage("unexpected argument '" + a.positional.front() + "'");
  const std::string out_dir = a.has("-o") ? a.get("-o") : a.get("--output");
  if (out_dir.empty()) usage("fleet needs -o DIR: a session per host and the comparison go there");

  // The hosts: "[user@]host[:port] [CLI path on that host]", # comments.
  std::ifstream hosts_file(fleet_args.get("--hosts"));
  if (!hosts_file) usage("cannot read " + fleet_args.get("--hosts") + ": " + std::strerror(errno));
  std::vector<ks::remote::Target> targets;
  size_t line_number = 0;
  for (std::string line; std::getline(hosts_file, line);) {
    ++line_number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string host, cli, extra;
    if (!(words >> host)) continue;
    words >> cli >> extra;
    if (!extra.empty())
      usage(fleet_args.get("--hosts") + " line " + std::to_string(line_number) +
            ": expected [user@]host[:port] and an optional CLI path, not more");
    auto target = ks::remote::parseTarget(host);
    if (!target)
      usage(fleet_args.get("--hosts") + " line " + std::to_string(line_number) + ": " + target.error().message);
    target->cli = cli;
    for (const auto& t : targets)
      if (t.text == target->text) usage(fleet_args.get("--hosts") + ": " + host + " is listed twice");
    targets.push_back(*target);
  }
  if (targets.empty()) usage(fleet_args.get("--hosts") + " lists no hosts");

  loadKernelFiles(a);
  ks::Plan plan;
  if (a.has("--rerun")) {
    auto old = ks::loadSession(a.get("--rerun"));
    if (!old) usage(a.get("--rerun") + ": " + old.error().message);
    plan = old->plan;
  } else {
    if (!a.has("--kernels")) usage("run needs --kernels (e.g. --kernels gemm.naive,gemm.tiled_shared)");
    if (!a.has("--sizes") && !a.has("--mnk")) usage("run needs --sizes or --mnk");
    plan = planFromOptions(a);
  }
  ks::Session request = ks::newSession();
  request.plan = plan;
  ks::embedKernelFiles(request);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) usage("cannot create " + out_dir + ": " + ec.message());
  for (const auto& t : targets) {
    const std::string partial = out_dir + "/" + hostFileName(t.text) + ".json.partial";
    if (access(partial.c_str(), F_OK) == 0)
      usage(partial + " exists: an earlier fleet run did not finish; recover it (kernelscope-cli recover " + partial +
            ") or remove it first");
  }

  struct HostRun {
    ks::remote::Target target;
    std::string path;
    std::optional<ks::JournalWriter> journal;
    std::optional<ks::Session> session;
    std::string error;  // nothing ran, or the run was cut short
    size_t done = 0;
  };
  std::vector<HostRun> runs;
  for (const auto& t : targets) runs.push_back({t, out_dir + "/" + hostFileName(t.text) + ".json", {}, {}, {}, 0});
  std::mutex print;
  auto say = [&](const HostRun& r, const std::string& text) {
    std::lock_guard lock(print);
    std::printf("[%s] %s\n", r.target.text.c_str(), text.c_str());
    std::fflush(stdout);
  };
  std::printf("fleet: %zu points on %zu hosts\n", plan.items.size(), runs.size());
  std::signal(SIGINT, [](int) { g_cancel.store(true); });
  ks::remote::RunOptions options;
  options.device = a.get("--device");
  options.peaks = a.has("--peaks");
  std::vector<std::thread> threads;
  for (auto& r : runs)
    threads.emplace_back([&, &r = r] {
      ks::remote::Setup setup = ks::remote::Setup::fromEnvironment();
      setup.log = [&](const std::string& line) { say(r, line); };
      ks::remote::RunCallbacks cb;
      cb.started = [&](const ks::Session& header) {
        say(r, "device: " + (header.device ? header.device->name + " (driver " + header.device->driver_version + ")"
                                           : std::string("none")));
        if (auto created = ks::JournalWriter::create(r.path + ".partial", header))
          r.journal.emplace(std::move(*created));
        else
          say(r, "warning: no journal (" + created.error().message + "): a crash would lose this host's points");
      };
      cb.point = [&](const ks::Measurement& m) {
        appendToJournal(r.journal, m);
        ++r.done;
        if (!a.has("--quiet")) say(r, ks::formatPointLine(m, r.done, plan.items.size()));
      };
      cb.drift = [&](const ks::DriftReport& d) { appendToJournal(r.journal, d); };
      auto result = ks::remote::run(r.target, setup, request, options, cb, g_cancel);
      if (!result) {
        r.error = result.error().message;
        return;
      }
      r.session = std::move(result->session);
      r.error = result->lost;
    });
  for (auto& t : threads) t.join();
  std::signal(SIGINT, SIG_DFL);

  int rc = g_cancel.load() ? 130 : 0;
  std::vector<std::vector<std::string>> rows;
  const HostRun* baseline = nullptr;
  for (auto& r : runs) {
    std::string state = r.error.empty() ? "finished" : "error: " + r.error;
    if (r.session) {
      size_t ok = 0;
      for (const auto& m : r.session->points) ok += m.status == ks::PointStatus::Ok;
      if (auto st = ks::saveSession(*r.session, r.path); !st) {
        state = "error: " + st.error().message + " (the points stay in " + r.path + ".partial)";
        rc = 1;
      } else {
        r.journal.reset();
        std::remove((r.path + ".partial").c_str());
        if (!baseline && !r.session->points.empty()) baseline = &r;
      }
      rows.push_back({r.target.text, r.session->device ? r.session->device->name : "-",
                      std::to_string(ok) + "/" + std::to_string(plan.items.size()), state, r.path});
    } else {
      rows.push_back({r.target.text, "-", "0/" + std::to_string(plan.items.size()), state, "-"});
    }
    if (!r.error.empty() && rc == 0) rc = 1;
  }
  std::printf("\n%s", ks::renderTable({"host", "device", "ok points", "run", "session"}, rows).c_str());
  // Every other host against the first one that has points: compare's ratios and device warnings.
  if (baseline) {
    std::string report;
    for (const auto& r : runs) {
      if (&r == baseline || !r.session || r.session->points.empty()) continue;
      report += "baseline: " + baseline->target.text + " (" + baseline->path + ")\ncurrent:  " + r.target.text + " (" +
                r.path + ")\n\n" + ks::formatComparison(ks::compareSessions(*baseline->session, *r.session)) + "\n";
    }
    if (!report.empty()) {
      const std::string path = out_dir + "/comparison.txt";
      std::printf("\n%s", report.c_str());
      if (auto st = ks::writeFileDurably(path, report); !st)
        std::fprintf(stderr, "kernelscope-cli: error: %s\n", st.error().message.c_str());
      else
        std::printf("comparison written to %s\n", path.c_str());
    }
  }
  for (const auto& r : runs)
    if (!r.error.empty())
      std::fprintf(stderr, "kernelscope-cli: error: %s: %s\n", r.target.text.c_str(), r.error.c_str());
  return rc;
}

// tune: search a kernel's tunables and workgroup shapes at one size.
int cmdTune(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, {"--kernel",       "--size",
                                     "--strategy",     "--budget",
                                     "--time-budget",  "--objective",
                                     "--seed",         "--wg",
                                     "--param",        "--top",
                                     "--final-rounds", "--tie-margin",
                                     "--cache",        "--reps",
                                     "--warmup",       "--warmup-ms",
                                     "--target-ci",    "--budget-ms",
                                     "--max-reps",     "--input-seed",
                                     "--cache-mib",    "--dispatch-timeout",
                                     "--device",       "-o",
                                     "--output",       "--tuned-file",
                                     "--kernel-file",  "--kernel-dir"},
                     {"--no-cache", "--save-defaults", "--quiet", "--no-rotate", "--dry-run"});
  if (!a.positional.empty()) usage("unexpected argument '" + a.positional.front() + "'");
  if (!a.has("--kernel")) usage("tune needs --kernel ID (e.g. --kernel gemm.block_tiling)");
  if (!a.has("--size")) usage("tune needs --size (e.g. --size 1024, or MxNxK)");
  if (a.has("--no-cache") && a.has("--cache")) usage("--cache and --no-cache exclude each other");
  loadKernelFiles(a);
  const ks::KernelInfo* kernel = ks::Registry::instance().find(a.get("--kernel"));
  if (!kernel) usage("unknown kernel '" + a.get("--kernel") + "' (kernelscope-cli kernels lists them)");
  auto sizes = ks::parseSizeSpecs(a.get("--size"));
  if (!sizes) usage("--size: " + sizes.error().message);
  if (sizes->size() != 1) usage("tune takes one --size (a tune is per size; tune each size on its own)");
  auto size = ks::problemSize(*kernel, sizes->front());
  if (!size) usage("--size: " + size.error().message);

  ks::TuneRequest req;
  req.kernel = kernel->id;
  req.size = *size;
  if (a.has("--strategy")) {
    auto st = ks::parseStrategy(a.get("--strategy"));
    if (!st) usage("--strategy: " + st.error().message);
    req.strategy = *st;
  }
  if (a.has("--objective")) {
    auto o = ks::parseObjective(a.get("--objective"));
    if (!o) usage("--objective: " + o.error().message);
    req.objective = *o;
  } else if (kernel->memory_bound) {
    req.objective = ks::TuneObjective::Gbps;
  }
  req.seed = parseCount(a.get("--seed", "1"), "--seed", 0);
  if (a.has("--budget")) req.budget = parseCount(a.get("--budget"), "--budget", 1);
  if (a.has("--time-budget")) req.time_budget_s = parseDuration(a.get("--time-budget"), "--time-budget") / 1000.0;
  req.final_top = parseCount(a.get("--top", "5"), "--top", 0);
  req.final_rounds = parseCount(a.get("--final-rounds", "5"), "--final-rounds", 1);
  if (a.has("--tie-margin")) req.tie_margin = parseFraction(a.get("--tie-margin"), "--tie-margin", "1%");
  req.shapes = shapesOption(a);
  req.only = paramsOption(a);
  // How each configuration is measured: run's options (--input-seed for the inputs, --seed is the search's).
  Args measure = a;
  measure.options.erase("--seed");
  if (a.has("--input-seed")) measure.options.emplace("--seed", a.get("--input-seed"));
  req.plan = measurementFromOptions(measure);
  req.plan.drift_check = false;
  const std::string out_path = a.has("-o") ? a.get("-o") : a.get("--output");
  if (!out_path.empty()) {
    std::ofstream test(out_path + ".tmp");
    if (!test) usage("cannot write " + out_path + ": " + std::strerror(errno));
    test.close();
    std::remove((out_path + ".tmp").c_str());
  }
  const bool quiet = a.has("--quiet");

  // The space's own errors (unknown or illegal values, nothing to tune) before any device is opened.
  auto dims = ks::tuneDimensions(*kernel, req.only, req.shapes);
  if (!dims) usage(dims.error().message);
  Engine e = kernel->backend == ks::Backend::Vulkan ? openEngine(a.get("--device"), true) : Engine{};
  const ks::vk::DeviceInfo* device = e.device ? &e.device->info() : nullptr;
  if (device && !a.has("--no-cache"))
    req.cache_path = a.has("--cache")
                         ? a.get("--cache")
                         : ks::tuneCachePath(ks::defaultTuneCacheDir(), *device, kernel->id, *size, req.plan);
  if (device)
    std::printf("device: %s (%s, Vulkan %s, driver %s)\n", device->name.c_str(), device->type.c_str(),
                device->api_version.c_str(), device->driver_version.c_str());

  if (a.has("--dry-run")) {
    // The space and what pruning leaves, without running anything.
    const auto space = ks::pruneSpace(*dims, *kernel, *size, device);
    std::printf("%llu configurations of %s at %s, %zu valid; %s search would evaluate %zu\n",
                static_cast<unsigned long long>(space.total), kernel->id.c_str(), size->str().c_str(),
                space.search.valid.size(), ks::strategyName(req.strategy).c_str(),
                ks::tuneBudget(req, space.search.valid.size()));
    for (const auto& p : space.pruned) std::printf("  pruned %zu: %s\n", p.configs.size(), p.reason.c_str());
    return space.search.valid.empty() ? 1 : 0;
  }

  ks::Session session = ks::newSession();
  if (device) session.device = *device;
  ks::Runner runner(e.device.get());
  ks::TuneCallbacks cb;
  cb.note = [](const std::string& text) { std::printf("%s\n", text.c_str()); };
  cb.evaluation = [&](const ks::TuneRecord& record, const ks::Measurement& m, const ks::TuneEvaluation& ev) {
    if (quiet) return;
    std::printf("%s\n", ks::formatTuneEvaluation(record, ev, m).c_str());
    std::fflush(stdout);
  };
  const bool progress_tty = isatty(fileno(stderr));
  cb.progress = [&](const ks::TuneProgress& p) {
    if (!progress_tty || p.phase != "final") return;
    std::fprintf(stderr, "\rfinal round %zu/%zu%s   ", p.done, p.total,
                 p.eta_s >= 0 ? (", about " + std::to_string(int(p.eta_s + 0.5)) + " s left").c_str() : "");
    if (p.done == p.total) std::fprintf(stderr, "\n");
  };
  std::signal(SIGINT, [](int) { g_cancel.store(true); });
  auto outcome = ks::runTune(runner, device, req, cb, g_cancel);
  std::signal(SIGINT, SIG_DFL);
  if (!outcome) usage(outcome.error().message);
  const ks::TuneRecord& rec = outcome->record;
  std::printf("\n%s", ks::formatTuneSummary(rec).c_str());

  session.plan = req.plan;
  for (const auto& m : outcome->points) session.plan.items.push_back(m.item);
  session.points = outcome->points;
  session.tune = rec;
  ks::embedKernelFiles(session);
  int rc = g_cancel.load() ? 130 : (rec.winner ? 0 : 1);
  if (!out_path.empty()) {
    if (auto st = ks::saveSession(session, out_path); !st) {
      std::fprintf(stderr, "kernelscope-cli: error: %s\n", st.error().message.c_str());
      rc = 1;
    } else {
      std::printf("session written to %s\n", out_path.c_str());
    }
  }
  if (rec.winner) {
    const ks::Params best = rec.params(*rec.winner, kernel->defaultParams(e.device ? &e.device->info() : nullptr));
    std::string run = "kernelscope-cli run --kernels " + kernel->id + " --sizes " + rec.size.str();
    if (kernel->uses_workgroup) run += " --wg " + best.wg.str();
    for (const auto& [name, value] : best.values) run += " --param " + name + "=" + std::to_string(value);
    std::printf("run it: %s\n", run.c_str());
  }
  if (a.has("--save-defaults")) {
    if (!device || g_cancel.load()) {
      std::fprintf(
          stderr, "kernelscope-cli: error: nothing saved as tuned default: %s\n",
          g_cancel.load() ? "the tune was interrupted" : "tuned defaults are per device and this tune had none");
      return rc ? rc : 1;
    }
    auto t = ks::tunedDefaultOf(rec, *device);
    if (!t) {
      std::fprintf(stderr, "kernelscope-cli: error: nothing saved as tuned default: %s\n", t.error().message.c_str());
      return rc ? rc : 1;
    }
    const std::string path = a.has("--tuned-file") ? a.get("--tuned-file") : ks::defaultTunedPath();
    if (auto st = ks::saveTunedDefault(path, *t); !st) {
      std::fprintf(stderr, "kernelscope-cli: error: %s\n", st.error().message.c_str());
      return 1;
    }
    std::printf("saved as the tuned default of %s on %s for size class %llu in %s (run --tuned uses it)\n",
                kernel->id.c_str(), device->name.c_str(), static_cast<unsigned long long>(t->size_class), path.c_str());
  }
  return rc;
}

// tune-replay: how random, anneal and genetic search would have done on an
// exhaustive grid tune's measurements, within a fraction of its evaluations.
int cmdTuneReplay(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, {"--fraction", "--seeds", "--kernel-file", "--kernel-dir"}, {});
  if (a.positional.size() != 1) usage("tune-replay needs one session of a grid tune (tune --strategy grid -o FILE)");
  loadKernelFiles(a);
  auto s = ks::loadSession(a.positional[0]);
  if (!s) usage(s.error().message);
  if (!s->tune) usage(a.positional[0] + " is not a tune session");
  const ks::TuneRecord& t = *s->tune;
  if (t.evaluations.size() != t.valid)
    usage(a.positional[0] + " evaluated " + std::to_string(t.evaluations.size()) + " of " + std::to_string(t.valid) +
          " valid configurations: replaying needs all of them (a complete grid tune)");
  const double fraction = a.has("--fraction") ? parseFraction(a.get("--fraction"), "--fraction", "25%") : 0.25;
  const uint32_t seeds = parseCount(a.get("--seeds", "10"), "--seeds", 1);
  ks::SearchSpace space;
  for (const auto& d : t.dimensions) space.dim_sizes.push_back(uint32_t(d.size()));
  std::vector<std::pair<ks::TuneConfig, std::optional<double>>> known;
  for (const auto& e : t.evaluations) known.push_back({e.config, e.score});
  std::sort(known.begin(), known.end());  // grid order, as pruneSpace lists them
  std::vector<std::optional<double>> scores;
  for (const auto& [c, score] : known) {
    space.valid.push_back(c);
    scores.push_back(score);
  }
  const auto best = t.bestEvaluation();
  if (!best) usage(a.positional[0] + " has no successful evaluation");
  std::printf("%s at %s on %s: %zu valid configurations; exhaustive best %s = %.1f %s\n", t.kernel.c_str(),
              t.size.str().c_str(), s->device ? s->device->name.c_str() : "?", t.valid,
              t.configText(t.evaluations[*best].config).c_str(), *t.evaluations[*best].score,
              ks::objectiveUnit(t.objective).c_str());
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : ks::replayStrategies(space, scores, fraction, seeds)) {
    char mean[32], worst[32], to_best[32];
    std::snprintf(mean, sizeof mean, "%.1f%%", 100 * r.mean_fraction);
    std::snprintf(worst, sizeof worst, "%.1f%%", 100 * r.worst_fraction);
    std::snprintf(to_best, sizeof to_best, "%.0f", r.mean_evaluations_to_best);
    rows.push_back({ks::strategyName(r.strategy), std::to_string(r.budget), mean, worst,
                    std::to_string(r.found_best) + "/" + std::to_string(r.runs), to_best});
  }
  std::printf(
      "%s", ks::renderTable(
                {"strategy", "evaluations", "mean of best", "worst", "found the best", "evaluations to its best"}, rows)
                .c_str());
  std::printf("(seeds 1..%u; the same evaluations a live tune with the result cache would make)\n", seeds);
  return 0;
}

// What a journal holds: "7 of 12 points finished (6 ok, 1 failed, 0 skipped)", and the line it dropped.
std::string journalSummary(const ks::JournalContents& j) {
  size_t ok = 0, failed = 0, skipped = 0, finished = 0;
  for (const auto& m : j.session.points) {
    ok += m.status == ks::PointStatus::Ok;
    failed += m.status == ks::PointStatus::Failed;
    skipped += m.status == ks::PointStatus::Skipped;
    finished += m.status != ks::PointStatus::Cancelled;
  }
  std::string text = std::to_string(finished) + " of " + std::to_string(j.session.plan.items.size()) +
                     " points finished (" + std::to_string(ok) + " ok, " + std::to_string(failed) + " failed, " +
                     std::to_string(skipped) + " skipped)";
  if (j.dropped_lines) text += "; dropped " + j.dropped_reason;
  return text;
}

int cmdShow(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, {"--csv", "--fit-from", "--kernel-source", "-o"}, {});
  if (a.has("-o") && !a.has("--kernel-source")) usage("show -o writes a kernel's source: give --kernel-source ID");
  const double fit_from = parseFitFrom(a);
  if (a.positional.size() != 1) usage("show needs exactly one session file");
  const std::string& path = a.positional[0];
  ks::Result<ks::Session> s = ks::makeError("not read");
  if (ks::isJournalFile(path)) {  // a run that did not finish: the points it wrote so far
    auto journal = ks::loadJournal(path);
    if (!journal) usage(journal.error().message);
    if (!a.has("--kernel-source"))
      std::printf("interrupted run %s: started %s by kernelscope %s (%s); %s\n", path.c_str(),
                  journal->session.created.c_str(), journal->session.app_version.c_str(),
                  journal->session.app_commit.c_str(), journalSummary(*journal).c_str());
    s = std::move(journal->session);
  } else {
    s = ks::loadSession(path);
    if (!s) usage(s.error().message);
    if (!a.has("--kernel-source"))
      std::printf("session %s: created %s by kernelscope %s (%s)\n", path.c_str(), s->created.c_str(),
                  s->app_version.c_str(), s->app_commit.c_str());
  }
  if (a.has("--kernel-source")) {
    // The kernel file exactly as the session measured it.
    const std::string id = a.get("--kernel-source");
    auto it = std::find_if(s->kernel_files.begin(), s->kernel_files.end(),
                           [&](const ks::EmbeddedKernel& e) { return e.id == id; });
    if (it == s->kernel_files.end()) {
      std::string ids;
      for (const auto& e : s->kernel_files) ids += (ids.empty() ? "" : ", ") + e.id;
      usage(path + " embeds no kernel file '" + id + "'" + (ids.empty() ? " (it has none)" : " (it has " + ids + ")"));
    }
    if (!a.has("-o")) {
      std::fwrite(it->source.data(), 1, it->source.size(), stdout);
      return 0;
    }
    if (auto st = ks::writeFileDurably(a.get("-o"), it->source); !st) throw std::runtime_error(st.error().message);
    std::printf("%s written to %s\n", id.c_str(), a.get("-o").c_str());
    return 0;
  }
  if (s->device)
    std::printf("device: %s (%s, Vulkan %s, driver %s)\n", s->device->name.c_str(), s->device->type.c_str(),
                s->device->api_version.c_str(), s->device->driver_version.c_str());
  printHostLine(s->host);
  for (const auto& e : s->kernel_files)
    std::printf("kernel file: %s from %s (hash %s, %zu lines; show --kernel-source %s prints it)\n", e.id.c_str(),
                e.path.empty() ? "(unknown path)" : e.path.c_str(), ks::textHash(e.source).c_str(),
                size_t(std::count(e.source.begin(), e.source.end(), '\n')), e.id.c_str());
  std::printf("%u warm-up + %u timed repetitions, seed %llu\n\n", s->plan.warmup, s->plan.reps,
              static_cast<unsigned long long>(s->plan.seed));
  if (s->peaks) std::printf("%s\n", ks::formatPeaksTable(*s->peaks).c_str());
  std::printf("%s", ks::formatSummaryTable(s->points, s->peaks ? &*s->peaks : nullptr).c_str());
  if (const auto table = ks::formatComplexityTable(s->points, fit_from); !table.empty())
    std::printf("\n%s", table.c_str());
  if (const auto table = ks::formatInterleaveTable(s->points); !table.empty()) std::printf("\n%s", table.c_str());
  if (s->drift) std::printf("%s\n", ks::formatDriftLine(*s->drift).c_str());
  if (s->tune) std::printf("\n%s", ks::formatTuneSummary(*s->tune).c_str());
  if (a.has("--csv")) {
    std::ofstream csv(a.get("--csv"));
    csv << ks::measurementsToCsv(s->points);
    if (!csv) throw std::runtime_error("cannot write " + a.get("--csv"));
  }
  for (const auto& m : s->points)
    if (m.status == ks::PointStatus::Failed) return 1;
  return 0;
}

int cmdRecover(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, {"-o", "--output"}, {"--force"});
  if (a.positional.size() != 1) usage("recover needs exactly one journal (the SESSION.json.partial a run left behind)");
  const std::string& journal_path = a.positional[0];
  std::string out_path = a.has("-o") ? a.get("-o") : a.get("--output");
  const std::string suffix = ".partial";
  if (out_path.empty()) {
    if (journal_path.size() <= suffix.size() ||
        journal_path.compare(journal_path.size() - suffix.size(), suffix.size(), suffix) != 0)
      usage(journal_path + " does not end in .partial: name the session to write with -o FILE");
    out_path = journal_path.substr(0, journal_path.size() - suffix.size());
  }
  if (access(out_path.c_str(), F_OK) == 0 && !a.has("--force"))
    usage(out_path + " exists: give --force to replace it, or -o another file");
  auto journal = ks::loadJournal(journal_path);
  if (!journal) usage(journal.error().message);
  ks::Session& session = journal->session;
  // The file says it is not a whole run, for whoever opens it later.
  if (!session.notes.empty()) session.notes += "\n";
  session.notes += "Recovered from the journal " + journal_path +
                   " of a run that did not finish: " + std::to_string(session.points.size()) + " of " +
                   std::to_string(session.plan.items.size()) + " points.";
  if (auto st = ks::saveSession(session, out_path); !st) throw std::runtime_error(st.error().message);
  const std::string on_device = session.device ? ", on " + session.device->name : std::string();
  std::printf("recovered from %s: run started %s by kernelscope %s (%s)%s\n", journal_path.c_str(),
              session.created.c_str(), session.app_version.c_str(), session.app_commit.c_str(), on_device.c_str());
  std::printf("%s\n", journalSummary(*journal).c_str());
  if (session.drift) std::printf("%s\n", ks::formatDriftLine(*session.drift).c_str());
  std::printf("session written to %s (%s is left as it was)\n", out_path.c_str(), journal_path.c_str());
  return 0;
}

// "created ..., kernelscope V (commit), on DEVICE (driver D)"
std::string sessionOrigin(const ks::Session& s) {
  std::string text = "created " + s.created + " by kernelscope " + s.app_version + " (" + s.app_commit + ")";
  if (s.device)
    text +=
        ", on " + s.device->name + " (Vulkan " + s.device->api_version + ", driver " + s.device->driver_version + ")";
  else
    text += ", no Vulkan device";
  return text;
}

int cmdCompare(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, {"--csv"}, {});
  if (a.positional.size() != 2)
    usage("compare needs two session files: BASELINE.json CURRENT.json (got " + std::to_string(a.positional.size()) +
          ")");
  const std::string& baseline_path = a.positional[0];
  const std::string& current_path = a.positional[1];
  // loadSession's messages name the file; say which side it was.
  auto baseline = ks::loadSession(baseline_path);
  if (!baseline) usage("baseline: " + baseline.error().message);
  auto current = ks::loadSession(current_path);
  if (!current) usage("current: " + current.error().message);
  const std::string csv_path = a.get("--csv");
  if (!csv_path.empty()) {
    std::ofstream test(csv_path + ".tmp");
    if (!test) usage("cannot write " + csv_path + ": " + std::strerror(errno));
    test.close();
    std::remove((csv_path + ".tmp").c_str());
  }

  const ks::Comparison comparison = ks::compareSessions(*baseline, *current);
  std::printf("baseline: %s: %s\n", baseline_path.c_str(), sessionOrigin(*baseline).c_str());
  std::printf("current:  %s: %s\n\n", current_path.c_str(), sessionOrigin(*current).c_str());
  std::printf("%s", ks::formatComparison(comparison).c_str());
  if (!csv_path.empty()) {
    std::ofstream csv(csv_path);
    csv << ks::comparisonToCsv(comparison);
    if (!csv) throw std::runtime_error("cannot write " + csv_path);
    std::printf("CSV written to %s\n", csv_path.c_str());
  }
  return 0;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

int cmdOverhead(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, {"--device", "--reps"}, {});
  const uint32_t reps = parseCount(a.get("--reps", "1000"), "--reps", 1);
  Engine e = openEngine(a.get("--device"), true);
  auto r = ks::measureDispatchOverhead(*e.device, reps);
  if (!r) throw std::runtime_error(r.error().message);
  std::printf("device: %s\n", e.device->info().name.c_str());
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const std::string& what, const ks::Stats& s) {
    rows.push_back({what, std::to_string(s.count), ks::formatDuration(s.median), ks::formatDuration(s.min),
                    ks::formatDuration(s.max), percent(s.cv)});
  };
  // fence: blocked in vkWaitForFences; spin: polling vkGetFenceStatus; timeline: vkWaitSemaphores.
  for (const auto& w : r->waits) {
    row("empty submit, " + w.mode + " wait", w.submit);
    row("empty dispatch 1x1x1, " + w.mode + " wait", w.dispatch);
  }
  std::printf("%s", ks::renderTable(
                        {"measurement (submit to signalled, host clock)", "reps", "median", "min", "max", "cv"}, rows)
                        .c_str());
  const auto& best = r->fastest();
  std::printf("fastest round trip: %s wait, %s per pre-recorded dispatch (fence wait: %s)\n", best.mode.c_str(),
              ks::formatDuration(best.dispatch.median).c_str(), ks::formatDuration(r->dispatch.median).c_str());
  return 0;
}

int cmdPeaks(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, {"--device", "--reps", "--copy-mib", "--stream-mib", "-o", "--output"}, {});
  if (!a.positional.empty()) usage("unexpected argument '" + a.positional.front() + "'");
  ks::PeakOptions options;
  options.reps = parseCount(a.get("--reps", "15"), "--reps", 3);
  if (a.has("--copy-mib")) options.copy_bytes = uint64_t(parseCount(a.get("--copy-mib"), "--copy-mib", 1)) << 20;
  if (a.has("--stream-mib"))
    options.host_stream_bytes = uint64_t(parseCount(a.get("--stream-mib"), "--stream-mib", 3)) << 20;
  const std::string out_path = a.has("-o") ? a.get("-o") : a.get("--output");
  Engine e = openEngine(a.get("--device"), true);
  const auto& info = e.device->info();
  std::printf("device: %s (%s, Vulkan %s, driver %s)\n", info.name.c_str(), info.type.c_str(), info.api_version.c_str(),
              info.driver_version.c_str());
  std::fflush(stdout);
  ks::Session session = ks::newSession();
  session.device = info;
  session.peaks = measurePeaksOrThrow(e.device.get(), options);
  std::printf("%s", ks::formatPeaksTable(*session.peaks).c_str());
  if (!out_path.empty()) {
    if (auto st = ks::saveSession(session, out_path); !st) throw std::runtime_error(st.error().message);
    std::printf("peaks written to %s\n", out_path.c_str());
  }
  return 0;
}

int cmdKernelTemplate(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2, {"-o", "--output"}, {});
  if (a.positional.size() != 1) usage("kernel-template needs one workload: gemm, gemv, dot or custom (or examples)");
  const std::string what = a.positional[0];
  const std::string out = a.has("-o") ? a.get("-o") : a.get("--output");
  if (what == "examples") {
    if (out.empty()) usage("kernel-template examples needs -o DIR");
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec) usage("cannot create " + out + ": " + ec.message());
    for (const auto& [name, text] : ks::exampleKernelFiles()) {
      const std::string path = (std::filesystem::path(out) / name).string();
      if (std::filesystem::exists(path)) usage(path + " exists: not overwritten");
      if (auto st = ks::writeFileDurably(path, text); !st) throw std::runtime_error(st.error().message);
      std::printf("%s\n", path.c_str());
    }
    return 0;
  }
  auto text = ks::kernelTemplate(what);
  if (!text) usage(text.error().message);
  if (out.empty()) {
    std::fwrite(text->data(), 1, text->size(), stdout);
    return 0;
  }
  if (std::filesystem::exists(out)) usage(out + " exists: not overwritten");
  if (auto st = ks::writeFileDurably(out, *text); !st) throw std::runtime_error(st.error().message);
  std::printf("%s kernel written to %s; try: kernelscope-cli run --kernel-file %s --kernels user.my_%s --sizes %s\n",
              what.c_str(), out.c_str(), out.c_str(), what.c_str(),
              what == "gemm"   ? "128,256"
              : what == "gemv" ? "1024,2048"
                               : "65536,1048576");
  return 0;
}

int cmdCompile(int argc, char** argv) {
  Args a = parseArgs(argc, argv, 2,
                     {"--kernels", "--wg", "--param", "--size", "--device", "--kernel-file", "--kernel-dir"}, {});
  if (!a.positional.empty()) usage("unexpected argument '" + a.positional.front() + "'");
  loadKernelFiles(a);
  std::vector<const ks::KernelInfo*> kernels;
  if (a.has("--kernels")) {
    auto matched = ks::Registry::instance().match(a.get("--kernels"));
    if (!matched) usage(matched.error().message);
    kernels = *matched;
  } else {
    // Without --kernels: the kernel files named on the command line.
    for (const auto& k : ks::Registry::instance().all())
      for (auto [it, end] = a.options.equal_range("--kernel-file"); it != end; ++it)
        if (k.user && std::filesystem::equivalent(k.source_path, it->second)) kernels.push_back(&k);
    if (kernels.empty()) usage("compile needs --kernels LIST or --kernel-file FILE");
  }
  Engine e = openEngine(a.get("--device"), true);
  std::printf("device: %s (driver %s)%s\n", e.device->info().name.c_str(), e.device->info().driver_version.c_str(),
              e.device->info().executable_properties ? "" : "; it does not report pipeline statistics");
  int rc = 0;
  for (const auto* k : kernels) {
    if (k->backend != ks::Backend::Vulkan) continue;
    ks::Params params = k->defaultParams(&e.device->info());
    if (a.has("--wg")) {
      auto wg = ks::WorkgroupShape::parse(a.get("--wg"));
      if (!wg) usage(wg.error().message);
      params.wg = *wg;
    }
    for (auto [it, end] = a.options.equal_range("--param"); it != end; ++it) {
      const auto eq = it->second.find('=');
      if (eq == std::string::npos) usage("--param takes NAME=VALUE, not " + it->second);
      try {
        params.values[it->second.substr(0, eq)] = std::stoi(it->second.substr(eq + 1));
      } catch (const std::exception&) {
        usage("--param " + it->second + ": the value is not an integer");
      }
    }
    auto sizes = ks::parseSizeSpecs(a.get("--size", "256"));
    if (!sizes || sizes->size() != 1) usage("--size takes one size, e.g. 256 or 512x256x128");
    auto size = ks::problemSize(*k, sizes->front());
    if (!size) usage(size.error().message);
    auto report = ks::compileKernel(*e.device, *k, params, *size);
    if (!report) {
      std::printf("%s %s: FAILED\n", k->id.c_str(), params.str(k->uses_workgroup).c_str());
      std::fprintf(stderr, "%s\n", report.error().message.c_str());
      rc = 1;
      continue;
    }
    std::printf("%s %s at %s: ok\n", k->id.c_str(), report->params.c_str(), report->size.str().c_str());
    for (const auto& pass : report->passes)
      std::printf("  %s%sgrid %ux%ux%u: %s\n", pass.defines.c_str(), pass.defines.empty() ? "" : ", ", pass.groups[0],
                  pass.groups[1], pass.groups[2], ks::statisticsText(pass.statistics).c_str());
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  try {
    if (cmd == "devices") return cmdDevices(argc, argv);
    if (cmd == "kernels") return cmdKernels(argc, argv);
    if (cmd == "run") return cmdRun(argc, argv);
    if (cmd == "run-stream") return cmdRunStream(argc, argv);
    if (cmd == "fleet") return cmdFleet(argc, argv);
    if (cmd == "tune") return cmdTune(argc, argv);
    if (cmd == "tune-replay") return cmdTuneReplay(argc, argv);
    if (cmd == "kernel-template") return cmdKernelTemplate(argc, argv);
    if (cmd == "compile") return cmdCompile(argc, argv);
    if (cmd == "show") return cmdShow(argc, argv);
    if (cmd == "recover") return cmdRecover(argc, argv);
    if (cmd == "compare") return cmdCompare(argc, argv);
    if (cmd == "overhead") return cmdOverhead(argc, argv);
    if (cmd == "peaks") return cmdPeaks(argc, argv);
    if (cmd == "--version" || cmd == "version") {
      std::printf("kernelscope-cli %s (%s)\n", KS_VERSION, KS_GIT_COMMIT);
      return 0;
    }
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      std::printf("%s", kUsage);
      return 0;
    }
    usage(cmd.empty() ? "no command given (try kernelscope-cli --help)" : "unknown command '" + cmd + "'");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kernelscope-cli: error: %s\n", e.message.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernelscope-cli: error: %s\n", e.what());
    return 1;
  }
}
