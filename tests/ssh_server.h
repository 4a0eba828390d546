#pragma once
// A real sshd on 127.0.0.1 for the remote tests, started by the test program as
// the current user (a throw-away host key and client key, a free port), the
// ssh client's config for it (KS_SSH_CONFIG), and this build's CLI bundle made
// by scripts/make-bundle.sh (KS_BUNDLE). The "server" keeps its bundles in a
// temporary folder (KS_REMOTE_DIR), never in the user's ~/.cache.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/remote/process.h"

#ifndef KS_CLI_PATH
#error "KS_CLI_PATH must name the kernelscope-cli binary"
#endif
#ifndef KS_SOURCE_DIR
#error "KS_SOURCE_DIR must name the source tree (scripts/make-bundle.sh)"
#endif

namespace ks::testing {

namespace fs = std::filesystem;
using ks::remote::Finished;
using ks::remote::Process;

inline const char* kSshd = "/usr/sbin/sshd";

inline std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void writeFile(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

inline Finished mustRun(const std::vector<std::string>& argv) {
  auto f = ks::remote::runToEnd(argv);
  if (!f) throw std::runtime_error(f.error().message);
  return *f;
}

inline unsigned freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

inline bool portOpen(unsigned port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// The pids of processes whose command line contains `needle`.
inline std::vector<pid_t> processesWith(const std::string& needle) {
  std::vector<pid_t> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = readFile(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos && std::stoi(name) != ::getpid()) pids.push_back(std::stoi(name));
  }
  return pids;
}

// One sshd for the whole program, with the client's config, keys and the bundle.
struct Server {
  fs::path dir;
  unsigned port = 0;
  std::string user;
  std::optional<Process> sshd;
  std::string failure;

  Server() {
    std::string tmpl = (fs::temp_directory_path() / "ks_test_remote_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    dir = tmpl;
    user = getpwuid(getuid())->pw_name;
    if (!fs::exists(kSshd)) return;
    try {
      start();
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  ~Server() {
    if (sshd) sshd->kill(SIGTERM), sshd->wait();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  void keygen(const std::string& name) {
    const auto f =
        mustRun({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ks-test", "-f", (dir / name).string()});
    if (f.status != 0) throw std::runtime_error("ssh-keygen: " + f.err);
  }

  void start() {
    keygen("host_key");
    keygen("id_good");
    keygen("id_other");  // never authorized: the refused key
    fs::copy_file(dir / "id_good.pub", dir / "authorized_keys");
    port = freePort();
    // sshd wants its privilege separation folder even when it runs as us.
    ::mkdir("/run/sshd", 0755);
    writeFile(dir / "sshd_config", "Port " + std::to_string(port) + "\nListenAddress 127.0.0.1\nHostKey " +
                                       (dir / "host_key").string() + "\nAuthorizedKeysFile " +
                                       (dir / "authorized_keys").string() + "\nPidFile " + (dir / "sshd.pid").string() +
                                       "\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
                                       "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
                                       "PermitRootLogin prohibit-password\nAcceptEnv VK_DRIVER_FILES\n");
    sshd = Process::start({kSshd, "-D", "-e", "-f", (dir / "sshd_config").string()}).value();
    for (int i = 0; i < 100 && !portOpen(port); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!portOpen(port)) {
      sshd->kill(SIGTERM);
      sshd->wait();
      throw std::runtime_error("sshd did not start: " + sshd->stderrText());
    }
    writeFile(dir / "known_hosts", "[127.0.0.1]:" + std::to_string(port) + " " + readFile(dir / "host_key.pub"));
    const std::string common = "  HostName 127.0.0.1\n  Port " + std::to_string(port) + "\n  UserKnownHostsFile " +
                               (dir / "known_hosts").string() +
                               "\n  StrictHostKeyChecking yes\n  IdentitiesOnly yes\n  IdentityAgent none\n";
    writeFile(dir / "ssh_config", "Host 127.0.0.1\n" + common + "  IdentityFile " + (dir / "id_good").string() +
                                      "\nHost ks-wrong-key\n" + common + "  IdentityFile " +
                                      (dir / "id_other").string() + "\nHost ks-no-vulkan\n" + common +
                                      "  IdentityFile " + (dir / "id_good").string() +
                                      "\n  SetEnv VK_DRIVER_FILES=/nonexistent/no_icd.json\n");
    // The bundle of this build, made by the real script.
    const fs::path source = KS_SOURCE_DIR;
    ::setenv("KS_BUNDLE_BINARY", KS_CLI_PATH, 1);
    const auto bundle = mustRun({"bash", (source / "scripts/make-bundle.sh").string(), (dir / "bundle").string()});
    ::unsetenv("KS_BUNDLE_BINARY");
    if (bundle.status != 0) throw std::runtime_error("make-bundle.sh: " + bundle.out + bundle.err);
    ::setenv("KS_SSH_CONFIG", (dir / "ssh_config").string().c_str(), 1);
    ::setenv("KS_BUNDLE", (dir / "bundle").string().c_str(), 1);
    ::setenv("KS_REMOTE_DIR", remoteDir().c_str(), 1);
  }

  // Where the "server" keeps its bundles (not the user's ~/.cache).
  std::string remoteDir() const { return (dir / "server-cache").string(); }
  std::string target() const { return user + "@127.0.0.1:" + std::to_string(port); }
};

inline Server& server() {
  static Server s;
  return s;
}

}  // namespace ks::testing
