#pragma once
// The journal: a session written while it runs, one JSON line per record, each
// flushed to the disk before the run goes on, so a crash, kill -9 or power cut
// loses at most the point in flight. The same lines can travel elsewhere (a
// remote run's output, a result cache): a session is its header plus its lines.
//
//   line 1:  {"format":"kernelscope-journal","version":1,"session":HEADER}
//   then:    {"point":POINT}   one per finished point, in the order they finished
//            {"drift":DRIFT}   after each drift check: the checks so far (the last line counts)
//
// HEADER is the session file's top level without "points" and "drift" (what is
// known when the run starts: app, device and peaks, host, provenance, plan);
// POINT and DRIFT are exactly the session file's point and "drift" objects.
#include <nlohmann/json.hpp>
#include <string>

#include "engine/session/session.h"

namespace ks {

inline constexpr const char* kJournalFormat = "kernelscope-journal";
inline constexpr int kJournalVersion = 1;

class JournalWriter {
 public:
  // Creates `path` and writes the header line (the points and drift of `header`
  // are not written). Never replaces a file: an existing journal may be all that
  // is left of an earlier run.
  static Result<JournalWriter> create(const std::string& path, const Session& header);
  // Opens an existing journal to add lines to it (a result cache that grows
  // over many runs). A last line cut short by a crash is cut off first.
  static Result<JournalWriter> openForAppend(const std::string& path);

  JournalWriter(JournalWriter&& other) noexcept;
  JournalWriter& operator=(JournalWriter&& other) noexcept;
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  ~JournalWriter();  // closes the file and leaves it where it is

  // Each appends one line and returns once it is on the disk. After a failed
  // write (disk full) the file is cut back to its last whole line and every
  // later append fails with the same reason.
  Status append(const Measurement& point);
  Status append(const DriftReport& drift);

  const std::string& path() const { return path_; }

 private:
  JournalWriter(std::string path, int fd);
  Status appendLine(const std::string& line);

  std::string path_;
  int fd_ = -1;
  long long size_ = 0;  // bytes of whole lines written
  std::string failure_;
};

struct JournalContents {
  Session session;             // the header with every point and the last drift report
  size_t lines = 0;            // whole lines read, the header included
  size_t dropped_lines = 0;    // 0, or 1 when the last line was cut short
  std::string dropped_reason;  // why it was dropped, naming the line
};

// Reads journal text. Every point is checked as the session loader checks it;
// the last line may be cut short (it is dropped and counted); anything else
// that is not a journal line is refused with an error naming its line.
Result<JournalContents> journalFromText(const std::string& text);
// The same from a file; errors start with the path.
Result<JournalContents> loadJournal(const std::string& path);
// Whether the file starts with a journal header (commands that take a session
// or a journal tell them apart by this).
bool isJournalFile(const std::string& path);

// A journal read line by line as it arrives (a remote run's stream): the header
// line first, then point and drift lines, each checked as journalFromText
// checks it. Other one-key records ({"progress": ...}, {"end": ...}) are the
// stream's own and come back unread.
class JournalStream {
 public:
  struct Record {
    std::string kind;     // "header", "point", "drift" or the other record's key
    nlohmann::json body;  // the other record's value (point and drift are in session())
  };
  // One whole line, without its newline; errors name the line.
  Result<Record> feed(const std::string& line);
  bool started() const { return started_; }
  const Session& session() const { return session_; }
  Session& session() { return session_; }

 private:
  Session session_;
  bool started_ = false;
  size_t lines_ = 0;
};

}  // namespace ks
