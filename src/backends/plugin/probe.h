// The load probe of a plugin library: whether it loads, and what it says of itself, learnt in a
// short-lived child process, so that the process that keeps a run's results never loads it.
//
// The child closes every descriptor but its answer pipe, enters the worker sandbox (when it can
// be entered here), dlopens the library, calls its entry point and checks the description
// (load_plugin_library), and writes back a small message: the library's name, version and
// kernel op names, or the error. The parent reads at most kMaxProbeMessage bytes within the
// time limit and checks every byte of it (the library's constructors run in the child and may
// write anything into that pipe). A child that crashes, hangs or answers garbage is an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "crucible/backends/backend.h"

namespace crucible {

// Bounds of a plugin's description (load_plugin_library refuses a library beyond them).
inline constexpr int64_t kMaxPluginKernels = 65536;
inline constexpr size_t kMaxOpName = 128;      // characters of an entry's op name
inline constexpr size_t kMaxPluginText = 256;  // characters of its name and version
inline constexpr size_t kMaxProbeMessage = size_t{16} << 20;

struct PluginProbeOptions {
  // How long loading may take ($CRUCIBLE_PLUGIN_LOAD_TIMEOUT, seconds).
  double timeout_s = 5;
  // Enter the worker sandbox in the child (off: the child still holds no descriptor of the
  // parent's but its pipe).
  bool sandbox = true;
};

// The options from the environment.
PluginProbeOptions default_probe_options();

// What a library that loads says of itself.
struct PluginDescription {
  std::string name;              // may be empty
  std::string version;           // may be empty
  std::vector<std::string> ops;  // catalog names, in the library's order
  std::string sandbox;           // "" when the probe ran sandboxed, else why not
  bool cuda = false;             // its crucible_plugin says kDLCUDA
};

// Loads `path` in a child process. Throws crucible::Error naming the library when it cannot be
// loaded: Input (not a library, no entry point, another ABI version, a malformed description,
// a constructor that crashes or does not return), Unsupported (a device this build does not
// evaluate).
PluginDescription probe_kernel_library(const std::string& path,
                                       const PluginProbeOptions& opts = default_probe_options());

// `inner` (a kernel backend over the library) as a backend that answers has_op and
// supported_dtypes from the probe's description, without loading the library; everything
// else goes to `inner` (which loads it in the worker processes).
std::unique_ptr<Backend> make_probed_backend(std::unique_ptr<Backend> inner,
                                             PluginDescription description);

}  // namespace crucible
