// ATen's rules that the catalog (src/ops) and backends' kernels share: factory arguments, the
// strides of *_like results, c10's checked conversion of a Scalar into a tensor's dtype, fill's
// value and arange's result. Written once here; the catalog's meta functions and references and
// the cpu kernels call the same code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "crucible/core/value.h"
#include "crucible/ops/args.h"

namespace crucible::creation {

// The `dtype` argument at `i` (None or absent: `dflt`).
DType dtype_arg(const Values& args, size_t i, DType dflt);

// The `layout` argument at `i`: strided (or None) is fine; crucible has no sparse tensors, so a
// sparse layout is reported as unsupported (the case cannot be judged), not as an op error.
// device (informational: the reference runs on the CPU and makes the tensor ATen would make on
// the named device) and pin_memory (no effect on values) are not read at all.
void check_layout(const Values& args, size_t i);

// ATen's check_size_nonnegative: "Trying to create tensor with negative dimension -1: [2, -1]".
void check_sizes(const Shape& size);

// ATen's contiguous strides (a size-0 dim counts as 1).
Shape contiguous_strides_aten(const Shape& sizes);

// The strides of empty_like/clone-style results (ATen's empty_like): `Preserve` keeps the
// strides of a non-overlapping and dense input and the stride order of any other;
// `Contiguous` is row-major; ChannelsLast/ChannelsLast3d need rank 4/5.
Shape like_strides(const Tensor& t, MemoryFormat mf);

// The strides of a fresh tensor of `sizes` in memory format `mf` (empty.memory_format:
// `Preserve` is an error there).
Shape format_strides(const Shape& sizes, MemoryFormat mf);

// The `memory_format` argument at `i` (None or absent: `dflt`).
MemoryFormat memory_format_arg(const Values& args, size_t i, MemoryFormat dflt);

// c10's Scalar::to<T> (checked_convert): throws "value cannot be converted to type int8_t
// without overflow" where ATen does (a value outside the dtype's range; NaN or inf into an
// integral dtype; a negative integer into uint8 may wrap down to -255, a negative float may
// not). Bool targets and bool values never overflow.
void check_convertible(const Scalar& s, DType to);

// Writes `s` (checked as above) into every element of `t` (any strides, stride 0 included):
// floating dtypes get the value rounded once, integral ones the value truncated toward zero,
// bool gets `s != 0`.
void fill_with(const Tensor& t, const Scalar& s);

// A scalar argument as ATen sees it: a Scalar, or the item() of a 0-d tensor (kind from the
// tensor's dtype: bool, int64 or double).
Scalar item_of(const Tensor& t);

// A size-only factory's result (empty.memory_format, zeros, ones: size, *, dtype, layout, device,
// pin_memory[, memory_format]), its arguments checked (layout, non-negative sizes).
struct SizedFactory {
  Shape size;
  Shape strides;  // memory_format's (default contiguous) when uninitialised, else ATen's contiguous
  DType dtype;    // f32 when None
};
SizedFactory sized_factory(const Args& a, bool uninitialised);

// empty_strided's checks of its size and stride (after check_sizes): "dimensionality of sizes (2)
// must match dimensionality of strides (1)"; a negative stride raises ("Storage size calculation
// overflowed ...") unless a size is 0. Returns whether a size is 0 (ATen then makes a plain
// contiguous tensor).
bool check_strided(const Shape& size, const Shape& stride);

// The value of fill.Tensor / fill_.Tensor: a Python number as is, or the item() of a tensor that
// must be 0-d ("fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.").
Scalar fill_value(const Value& v);

// arange's bounds as ATen's accumulation types read them: as a double, and as an int64 truncated
// toward zero (Scalar::to<int64_t>, checked: a non-finite or huge value raises).
double arange_double(const Scalar& s);
int64_t arange_int(const Scalar& s);

// arange's result, checked: with no dtype, all-integral (or bool) start/end/step give i64,
// anything else f32; bool is not implemented; step 0, a sign mismatch and non-finite bounds
// (floating dtypes) raise; the length is ceil((end - start) / step) in double, from the
// truncated integers for i64. Lengths above 2^40 are unsupported.
struct ArangeSpec {
  DType dtype;
  int64_t n;
};
ArangeSpec arange_spec(const Scalar& start, const Scalar& end, const Scalar& step,
                       const Value& dtype_value);

}  // namespace crucible::creation
