// The micro-benchmark's configuration: TorchAO's YAML keys where they make sense for crucible.
//
//   benchmark_mode: inference                      (optional; the only mode)
//   quantization_config_recipe_names: [int8wo, int8dq, ...]   (recipe grammar, recipe.h)
//   output_dir: <folder>                           (optional; the run folder's parent)
//   model_params:
//     - name: <text>
//       matrix_shapes:
//         - name: custom          shapes: [[m, k, n], ...]
//         - name: pow2            min_power: 10  max_power: 14   (m = k = n = 2^i)
//         - name: pow2_extended   min_power: 10  max_power: 14   (2^i and 2^i + 2^(i-1))
//         - name: small_sweep     min_power: 10  max_power: 15   (m = 2^i, k = n = 2^j, j >= i)
//         - name: sweep           min_power: 8   max_power: 15   (every 2^a, 2^b, 2^c)
//         - name: llama | llama3_8b | llama3_70b | mistral_7b     m_values: [1, 16, 512]
//           (the models' linear layer (k, n) shapes at each m; llama is TorchAO's LLaMa 2 70B
//           preset, whose default m is 16384)
//       high_precision_dtype: torch.float32 | torch.bfloat16 | torch.float16
//       model_type: linear | ln_linear_<relu|sigmoid|gelu|silu|leakyrelu|relu6|hardswish> |
//                   transformer_block
//       device: cpu
//       use_torch_compile, torch_compile_mode, enable_profiler, enable_memory_profiler:
//         accepted for TorchAO configs (type-checked), no effect on crucible
//
// Any other key, a value of the wrong type, a malformed shape, a recipe outside the grammar, a
// group size that does not divide a shape's k: an Input error at file:line:col with the fix,
// raised before anything runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crucible/core/dtype.h"
#include "crucible/quant/recipe.h"

namespace crucible::quant {

struct MatrixShape {
  int64_t m = 0, k = 0, n = 0;
  std::string label;  // "custom", "llama3_8b attn.wqkv", ...
};

struct ModelParams {
  std::string name;
  std::vector<MatrixShape> shapes;
  DType high_precision_dtype = DType::BFloat16;
  std::string model_type = "linear";
  std::string device = "cpu";
  std::string where;  // file:line:col of the entry
};

struct BenchConfig {
  std::string file;
  std::vector<Recipe> recipes;
  std::vector<ModelParams> models;
  std::string output_dir;
};

// Reads and checks a config file (see above); every error names file:line:col.
BenchConfig read_bench_config(const std::string& path);
// The same from text (`file` names it in errors).
BenchConfig parse_bench_config(const std::string& text, const std::string& file);

// The activations of ln_linear_<act>, and whether a model type is known.
const std::vector<std::string>& bench_activations();
bool is_model_type(const std::string& t);

}  // namespace crucible::quant
