// Internal to the pointwise.math, activation and activation.backward families: the elementwise
// math table (sin, log, abs, ceil, sign, ...), ATen's in-place / out= rules, and the sample and
// cost helpers these families share.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "crucible/ops/op.h"
#include "ops/samples.h"

namespace crucible::mathops {

// What kind of result an elementwise math function gives (ATen's dtype rules).
enum class MathKind : uint8_t {
  Float,       // sin, log, sqrt, ...: integral and bool inputs are cast to f32 first
  Abs,         // keeps the dtype (integers exactly, wrapping); bool raises
  Neg,         // keeps the dtype (two's complement); bool raises
  Rounding,    // ceil, floor, round, trunc: keeps the dtype, integers are copied; bool raises
  Sign,        // sign, sgn: keeps the dtype (bool included)
  Predicate,   // isinf, isnan: bool result, every dtype
  LogicalNot,  // bool result, every dtype
  BitwiseNot,  // bool and integral only; floating raises
};

struct MathFn {
  std::string_view name;  // "sin"
  MathKind kind;
  double (*f)(double) = nullptr;  // the floating path (and predicates), in double
  double flops = 1;               // per element, for the cost model
};

// The table entry of `name` (internal error when absent).
const MathFn& math_fn(std::string_view name);

// The dtypes ATen (2.x CPU) supports for the function's input, and those where it raises.
std::vector<DType> math_dtypes(const MathFn& fn);
std::vector<DType> math_error_dtypes(const MathFn& fn);

// The result dtype for an input dtype; raises ATen's "not implemented" error when unsupported.
DType math_result_dtype(const MathFn& fn, DType in);

// Computes fn(x) into a new contiguous tensor of the result dtype (raising as ATen does).
Tensor math_compute(const MathFn& fn, const Tensor& x);
// The same into `out` (math_result_dtype's dtype, x's shape; `out` may be `x` itself when the
// dtypes agree: each element is read before it is written). No argument check.
void math_compute_into(const MathFn& fn, const Tensor& x, const Tensor& out);

// Bytes a tensor really occupies: dims of stride 0 (expanded) are counted once.
double real_bytes(const Tensor& t);

// Whether several elements of `t` share memory (a dim of stride 0 and size > 1).
bool has_internal_overlap(const Tensor& t);
// ATen's assert_no_internal_overlap for a written tensor: raises when has_internal_overlap.
void check_no_internal_overlap(const Tensor& t);

// Whether a tensor literal has a dim of stride 0 and size > 1 (written in place: must raise).
bool literal_overlaps_itself(const cases::TensorLit& t);

// ATen computes f16/bf16/f32 elementwise kernels in float ("opmath"): an intermediate product
// beyond float's range is +-inf there even when double holds it. `opmath(v, t)` gives the value
// such an intermediate takes for an op of dtype `t` (f64: v unchanged).
double opmath(double v, DType t);

// `x` converted to `t` (a copy) unless it already has that dtype: ATen casts inputs to the
// common dtype before computing.
Tensor as_dtype(const Tensor& x, DType t);

// The standard dtypes of performance cases.
std::vector<DType> perf_dtypes();

// Cost of an out-of-place unary op: `flops` per element, input read and output written.
CostFn unary_cost(double flops);
// Cost of an in-place unary op: self read and written.
CostFn inplace_cost(double flops);

// Marks the samples that ATen must reject when run in place on `self` (argument 0): a self of
// an unsupported dtype (`bad_dtype` returns the reason, or nullptr), or an expanded self
// (internal overlap, when `overlap_raises`).
std::vector<Sample> mark_inplace_errors(std::vector<Sample> ss,
                                        const std::function<const char*(DType)>& bad_dtype,
                                        bool overlap_raises = true);

}  // namespace crucible::mathops

namespace crucible {
// pointwise_math_variants.cpp: the in-place (abs_, sin_, ...) and out= (abs.out, ...) overloads.
void register_pointwise_math_variant_ops(OpRegistry& r);
}  // namespace crucible
