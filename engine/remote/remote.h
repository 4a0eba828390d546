#pragma once
// Runs on a GPU server over SSH: the system's OpenSSH client (its config, keys
// and agent; BatchMode, so it never prompts and we never hold a password)
// starts the server's kernelscope-cli in its streaming mode and the points come
// back as journal lines (journal.h), one per finished point:
//
//   local -> server, stdin:  the session to run (plan, kernel files) as one JSON
//                            line; then "stop" (or the end of stdin: a lost
//                            connection) stops the run between dispatches
//   server -> local, stdout: the journal header (the server's device and host),
//                            {"point":...} and {"drift":...} lines, {"progress":
//                            {"done":N,"total":M}} and last {"end":{"interrupted":B}}
//
// The server needs sshd and a Vulkan driver; the CLI comes as the bundle
// (scripts/make-bundle.sh), copied to <remote dir>/<version>-<commit>/ when the
// server has no bundle of this exact version and commit.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/bench/runner.h"
#include "engine/result.h"
#include "engine/session/session.h"

namespace ks::remote {

struct Target {
  std::string text;         // as given: [user@]host[:port]
  std::string destination;  // for ssh: [user@]host
  unsigned port = 0;        // 0: ssh's default (or the user's config)
  std::string cli;          // --remote-cli: a kernelscope-cli on the server (empty: the bundle)
};
// "[user@]host[:port]"; an IPv6 address goes in brackets: [::1]:2222.
Result<Target> parseTarget(const std::string& text);

// How to reach the servers and what to copy there; the defaults come from the
// environment: KS_SSH (the ssh program), KS_SSH_CONFIG (an ssh config file, -F),
// KS_BUNDLE (the local bundle), KS_REMOTE_DIR (the bundles' folder on servers).
struct Setup {
  std::string ssh = "ssh";
  std::string ssh_config;
  std::string bundle_dir;  // empty: next to this binary if it is a bundle, else out/bundle of the source tree
  std::string remote_dir = "~/.cache/kernelscope/remote";
  std::function<void(const std::string&)> log;  // what it is doing ("copying the bundle ...")
  static Setup fromEnvironment();
};

// "kernelscope-cli VERSION (COMMIT)": what a matching CLI prints for --version.
std::string versionLine();
// The bundle to copy: checked to be this version and commit.
Result<std::string> findLocalBundle(const Setup& setup);

// The ssh command line that runs `remote_command` (a shell command) on the target.
std::vector<std::string> sshCommand(const Target& target, const Setup& setup, const std::string& remote_command);
// A clear message from what ssh wrote to stderr when it failed (exit status 255).
// Whether ssh itself failed (no connection, no login, connection lost), not the remote command.
bool sshFailed(int status, const std::string& ssh_stderr);
std::string describeSshFailure(const Target& target, const std::string& ssh_stderr);
std::string shellQuote(const std::string& word);

// Makes sure a kernelscope-cli of this version and commit runs on the server,
// copying the bundle when it has none (or an older one); returns the shell word
// that starts it there.
Result<std::string> prepareCli(const Target& target, const Setup& setup);

struct DeviceList {
  std::vector<vk::DeviceInfo> devices;
  int default_index = -1;
  std::string host_cpu;  // the server's CPU model
  std::string cli;       // the CLI that listed them
};
Result<DeviceList> listDevices(const Target& target, const Setup& setup);

struct RunOptions {
  std::string device;  // --device on the server (index or name)
  bool peaks = false;  // measure the server's peaks first
};

struct RunCallbacks {
  std::function<void(const Session& header)> started;  // the server's device and host are known
  std::function<void(const Measurement&)> point;
  std::function<void(const DriftReport&)> drift;
  std::function<void(size_t done, size_t total)> progress;
};

struct RunResult {
  // The header the server sent, the points and drift checks that arrived, and
  // remote (target, cli); notes say how an unfinished run ended.
  Session session;
  bool finished = false;     // the server sent its end: every point ran, or it stopped when asked
  bool interrupted = false;  // stopped on request (cancel) before the end of the plan
  std::string lost;          // non-empty: the connection or the server's CLI died; why
};

// Runs `plan` (its plan and kernel files) on the target; cancel stops it there.
// An error means nothing ran (no connection, no key, no device, bad bundle...);
// once the server has started, every point that arrived is in the result.
Result<RunResult> run(const Target& target, const Setup& setup, const Session& plan, const RunOptions& options,
                      const RunCallbacks& callbacks, const std::atomic<bool>& cancel);

}  // namespace ks::remote
