// Suites produce cases: `smoke` (a few cases of every op), `opinfo` (every catalog sample;
// `opinfo:<dtype>` each op's samples in one floating dtype, as BackendBench's default suite),
// `traces:<file or folder>` (real-model calls), `model[:<file or folder>]` (whole model graphs).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/ops/op.h"
#include "crucible/results/result.h"

namespace crucible {

struct SuiteOptions {
  std::string suite = "smoke";   // "smoke", "opinfo", "opinfo:bf16", "traces:<path>"
  std::vector<std::string> ops;  // --ops filter terms (empty = all)
  std::set<DType> dtypes;        // --dtypes filter (empty = all)
  uint64_t seed = 0;
  bool perf = false;      // include performance cases and mark them to be timed
  int64_t max_numel = 0;  // traces: cases with more elements are skipped (0 = no cap)
  double max_flops = 0;   // traces: cases estimated above this are skipped (0 = no cap)
  int smoke_per_op = 16;  // smoke: cases per op
  // --perf-dtype: with perf, the timed cases' floating tensors and floating dtype arguments
  // are rewritten to this dtype before filtering (e.g. the traces' f16 calls timed as f32).
  std::optional<DType> perf_dtype;
  // traces: at most this many distinct calls per op (0 = every call), chosen evenly over the
  // op's sizes within the caps (largest first); for a performance run of the real-model shapes.
  int calls_per_op = 0;
  // model: which graphs run (--model-filter: comma-separated name terms, empty = all), the
  // arbiter's multiplier (--model-k) and the backend that runs the ops the candidate lacks
  // (--fallback; empty: none, such a model is unsupported).
  std::vector<std::string> model_filter;
  double model_k = 3.0;
  std::string fallback;
  // model: --quant, a quantization recipe applied to every model (empty: none).
  std::string quant;
};

class Backend;

struct SuiteCase {
  Case c;
  const OpDef* op = nullptr;  // nullptr: the op is not in the catalog (reported unsupported)
  std::string skip_reason;    // non-empty: recorded as skipped, not run
  // Non-empty: recorded as unsupported with this reason, not run (an op the suite's dtype has no
  // kernel of, in opinfo:<dtype>).
  std::string unsupported_reason;
  // A case the suite judges itself (a whole model graph): run in a worker in place of
  // evaluate_case, with the worker's reference and candidate backends. `op` stays null.
  std::function<CaseResult(Backend& reference, Backend& candidate)> evaluate;
  // Given inputs (the call's bound arguments: the op-by-op flow's real intermediate tensors, a
  // reproducer's saved tensors), judged instead of inputs materialised from `c`.
  std::shared_ptr<const Values> inputs;
  // The command that re-runs this case on `backend`, where Case::reproducer does not apply.
  std::function<std::string(const std::string& backend)> reproducer;
};

// A suite in the registry: `--suite <name>`, or `--suite <name>:<argument>` where it takes one
// (traces:<path>). build(options, argument) gives its cases in a stable order.
struct SuiteDef {
  std::string name;
  std::string argument;            // what the argument is ("<file or folder>"); empty: none
  bool argument_optional = false;  // `--suite <name>` alone is valid too (model)
  std::string description;
  std::function<std::vector<SuiteCase>(const SuiteOptions&, const std::string& argument)> build;
};
// Adds a suite (an Internal error when the name is taken); smoke, opinfo and traces are built in.
void register_suite(SuiteDef def);
const std::vector<SuiteDef>& registered_suites();

// Builds the suite's cases in a stable order. Errors (unknown suite, unreadable trace file,
// a filter that matches nothing) are Usage/Input errors.
std::vector<SuiteCase> build_suite(const SuiteOptions& opts);

// The size of a call, known from the meta layer without allocating or computing anything
// (arguments as meta tensors, outputs from the op's meta function): `elements` counts its
// tensor arguments' elements, plus its fresh outputs' when these are more (factories, size-taking
// backward ops, an embedding gradient of 256k rows: what --max-numel caps); `flops` is the op's
// cost model over those outputs (what --max-flops caps). A call the meta layer refuses (an
// invalid call) counts its arguments' elements and no FLOPs; `op` null: not in the catalog.
struct CallSize {
  int64_t elements = 0;
  double flops = 0;
};
CallSize call_size(const OpDef* op, const cases::CallSpec& call);

// The dtype of a case's first tensor argument; for a call without one (a factory), its `dtype`
// argument when it names one; else none.
std::optional<DType> primary_dtype(const cases::CallSpec& call);

// Rewrites every floating tensor (f16, bf16, f32, f64) and floating dtype argument of `call`
// to `to` (perf_dtype.cpp).
void retype_floating(cases::CallSpec& call, DType to);

}  // namespace crucible
