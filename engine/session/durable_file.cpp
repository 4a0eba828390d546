#include "engine/session/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ks {

Status writeAllAndSync(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return makeError("cannot write " + path + ": " + std::strerror(n < 0 ? errno : EIO));
    done += size_t(n);
  }
  while (::fdatasync(fd) != 0)
    if (errno != EINTR) return makeError("cannot flush " + path + " to the disk: " + std::strerror(errno));
  return Ok{};
}

Status syncDirectoryOf(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return makeError("cannot open folder " + dir.string() + ": " + std::strerror(errno));
  int rc;
  while ((rc = ::fsync(fd)) != 0 && errno == EINTR) {
  }
  const int err = errno;
  ::close(fd);
  // Some file systems cannot flush a folder (EINVAL); the file itself is flushed.
  if (rc != 0 && err != EINVAL) return makeError("cannot flush folder " + dir.string() + ": " + std::strerror(err));
  return Ok{};
}

Status writeFileDurably(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return makeError("cannot write " + path + ": " + std::strerror(errno));
  Status written = writeAllAndSync(fd, content, path);
  if (::close(fd) != 0 && written) written = makeError("cannot write " + path + ": " + std::strerror(errno));
  if (!written) {
    std::remove(tmp.c_str());
    return written;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return makeError("cannot replace " + path + ": " + why);
  }
  return syncDirectoryOf(path);
}

Result<std::string> readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError("cannot open " + path + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ks
