#pragma once
// Writes that are on the disk when they return: after a crash, kill -9 or
// power cut the file holds what was written, not an empty or torn file.
#include <string>

#include "engine/result.h"

namespace ks {

// Writes all of `data` to `fd` (retrying short writes and EINTR) and flushes
// it to the disk (fdatasync). `path` names the file in the error.
Status writeAllAndSync(int fd, const std::string& data, const std::string& path);

// Flushes the directory holding `path`, so a file just created or renamed
// there is found after a power cut.
Status syncDirectoryOf(const std::string& path);

// The whole file, or why it cannot be read ("cannot open PATH: ...").
Result<std::string> readWholeFile(const std::string& path);

// Replaces `path` with `content` atomically and durably: a temporary file
// beside it, flushed, renamed over it, then the directory flushed.
Status writeFileDurably(const std::string& path, const std::string& content);

}  // namespace ks
