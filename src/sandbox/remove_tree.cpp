#include "sandbox/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace crucible {
namespace {

std::string failure(const std::string& path, int err) { return path + ": " + std::strerror(err); }

// Empties the folder open as `fd` (owned here), named `path` in messages.
std::string empty_folder(int fd, const std::string& path, int depth) {
  if (depth > 4096) {
    close(fd);
    return path + ": nested too deep";
  }
  DIR* dir = fdopendir(fd);
  if (!dir) {
    int err = errno;
    close(fd);
    return failure(path, err);
  }
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = readdir(dir)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
    errno = 0;
  }
  std::string first;
  if (errno != 0) first = failure(path, errno);
  const int dfd = dirfd(dir);
  for (const std::string& name : names) {
    const std::string child = path + "/" + name;
    if (unlinkat(dfd, name.c_str(), 0) == 0 || errno == ENOENT) continue;
    if (errno != EISDIR && errno != EPERM) {
      if (first.empty()) first = failure(child, errno);
      continue;
    }
    int cfd = openat(dfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cfd < 0 && errno == EACCES && fchmodat(dfd, name.c_str(), 0700, 0) == 0)
      cfd = openat(dfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cfd < 0) {
      if (first.empty()) first = failure(child, errno);
      continue;
    }
    // A folder that cannot be written cannot be emptied: open it up first.
    struct stat st {};
    if (fstat(cfd, &st) == 0 && (st.st_mode & 0700) != 0700) fchmod(cfd, st.st_mode | 0700);
    std::string why = empty_folder(cfd, child, depth + 1);
    if (why.empty() && unlinkat(dfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
      why = failure(child, errno);
    if (first.empty()) first = why;
  }
  closedir(dir);
  return first;
}

}  // namespace

std::string remove_tree(const std::string& path) {
  if (path.empty()) return "";
  if (unlink(path.c_str()) == 0 || errno == ENOENT) return "";
  if (errno != EISDIR && errno != EPERM) return failure(path, errno);
  int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return failure(path, errno);
  std::string why = empty_folder(fd, path, 0);
  if (why.empty() && rmdir(path.c_str()) != 0 && errno != ENOENT) why = failure(path, errno);
  return why;
}

}  // namespace crucible
