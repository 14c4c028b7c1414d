// Trace files: a sequence of blocks
//   Operator: aten.convolution.default
//   cnt: 1, ((T([96, 3, 224, 224], f16), ...), {})
// `cnt` is how often the call occurred in the traced model (0 = synthetic).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crucible/cases/literal.h"

namespace crucible::cases {

struct TraceEntry {
  std::string op;             // normalised overload name: "aten.sum.dim_IntList"
  std::string op_as_written;  // "aten.sum.SymInt" where an alias was applied
  int64_t cnt = 0;
  CallSpec call;
  std::string call_text;  // the text after "cnt: N, "
  std::string file;
  int line = 0;  // 1-based line of the cnt: line
};

// ATen's trace spelling of some overloads differs from the schema's: aten.sum.SymInt is
// aten.sum.dim_IntList. Returns the normalised name.
std::string normalise_op_name(std::string_view op);

// Parses a whole trace file's text. Errors are Input errors "<file>:<line>:<col>: ...".
std::vector<TraceEntry> parse_trace(std::string_view text, const std::string& file);
// Reads one file, or every *.txt file under a folder (recursively, sorted by path).
std::vector<TraceEntry> read_traces(const std::string& path);

}  // namespace crucible::cases
