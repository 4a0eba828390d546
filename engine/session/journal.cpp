#include "engine/session/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/session/durable_file.h"
#include "engine/session/session_json.h"

namespace ks {

using nlohmann::json;

Result<JournalWriter> JournalWriter::create(const std::string& path, const Session& header) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return makeError(errno == EEXIST ? path + " already exists"
                                     : "cannot create " + path + ": " + std::strerror(errno));
  JournalWriter writer(path, fd);
  const json line = {
      {"format", kJournalFormat}, {"version", kJournalVersion}, {"session", sessionHeaderToJson(header)}};
  Status st = writer.appendLine(dumpJson(line, -1));
  if (st) st = syncDirectoryOf(path);  // the file itself must survive a power cut too
  if (!st) {
    writer = JournalWriter(std::string(), -1);  // close before removing
    ::unlink(path.c_str());
    return st.error();
  }
  return writer;
}

Result<JournalWriter> JournalWriter::openForAppend(const std::string& path) {
  auto text = readWholeFile(path);
  if (!text) return text.error();
  auto contents = journalFromText(*text);
  if (!contents) return makeError(path + ": " + contents.error().message);
  const size_t whole = text->rfind('\n') == std::string::npos ? 0 : text->rfind('\n') + 1;
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return makeError("cannot open " + path + ": " + std::strerror(errno));
  if (whole < text->size() && ::ftruncate(fd, static_cast<off_t>(whole)) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return makeError("cannot cut the torn last line off " + path + ": " + why);
  }
  JournalWriter writer(path, fd);
  writer.size_ = static_cast<long long>(whole);
  return writer;
}

JournalWriter::JournalWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

JournalWriter::JournalWriter(JournalWriter&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), size_(other.size_), failure_(std::move(other.failure_)) {
  other.fd_ = -1;
}

JournalWriter& JournalWriter::operator=(JournalWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    size_ = other.size_;
    failure_ = std::move(other.failure_);
    other.fd_ = -1;
  }
  return *this;
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status JournalWriter::append(const Measurement& point) {
  return appendLine(dumpJson(json{{"point", pointToJson(point)}}, -1));
}

Status JournalWriter::append(const DriftReport& drift) {
  return appendLine(dumpJson(json{{"drift", driftToJson(drift)}}, -1));
}

Status JournalWriter::appendLine(const std::string& line) {
  if (!failure_.empty()) return makeError(failure_);
  if (fd_ < 0) return makeError("the journal is closed");
  // One write of the whole line: a reader sees it whole or, cut by a crash, without its newline.
  const Status st = writeAllAndSync(fd_, line + '\n', path_);
  if (!st) {
    failure_ = st.error().message;
    // A torn line would glue onto the next one; cut the file back to its last whole line.
    if (::ftruncate(fd_, size_) != 0) failure_ += " (and the last line could not be cut off)";
    return makeError(failure_);
  }
  size_ += static_cast<long long>(line.size() + 1);
  return Ok{};
}

namespace {

Error lineError(size_t line, const std::string& what) {
  return makeError("line " + std::to_string(line) + ": " + what);
}

// The reason a parse failed, without nlohmann's "[json.exception.parse_error.101]" prefix.
std::string parseProblem(const json::parse_error& e) {
  std::string what = e.what();
  if (const auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
  return what;
}

// The header line: the session as it was when the run started.
Result<Session> parseHeaderLine(const std::string& line) {
  json header;
  try {
    header = json::parse(line);
  } catch (const json::parse_error& e) {
    return makeError("not a kernelscope journal (the first line is not a journal header: " + parseProblem(e) + ")");
  }
  if (!header.is_object() || !header.contains("format"))
    return makeError("not a kernelscope journal (the first line has no \"format\")");
  if (header["format"] != kJournalFormat)
    return makeError("not a kernelscope journal (format " + header["format"].dump() + ", expected \"" + kJournalFormat +
                     "\")");
  if (!header.contains("version") || !header["version"].is_number_integer())
    return makeError("version: missing or not an integer");
  if (const auto version = header["version"].get<int64_t>(); version != kJournalVersion)
    return makeError("version " + std::to_string(version) + " is not supported; this build reads version " +
                     std::to_string(kJournalVersion) +
                     (version > kJournalVersion ? " (written by a newer kernelscope)" : ""));
  if (!header.contains("session")) return makeError("session: missing");
  auto session = sessionHeaderFromJson(header["session"]);
  if (!session) return makeError("session: " + session.error().message);
  return session;
}

// A point or drift line, added to `session`; returns the record's name. With
// `others`, any other one-key object is returned unread (a stream's own records).
Result<std::string> applyRecord(Session& session, const json& record, bool others) {
  if (!record.is_object() || record.size() != 1)
    return makeError("not a journal line (expected {\"point\": ...} or {\"drift\": ...})");
  const std::string kind = record.begin().key();
  if (kind == "point") {
    auto point = pointFromJson(record["point"], session.plan, "point");
    if (!point) return point.error();
    session.points.push_back(std::move(*point));
  } else if (kind == "drift") {
    auto drift = driftFromJson(record["drift"], session.plan, session.device ? &*session.device : nullptr);
    if (!drift) return drift.error();
    session.drift = std::move(*drift);
  } else if (!others) {
    return makeError("unknown record \"" + kind + "\" (expected point or drift)");
  }
  return kind;
}

}  // namespace

Result<JournalStream::Record> JournalStream::feed(const std::string& line) {
  ++lines_;
  auto error = [&](const std::string& what) { return makeError("line " + std::to_string(lines_) + ": " + what); };
  if (!started_) {
    auto session = parseHeaderLine(line);
    if (!session) return error(session.error().message);
    session_ = std::move(*session);
    started_ = true;
    return Record{"header", json()};
  }
  json record;
  try {
    record = json::parse(line);
  } catch (const json::parse_error& e) {
    return error("not a journal line: " + parseProblem(e));
  }
  auto kind = applyRecord(session_, record, true);
  if (!kind) return error(kind.error().message);
  return Record{*kind, record[*kind]};
}

Result<JournalContents> journalFromText(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (lines.empty()) return makeError("empty: the run stopped before it wrote the journal's header");

  JournalContents out;
  // Only the last line can be in flight when a run dies: without its newline it
  // was cut short, and a power cut can leave it as unreadable bytes too.
  const bool last_unterminated = !text.empty() && text.back() != '\n';
  auto dropLast = [&](const std::string& why) {
    out.dropped_lines = 1;
    out.dropped_reason = "line " + std::to_string(lines.size()) + " " + why;
    lines.pop_back();
  };
  if (last_unterminated) {
    dropLast("has no end (the run stopped while writing it)");
  } else if (!json::accept(lines.back()) && lines.size() > 1) {
    dropLast("is not JSON (a write cut short)");
  }
  if (lines.empty())
    return makeError("line 1: the header is incomplete: the run stopped before the journal's header was written");

  auto session = parseHeaderLine(lines[0]);
  if (!session) return lineError(1, session.error().message);
  out.session = std::move(*session);

  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t number = i + 1;
    json record;
    try {
      record = json::parse(lines[i]);
    } catch (const json::parse_error& e) {
      return lineError(number, "not a journal line: " + parseProblem(e));
    }
    auto kind = applyRecord(out.session, record, false);
    if (!kind) return lineError(number, kind.error().message);
  }
  out.lines = lines.size();
  return out;
}

Result<JournalContents> loadJournal(const std::string& path) {
  auto text = readWholeFile(path);
  if (!text) return text.error();
  auto contents = journalFromText(*text);
  if (!contents) return makeError(path + ": " + contents.error().message);
  return contents;
}

bool isJournalFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string first;
  if (!in || !std::getline(in, first)) return false;
  const json header = json::parse(first, nullptr, false);
  return header.is_object() && header.contains("format") && header["format"] == kJournalFormat;
}

}  // namespace ks
