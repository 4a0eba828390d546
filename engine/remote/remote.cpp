#include "engine/remote/remote.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/remote/process.h"
#include "engine/session/journal.h"
#include "engine/session/session_json.h"

#ifndef KS_SOURCE_DIR
#define KS_SOURCE_DIR "."
#endif

namespace ks::remote {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string envOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t start = 0;
  while (start < s.size() && (s[start] == '\n' || s[start] == ' ')) ++start;
  return s.substr(start);
}

std::string lastLine(const std::string& text) {
  std::string t = trim(text);
  const size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// What the server's CLI said, without its "kernelscope-cli: error: " prefixes.
std::string cliMessage(const std::string& err) {
  std::string out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("kernelscope-cli: error: ", 0) == 0) line = line.substr(24);
    if (!trim(line).empty()) out += (out.empty() ? "" : "\n") + line;
  }
  return out;
}

// A path on the server as a shell word: "~/x" becomes "$HOME"/'x'.
std::string remotePathWord(const std::string& path) {
  if (path == "~") return "\"$HOME\"";
  if (path.rfind("~/", 0) == 0) return "\"$HOME\"/" + shellQuote(path.substr(2));
  return shellQuote(path);
}

std::string bundleDirWord(const Setup& setup) {
  return remotePathWord(setup.remote_dir) + "/" + shellQuote(std::string(KS_VERSION) + "-" + KS_GIT_COMMIT);
}

// A POSIX shell script run by sh on the server, whatever the login shell is.
std::string shScript(const std::string& script) { return "sh -c " + shellQuote(script); }

std::string serverName(const Target& target) { return target.text; }

// Runs a script on the server; an ssh failure (status 255) becomes its message.
Result<Finished> runRemote(const Target& target, const Setup& setup, const std::string& script,
                           const std::string& stdin_file = {}) {
  Process::Options options;
  options.stdin_file = stdin_file;
  auto f = runToEnd(sshCommand(target, setup, shScript(script)), options);
  if (!f) return makeError("cannot run " + setup.ssh + ": " + f.error().message);
  if (f->status == 127 && f->err.find("cannot start " + setup.ssh) != std::string::npos)
    return makeError("cannot run " + setup.ssh + ": it is not installed (Debian: apt-get install openssh-client)");
  if (sshFailed(f->status, f->err)) return makeError(describeSshFailure(target, f->err));
  return f;
}

}  // namespace

std::string shellQuote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Result<Target> parseTarget(const std::string& text) {
  Target t;
  t.text = text;
  std::string rest = text;
  std::string user;
  if (const size_t at = rest.rfind('@'); at != std::string::npos) {
    user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (user.empty()) return makeError("remote target '" + text + "': no user before '@'");
  }
  std::string host = rest, port;
  if (!rest.empty() && rest[0] == '[') {
    const size_t close = rest.find(']');
    if (close == std::string::npos) return makeError("remote target '" + text + "': no ']' after the IPv6 address");
    host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') return makeError("remote target '" + text + "': expected ':port' after ']'");
      port = rest.substr(close + 2);
    }
  } else if (const size_t colon = rest.find(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) return makeError("remote target '" + text + "': no host (expected [user@]host[:port])");
  if (host[0] == '-') return makeError("remote target '" + text + "': a host cannot start with '-'");
  // A port was given ("host:" or "[v6]:" included); an IPv6 address's own colons are not one.
  const bool has_port =
      (!rest.empty() && rest[0] == '[') ? rest.find("]:") != std::string::npos : rest.find(':') != std::string::npos;
  if (has_port && (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
                   std::stoul(port) == 0 || std::stoul(port) > 65535))
    return makeError("remote target '" + text + "': the port must be a number from 1 to 65535");
  if (!port.empty()) t.port = unsigned(std::stoul(port));
  t.destination = (user.empty() ? "" : user + "@") + host;
  return t;
}

Setup Setup::fromEnvironment() {
  Setup s;
  s.ssh = envOr("KS_SSH", s.ssh);
  s.ssh_config = envOr("KS_SSH_CONFIG", "");
  s.bundle_dir = envOr("KS_BUNDLE", "");
  s.remote_dir = envOr("KS_REMOTE_DIR", s.remote_dir);
  return s;
}

std::string versionLine() { return std::string("kernelscope-cli ") + KS_VERSION + " (" + KS_GIT_COMMIT + ")"; }

Result<std::string> findLocalBundle(const Setup& setup) {
  std::vector<fs::path> candidates;
  if (!setup.bundle_dir.empty()) {
    candidates.push_back(setup.bundle_dir);
  } else {
    // This binary may itself be a bundle's (BUNDLE/bin/kernelscope-cli); else the source tree's out/bundle.
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && exe.parent_path().filename() == "bin") candidates.push_back(exe.parent_path().parent_path());
    candidates.push_back(fs::path(KS_SOURCE_DIR) / "out" / "bundle");
  }
  std::string tried;
  for (const auto& dir : candidates) {
    std::error_code ec;
    if (!fs::is_regular_file(dir / "kernelscope-cli", ec) || !fs::is_regular_file(dir / "VERSION", ec)) {
      tried += (tried.empty() ? "" : ", ") + dir.string();
      continue;
    }
    std::ifstream in(dir / "VERSION");
    std::string version;
    std::getline(in, version);
    if (trim(version) != versionLine())
      return makeError("the bundle in " + dir.string() + " is " + trim(version) + ", not " + versionLine() +
                       ": rebuild it (bash scripts/make-bundle.sh) so that the server runs what this build runs");
    return dir.string();
  }
  return makeError("no kernelscope bundle to copy to the server (looked in " + tried +
                   "): build one with bash scripts/make-bundle.sh, or point KS_BUNDLE at one");
}

std::vector<std::string> sshCommand(const Target& target, const Setup& setup, const std::string& remote_command) {
  std::vector<std::string> argv = {setup.ssh};
  if (!setup.ssh_config.empty()) argv.insert(argv.end(), {"-F", setup.ssh_config});
  // Never prompt (no password, no host-key question): fail with a message instead.
  argv.insert(argv.end(), {"-o", "BatchMode=yes", "-o", "ConnectTimeout=15", "-o", "ServerAliveInterval=15", "-o",
                           "ServerAliveCountMax=4", "-T"});
  if (target.port) argv.insert(argv.end(), {"-p", std::to_string(target.port)});
  argv.insert(argv.end(), {"--", target.destination, remote_command});
  return argv;
}

bool sshFailed(int status, const std::string& err) {
  // ssh exits 255 for its own failures and also when the remote command died of a
  // signal: only what ssh itself wrote says which.
  if (status != 255) return false;
  for (const char* sign : {"ssh: ", "Permission denied", "Host key verification failed", "Connection closed",
                           "closed by remote host", "Connection reset", "Broken pipe", "IDENTIFICATION HAS CHANGED",
                           "Connection timed out", "kex_exchange_identification"})
    if (err.find(sign) != std::string::npos) return true;
  return trim(err).empty();
}

std::string describeSshFailure(const Target& target, const std::string& err) {
  const std::string host = serverName(target);
  const std::string detail = lastLine(err);
  auto has = [&](const char* s) { return err.find(s) != std::string::npos; };
  if (has("Could not resolve hostname"))
    return "unknown host " + host + ": ssh cannot resolve its name (" + detail + ")";
  if (has("Permission denied"))
    return host +
           " refused the key: ssh could not log in with the keys it has (agent, ~/.ssh, IdentityFile); add "
           "your public key to the server's ~/.ssh/authorized_keys (kernelscope never asks for passwords) (" +
           detail + ")";
  if (has("Host key verification failed") || has("REMOTE HOST IDENTIFICATION HAS CHANGED"))
    return "the host key of " + host + " is not known or has changed: connect once with ssh " + target.destination +
           " to check and accept it (" + detail + ")";
  if (has("Connection refused")) return host + " refused the connection: is sshd running there? (" + detail + ")";
  if (has("timed out") || has("No route to host") || has("Network is unreachable"))
    return "cannot reach " + host + " (" + detail + ")";
  if (has("closed by remote host") || has("Broken pipe") || has("Connection reset"))
    return "the connection to " + host + " was lost (" + detail + ")";
  return "ssh to " + host + " failed" + (detail.empty() ? std::string() : ": " + detail);
}

Result<std::string> prepareCli(const Target& target, const Setup& setup) {
  const std::string host = serverName(target);
  if (!target.cli.empty()) {
    // The user's own CLI: it must speak this build's stream, so the version must match.
    const std::string word = remotePathWord(target.cli);
    auto probe = runRemote(target, setup, "exec " + word + " --version");
    if (!probe) return probe.error();
    if (probe->status != 0)
      return makeError(
          "--remote-cli " + target.cli + " does not run on " + host + ": " +
          (cliMessage(probe->err).empty() ? "exit status " + std::to_string(probe->status) : cliMessage(probe->err)));
    if (trim(probe->out) != versionLine())
      return makeError("--remote-cli " + target.cli + " on " + host + " is " + trim(probe->out) + ", this is " +
                       versionLine() + ": use the same version (leave out --remote-cli to copy this build's bundle)");
    return word;
  }
  const std::string dir = bundleDirWord(setup);
  const std::string cli = dir + "/kernelscope-cli";
  const std::string probe_script = "d=" + dir +
                                   "; if [ -x \"$d/kernelscope-cli\" ]; then exec \"$d/kernelscope-cli\" "
                                   "--version; else echo none; fi";
  auto probe = runRemote(target, setup, probe_script);
  if (!probe) return probe.error();
  if (probe->status == 0 && trim(probe->out) == versionLine()) return cli;
  auto bundle = findLocalBundle(setup);
  if (!bundle) return bundle.error();
  if (setup.log)
    setup.log(trim(probe->out) == "none"
                  ? "copying the kernelscope bundle to " + host + " (it has none of " + versionLine() + ")"
                  : "copying the kernelscope bundle to " + host + " (its bundle there says '" +
                        lastLine(probe->out + probe->err) + "', not " + versionLine() + ")");
  // One archive through the ssh connection (no sftp needed); unpacked beside the
  // final folder and moved in place, so an interrupted copy is never taken for a bundle.
  char archive[] = "/tmp/ks-bundle-XXXXXX";
  const int fd = mkstemp(archive);
  if (fd < 0) return makeError("cannot create a temporary file for the bundle");
  ::close(fd);
  struct Remove {
    const char* path;
    ~Remove() { std::remove(path); }
  } remove{archive};
  auto tar = runToEnd({"tar", "-C", *bundle, "-czf", archive, "."});
  if (!tar || tar->status != 0)
    return makeError("cannot pack the bundle " + *bundle + ": " + (tar ? trim(tar->err) : tar.error().message));
  const std::string copy_script = "set -e; d=" + dir +
                                  "; t=\"$d.tmp.$$\"; rm -rf \"$t\"; mkdir -p \"$t\"; tar -xzf - -C \"$t\"; "
                                  "rm -rf \"$d\"; mv \"$t\" \"$d\"";
  auto copied = runRemote(target, setup, copy_script, archive);
  if (!copied) return copied.error();
  if (copied->status != 0)
    return makeError("cannot copy the bundle to " + host + ": " + lastLine(copied->err + copied->out));
  auto check = runRemote(target, setup, probe_script);
  if (!check) return check.error();
  if (check->status != 0 || trim(check->out) != versionLine())
    return makeError("the bundle copied to " + host + " does not run there: " +
                     lastLine(check->err + check->out + " (exit status " + std::to_string(check->status) + ")"));
  return cli;
}

Result<DeviceList> listDevices(const Target& target, const Setup& setup) {
  auto cli = prepareCli(target, setup);
  if (!cli) return cli.error();
  auto f = runRemote(target, setup, "exec " + *cli + " devices --json");
  if (!f) return f.error();
  if (f->status != 0) return makeError("on " + target.text + ": " + cliMessage(f->err));
  DeviceList list;
  list.cli = *cli;
  const json j = json::parse(f->out, nullptr, false);
  if (!j.is_object() || !j.contains("devices") || !j["devices"].is_array())
    return makeError("on " + target.text + ": devices --json did not print a device list");
  for (size_t i = 0; i < j["devices"].size(); ++i) {
    auto d = deviceInfoFromJson(j["devices"][i], "devices[" + std::to_string(i) + "]");
    if (!d) return makeError("on " + target.text + ": " + d.error().message);
    list.devices.push_back(*d);
  }
  if (j.contains("default") && j["default"].is_number_integer()) list.default_index = j["default"].get<int>();
  if (j.contains("host_cpu") && j["host_cpu"].is_string()) list.host_cpu = j["host_cpu"].get<std::string>();
  return list;
}

Result<RunResult> run(const Target& target, const Setup& setup, const Session& plan, const RunOptions& options,
                      const RunCallbacks& callbacks, const std::atomic<bool>& cancel) {
  auto cli = prepareCli(target, setup);
  if (!cli) return cli.error();
  std::string command = "exec " + *cli + " run-stream";
  if (!options.device.empty()) command += " --device " + shellQuote(options.device);
  if (options.peaks) command += " --peaks";
  // Validation follows the run to the server, as it follows a local one.
  if (const char* v = std::getenv("KS_VALIDATION"); v && *v) command = "KS_VALIDATION=" + shellQuote(v) + " " + command;
  auto started = Process::start(sshCommand(target, setup, shScript(command)));
  if (!started) return makeError("cannot run " + setup.ssh + ": " + started.error().message);
  Process& ssh = *started;

  json request = sessionHeaderToJson(plan);
  request["points"] = json::array();
  ssh.write(dumpJson(request, -1) + "\n");

  RunResult result;
  JournalStream stream;
  std::string protocol_error;
  bool stop_sent = false;
  auto stop_deadline = std::chrono::steady_clock::time_point::max();
  for (bool open = true; open;) {
    if (cancel.load() && !stop_sent) {
      ssh.write("stop\n");  // the server stops between dispatches and sends its end
      stop_sent = true;
      stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    }
    if (std::chrono::steady_clock::now() > stop_deadline) {
      result.lost = "the server did not stop within 60 s of being asked; the connection was closed";
      ssh.kill(SIGTERM);
      stop_deadline = std::chrono::steady_clock::time_point::max();
    }
    open = ssh.pump(100);
    std::string line;
    while (protocol_error.empty() && ssh.nextLine(line)) {
      auto record = stream.feed(line);
      if (!record) {
        protocol_error = stream.started()
                             ? "the server sent a line that is not a journal line: " + record.error().message
                             : "the server's kernelscope-cli did not start a stream: " + line;
        ssh.kill(SIGTERM);
        break;
      }
      const std::string& kind = record->kind;
      Session& s = stream.session();
      if (kind == "header") {
        s.remote = RemoteOrigin{target.text, *cli};
        if (callbacks.started) callbacks.started(s);
      } else if (kind == "point") {
        if (callbacks.point) callbacks.point(s.points.back());
      } else if (kind == "drift") {
        if (callbacks.drift) callbacks.drift(*s.drift);
      } else if (kind == "progress") {
        if (callbacks.progress && record->body.is_object())
          callbacks.progress(record->body.value("done", size_t(0)), record->body.value("total", size_t(0)));
      } else if (kind == "end") {
        result.finished = true;
        result.interrupted = record->body.is_object() && record->body.value("interrupted", false);
      }
    }
  }
  const int status = ssh.wait();
  if (!stream.started()) {
    if (!protocol_error.empty()) return makeError(protocol_error);
    if (sshFailed(status, ssh.stderrText())) return makeError(describeSshFailure(target, ssh.stderrText()));
    const std::string said = cliMessage(ssh.stderrText());
    return makeError(
        "on " + target.text + ": " +
        (said.empty() ? "kernelscope-cli ended with status " + std::to_string(status) + " before it ran" : said));
  }
  result.session = std::move(stream.session());
  if (!protocol_error.empty()) {
    result.lost = protocol_error;
  } else if (!result.finished && result.lost.empty()) {
    const bool ssh_failed = sshFailed(status, ssh.stderrText());
    std::string why = ssh_failed      ? describeSshFailure(target, ssh.stderrText())
                      : status == 255 ? "the server's kernelscope-cli was killed"
                      : status >= 128 ? "ssh was ended by signal " + std::to_string(status - 128)
                                      : "the server's kernelscope-cli ended with status " + std::to_string(status);
    if (const std::string said = cliMessage(ssh.stderrText()); !ssh_failed && !said.empty())
      why += ": " + lastLine(said);
    result.lost = "the connection to " + target.text + " was lost after " +
                  std::to_string(result.session.points.size()) + " of " +
                  std::to_string(result.session.plan.items.size()) + " points (" + why + ")";
  }
  if (!result.lost.empty()) {
    Session& s = result.session;
    s.notes += (s.notes.empty() ? "" : "\n") + std::string("Remote run on ") + target.text +
               " did not finish: " + result.lost + "; the finished points are kept.";
  }
  return result;
}

}  // namespace ks::remote
