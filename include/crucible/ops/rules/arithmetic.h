// ATen's rules that the catalog (src/ops) and backends' kernels share: wrapped-number operands,
// ATen's checked Scalar conversion, the in-place / out= checks of elementwise ops and
// c10::complex's product and quotient. Written once
// here; the catalog's meta functions and references and the cpu kernels call the same code.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>

#include "crucible/core/value.h"

namespace crucible::arith {

// A Tensor-or-number operand as a tensor: a Python number (Int/Float/Bool Value) becomes a 0-d
// tensor of its own kind (i64, f64, bool) holding the exact value.
Tensor operand(const Value& v);

// The dtype of operand(v).
DType operand_dtype(const Value& v);

// Raises Unsupported for the dtypes the reference does not model (complex, fp8).
void require_modelled(DType t, const std::string& op);

// Two's complement wrap of `v` to the width of integral dtype `t` (bool: v != 0).
int64_t wrap_to(int64_t v, DType t);

// ATen's Scalar::to<T>() (c10::checked_convert): raises "value cannot be converted to type
// int8_t without overflow" when `s` does not fit dtype `t`. Bool never overflows; unsigned
// integers accept negative integers down to -max (they wrap); floating targets accept ±inf and
// NaN. The converted value: truncated toward zero / wrapped for integral `t`, rounded for
// floating `t`, != 0 for bool.
void check_scalar_fits(const Scalar& s, DType t);

double scalar_as_double(const Scalar& s, DType t);  // floating t (after check_scalar_fits)

int64_t scalar_as_int(const Scalar& s, DType t);  // integral or bool t

// A 0-d tensor's element as ATen's Tensor::item() gives it: a bool, an integer or a double, as
// its dtype is. A Tensor fill value (masked_fill.Tensor) is converted with check_scalar_fits
// like a Scalar one; being data, that check is the kernels', not the meta function's.
Scalar item_of(const Tensor& t);

// In-place ops: self must not have internally overlapping elements (stride 0 with size > 1),
// must have the broadcast shape, and the result dtype must be castable to self's dtype.
void check_inplace(const Tensor& self, const Shape& result_shape, DType result_dtype);

// out= ops: out must have the result's shape (resizing is not modelled: Unsupported) and a
// dtype the result dtype can be cast to.
void check_out(const Tensor& out, const Shape& result_shape, DType result_dtype);

// c10::complex's operator* (the textbook formula, no C99 Annex G recovery of infinities).
inline std::complex<double> complex_mul(std::complex<double> x, std::complex<double> y) {
  return {x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real()};
}

// c10::complex's operator/ (numpy's scaled division, which keeps |c| + |d| from overflowing).
inline std::complex<double> complex_div(std::complex<double> x, std::complex<double> y) {
  const double a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  const double abs_c = std::fabs(c), abs_d = std::fabs(d);
  if (abs_c >= abs_d) {
    if (abs_c == 0 && abs_d == 0) return {a / abs_c, b / abs_d};
    const double rat = d / c;
    const double scl = 1.0 / (c + d * rat);
    return {(a + b * rat) * scl, (b - a * rat) * scl};
  }
  const double rat = c / d;
  const double scl = 1.0 / (d + c * rat);
  return {(a * rat + b) * scl, (b * rat - a) * scl};
}

}  // namespace crucible::arith
