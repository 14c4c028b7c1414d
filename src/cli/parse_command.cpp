// `crucible parse`: validates trace files and prints them back in canonical form.
#include <map>

#include <fmt/format.h>

#include "cli/commands.h"
#include "crucible/cases/trace.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"

namespace crucible {

int command_parse(const std::string& path, bool quiet) {
  std::vector<cases::TraceEntry> entries = cases::read_traces(path);
  if (entries.empty()) input_error(path, "no cases in " + path);
  std::map<std::string, int> files;
  std::string current_file, current_op;
  int in_catalog = 0;
  for (const cases::TraceEntry& e : entries) {
    ++files[e.file];
    if (OpRegistry::catalog().find(e.op)) ++in_catalog;
    if (quiet) continue;
    if (e.file != current_file) {
      fmt::print("# {}\n", e.file);
      current_file = e.file;
      current_op.clear();
    }
    if (e.op_as_written != current_op) {
      fmt::print("Operator: {}\n", e.op_as_written);
      current_op = e.op_as_written;
    }
    fmt::print("cnt: {}, {}\n", e.cnt, cases::print_call(e.call));
  }
  fmt::print(stderr, "parsed {} cases in {} file(s); {} of them are calls of ops in the catalog\n",
             entries.size(), files.size(), in_catalog);
  return 0;
}

}  // namespace crucible
