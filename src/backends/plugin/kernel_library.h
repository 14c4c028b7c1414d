// Kernels from outside, through the C kernel ABI (include/crucible/kernel.h): loading them from
// shared libraries, and the guarded backend that runs them. Used by `plugin:<lib.so>` and by the
// kernel-folder backend (`dir:<folder>`), which compiles each folder into a library and hands
// the result to make_kernel_backend.
//
//   load_plugin_library(path, &info)   dlopen + crucible_plugin_v1() + version check: the
//                                      library's kernels (and its name, version, device)
//   load_kernel_symbol(path, sym, op)  dlopen + one `int32_t sym(crucible_call*)` as op's kernel
//   make_kernel_backend(name, loader, opts)
//                                      a Backend whose kernels come from `loader`, called in
//                                      candidate processes only, with defences around every
//                                      call
//
// Errors while loading are thrown as crucible::Error: Usage for a path that does not exist,
// Input for a library that is not a crucible plugin or was built for another ABI version. The
// backend reports load errors as the verdict of each case (Status::Failed with the message)
// rather than aborting the worker. Libraries are loaded only in candidate processes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/plugin/candidate_zygote.h"
#include "crucible/backends/backend.h"
#include "crucible/kernel.h"

namespace crucible {

// One kernel of a loaded library.
struct LoadedKernel {
  std::string op;                           // catalog name, "aten.relu.default"
  crucible_kernel_fn fn = nullptr;          // the kernel
  crucible_supports_fn supports = nullptr;  // optional per-call hook
  std::string origin;                       // "libfoo.so", "relu.default/relu.default.cpp"
};

// What a plugin library says of itself.
struct PluginInfo {
  std::string name;
  std::string version;
  Device device;
  std::string path;
};

// dlopens `path` (RTLD_NOW | RTLD_LOCAL; never closed), calls its crucible_plugin_v1() and checks
// the description: the ABI version, struct_size (at least sizeof(crucible_plugin)), num_kernels
// (1 to kMaxPluginKernels, the array in mapped memory), every entry's op name (a bounded,
// printable, NUL-terminated string naming a catalog op) and function (inside a loaded library).
// Kernel op names are normalised to the catalog's ("relu.default" -> "aten.relu.default"); each
// kernel's origin is `path`. `info` may be null.
std::vector<LoadedKernel> load_plugin_library(const std::string& path, PluginInfo* info);

// dlopens `path` and returns its function `symbol` (a crucible_kernel_fn) as the kernel of `op`.
LoadedKernel load_kernel_symbol(const std::string& path, const std::string& symbol,
                                const std::string& op);

struct KernelBackendOptions {
  std::string version = "plugin";  // Backend::version() before anything is loaded
  // The defences (guard pages and bytes, varying poison, a second call, a decoy call, output
  // pointers, late writes). Off only for debugging a kernel.
  bool guards = true;
  // Each op's kernel is a library of its own (kernel folders): a candidate process loads only
  // its op's. Otherwise every candidate process loads the whole library.
  bool library_per_op = false;
  // Runs in each candidate process before it enters the sandbox, with the op it serves.
  std::function<void(const std::string& op)> prepare_candidate;
  // The CUDA device the kernels of `op` run on (an index among the visible devices), or -1 for
  // the CPU; empty: every op on the CPU. Known before any kernel code is loaded (a kernel
  // folder's .cu sources, a plugin's probed description): the candidate process starts CUDA
  // before it enters the sandbox (docs/gpu.md).
  std::function<int(const std::string& op)> cuda_device;
  // Candidate processes are forked by a zygote forked from the worker when the backend is
  // isolated, before any case runs (candidate_zygote.h), not by the worker itself: set where a
  // candidate process may start CUDA, which it cannot do when forked from a worker that has
  // started CUDA (an aten:cuda baseline or reference in the same worker).
  bool zygote = false;
  // What that zygote does ahead for every candidate process it forks (candidate_zygote.h):
  // Python kernels' interpreter and PyTorch are imported there once, not in each process.
  ZygoteHooks zygote_hooks;
};

// Loads the kernels of `op` (or, for a whole library, all of them) in a candidate process.
using KernelLoader = std::function<std::vector<LoadedKernel>(const std::string& op)>;

// A backend whose kernels come from `loader`, which runs only in candidate processes: one per op,
// forked from the worker when a case of that op comes (src/backends/plugin/candidate_process.h),
// never in the worker that judges. Loading errors are reported by run() as each case's verdict
// (a compile error keeps its kind). Each call binds the arguments to the C ABI, lays the whole
// argument storages and the outputs (shapes from the catalog's reference, cached per argument
// signature) out in a shared arena between guard pages and guard bytes, fills the outputs with a
// poison drawn per call, and calls the kernel three times in a random order: on the case, on the
// case again at other addresses under another poison (the two must agree: unwritten elements and
// results that depend on the buffers show), and on a decoy (the same buffers, the inputs
// permuted: a result cached by pointer, shape or a few elements shows). It fails the case with
// the exact cause when the kernel writes outside an output, leaves part of it unwritten, points
// an output at an input, writes after it returned, or changes the process state.
std::unique_ptr<Backend> make_kernel_backend(std::string name, KernelLoader loader,
                                             KernelBackendOptions opts = {});

// `plugin:<lib.so>`: a plugin library as a backend. The library is loaded first in a short-lived
// probe process (src/backends/plugin/probe.h): one that cannot load is an error here (exit status
// 2, before any case runs); its op list answers has_op. The library itself is loaded in the
// workers only.
std::unique_ptr<Backend> make_plugin_backend(const std::string& spec);

}  // namespace crucible
