// Loading kernel libraries: dlopen, the plugin entry point, and the checks of the description it
// returns (version, size, kernel count, every entry's op name and function). The description is
// the library's data: nothing of it is read before the memory it lies in is known to be mapped.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>

#include <fmt/format.h>

#include "backends/plugin/kernel_library.h"
#include "backends/plugin/probe.h"
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

// Whether [p, p + n) lies in mapped memory (mincore fails on unmapped pages).
bool mapped(const void* p, size_t n) {
  if (!p) return false;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p);
  if (n == 0) n = 1;
  if (begin + n < begin) return false;
  unsigned char v;
  for (uintptr_t a = begin & ~(page - 1); a < begin + n; a += page)
    if (mincore(reinterpret_cast<void*>(a), page, &v) != 0) return false;
  return true;
}

// The NUL-terminated string at `s` of at most `max` printable ASCII characters, or why not.
bool bounded_string(const char* s, size_t max, std::string* out, std::string* why) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  out->clear();
  for (size_t i = 0; i <= max; ++i) {
    if ((i == 0 || (reinterpret_cast<uintptr_t>(s + i) & (page - 1)) == 0) && !mapped(s + i, 1)) {
      *why = "points at memory that is not mapped";
      return false;
    }
    const char c = s[i];
    if (c == '\0') return true;
    if (c < 0x20 || c > 0x7e) {
      *why = fmt::format("holds a byte that is not printable ASCII (0x{:02x})",
                         static_cast<unsigned char>(c));
      return false;
    }
    out->push_back(c);
  }
  *why = fmt::format("is not a NUL-terminated string of at most {} characters", max);
  return false;
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
  if (!mapped(p, sizeof(crucible_plugin)))
    input_error(path, fmt::format("{}() returned a pointer to memory that is not mapped",
                                  CRUCIBLE_PLUGIN_ENTRY_SYMBOL));
  if (p->abi_version != CRUCIBLE_KERNEL_ABI_VERSION)
    input_error(path, fmt::format("the plugin was built for crucible kernel ABI version {}, but "
                                  "this crucible speaks version {}: rebuild it against this "
                                  "crucible's crucible/kernel.h",
                                  p->abi_version, CRUCIBLE_KERNEL_ABI_VERSION));
  if (p->struct_size < sizeof(crucible_plugin))
    input_error(path,
                fmt::format("the plugin's description is malformed: struct_size is {}, "
                            "smaller than the {} bytes of crucible_plugin in ABI version {} "
                            "(set it to sizeof(crucible_plugin))",
                            p->struct_size, sizeof(crucible_plugin), CRUCIBLE_KERNEL_ABI_VERSION));
  std::string name, version, why;
  if (p->name && !bounded_string(p->name, kMaxPluginText, &name, &why))
    input_error(path, "the plugin's description is malformed: its name " + why);
  if (p->version && !bounded_string(p->version, kMaxPluginText, &version, &why))
    input_error(path, "the plugin's description is malformed: its version " + why);
  if (p->device.device_type != kDLCPU && p->device.device_type != kDLCUDA)
    unsupported(
        fmt::format("plugin '{}' ({}) runs on DLPack device type {}; crucible evaluates CPU "
                    "(kDLCPU) and CUDA (kDLCUDA) plugins",
                    name.empty() ? "?" : name, path, static_cast<int>(p->device.device_type)));
  if (p->num_kernels < 1 || p->num_kernels > kMaxPluginKernels)
    input_error(path, fmt::format("the plugin's description is malformed: num_kernels is {} (a "
                                  "plugin lists 1 to {} kernels)",
                                  p->num_kernels, kMaxPluginKernels));
  const size_t n = static_cast<size_t>(p->num_kernels);
  if (!p->kernels || !mapped(p->kernels, n * sizeof(crucible_kernel_entry)))
    input_error(path, fmt::format("the plugin's description is malformed: its kernel array of {} "
                                  "entries (num_kernels) is {}",
                                  n, p->kernels ? "not in mapped memory" : "NULL"));
  if (info) {
    info->name = name;
    info->version = version;
    info->device =
        p->device.device_type == kDLCUDA ? Device::cuda(p->device.device_id) : Device::cpu();
    info->path = path;
  }
  const OpRegistry& catalog = OpRegistry::catalog();
  auto in_a_library = [](const void* f) {
    Dl_info where;
    return f && dladdr(f, &where) != 0 && where.dli_fname != nullptr;
  };
  std::vector<LoadedKernel> out;
  for (size_t i = 0; i < n; ++i) {
    const crucible_kernel_entry& e = p->kernels[i];
    std::string op;
    if (!e.op) input_error(path, fmt::format("kernel entry {} has no op name", i));
    if (!bounded_string(e.op, kMaxOpName, &op, &why))
      input_error(path, fmt::format("kernel entry {} of {}: its op name {} (is num_kernels larger "
                                    "than the kernel array?)",
                                    i, n, why));
    if (!e.fn) input_error(path, fmt::format("kernel entry {} ({}) has no function", i, op));
    if (!in_a_library(reinterpret_cast<const void*>(e.fn)) ||
        (e.supports && !in_a_library(reinterpret_cast<const void*>(e.supports))))
      input_error(path, fmt::format("kernel entry {} ({}): its function pointer is not in any "
                                    "loaded library",
                                    i, op));
    LoadedKernel k;
    k.op = normalise_op(op);
    if (!catalog.find(k.op))
      input_error(path, fmt::format("kernel entry {} names '{}', which is not an op in crucible's "
                                    "catalog (`crucible ops` lists them)",
                                    i, op));
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
