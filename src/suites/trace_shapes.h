// The real-model calls of the shipped traces (data/traces), by op: where the opinfo suite's
// performance cases come from for the ops that occur there.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "crucible/cases/trace.h"
#include "crucible/ops/op.h"

namespace crucible {

// The shipped traces folder: $CRUCIBLE_TRACES when set (it must exist), else data/traces next
// to the program's folder (build/../data/traces), else the source tree's data/traces; "" when
// none exists.
std::string shipped_traces_dir();
// The same for any shipped data folder: $<env> when set, else data/<name> next to the program's
// folder, else the source tree's (shipped_data_dir("models", "CRUCIBLE_MODELS")).
std::string shipped_data_dir(const std::string& name, const char* env);

// Every call of the traces under `dir`, grouped by normalised op name, distinct calls only
// (the same call text in several models is kept once, at its first occurrence).
std::map<std::string, std::vector<cases::TraceEntry>> distinct_trace_calls(const std::string& dir);

// Chooses up to `n` of an op's distinct trace calls as performance cases: those whose dtype
// the op supports and that fit the caps (0 = no cap), ordered by size from the largest, spread
// evenly over that order (the largest, the smallest, and between).
std::vector<cases::TraceEntry> pick_perf_calls(const OpDef& op,
                                               const std::vector<cases::TraceEntry>& calls,
                                               int64_t max_numel, double max_flops, size_t n);

}  // namespace crucible
