// Loading libcrucible_aten.so (src/backends/aten_module.h).
#include "backends/aten_module.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

#include "crucible/core/error.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;

// Where the library may be, in order (beside the program, installed, in the build tree).
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back((exe.parent_path() / "libcrucible_aten.so").string());
    out.push_back((exe.parent_path() / CRUCIBLE_ATEN_INSTALL_RELATIVE).lexically_normal().string());
  }
  out.push_back(CRUCIBLE_ATEN_BUILD_PATH);
  return out;
}

struct Loaded {
  const AtenModule* module;
  std::string path;
};

Loaded load() {
  const char* env = std::getenv("CRUCIBLE_ATEN_LIBRARY");
  const bool named = env && *env;
  const std::vector<std::string> paths = named ? std::vector<std::string>{env} : candidates();
  std::string looked;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      looked += (looked.empty() ? "" : ", ") + p;
      continue;
    }
    // RTLD_LOCAL: libtorch's symbols stay out of the global scope, where a Python extension or a
    // kernel library could otherwise bind to them.
    void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();
      usage_error("the aten backend's library " + p +
                  " does not load: " + (why ? why : "(no reason given)") +
                  ". Is libtorch installed where it was when crucible was built? "
                  "(scripts/install-deps.sh installs Debian's libtorch-dev)");
    }
    using Entry = const AtenModule* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(h, "crucible_aten_module"));
    if (!entry)
      usage_error("the aten backend's library " + p +
                  " has no crucible_aten_module entry point: it is not crucible's aten library");
    const AtenModule* m = entry();
    if (!m || std::string(m->build) != CRUCIBLE_ATEN_MODULE_BUILD)
      usage_error("the aten backend's library " + p + " was built with another crucible (" +
                  (m ? m->build : "?") + "; this program is " CRUCIBLE_ATEN_MODULE_BUILD +
                  "); rebuild both, or set CRUCIBLE_ATEN_LIBRARY to this build's library");
    return {m, p};
  }
  if (named)
    usage_error(std::string("CRUCIBLE_ATEN_LIBRARY names the aten backend's library ") + env +
                ", which does not exist; point it at libcrucible_aten.so, or unset it to use the "
                "one installed with crucible");
  usage_error("the aten backend's library libcrucible_aten.so was not found (looked at: " + looked +
              "); set CRUCIBLE_ATEN_LIBRARY to its path, or reinstall crucible with it "
              "(docs/aten-backend.md)");
}

// The loaded library, loading it on the first call (an error leaves it unloaded: the next call
// tries again).
const Loaded& loaded() {
  static std::mutex mu;
  static std::optional<Loaded> l;
  const std::lock_guard lock(mu);
  if (!l) l = load();
  return *l;
}

}  // namespace

const AtenModule& load_aten_module() { return *loaded().module; }

std::string aten_module_state() {
  try {
    const Loaded& l = loaded();
    return "ready: " + l.module->version() + " loaded from " + l.path;
  } catch (const Error& e) {
    return std::string("not ready: ") + e.what();
  }
}

std::unique_ptr<Backend> make_aten_backend_from_module(const std::string& spec) {
  return load_aten_module().make(spec);
}

}  // namespace crucible
