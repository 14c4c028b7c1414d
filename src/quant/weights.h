// Quantizing a linear layer's weight W [N, K] once, for each recipe: the quantized tensors and
// their scales, as the recipe's operators take them. Internal to src/quant.
#pragma once

#include <cstdint>

#include "crucible/core/tensor.h"

namespace crucible::quant {

struct Int8Weight {
  Tensor q;      // [N, K] int8, symmetric: round(w / s) in [-128, 127]
  Tensor scale;  // [N], max(|w| row max, 1e-5) / 127, in `scale_dtype`
};
Int8Weight quantize_int8_per_channel(const Tensor& w, DType scale_dtype);

struct Int4Weight {
  Tensor values;          // [N, K] int32 in [0, 15] (unpacked)
  Tensor scale_and_zero;  // [K / group, N, 2]: w ~ (q - 8) * scale + zero
};
Int4Weight quantize_int4_groups(const Tensor& w, int64_t group, DType dtype);

struct Float8Weight {
  Tensor q;      // [N, K] float8 e4m3fn: w / scale
  Tensor scale;  // per channel [N, 1] (or `shape` given), amax / 448
};
// Per output channel (`per_channel`) or one scale for the whole tensor; the scale in
// `scale_dtype` with the shape [N, 1] (per channel) or [] (tensor-wise).
Float8Weight quantize_float8(const Tensor& w, bool per_channel, DType scale_dtype);

struct UIntXWeight {
  Tensor q;      // [N, K] uint8 in [0, 2^bits - 1]
  Tensor scale;  // [N * K / group] f32
  Tensor zero;   // [N * K / group] f32 (integer-valued): w ~ (q - zero) * scale
};
UIntXWeight quantize_uintx_groups(const Tensor& w, int bits, int64_t group);

}  // namespace crucible::quant
