// The host CPU's peaks: fp32 FMA throughput and STREAM bandwidth on every
// hardware thread, so CPU kernels sit under their own roofs.
#include <sys/mman.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <system_error>
#include <thread>

#include "engine/bench/peaks.h"
#include "engine/cpu/cpu_info.h"
#include "engine/cpu/peak_loops.h"
#include "engine/session/session.h"

namespace ks {

namespace {

using Clock = std::chrono::steady_clock;

struct Cancelled {};

// From volatiles so the compiler cannot fold the chains; |mul| < 1 keeps them
// finite and normal (they settle at add / (1 - mul) = 1).
volatile float g_fma_mul = 0.9990234375f;
volatile float g_fma_add = 0.0009765625f;

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kMinStreamBytes = 256 * kMiB;
// First touching fresh memory costs up to 3 s per GiB on a VM: this keeps the measurement within seconds.
constexpr uint64_t kMaxStreamBytes = 1024 * kMiB;
constexpr uint64_t kLineFloats = 16;  // one 64-byte cache line

// One thread per hardware thread, started once: spawning threads for every
// run would stagger their starts by far more than a short run takes on a
// many-core host. The caller is member 0.
class ThreadTeam {
 public:
  explicit ThreadTeam(unsigned size) : size_(size), start_(size), done_(size) {
    workers_.reserve(size - 1);
    try {
      for (unsigned t = 1; t < size; ++t) workers_.emplace_back([this, t] { work(t); });
    } catch (...) {
      // Release the members that started, counting the missing ones as gone.
      stop_ = true;
      for (size_t missing = workers_.size() + 1; missing < size; ++missing) start_.arrive_and_drop();
      start_.arrive_and_wait();
      for (auto& w : workers_) w.join();
      throw;
    }
  }
  ~ThreadTeam() {
    stop_ = true;
    start_.arrive_and_wait();
    for (auto& w : workers_) w.join();
  }
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  unsigned size() const { return size_; }

  // Runs body(t) on every member at once; the wall time from the start to the last one's end, in ns.
  double run(const std::function<void(unsigned)>& body) {
    body_ = &body;
    const auto start = Clock::now();
    start_.arrive_and_wait();
    body(0);
    done_.arrive_and_wait();
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  }

 private:
  void work(unsigned t) {
    for (;;) {
      start_.arrive_and_wait();  // the barrier orders stop_ and body_ written before it
      if (stop_) return;
      (*body_)(t);
      done_.arrive_and_wait();
    }
  }

  const unsigned size_;
  std::barrier<> start_, done_;
  const std::function<void(unsigned)>* body_ = nullptr;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// Anonymous memory: untouched until each thread first writes its own part.
class HostArray {
 public:
  explicit HostArray(uint64_t floats) : bytes_(floats * sizeof(float)) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    madvise(p, bytes_, MADV_HUGEPAGE);  // fewer TLB misses and page faults; a hint only
    data_ = static_cast<float*>(p);
  }
  ~HostArray() {
    if (data_) munmap(data_, bytes_);
  }
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
  float* data() const { return data_; }

 private:
  uint64_t bytes_;
  float* data_ = nullptr;
};

std::string fmt(const char* format, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string mib(uint64_t bytes) { return std::to_string(bytes / kMiB) + " MiB"; }

PeakResult failed(PeakResult r, const std::string& why) {
  r.value = 0;
  r.note = why;
  return r;
}

class HostMeter {
 public:
  HostMeter(const PeakOptions& options, const std::atomic<bool>& cancel, ThreadTeam& team)
      : options_(options),
        cancel_(cancel),
        team_(team),
        threads_(team.size()),
        simd_(cpu::widestSimd()),
        cpu_(cpu::hostInfo().cpu_model) {}

  PeakResult fma() {
    PeakResult r{"cpu_fp32_fma", "host CPU fp32 FMA (" + cpu_ + ")", "GFLOP/s"};
    const float mul = g_fma_mul, add = g_fma_add;
    std::vector<float> sums(threads_);
    uint64_t iterations = 1024;
    const auto run = [&] {
      return team_.run([&](unsigned t) { sums[t] = cpu::fmaLoop(simd_, iterations, mul, add); });
    };
    // Double the work until one run takes about host_target_ms.
    for (;;) {
      checkCancel();
      const double ns = run();
      if (ns >= options_.host_target_ms * 1e6 || iterations >= (1ull << 36)) break;
      iterations *= uint64_t(std::clamp(options_.host_target_ms * 1e6 / std::max(ns, 1.0), 2.0, 64.0));
    }
    const Stats stats = timed(run, options_.warmup_ms);
    for (float s : sums)
      if (!std::isfinite(s)) return failed(r, "the FMA chains did not stay finite");
    r.value = double(threads_) * double(iterations) * cpu::fmaFlopPerIteration(simd_) / stats.median;
    r.cv = stats.cv;
    r.runs = uint32_t(stats.count);
    r.note = cpu::simdName(simd_) + ", " + threadsText() + " x " + std::to_string(cpu::fmaChains(simd_)) +
             " chains of " + std::to_string(cpu::simdLanes(simd_)) + " floats, " + std::to_string(iterations) +
             " iterations, " + fmt("%.3g", stats.median / 1e6) + " ms per run";
    return r;
  }

  // STREAM triad and copy, the bytes counted as STREAM does: what the loop
  // reads and writes (triad 3 x 4 bytes per element, copy 2 x 4), no write-allocate.
  std::vector<PeakResult> stream() {
    PeakResult triad{"cpu_triad", "host CPU memory bandwidth: STREAM triad (" + cpu_ + ")", "GB/s"};
    PeakResult copy{"cpu_copy", "host CPU memory bandwidth: STREAM copy (" + cpu_ + ")", "GB/s"};
    const auto fail = [&](const std::string& why) { return std::vector{failed(triad, why), failed(copy, why)}; };
    std::string sizing;
    const uint64_t total = streamBytes(sizing);
    const uint64_t n = total / 3 / sizeof(float) / kLineFloats * kLineFloats;
    if (n < uint64_t(threads_) * kLineFloats) return fail("no room for the STREAM arrays: " + sizing);
    HostArray a(n), b(n), c(n);
    if (!a.data() || !b.data() || !c.data()) return fail("cannot map 3 x " + mib(n * sizeof(float)));
    // Each thread keeps to its own whole cache lines, and touches them first (their pages land near it).
    const auto begin = [&](unsigned t) { return n * t / threads_ / kLineFloats * kLineFloats; };
    const auto part = [&](unsigned t) { return begin(t + 1) - begin(t); };
    const float s = 0.5f;  // a settles at 2 / (1 - s) = 4: the values stay exact and finite
    team_.run([&](unsigned t) {
      std::fill_n(a.data() + begin(t), part(t), 1.0f);
      std::fill_n(b.data() + begin(t), part(t), 2.0f);
      std::fill_n(c.data() + begin(t), part(t), 0.0f);
    });
    const auto runCopy = [&] {
      return team_.run([&](unsigned t) { cpu::streamCopy(simd_, a.data() + begin(t), c.data() + begin(t), part(t)); });
    };
    const auto runTriad = [&] {
      return team_.run([&](unsigned t) {
        cpu::streamTriad(simd_, a.data() + begin(t), b.data() + begin(t), c.data() + begin(t), s, part(t));
      });
    };
    // As STREAM: the kernels in turn, once untimed, then timed runs.
    std::vector<double> copy_ns, triad_ns;
    const uint32_t rounds = 1 + options_.host_reps;
    for (uint32_t i = 0; i < rounds; ++i) {
      checkCancel();
      const double copy_time = runCopy();
      const double triad_time = runTriad();
      if (i == 0) continue;
      copy_ns.push_back(copy_time);
      triad_ns.push_back(triad_time);
    }
    // Every thread's part was written: sampled entries hold what the rounds leave there.
    float want_a = 1, want_c = 0;
    for (uint32_t i = 0; i < rounds; ++i) want_c = want_a, want_a = 2 + s * want_c;
    for (uint64_t k = 0; k <= 64; ++k) {
      const uint64_t at = std::min(n - 1, n / 64 * k);
      if (a.data()[at] != want_a || c.data()[at] != want_c)
        return fail("the STREAM kernels left a wrong value at element " + std::to_string(at));
    }
    const double bytes = double(n) * sizeof(float);
    const Stats tc = computeStats(copy_ns), tt = computeStats(triad_ns);
    copy.value = 2 * bytes / tc.median;
    copy.cv = tc.cv;
    copy.runs = uint32_t(tc.count);
    triad.value = 3 * bytes / tt.median;
    triad.cv = tt.cv;
    triad.runs = uint32_t(tt.count);
    const std::string how = cpu::simdName(simd_) + ", " + threadsText() + ", 3 arrays of " + mib(n * sizeof(float)) +
                            " (" + sizing + "), counted as STREAM does (";
    triad.note = how + "3 x 4 bytes per element, no write-allocate)";
    copy.note = how + "2 x 4 bytes per element, no write-allocate)";
    return {triad, copy};
  }

 private:
  void checkCancel() const {
    if (cancel_.load()) throw Cancelled{};
  }

  std::string threadsText() const { return std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads"); }

  // Median of host_reps timed runs after warming up (at least one run, and `warmup_ms`: clocks ramp up).
  template <class Run>
  Stats timed(const Run& run, double warmup_ms) {
    const auto start = Clock::now();
    do {
      checkCancel();
      run();
    } while (std::chrono::duration<double, std::milli>(Clock::now() - start).count() < warmup_ms);
    std::vector<double> ns;
    for (uint32_t i = 0; i < options_.host_reps; ++i) {
      checkCancel();
      ns.push_back(run());
    }
    return computeStats(ns);
  }

  // All three arrays together: at least 256 MiB and 8x the last-level caches,
  // so no array is served from a cache; within limits that keep it quick and safe.
  uint64_t streamBytes(std::string& why) const {
    if (options_.host_stream_bytes) {
      why = "as asked";
      return options_.host_stream_bytes;
    }
    const uint64_t llc = cpu::lastLevelCacheBytes();
    const uint64_t want = std::max(kMinStreamBytes, 8 * llc);
    uint64_t bytes = std::min(want, kMaxStreamBytes);
    std::string limit = want > kMaxStreamBytes ? "8x would pass the " + mib(kMaxStreamBytes) + " cap" : "";
    if (const uint64_t available = cpu::availableHostMemory(); available && bytes > available / 4) {
      bytes = available / 4;
      limit = "within a quarter of the " + mib(available) + " of available memory";
    }
    why = llc ? fmt("%.2g", double(bytes) / double(llc)) + "x the " + mib(llc) + " last-level cache"
              : "last-level cache size unknown";
    if (!limit.empty()) why += "; " + limit;
    return bytes;
  }

  const PeakOptions& options_;
  const std::atomic<bool>& cancel_;
  ThreadTeam& team_;
  const unsigned threads_;
  const cpu::Simd simd_;
  const std::string cpu_;
};

}  // namespace

Result<DevicePeaks> measureHostPeaks(const PeakOptions& options, const std::atomic<bool>& cancel,
                                     const std::function<void(const PeakResult&)>& each) {
  if (options.host_reps == 0) return makeError("host_reps must be at least 1");
  DevicePeaks peaks;
  peaks.measured_at = nowIso8601();
  const unsigned threads = options.host_threads ? options.host_threads : cpu::usableHardwareThreads();
  std::optional<ThreadTeam> team;
  try {
    team.emplace(threads);
  } catch (const std::system_error& e) {
    return makeError("cannot start " + std::to_string(threads) + " threads for the host CPU's peaks: " + e.what());
  }
  HostMeter meter(options, cancel, *team);
  auto add = [&](const PeakResult& r) {
    peaks.results.push_back(r);
    if (each) each(r);
  };
  try {
    add(meter.fma());
    for (const auto& r : meter.stream()) add(r);
  } catch (const Cancelled&) {
    return makeError("cancelled");
  }
  return peaks;
}

}  // namespace ks
