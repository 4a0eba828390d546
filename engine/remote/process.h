#pragma once
// A child process with pipes (POSIX fork/exec; the engine has no Qt): what the
// remote runner uses to drive the system's ssh client.
#include <sys/types.h>

#include <string>
#include <vector>

#include "engine/result.h"

namespace ks::remote {

class Process {
 public:
  struct Options {
    // Its own process group: Ctrl-C on the terminal reaches only us, and we
    // decide how the child stops (ssh would otherwise die with the connection).
    bool own_process_group = true;
    // A file to read as standard input instead of a pipe (empty: a pipe).
    std::string stdin_file;
  };
  // Starts argv[0] (looked up in PATH) with the environment of this process.
  static Result<Process> start(const std::vector<std::string>& argv, const Options& options);
  static Result<Process> start(const std::vector<std::string>& argv) { return start(argv, Options{}); }

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();  // kills and reaps a child still running

  // Writes all of `text` to its standard input (false once the pipe is gone).
  bool write(const std::string& text);
  void closeStdin();
  // Waits up to timeout_ms for output and reads what is there into the buffers
  // below; false once both stdout and stderr are closed.
  bool pump(int timeout_ms);
  // The next whole line of stdout (without its newline), if one is there.
  bool nextLine(std::string& line);
  // What stdout holds after its last newline (a line cut short), and stderr.
  const std::string& pendingStdout() const { return out_; }
  const std::string& stderrText() const { return err_; }
  // Reads until both streams close, then reaps: exit status, or 128 + signal.
  int wait();
  void kill(int signal);
  pid_t pid() const { return pid_; }

 private:
  Process() = default;
  pid_t pid_ = -1;
  int in_ = -1, out_fd_ = -1, err_fd_ = -1;
  std::string out_, err_;
  int status_ = -1;
};

// Runs argv to its end: exit status (128 + signal), stdout, stderr.
struct Finished {
  int status = -1;
  std::string out, err;
};
Result<Finished> runToEnd(const std::vector<std::string>& argv, const Process::Options& options = {});

}  // namespace ks::remote
