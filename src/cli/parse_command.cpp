// `crucible parse`: validates trace files and prints them back in canonical form; with --meta,
// checks every call with the meta layer (the `meta` device: shapes, strides and dtypes, no data).
#include <map>

#include <fmt/format.h>

#include "cli/commands.h"
#include "crucible/cases/case.h"
#include "crucible/cases/trace.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"

namespace crucible {

namespace {

std::string describe(const Value& v) {
  if (v.is_tensor()) {
    if (!v.tensor().defined()) return "None";
    const Tensor& t = v.tensor();
    std::string s = fmt::format("T({}, {}", shape_str(t.shape()), dtype_code(t.dtype()));
    if (!t.is_contiguous()) {
      std::string st = shape_str(t.strides());  // "[1, 7]", printed as the grammar's (1, 7)
      s += ", stride=(" + st.substr(1, st.size() - 2) + ")";
    }
    return s + ")";
  }
  if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList) {
    std::string s = "[";
    for (const Tensor& t : v.tensors()) s += (s.size() > 1 ? ", " : "") + describe(Value(t));
    return s + "]";
  }
  return v.debug_str();
}

// The outputs of a call as the meta layer gives them ("T([2, 4], f32)", tuples in parentheses),
// or throws the op's error for an invalid call.
std::string meta_outputs(const OpDef& op, const cases::CallSpec& call) {
  const Values outs = op.run_meta(materialize_meta(op, call));
  std::string s;
  for (size_t i = 0; i < outs.size(); ++i) s += (i ? ", " : "") + describe(outs[i]);
  if (outs.size() != 1) s = "(" + s + ")";
  return op.data_dependent ? s + " (sizes data-dependent: upper bounds)" : s;
}

}  // namespace

int command_parse(const std::string& path, bool quiet, bool meta) {
  std::vector<cases::TraceEntry> entries = cases::read_traces(path);
  if (entries.empty()) input_error(path, "no cases in " + path);
  std::map<std::string, int> files;
  std::string current_file, current_op;
  int in_catalog = 0, invalid = 0;
  for (const cases::TraceEntry& e : entries) {
    ++files[e.file];
    const OpDef* op = OpRegistry::catalog().find(e.op);
    if (op) ++in_catalog;
    std::string outputs;
    if (meta && op) {
      try {
        outputs = " -> " + meta_outputs(*op, e.call);
      } catch (const Error& err) {
        if (err.kind() != ErrorKind::OpError && err.kind() != ErrorKind::Unsupported) throw;
        ++invalid;
        fmt::print(stderr, "{}:{}: {} is an invalid call: {}\n", e.file, e.line, e.op, err.what());
        outputs = " -> error";
      }
    }
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
    fmt::print("cnt: {}, {}{}\n", e.cnt, cases::print_call(e.call), outputs);
  }
  fmt::print(stderr, "parsed {} cases in {} file(s); {} of them are calls of ops in the catalog\n",
             entries.size(), files.size(), in_catalog);
  if (meta) fmt::print(stderr, "meta: {} call(s) checked, {} invalid\n", in_catalog, invalid);
  return invalid > 0 ? 1 : 0;
}

}  // namespace crucible
