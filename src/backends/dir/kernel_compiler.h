// Compiling kernel sources into cached shared libraries with the system's compiler.
//
// A library is cached under a key hashed from the source (and every other file of its folder,
// for local headers), crucible's kernel headers, the compile command and the compiler's version:
// <cache>/<key>/{kernel.so, compile.json, compile.log}. compile.json holds the command and the
// outcome, compile.log the first 4 KiB of the compiler's output. A source that does not compile
// is cached as such (its diagnostics are deterministic for the key); a compiler that could not be
// run, was killed or ran past its time limit is not.
//
// Every compile runs sandboxed (enter_compile_sandbox, src/sandbox/sandbox.h): the compiler reads
// only the source's folder, crucible's include folder and the system's toolchain, writes only its
// cache entry (its TMPDIR), and cannot reach the network. It is started from an argument vector
// (never a shell), in its own process group, which is killed when the time limit passes.
#pragma once

#include <string>
#include <vector>

namespace crucible::dir {

struct CompilerConfig {
  std::vector<std::string> cxx;         // $CXX (split on spaces) or "c++"
  std::vector<std::string> nvcc;        // $NVCC, $CUDA_HOME/bin/nvcc or nvcc on PATH; empty: none
  std::vector<std::string> cxx_flags;   // defaults + $CRUCIBLE_KERNEL_CXXFLAGS
  std::vector<std::string> cuda_flags;  // defaults + $CRUCIBLE_KERNEL_NVCCFLAGS
  std::string include_dir;              // holds crucible/kernel.h
  // Holds dlpack/dlpack.h: $CRUCIBLE_DLPACK_INCLUDE_DIR, else the folder crucible was built with
  // (empty when that is a folder the compilers search anyway, /usr/include).
  std::string dlpack_include_dir;
  std::string cache_dir;
  double timeout_s = 120;  // per compile ($CRUCIBLE_KERNEL_COMPILE_TIMEOUT)
  int jobs = 1;            // compiles at once
};

// From the environment (see docs/kernel-folders.md).
CompilerConfig default_compiler_config();

// $CRUCIBLE_KERNEL_CACHE, else $XDG_CACHE_HOME/crucible/kernels, else ~/.cache/crucible/kernels.
std::string kernel_cache_dir();

struct CompileJob {
  std::string source;  // absolute path; its folder is on the include path
  bool cuda = false;
};

struct CompileOutcome {
  bool ok = false;
  bool cached = false;   // found in the cache
  std::string library;   // the .so (when ok)
  std::string command;   // as a shell would take it
  std::string compiler;  // "g++ (Debian 12.2.0-14) 12.2.0"
  // The compiler's output (text the kernel's source controls: quote it as such), its first
  // kCompileLogLimit bytes; output_bytes counts all of it.
  std::string diagnostics;
  size_t output_bytes = 0;
  // Set when the compile failed for a reason crucible observed (crucible's own words): "the
  // compiler did not finish in 120 s", "cannot run the compiler 'c++': ...". Empty when the
  // compiler ran to its end (then ok says whether the source compiled).
  std::string problem;
  std::string log;  // compile.log's path (empty when nothing was cached)
};

// How much of the compiler's output is kept (in compile.log and CompileOutcome::diagnostics).
inline constexpr size_t kCompileLogLimit = 4096;

// Compiles every job (up to cfg.jobs at once) or finds it in the cache; results in job order.
std::vector<CompileOutcome> compile_kernels(const std::vector<CompileJob>& jobs,
                                            const CompilerConfig& cfg);

// The first line of `<compiler> --version` ("" when it cannot be run).
std::string compiler_version(const std::vector<std::string>& compiler);

}  // namespace crucible::dir
