// Python kernels (a kernel folder's `.py` files), run by CPython embedded in the candidate
// process of their op: never in the process that keeps the results, nor in the worker that
// computes the reference. A Python kernel becomes an ordinary crucible_kernel_fn, so the guarded
// kernel backend (src/backends/plugin/kernel_library.h) treats it like a C++ kernel: guard zones,
// poison, untouched inputs, aliasing, repeated and decoy calls all apply.
//
// Each call turns the C ABI's arguments into what PyTorch's op would receive (tensors through
// DLPack without a copy, numbers, lists, dtypes, ...), calls the kernel like the ATen op
// (positional arguments in schema order, kwarg-only ones as keywords) and checks what it returns
// against the op's schema before writing it into crucible's outputs. docs/kernel-folders.md
// describes it for users.
#pragma once

#include <string>
#include <vector>

#include "backends/plugin/kernel_library.h"

namespace crucible {

struct PythonKernelSource {
  std::string op;                  // "aten.relu.default"
  std::string path;                // the absolute path of the .py file
  std::string origin;              // "relu/relu.py": how messages name it
  std::string root;                // the kernel folder with a trailing '/', left out of tracebacks
  std::vector<std::string> names;  // the function names to look for, in order of preference
};

// In a candidate process: initialises CPython (once per process), imports torch, runs the file
// as a module and returns its kernel function for `op` as a LoadedKernel. A file that does not
// parse, raises while importing or defines none (or several) of `names` is a CompileError that
// names file:line and the fix. One Python kernel per process.
LoadedKernel load_python_kernel(const PythonKernelSource& source);

// The candidate zygote's hooks for Python kernels (candidate_zygote.h): the zygote starts the
// interpreter and imports PyTorch once (outside the sandbox: the user's installed library, no
// kernel code), each candidate process it forks inherits them (CPython's fork hooks around each
// fork) and brings os.environ up to date before it loads its kernel. A zygote whose import
// fails leaves each candidate process to import, and report, as without it.
ZygoteHooks python_zygote_hooks();

// The folders a Python kernel's candidate process may execute programs from (Triton's
// assembler and C compiler): the system's toolchain (/usr, /lib, /bin, ...), the Python
// environment of the interpreter (a virtual environment's folder), ~/.local (pip --user),
// $CUDA_HOME or /usr/local/cuda. Never the scratch folder: nothing the kernel writes can be
// executed.
std::vector<std::string> python_program_dirs();

// The interpreter whose environment Python kernels use: $CRUCIBLE_PYTHON, else the one crucible
// was built with (/usr/bin/python3 on Debian).
std::string python_interpreter();

// "CPython 3.11.2 (embedded; torch from /usr/bin/python3's environment)", or why Python kernels
// cannot run in this build.
std::string python_kernel_runtime();

}  // namespace crucible
