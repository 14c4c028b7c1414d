// The quantized family's shared rules: ATen's argument checks of the quantized matrix products
// (one copy, called by the meta functions and the references), the int4 CPU packing layout,
// and the sample generators. Internal to src/ops.
#pragma once

#include <cstdint>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/ops/op.h"
#include "crucible/ops/rules/int4_layout.h"

namespace crucible {
// The family's registration (catalog.cpp calls it): the products here, the quantize and
// dequantize steps in quantized_qdq.cpp.
void register_quantized_ops(OpRegistry& r);
void register_quantize_ops(OpRegistry& r);
void register_float8_quantize_ops(OpRegistry& r);  // quantized_float8.cpp
}  // namespace crucible

namespace crucible::quantized {

// Shape checks; each returns the output shape and raises ATen's errors.
Shape weight_int8pack_mm_shape(const Args& args);
Shape int_mm_shape(const Args& args);
Shape convert_int4pack_shape(const Args& args);
Shape weight_int4pack_mm_shape(const Args& args);
// _scaled_mm: the output shape, and its dtype in `out_dtype`.
Shape scaled_mm_shape(const Args& args, DType* out_dtype);

std::vector<Sample> weight_int8pack_mm_samples(const SampleContext& ctx);
std::vector<Sample> int_mm_samples(const SampleContext& ctx);
std::vector<Sample> convert_int4pack_samples(const SampleContext& ctx);
std::vector<Sample> weight_int4pack_mm_samples(const SampleContext& ctx);
std::vector<Sample> scaled_mm_samples(const SampleContext& ctx);

}  // namespace crucible::quantized
