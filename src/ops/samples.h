// Building blocks for the catalog's sample generators: tensor literals in the case grammar and
// the standard case sets (dtypes x shapes x layouts x special values) that op families share.
#pragma once

#include <string>
#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/ops/op.h"

namespace crucible::samples {

using cases::Literal;

// A contiguous tensor literal.
Literal T(const Shape& shape, DType dtype);
// A tensor literal with explicit strides (non-contiguous, expanded with stride 0, ...).
Literal T(const Shape& shape, DType dtype, const Shape& strides);
// A tensor literal whose values are drawn as `fill` ("special": ±0, ±inf, NaN, subnormals,
// values near overflow for the dtype, mixed with ordinary values).
Literal T_fill(const Shape& shape, DType dtype, const std::string& fill);
// A transposed view of a [rows, cols] matrix (strides (1, rows)).
Literal T_transposed(int64_t rows, int64_t cols, DType dtype);

Literal I(int64_t v);
Literal F(double v);
Literal B(bool v);
Literal S(const std::string& v);
Literal L(const std::vector<int64_t>& v);  // an int list
Literal None();
Literal DT(DType t);  // a bare dtype value (f16)

Sample make(std::string label, std::vector<Literal> args,
            std::vector<std::pair<std::string, Literal>> kwargs = {});

// Dtype sets.
std::vector<DType> floating_dtypes();     // f16 bf16 f32 f64
std::vector<DType> all_numeric_dtypes();  // b8 u8 i8 i16 i32 i64 f16 bf16 f32 f64
std::vector<DType> integral_dtypes(bool include_bool);

// Standard correctness cases of a unary elementwise op over `dtypes`: ordinary sizes, 0-d,
// empty, non-contiguous (transposed, sliced with a step, expanded), special values (for
// floating dtypes), every vector width of the last dim (f32; the odd tails for f16, i64), the
// integer extremes, and one large case (41120 elements, f32 where the op has it). Extra trailing
// arguments are appended to every call.
std::vector<Sample> unary_samples(const std::vector<DType>& dtypes,
                                  const std::vector<Literal>& extra_args = {},
                                  const std::vector<std::pair<std::string, Literal>>& kwargs = {});
// Standard cases of a binary elementwise op (tensor, tensor): same shapes, broadcasting both
// ways, 0-d with dimensioned (type promotion through 0-d), mixed dtypes, non-contiguous, empty,
// special values, every vector width, integer overflow (which must wrap), large cases.
std::vector<Sample> binary_samples(const std::vector<DType>& dtypes,
                                   const std::vector<std::pair<std::string, Literal>>& kwargs = {});

// The shape of the standard large correctness case ([160, 257], 41120 elements).
const Shape& large_shape();

// Performance shapes for elementwise ops: bandwidth-bound sizes.
std::vector<Sample> elementwise_perf_samples(int arity, const std::vector<DType>& dtypes);

}  // namespace crucible::samples
