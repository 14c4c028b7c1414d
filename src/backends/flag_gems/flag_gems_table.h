// FlagGems' op table, read from the installed FlagGems at run start (`--backend flag_gems`).
//
// FlagGems registers its Triton kernels for ATen overloads in `flag_gems.enable()`, which hands
// its table, (overload, function) pairs, to a registrar class (`flag_gems.registrar`, its
// `Register`) that filters it (ops the user or the vendor leaves out, ops its C++ extension
// patches) and registers each remaining entry with torch.library. crucible reads that table with
// a registrar of its own: a subclass of FlagGems' whose register_impl records the entry instead
// of registering it, so the filtering is FlagGems' own and ATen's dispatcher is left untouched.
// The same reader runs in a probe at run start (this file) and in each kernel's candidate
// process (the synthesized kernel looks its function up in the table it reads there).
#pragma once

#include <string>
#include <vector>

namespace crucible::flag_gems {

// One entry of FlagGems' table.
struct TableEntry {
  std::string key;       // as FlagGems names it: "add.Tensor", "abs"
  std::string function;  // "flag_gems.ops.add.add": the function's module and qualified name
  std::string op;        // the catalog op it names ("aten.add.Tensor"), empty when none
};

// What the probe found.
struct Table {
  std::string python;    // the interpreter that imported FlagGems
  std::string location;  // flag_gems/__init__.py's path
  std::string version;   // flag_gems.__version__
  std::string device;    // flag_gems.device: "cuda"
  std::string vendor;    // flag_gems.vendor_name: "nvidia"
  int cuda_devices = 0;  // torch.cuda.device_count() in the probe (device "cuda" only)
  std::vector<TableEntry> entries;
};

// The catalog op a FlagGems key names: "add.Tensor" -> "aten.add.Tensor", "abs" ->
// "aten.abs.default"; empty when the catalog has no such overload.
std::string catalog_op_of_key(const std::string& key);

// Python source of `_crucible_flag_gems_table()`: imports flag_gems and returns its table as a
// list of (key, function), read through FlagGems' own registrar (see above).
extern const char* const kTableReaderSource;

// Runs `python` in a child process (its own process group, stdin from /dev/null, its output in
// files under `scratch`, killed after `timeout_seconds`) that imports flag_gems and prints its
// table. A
// FlagGems that cannot be imported, a probe that dies or times out, and a table the reader cannot
// read are Usage errors (exit status 2) naming the interpreter, the Python error and the fix.
Table read_table(const std::string& python, const std::string& scratch, int timeout_seconds);

}  // namespace crucible::flag_gems
