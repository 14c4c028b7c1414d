// Kernel folders: `<folder>/<op.overload>/<op.overload>.cpp` (or `.cu`, `.py`), one op per
// sub-folder, the layout of BackendBench's generated kernels (`<op>/<op>.py`,
// `<op>__<overload>/<op>__<overload>_implementation_v1.py`). docs/kernel-folders.md has the rules.
#pragma once

#include <string>
#include <vector>

namespace crucible::dir {

// One kernel source of a folder.
struct KernelSource {
  std::string op;       // catalog name, "aten.relu.default"
  std::string folder;   // the sub-folder's name as written, "relu.default" or "relu__default"
  std::string source;   // absolute path of the .cpp/.cc/.cu/.py file
  bool cuda = false;    // a .cu file (compiled with nvcc)
  bool python = false;  // a .py file (run by embedded CPython, src/backends/python)
};

struct FolderScan {
  std::vector<KernelSource> kernels;
  // Sub-folders that hold no usable kernel, each with why and what to do: "foo.bar: not an op
  // in crucible's catalog ...".
  std::vector<std::string> ignored;
};

// Reads a kernel folder. A path that is not a folder is a Usage error; sub-folders that name no
// catalog op, or hold no (or several) sources, are listed in `ignored`.
FolderScan scan_kernel_folder(const std::string& folder);

// The catalog op a sub-folder name stands for: "relu.default", "aten.relu.default",
// "relu__default" and (when the op has a `default` overload) "relu" all give
// "aten.relu.default". Empty when none; `why` then says what is wrong.
std::string op_of_folder_name(const std::string& name, std::string* why);

// The function names a kernel source may define for `op` (extern "C" int32_t f(crucible_call*)),
// in order of preference: "relu__default_kernel_impl", "relu_default_kernel_impl",
// "relu_kernel_impl".
std::vector<std::string> kernel_impl_symbols(const std::string& op);

}  // namespace crucible::dir
