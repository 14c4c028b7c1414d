// Quantization recipes: a strict grammar of names (TorchAO's micro-benchmark vocabulary) and
// what each one means for a linear layer. A name that is not exactly one of the forms below is
// a Usage error listing every valid form and the closest one; nothing is matched by substring.
//
//   none                 the high-precision layer, unchanged
//   int8wo               int8 weights (symmetric, per output channel), f32/bf16/f16 activations:
//                        aten._weight_int8pack_mm
//   int8dq               int8 weights and int8 activations quantized per token on every call:
//                        choose_qparams_per_token, quantize_per_token, aten._int_mm, rescale
//   int4wo-<group>       4-bit weights per group of <group> input channels (32, 64, 128, 256),
//                        asymmetric: aten._weight_int4pack_mm_for_cpu on the packed weight
//   float8wo             float8 e4m3 weights (per output channel scale), dequantized per call
//   float8dq-tensor      float8 e4m3 weights and activations, tensor-wise scales: aten._scaled_mm
//   float8dq-row         the same with row-wise scales (per token, per output channel)
//   uintx-<bits>-<group> <bits>-bit (1 to 8) unsigned weights per group (gemlite's family),
//                        dequantized per call (dequantize_per_channel_group) before the product
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace crucible::quant {

enum class RecipeKind {
  None,
  Int8WeightOnly,
  Int8Dynamic,
  Int4WeightOnly,
  Float8WeightOnly,
  Float8DynamicTensor,
  Float8DynamicRow,
  UIntX,
};

struct Recipe {
  RecipeKind kind = RecipeKind::None;
  int bits = 0;      // uintx: 1..8; int4wo: 4
  int group = 0;     // int4wo, uintx: input channels per scale
  std::string name;  // as written ("int4wo-128")

  // Whether activations are quantized on every call (the dynamic recipes).
  bool quantizes_activations() const;
};

// The forms of the grammar, for messages ("int4wo-<group>").
const std::vector<std::string>& recipe_forms();
// Parses a recipe name; a Usage error naming `where` (a flag or file:line:col), the valid forms
// and the closest one otherwise.
Recipe parse_recipe(std::string_view name, const std::string& where = "recipe");

}  // namespace crucible::quant
