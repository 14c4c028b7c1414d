// Reusable Custom judges of the op catalog: outputs that may legitimately differ from the
// reference's (indices of tied values in argmax/max.dim/sort/topk, unsorted topk). Each judge
// returns TensorChecks the evaluator records; a failed check carries its reason.
#pragma once

#include <string>
#include <vector>

#include "crucible/compare/compare.h"
#include "crucible/core/value.h"
#include "crucible/ops/op.h"

namespace crucible::judges {

// Whether two selected values are the same: equal (so -0 meets +0), or both NaN.
bool same_value(double a, double b);

// Shape and dtype of `cand` against `ref`; a failed check when they differ, else passed.
TensorCheck shape_dtype_check(const Tensor& ref, const Tensor& cand, const std::string& what);

// Values selected from the input (max, min, sort, topk): elementwise exact (NaN meets NaN, -0
// meets +0), with the usual error metrics.
TensorCheck exact_values_check(const Tensor& ref, const Tensor& cand, const std::string& what);

// Indices of a reduction that picks one element per row (argmax, argmin, max.dim, min.dim):
// `self` is reduced along `dim` (already wrapped), or over all elements when `dim` < 0. Each
// candidate index must be in range and point to an element equal to the reference's value
// `ref_values` (one per output element, same order). Any index of a tie is accepted.
TensorCheck selected_index_check(const Tensor& self, int64_t dim, const Tensor& ref_values,
                                 const Tensor& ref_indices, const Tensor& cand_indices,
                                 const std::string& what);

// Indices of sort/topk along `dim` (wrapped; 0 for a 0-d self): every row of `cand_indices`
// holds distinct in-range indices and self[index] equals the candidate's value at the same
// position (`cand_values`, already judged against the reference).
TensorCheck gathered_index_check(const Tensor& self, int64_t dim, const Tensor& cand_values,
                                 const Tensor& ref_indices, const Tensor& cand_indices,
                                 const std::string& what);

// Values of an unsorted topk: each row of `cand` must hold the same multiset of values as the
// reference's row (compared after sorting both, NaN largest).
TensorCheck same_multiset_check(const Tensor& ref, const Tensor& cand, int64_t dim,
                                const std::string& what);

// Products and convolutions whose ATen CPU kernels accumulate in the output dtype (f32 sums
// of f32 products): a Custom policy that compares every output as Kind::Values does (the
// tolerance scaled by base.tol_scale) but accepts a non-finite candidate element where `ref`
// run on the magnitudes of the inputs (|x| of every floating tensor with non-finite elements
// as 0, |q| of an integer operand such as a quantized weight, |alpha|, |beta|) overflows the
// dtype -- there ATen's own partial sums may overflow
// although the exact (f64 reference) result is finite. Everything else of `base` is kept.
ComparePolicy accumulation_overflow_policy(ComparePolicy base, RefFn ref, Schema schema);

// Ops whose output elements are sums of input terms that ATen's kernels add in the output's
// own precision in an unspecified order (CUDA's atomics in the backward of padding and max
// pooling): the order changes from run to run, so the error of one run is not the error of the
// next. base.tol_scale gives k, the most terms of one sum. A Custom policy that compares as
// Kind::Values does (tolerance scaled by sqrt(k), as for sums of random terms) and accepts the
// elements whose error is within the worst case of any order: (k - 1) unit roundoffs of the dtype
// times the sum of the magnitudes of the terms (`ref` run on the magnitudes of the inputs); where
// that sum of magnitudes overflows the dtype, a partial sum may overflow: a non-finite candidate
// element is accepted (inf, or NaN where partial sums overflowed both ways), and so is a finite
// one within the magnitudes where the reference's own sum overflowed and no infinite or NaN
// input reaches the element. The sum of magnitudes is taken as |ref(|inputs|)| (nll_loss negates
// its sum). The bound does not depend on the order, so neither does the verdict.
// Both policies judge the outputs `base` says are unspecified for a call (unspecified_outputs,
// unspecified_where) by shape and dtype only: set those before building the policy.
ComparePolicy unordered_accumulation_policy(ComparePolicy base, RefFn ref, Schema schema);

}  // namespace crucible::judges
