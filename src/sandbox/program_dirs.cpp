// Finding programs and the folders they live in, for the execute rights of the sandboxes: the
// compile sandbox (a compiler under /opt) and a Python kernel's process (Triton's C compiler).
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "sandbox/sandbox.h"

namespace crucible {

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    const std::string p = dir + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::string program_prefix(const std::string& exe) {
  const std::string path = exe.find('/') == std::string::npos ? find_on_path(exe) : exe;
  if (path.empty()) return "";
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec) return "";
  for (const std::string& d : system_toolchain_dirs())
    if (real.string().starts_with(d + "/")) return "";
  std::filesystem::path prefix = real.parent_path();
  if (prefix.filename() == "bin") prefix = prefix.parent_path();
  return prefix.string();
}

}  // namespace crucible
