// Judging a whole model's outputs: an f64 arbiter, as PyTorch's own accuracy checker
// (torch._dynamo's `same(..., fp64_ref=...)`) does.
//
// A model accumulates rounding error over hundreds of ops, so per-op tolerances do not apply to
// its outputs. Its runs are compared instead:
//   golden     the graph computed in f64 on `ref` (every floating value promoted);
//   baselines  honest runs of the graph in its own dtypes on `ref`: one with each op rounded
//              once to its dtype, and runs where every input and every op's result is also
//              perturbed by a few units of rounding (as kernels that accumulate in the dtype
//              round), which show how much the model amplifies rounding (its conditioning);
//   candidate  the graph on the backend under test.
// The candidate passes an output when its error against golden is at most k times the largest
// baseline error against golden, or below a small floor (an output the baselines compute
// exactly must not fail a candidate for one rounding). The error is the root mean square of
// the differences (RMSE), as in PyTorch's checker. Integer and bool outputs must equal golden.
#pragma once

#include <string>
#include <vector>

#include "crucible/core/tensor.h"

namespace crucible {

struct ArbiterOptions {
  double k = 3.0;       // the candidate may be this many times less accurate than baseline
  double floor = -1.0;  // absolute RMSE always accepted; < 0: the dtype's default (arbiter_floor)
};

struct ArbiterCheck {
  std::string what;  // "output 0", "grad transformer.wte.weight", "loss"
  bool passed = true;
  std::string reason;         // empty when passed
  double candidate_rmse = 0;  // candidate against golden
  double baseline_rmse = 0;   // the largest error of a baseline run against golden
  double allowed_rmse = 0;    // k * baseline_rmse + floor
  double max_abs_err = 0;     // candidate against golden
  double max_rel_err = 0;
  double pcc = 1;                    // cosine similarity of candidate and golden
  int64_t nonfinite_mismatches = 0;  // NaN or inf where golden has another value
};

// The floor of a dtype: a tenth of the accuracy checker's tolerance (f64 1e-9, f32 1e-5,
// f16/bf16 1e-4, fp8 1e-3).
double arbiter_floor(DType t);

// Compares `candidate` and `baseline` (the output's own dtype) with `golden` (the same output of
// the f64 run: f64 where the output is floating, else the output's dtype). Shapes must match;
// the candidate's dtype must be the baseline's.
ArbiterCheck arbitrate(const Tensor& golden, const Tensor& baseline, const Tensor& candidate,
                       const ArbiterOptions& options, const std::string& what);
// The same against several baseline runs (at least one, all of one shape and dtype): the allowed
// error is k times the largest of theirs, plus the floor.
ArbiterCheck arbitrate(const Tensor& golden, const std::vector<Tensor>& baselines,
                       const Tensor& candidate, const ArbiterOptions& options,
                       const std::string& what);

}  // namespace crucible
