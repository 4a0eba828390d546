#include "engine/remote/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

namespace ks::remote {

namespace {

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

int decodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

Result<Process> Process::start(const std::vector<std::string>& argv, const Options& options) {
  if (argv.empty()) return makeError("no command to start");
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  int stdin_file = -1;
  auto closeAll = [&] {
    for (int* p : {in, out, err})
      for (int i = 0; i < 2; ++i) closeFd(p[i]);
    closeFd(stdin_file);
  };
  if (!options.stdin_file.empty()) {
    stdin_file = ::open(options.stdin_file.c_str(), O_RDONLY | O_CLOEXEC);
    if (stdin_file < 0) return makeError("cannot read " + options.stdin_file + ": " + std::strerror(errno));
  } else if (::pipe2(in, O_CLOEXEC) != 0) {
    closeAll();
    return makeError(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    closeAll();
    return makeError(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) {
    closeAll();
    return makeError(std::string("cannot start ") + argv[0] + ": " + std::strerror(errno));
  }
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec.
    if (options.own_process_group) ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(stdin_file >= 0 ? stdin_file : in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execvp(args[0], args.data());
    const char* prefix = "cannot start ";
    (void)!::write(2, prefix, std::strlen(prefix));
    (void)!::write(2, args[0], std::strlen(args[0]));
    const char* why = ": not found or not executable\n";
    (void)!::write(2, why, std::strlen(why));
    ::_exit(127);
  }
  Process p;
  p.pid_ = pid;
  closeFd(stdin_file);
  closeFd(in[0]);
  closeFd(out[1]);
  closeFd(err[1]);
  p.in_ = in[1];
  p.out_fd_ = out[0];
  p.err_fd_ = err[0];
  return p;
}

Process::Process(Process&& o) noexcept { *this = std::move(o); }

Process& Process::operator=(Process&& o) noexcept {
  if (this == &o) return *this;
  pid_ = std::exchange(o.pid_, -1);
  in_ = std::exchange(o.in_, -1);
  out_fd_ = std::exchange(o.out_fd_, -1);
  err_fd_ = std::exchange(o.err_fd_, -1);
  out_ = std::move(o.out_);
  err_ = std::move(o.err_);
  status_ = o.status_;
  return *this;
}

Process::~Process() {
  closeFd(in_);
  closeFd(out_fd_);
  closeFd(err_fd_);
  if (pid_ > 0 && status_ < 0) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
}

bool Process::write(const std::string& text) {
  // The child may be gone: a write must fail with EPIPE, not kill us. Ignored for
  // good (not around each write): several threads may write (a fleet's hosts).
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { ::signal(SIGPIPE, SIG_IGN); });
  size_t done = 0;
  while (in_ >= 0 && done < text.size()) {
    const ssize_t n = ::write(in_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += size_t(n);
  }
  return done == text.size();
}

void Process::closeStdin() { closeFd(in_); }

bool Process::pump(int timeout_ms) {
  pollfd fds[2];
  int n = 0;
  if (out_fd_ >= 0) fds[n++] = {out_fd_, POLLIN, 0};
  if (err_fd_ >= 0) fds[n++] = {err_fd_, POLLIN, 0};
  if (n == 0) return false;
  const int ready = ::poll(fds, nfds_t(n), timeout_ms);
  if (ready <= 0) return true;  // a timeout, or a signal (Ctrl-C): the caller looks at its flags
  for (int i = 0; i < n; ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[65536];
    const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    const bool is_out = fds[i].fd == out_fd_;
    if (got <= 0) {
      closeFd(is_out ? out_fd_ : err_fd_);
      continue;
    }
    (is_out ? out_ : err_).append(buf, size_t(got));
  }
  return out_fd_ >= 0 || err_fd_ >= 0;
}

bool Process::nextLine(std::string& line) {
  const size_t nl = out_.find('\n');
  if (nl == std::string::npos) return false;
  line = out_.substr(0, nl);
  out_.erase(0, nl + 1);
  return true;
}

int Process::wait() {
  while (pump(1000)) {
  }
  closeFd(in_);
  if (status_ < 0 && pid_ > 0) {
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    status_ = decodeStatus(st);
  }
  return status_;
}

void Process::kill(int signal) {
  if (pid_ > 0 && status_ < 0) ::kill(pid_, signal);
}

Result<Finished> runToEnd(const std::vector<std::string>& argv, const Process::Options& options) {
  auto p = Process::start(argv, options);
  if (!p) return p.error();
  p->closeStdin();
  Finished f;
  f.status = p->wait();
  f.out = p->pendingStdout();
  f.err = p->stderrText();
  return f;
}

}  // namespace ks::remote
