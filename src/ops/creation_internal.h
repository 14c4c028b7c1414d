// Helpers shared by the creation family's files (creation.cpp, creation_fill.cpp) and the random
// family: ATen's factory keyword arguments, the strides of *_like results, and c10's checked
// conversion of a Scalar into a tensor's dtype. Internal to libcrucible.
#pragma once

#include <string>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/ops/op.h"

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

// Bytes of a tensor's distinct elements (stride-0 dims counted once).
double real_bytes(const Tensor& t);
double tensor_bytes(const Tensor& t);  // numel * itemsize

}  // namespace crucible::creation

namespace crucible {
// creation_fill.cpp: fill, fill_, arange, copy, lift_fresh_copy.
void register_creation_fill_ops(OpRegistry& r);
}  // namespace crucible
