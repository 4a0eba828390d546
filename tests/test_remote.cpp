// run --remote and devices --remote against a real sshd on 127.0.0.1 (started
// here with a throw-away key on a free port, as the current user) and the real
// CLI bundle; the "server" runs on lavapipe like the local runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/remote/process.h"
#include "engine/remote/remote.h"
#include "engine/session/journal.h"
#include "engine/session/session.h"
#include "tests/ssh_server.h"

#ifndef KS_CLI_PATH
#error "KS_CLI_PATH must name the kernelscope-cli binary"
#endif

namespace {

using namespace ks::testing;

class Remote : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kSshd))
      GTEST_SKIP() << "sshd is not installed (Debian: openssh-server; scripts/test.sh installs it)";
    ASSERT_EQ(server().failure, "");
  }
  Finished cli(std::vector<std::string> args) {
    args.insert(args.begin(), KS_CLI_PATH);
    return mustRun(args);
  }
  fs::path path(const std::string& name) { return server().dir / name; }
};

// A small plan of several families, verified on both sides.
const std::vector<std::string> kPlan = {"--kernels",   "gemm.naive,gemm.tiled_shared,dot.two_pass_shared",
                                        "--sizes",     "64,128",
                                        "--reps",      "3",
                                        "--warmup",    "1",
                                        "--warmup-ms", "0"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(Remote, RunMatchesLocalRunPointForPoint) {
  const auto local = cli(with({"run", "-o", path("local.json").string(), "--quiet"}, kPlan));
  ASSERT_EQ(local.status, 0) << local.out << local.err;
  const auto remote = cli(with({"run", "--remote", server().target(), "-o", path("remote.json").string()}, kPlan));
  ASSERT_EQ(remote.status, 0) << remote.out << remote.err;
  EXPECT_NE(remote.out.find("device: llvmpipe"), std::string::npos) << remote.out;
  EXPECT_NE(remote.out.find("on " + server().target()), std::string::npos) << remote.out;
  EXPECT_FALSE(fs::exists(path("remote.json.partial")));

  auto a = ks::loadSession(path("local.json").string());
  auto b = ks::loadSession(path("remote.json").string());
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(b) << b.error().message;
  ASSERT_TRUE(b->remote);
  EXPECT_EQ(b->remote->target, server().target());
  EXPECT_NE(b->remote->cli.find("server-cache"), std::string::npos) << b->remote->cli;
  EXPECT_FALSE(a->remote);
  ASSERT_TRUE(a->device && b->device);
  EXPECT_EQ(a->device->name, b->device->name);
  EXPECT_EQ(a->plan.items.size(), 6u);
  ASSERT_EQ(a->points.size(), b->points.size());
  for (size_t i = 0; i < a->points.size(); ++i) {
    const auto& p = a->points[i];
    const auto& q = b->points[i];
    EXPECT_EQ(p.item.kernel, q.item.kernel) << i;
    EXPECT_EQ(p.item.size.str(), q.item.size.str()) << i;
    EXPECT_EQ(p.item.params.str(true), q.item.params.str(true)) << i;
    EXPECT_EQ(p.status, q.status) << i;
    EXPECT_EQ(p.status, ks::PointStatus::Ok) << i << " " << p.error;
    EXPECT_EQ(p.verification.status, q.verification.status) << i;
    EXPECT_EQ(p.verification.status, ks::VerifyStatus::Ok) << i;
    EXPECT_EQ(p.samples_ns.size(), q.samples_ns.size()) << i;
    EXPECT_EQ(p.shader_hash, q.shader_hash) << i;
  }
  ASSERT_TRUE(b->drift);
  EXPECT_GE(b->drift->checks.size(), 2u);
  // The session opens in show like a local one, and says where it ran.
  const auto show = cli({"show", path("remote.json").string()});
  EXPECT_EQ(show.status, 0) << show.err;
}

TEST_F(Remote, BundleIsCopiedOnceAndAMismatchedOneIsReplaced) {
  // A folder of this version and commit whose CLI says otherwise (a half-copied
  // or older bundle): it is replaced, then found again without a copy.
  const fs::path bundle = fs::path(server().remoteDir()) / (std::string(KS_VERSION) + "-" + KS_GIT_COMMIT);
  fs::remove_all(bundle);
  fs::create_directories(bundle);
  writeFile(bundle / "kernelscope-cli", "#!/bin/sh\necho 'kernelscope-cli 0.0.1 (0123456)'\n");
  fs::permissions(bundle / "kernelscope-cli", fs::perms::owner_all);
  const auto first = cli({"devices", "--remote", server().target()});
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("copying the kernelscope bundle"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("kernelscope-cli 0.0.1 (0123456)"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("llvmpipe"), std::string::npos) << first.out;
  EXPECT_EQ(readFile(bundle / "VERSION"), ks::remote::versionLine() + "\n");
  const auto second = cli({"devices", "--remote", server().target()});
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(second.out.find("copying"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("devices on " + server().target()), std::string::npos) << second.out;
}

TEST_F(Remote, DevicesAreListedAndPickedByIndex) {
  ks::remote::Setup setup = ks::remote::Setup::fromEnvironment();
  auto target = ks::remote::parseTarget(server().target());
  ASSERT_TRUE(target);
  auto list = ks::remote::listDevices(*target, setup);
  ASSERT_TRUE(list) << list.error().message;
  ASSERT_FALSE(list->devices.empty());
  EXPECT_GE(list->default_index, 0);
  EXPECT_NE(list->devices[0].name.find("llvmpipe"), std::string::npos);
  const auto bad = cli(with({"run", "--remote", server().target(), "--device", "no-such-gpu"},
                            {"--kernels", "gemm.naive", "--sizes", "64"}));
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("no-such-gpu"), std::string::npos) << bad.err;
  const auto picked = cli(with({"run", "--remote", server().target(), "--device", "0", "--quiet", "--no-drift-check"},
                               {"--kernels", "gemm.naive", "--sizes", "64", "--reps", "2"}));
  EXPECT_EQ(picked.status, 0) << picked.err;
}

TEST_F(Remote, BadTargetsGetClearMessages) {
  const auto unknown = cli({"devices", "--remote", "no-such-host.invalid"});
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.err.find("unknown host no-such-host.invalid"), std::string::npos) << unknown.err;
  const auto refused = cli({"devices", "--remote", "ks-wrong-key"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("ks-wrong-key refused the key"), std::string::npos) << refused.err;
  const auto no_port = cli({"devices", "--remote", "127.0.0.1:99999"});
  EXPECT_EQ(no_port.status, 2);
  EXPECT_NE(no_port.err.find("port must be a number from 1 to 65535"), std::string::npos) << no_port.err;
  // A server without a Vulkan driver: its own message, and no session. (Not in
  // strict validation: the loader reports the missing driver file as a layer message.)
  const std::string validation = std::getenv("KS_VALIDATION") ? std::getenv("KS_VALIDATION") : "";
  ::unsetenv("KS_VALIDATION");
  const auto no_vulkan = cli(with({"run", "--remote", "ks-no-vulkan", "-o", path("none.json").string()},
                                  {"--kernels", "gemm.naive", "--sizes", "64"}));
  if (!validation.empty()) ::setenv("KS_VALIDATION", validation.c_str(), 1);
  EXPECT_EQ(no_vulkan.status, 1);
  EXPECT_NE(no_vulkan.err.find("on ks-no-vulkan: "), std::string::npos) << no_vulkan.err;
  EXPECT_NE(no_vulkan.err.find("cannot create a Vulkan instance"), std::string::npos) << no_vulkan.err;
  EXPECT_FALSE(fs::exists(path("none.json")));
  EXPECT_FALSE(fs::exists(path("none.json.partial")));
  // A CLI path on the server that is not there.
  const auto no_cli = cli({"devices", "--remote", server().target(), "--remote-cli", "/nonexistent/kernelscope-cli"});
  EXPECT_EQ(no_cli.status, 1);
  EXPECT_NE(no_cli.err.find("--remote-cli /nonexistent/kernelscope-cli does not run on"), std::string::npos)
      << no_cli.err;
}

// A long sweep on the server, started in the background: stop it (signal) once
// `points` points are in its journal.
struct LongRun {
  fs::path out;
  std::optional<Process> process;
  LongRun(const fs::path& session, const std::string& target) : out(session) {
    process = Process::start({KS_CLI_PATH, "run", "--remote", target, "--kernels", "gemm.naive", "--sizes",
                              "64:1024:+32", "--reps", "5", "--warmup", "1", "--no-drift-check", "-o", out.string()})
                  .value();
  }
  size_t journaledPoints() {
    auto j = ks::loadJournal(out.string() + ".partial");
    return j ? j->session.points.size() : 0;
  }
  bool waitForPoints(size_t n) {
    for (int i = 0; i < 1200; ++i) {
      if (journaledPoints() >= n) return true;
      process->pump(100);
    }
    return false;
  }
};

TEST_F(Remote, CtrlCStopsTheServerAndKeepsTheFinishedPoints) {
  LongRun run(path("stopped.json"), server().target());
  ASSERT_TRUE(run.waitForPoints(2)) << run.process->pendingStdout() << run.process->stderrText();
  run.process->kill(SIGINT);
  const int status = run.process->wait();
  EXPECT_EQ(status, 130) << run.process->pendingStdout() << run.process->stderrText();
  auto s = ks::loadSession(run.out.string());
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_GE(s->points.size(), 2u);
  EXPECT_LT(s->points.size(), s->plan.items.size());
  // Every point finished but the one in flight, which says it was cancelled.
  for (size_t i = 0; i + 1 < s->points.size(); ++i) EXPECT_EQ(s->points[i].status, ks::PointStatus::Ok) << i;
  EXPECT_TRUE(s->points.back().status == ks::PointStatus::Ok || s->points.back().status == ks::PointStatus::Cancelled);
  EXPECT_FALSE(fs::exists(run.out.string() + ".partial"));
  EXPECT_NE(run.process->pendingStdout().find("interrupted"), std::string::npos) << run.process->pendingStdout();
  // The server's run stopped too (it was asked; not left running without us).
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = processesWith(server().remoteDir() + "/").empty();
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone);
}

TEST_F(Remote, AKilledServerProcessKeepsTheFinishedPointsAndSaysSo) {
  LongRun run(path("killed.json"), server().target());
  ASSERT_TRUE(run.waitForPoints(2)) << run.process->stderrText();
  // This test's server process (other tests may run their own at the same time).
  const auto remote =
      processesWith(server().remoteDir() + "/" + KS_VERSION "-" KS_GIT_COMMIT "/bin/kernelscope-cli run-stream");
  ASSERT_EQ(remote.size(), 1u);
  ::kill(remote[0], SIGKILL);
  const int status = run.process->wait();
  EXPECT_EQ(status, 1);
  const std::string err = run.process->stderrText();
  EXPECT_NE(err.find("was lost after"), std::string::npos) << err;
  EXPECT_NE(err.find("finished points are kept in " + run.out.string()), std::string::npos) << err;
  auto s = ks::loadSession(run.out.string());
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_GE(s->points.size(), 2u);
  EXPECT_LT(s->points.size(), s->plan.items.size());
  EXPECT_NE(s->notes.find("did not finish"), std::string::npos) << s->notes;
  EXPECT_FALSE(fs::exists(run.out.string() + ".partial"));
}

TEST_F(Remote, AKilledConnectionKeepsTheFinishedPointsAndStopsTheServer) {
  LongRun run(path("dropped.json"), server().target());
  ASSERT_TRUE(run.waitForPoints(2)) << run.process->stderrText();
  // The ssh client of this run (its parent is the CLI).
  pid_t ssh = -1;
  for (pid_t pid : processesWith("run-stream")) {
    const std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    std::istringstream fields(stat.substr(close + 2));
    std::string state;
    pid_t parent = 0;
    fields >> state >> parent;
    if (parent == run.process->pid()) ssh = pid;
  }
  ASSERT_GT(ssh, 0);
  ::kill(ssh, SIGKILL);
  EXPECT_EQ(run.process->wait(), 1);
  const std::string err = run.process->stderrText();
  EXPECT_NE(err.find("was lost after"), std::string::npos) << err;
  auto s = ks::loadSession(run.out.string());
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_GE(s->points.size(), 2u);
  EXPECT_NE(s->notes.find("did not finish"), std::string::npos);
  // Without its connection the server's run ends on its own (its stdin closed).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = processesWith(server().remoteDir() + "/").empty();
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone);
}

TEST_F(Remote, FleetRunsEveryHostAndComparesThem) {
  // Two names of the one server run at once; a host that refuses the key fails alone.
  writeFile(path("hosts.txt"), "# the lab\n" + server().target() + "\n127.0.0.1:" + std::to_string(server().port) +
                                   "   # the same machine\nks-wrong-key\n");
  const fs::path out = path("fleet");
  const auto f = cli(
      with({"fleet", "--hosts", path("hosts.txt").string(), "run", "-o", out.string(), "--quiet", "--no-drift-check"},
           {"--kernels", "gemm.naive,dot.two_pass_shared", "--sizes", "64,128", "--reps", "3"}));
  EXPECT_EQ(f.status, 1) << f.out << f.err;
  EXPECT_NE(f.err.find("ks-wrong-key: ks-wrong-key refused the key"), std::string::npos) << f.err;
  const std::string first = (out / (server().user + "@127.0.0.1_" + std::to_string(server().port) + ".json")).string();
  const std::string second = (out / ("127.0.0.1_" + std::to_string(server().port) + ".json")).string();
  for (const auto& file : {first, second}) {
    auto s = ks::loadSession(file);
    ASSERT_TRUE(s) << s.error().message << "\n" << f.out;
    EXPECT_EQ(s->points.size(), 4u);
    ASSERT_TRUE(s->remote);
    for (const auto& p : s->points) EXPECT_EQ(p.status, ks::PointStatus::Ok) << p.error;
  }
  const std::string comparison = readFile(out / "comparison.txt");
  EXPECT_NE(comparison.find("baseline: " + server().target()), std::string::npos) << comparison;
  EXPECT_NE(comparison.find("gemm.naive"), std::string::npos) << comparison;
  EXPECT_FALSE(fs::exists(out / "ks-wrong-key.json"));
}

TEST(RemoteTarget, ParsesUserHostAndPort) {
  auto t = ks::remote::parseTarget("alice@gpu1.lab:2222");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->destination, "alice@gpu1.lab");
  EXPECT_EQ(t->port, 2222u);
  auto v6 = ks::remote::parseTarget("[::1]:22");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->destination, "::1");
  EXPECT_EQ(v6->port, 22u);
  // An IPv6 address's colons are not a port.
  auto v6bare = ks::remote::parseTarget("bob@[fe80::1]");
  ASSERT_TRUE(v6bare) << v6bare.error().message;
  EXPECT_EQ(v6bare->destination, "bob@fe80::1");
  EXPECT_EQ(v6bare->port, 0u);
  EXPECT_FALSE(ks::remote::parseTarget("[::1]:"));
  auto plain = ks::remote::parseTarget("gpu1");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->port, 0u);
  EXPECT_FALSE(ks::remote::parseTarget("gpu1:"));
  EXPECT_FALSE(ks::remote::parseTarget("@gpu1"));
  EXPECT_FALSE(ks::remote::parseTarget("-oProxyCommand=x"));
  EXPECT_EQ(ks::remote::shellQuote("it's"), "'it'\\''s'");
}

}  // namespace
