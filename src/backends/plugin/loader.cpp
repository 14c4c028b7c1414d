// Loading kernel libraries: dlopen, the plugin entry point and its version check.
#include <dlfcn.h>

#include <filesystem>

#include <fmt/format.h>

#include "backends/plugin/kernel_library.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"

namespace crucible {

namespace {

void* open_library(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    usage_error(
        fmt::format("kernel library '{}' does not exist (give the path of a shared library "
                    "built against crucible/kernel.h, see docs/kernel-abi.md)",
                    path));
  // A path without a slash would be searched in the system's library path: make it explicit.
  std::string p = path.find('/') == std::string::npos ? "./" + path : path;
  void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    input_error(path, fmt::format("cannot load the kernel library: {}", e ? e : "unknown error"));
  }
  return h;
}

// "relu.default" -> "aten.relu.default"; "aten::relu" and "relu" -> "aten.relu.default".
std::string normalise_op(const std::string& op) {
  std::string s = op;
  if (s.starts_with("aten::")) s = "aten." + s.substr(6);
  if (!s.starts_with("aten.")) s = "aten." + s;
  if (s.find('.', 5) == std::string::npos) s += ".default";
  return s;
}

}  // namespace

std::vector<LoadedKernel> load_plugin_library(const std::string& path, PluginInfo* info) {
  void* h = open_library(path);
  dlerror();
  auto entry = reinterpret_cast<crucible_plugin_entry_fn>(dlsym(h, CRUCIBLE_PLUGIN_ENTRY_SYMBOL));
  if (!entry) {
    std::string hint;
    for (int v = 2; v <= 9; ++v)
      if (dlsym(h, fmt::format("crucible_plugin_v{}", v).c_str()))
        hint = fmt::format(
            " It exports crucible_plugin_v{} instead: it was built for a newer crucible kernel ABI "
            "(this crucible speaks version {}); rebuild it against this crucible's "
            "crucible/kernel.h.",
            v, CRUCIBLE_KERNEL_ABI_VERSION);
    input_error(path,
                fmt::format("not a crucible plugin: it does not export {}() (define kernels with "
                            "CRUCIBLE_KERNEL from crucible/kernel.hpp, or export the entry point "
                            "by hand, see docs/kernel-abi.md).{}",
                            CRUCIBLE_PLUGIN_ENTRY_SYMBOL, hint));
  }
  const crucible_plugin* p = entry();
  if (!p) input_error(path, fmt::format("{}() returned NULL", CRUCIBLE_PLUGIN_ENTRY_SYMBOL));
  if (p->abi_version != CRUCIBLE_KERNEL_ABI_VERSION)
    input_error(path, fmt::format("the plugin was built for crucible kernel ABI version {}, but "
                                  "this crucible speaks version {}: rebuild it against this "
                                  "crucible's crucible/kernel.h",
                                  p->abi_version, CRUCIBLE_KERNEL_ABI_VERSION));
  if (p->device.device_type != kDLCPU)
    unsupported(
        fmt::format("plugin '{}' ({}) runs on DLPack device type {}; this build of "
                    "crucible evaluates CPU plugins only",
                    p->name ? p->name : "?", path, static_cast<int>(p->device.device_type)));
  if (p->num_kernels < 0 || (p->num_kernels > 0 && !p->kernels))
    input_error(path, "the plugin's kernel list is malformed (num_kernels < 0 or kernels NULL)");
  if (info) {
    info->name = p->name ? p->name : "";
    info->version = p->version ? p->version : "";
    info->device = Device::cpu();
    info->path = path;
  }
  std::vector<LoadedKernel> out;
  for (int64_t i = 0; i < p->num_kernels; ++i) {
    const crucible_kernel_entry& e = p->kernels[i];
    if (!e.op || !e.fn)
      input_error(path, fmt::format("kernel entry {} has no op name or no function", i));
    LoadedKernel k;
    k.op = normalise_op(e.op);
    k.fn = e.fn;
    k.supports = e.supports;
    k.origin = path;
    out.push_back(std::move(k));
  }
  return out;
}

LoadedKernel load_kernel_symbol(const std::string& path, const std::string& symbol,
                                const std::string& op) {
  void* h = open_library(path);
  dlerror();
  void* f = dlsym(h, symbol.c_str());
  if (!f)
    input_error(path, fmt::format("the library does not export '{}' (declare it extern \"C\" "
                                  "int32_t {}(crucible_call* call))",
                                  symbol, symbol));
  LoadedKernel k;
  k.op = normalise_op(op);
  k.fn = reinterpret_cast<crucible_kernel_fn>(f);
  k.origin = path;
  return k;
}

}  // namespace crucible
