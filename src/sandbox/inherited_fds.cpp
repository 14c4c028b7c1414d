// The descriptors crucible's child processes keep (see inherited_fds.h).
#include "sandbox/inherited_fds.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <iterator>
#include <span>
#include <string_view>
#include <vector>

namespace crucible {
namespace {

bool g_keep = false;

// An open descriptor that a child keeps when keeping inherited ones: not close-on-exec, and a
// pipe, socket, device or anonymous inode (a checker's channel), never a file or folder.
bool inherited(int fd) {
  const int flags = fcntl(fd, F_GETFD);
  if (flags < 0 || (flags & FD_CLOEXEC) != 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0) return false;
  return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

// The open descriptors at or above `lo`, ascending.
std::vector<int> open_fds(int lo) {
  std::vector<int> open;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      char* end = nullptr;
      const long fd = std::strtol(e->d_name, &end, 10);
      if (end != e->d_name && *end == '\0' && fd >= lo && fd != dirfd(d))
        open.push_back(static_cast<int>(fd));
    }
    closedir(d);
  }
  std::sort(open.begin(), open.end());
  return open;
}

// Closes [lo, hi]: close_range, or one by one from /proc/self/fd on a kernel without it.
void close_span(int lo, int hi) {
  lo = std::max(lo, 3);
  if (lo > hi) return;
  if (syscall(SYS_close_range, static_cast<unsigned>(lo), static_cast<unsigned>(hi), 0u) == 0)
    return;
  for (int fd : open_fds(lo))
    if (fd <= hi) close(fd);
}

}  // namespace

void read_inherited_fds_choice() {
  const char* keep = std::getenv(kKeepInheritedFdsEnv);
  g_keep = keep != nullptr && *keep != '\0' && std::string_view(keep) != "0";
}

bool keeping_inherited_fds() { return g_keep; }

void close_fds_from(int lo, std::initializer_list<int> keep) {
  lo = std::max(lo, 3);
  if (g_keep) {
    for (int fd : open_fds(lo))
      if (std::find(keep.begin(), keep.end(), fd) == keep.end() && !inherited(fd)) close(fd);
    return;
  }
  // Without allocating: a child forked from a threaded process closes before anything else.
  int kept[8];
  const size_t n = std::min(keep.size(), std::size(kept));
  std::copy_n(keep.begin(), n, kept);
  std::sort(kept, kept + n);
  int from = lo;
  for (const int fd : std::span(kept, n)) {
    if (fd < from) continue;
    close_span(from, fd - 1);
    from = fd + 1;
  }
  close_span(from, INT_MAX);
}

int first_unkept_fd(int lo) {
  int fd = lo;
  while (g_keep && inherited(fd)) ++fd;
  return fd;
}

}  // namespace crucible
