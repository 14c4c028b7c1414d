// Performance cases from real-model shapes: the distinct calls of the shipped traces.
#include "suites/trace_shapes.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/suites/suite.h"

namespace crucible {

namespace fs = std::filesystem;

namespace {

std::string program_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

CallSize call_size(const OpDef* op, const cases::CallSpec& call) {
  Case c;
  c.call = call;
  CallSize size{c.total_elements(), 0};
  if (!op) return size;
  try {
    const Values args = materialize_meta(*op, call);
    const Values outs = op->run_meta(args);
    // Fresh outputs: meta tensors that are not an argument or a view of one.
    int64_t fresh = 0;
    auto count = [&](const Tensor& t) {
      if (!t.defined()) return;
      for (const Value& a : args) {
        if (a.is_tensor() && t.shares_storage(a.tensor())) return;
        if (a.kind() == ValueKind::TensorList || a.kind() == ValueKind::OptTensorList)
          for (const Tensor& x : a.tensors())
            if (t.shares_storage(x)) return;
      }
      fresh += t.numel();
    };
    for (const Value& v : outs) {
      if (v.is_tensor()) count(v.tensor());
      if (v.kind() == ValueKind::TensorList || v.kind() == ValueKind::OptTensorList)
        for (const Tensor& t : v.tensors()) count(t);
    }
    if (fresh > size.elements) size.elements += fresh;
    size.flops = op->run_cost(args, outs).flops;
  } catch (const Error&) {
    // An invalid call (the meta function raised): run, it is a must-raise case; its size is
    // its arguments'.
  }
  return size;
}

std::string shipped_data_dir(const std::string& name, const char* env_name) {
  if (const char* env = std::getenv(env_name); env && *env) {
    if (!fs::is_directory(env))
      input_error(
          std::string(env_name) + "=" + env,
          fmt::format("not a folder; point it at the {} (e.g. data/{}) or unset it", name, name));
    return env;
  }
  std::vector<fs::path> candidates;
  if (std::string dir = program_dir(); !dir.empty())
    candidates.push_back(fs::path(dir) / ".." / "data" / name);
#ifdef CRUCIBLE_SOURCE_DIR
  candidates.push_back(fs::path(CRUCIBLE_SOURCE_DIR) / "data" / name);
#endif
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) continue;
    // Relative to the working directory when inside it ("data/traces/..." in case sources).
    const fs::path full = fs::weakly_canonical(p, ec);
    const fs::path rel = full.lexically_relative(fs::current_path(ec));
    return !rel.empty() && *rel.begin() != ".." ? rel.string() : full.string();
  }
  return "";
}

std::string shipped_traces_dir() { return shipped_data_dir("traces", "CRUCIBLE_TRACES"); }

std::map<std::string, std::vector<cases::TraceEntry>> distinct_trace_calls(const std::string& dir) {
  std::map<std::string, std::vector<cases::TraceEntry>> by_op;
  std::set<std::pair<std::string, std::string>> seen;
  for (cases::TraceEntry& e : cases::read_traces(dir)) {
    if (!seen.emplace(e.op, e.call_text).second) continue;
    by_op[e.op].push_back(std::move(e));
  }
  return by_op;
}

std::vector<cases::TraceEntry> pick_perf_calls(const OpDef& op,
                                               const std::vector<cases::TraceEntry>& calls,
                                               int64_t max_numel, double max_flops, size_t n) {
  struct Sized {
    const cases::TraceEntry* e;
    double work;
  };
  std::vector<Sized> fit;
  for (const cases::TraceEntry& e : calls) {
    auto d = primary_dtype(e.call);
    if (d && std::find(op.dtypes.begin(), op.dtypes.end(), *d) == op.dtypes.end()) continue;
    const CallSize size = call_size(&op, e.call);
    const int64_t elements = size.elements;
    const double flops = size.flops;
    if (max_numel > 0 && elements > max_numel) continue;
    if (max_flops > 0 && flops > max_flops) continue;
    fit.push_back({&e, std::max(flops, static_cast<double>(elements))});
  }
  std::stable_sort(fit.begin(), fit.end(),
                   [](const Sized& a, const Sized& b) { return a.work > b.work; });
  std::vector<cases::TraceEntry> out;
  if (fit.empty() || n == 0) return out;
  const size_t k = std::min(n, fit.size());
  for (size_t i = 0; i < k; ++i) {
    // Evenly spaced over the sizes: i = 0 is the largest, i = k - 1 the smallest.
    const size_t at = k == 1 ? 0 : i * (fit.size() - 1) / (k - 1);
    out.push_back(*fit[at].e);
  }
  return out;
}

}  // namespace crucible
