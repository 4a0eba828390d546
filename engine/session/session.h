#pragma once
// The session file: everything a run produced, as JSON (format version 1).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/bench/peaks.h"
#include "engine/bench/runner.h"
#include "engine/cpu/cpu_info.h"
#include "engine/tune/tune_record.h"
#include "engine/vulkan/context.h"

namespace ks {

inline constexpr const char* kSessionFormat = "kernelscope-session";
inline constexpr int kSessionVersion = 1;

// A kernel file as a session measured it: sessions embed the whole text so
// that they show and re-run exactly that kernel on another machine.
struct EmbeddedKernel {
  std::string id;
  std::string path;    // where it was read from when measured
  std::string source;  // the whole file, manifest included
  bool operator==(const EmbeddedKernel&) const = default;
};

// Where a session was measured when it ran on a server over SSH (run --remote).
struct RemoteOrigin {
  std::string target;  // as given: [user@]host[:port]
  std::string cli;     // the kernelscope-cli that ran there
  bool operator==(const RemoteOrigin&) const = default;
};

struct Session {
  std::string app_version = KS_VERSION;
  std::string app_commit = KS_GIT_COMMIT;
  std::string created;                   // ISO 8601 UTC
  std::optional<vk::DeviceInfo> device;  // absent for CPU-only sessions
  // Measured on `device` and the host CPU (stored in the device's record); a
  // session without a device keeps the host CPU's alone (top-level "peaks").
  std::optional<DevicePeaks> peaks;
  cpu::HostInfo host;
  // What else a result depends on: the shader compiler and the environment
  // variables that change what OpenBLAS, Mesa/lavapipe or the Vulkan loader do.
  std::string glslang_version;
  std::map<std::string, std::string> environment;
  Plan plan;
  std::vector<Measurement> points;
  // The drift checks of the sweep; absent when it was not checked (older files,
  // plan.drift_check off). On load, max_change and unstable are recomputed
  // from the stored checks, and a file that disagrees with them is refused.
  std::optional<DriftReport> drift;
  std::string notes;
  // The kernel files of the plan's kernels (see embedKernelFiles).
  std::vector<EmbeddedKernel> kernel_files;
  // A tune's search and verdict (tune_record.h); its evaluations are the points.
  std::optional<TuneRecord> tune;
  // Set when the points were measured on a server (the device is the server's).
  std::optional<RemoteOrigin> remote;
};

std::string nowIso8601();

// A new session stamped with everything it depends on (time, compiler, environment).
Session newSession();
// OPENBLAS_*, MESA_*, LP_*, GALLIUM_*, VK_* and GOMP/OMP thread settings.
std::map<std::string, std::string> relevantEnvironment();

// Adds the kernel files of the plan's user kernels that are not embedded yet,
// from the registry as they are now: call it when a sweep starts, so that an
// edit made later does not change what the session says it measured.
void embedKernelFiles(Session& session);
// session.kernel_files and those embedKernelFiles would add: what a file gets.
std::vector<EmbeddedKernel> kernelFilesOf(const Session& session);

std::string sessionToJson(const Session& session);
// Validates everything; the error names the field that cannot be trusted.
Result<Session> sessionFromJson(const std::string& text);

Status saveSession(const Session& session, const std::string& path);  // atomic and flushed: temp + fsync + rename
Result<Session> loadSession(const std::string& path);

}  // namespace ks
