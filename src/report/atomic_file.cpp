// write_file_atomically: a temporary file, fsync, rename.
#include "crucible/report/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = fmt::format("{}.tmp-{}", path, getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    input_error(path, std::string("cannot write this file (check that --out is writable): ") +
                          std::strerror(errno));
  const char* p = content.data();
  size_t n = content.size();
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      input_error(path, std::string("write failed: ") + std::strerror(e));
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    input_error(path, std::string("write failed: ") + std::strerror(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    input_error(path, std::string("cannot replace this file: ") + std::strerror(e));
  }
}

}  // namespace crucible
