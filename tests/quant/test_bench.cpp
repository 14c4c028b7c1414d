// The micro-benchmark: config errors with their place and fix (before anything runs, through
// the binary too), every valid recipe producing a row, and the grid, CSV and OSS JSON records
// holding the same numbers, the records of the v3 schema.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/quant/bench.h"
#include "crucible/quant/bench_config.h"
#include "crucible/quant/bench_report.h"
#include "e2e/cli_helpers.h"

namespace crucible::quant {
namespace {

std::string config_error(const std::string& text) {
  try {
    parse_bench_config(text, "cfg.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const char* const kShapes = R"(
model_params:
  - name: tiny
    matrix_shapes:
      - name: custom
        shapes: [[4, 64, 32]]
)";

TEST(BenchConfig, ReadsTorchAOKeysAndGenerators) {
  const BenchConfig c = parse_bench_config(R"(
benchmark_mode: inference
quantization_config_recipe_names: [int8wo, "int4wo-64"]
output_dir: results
model_params:
  - name: m
    matrix_shapes:
      - name: custom
        shapes: [[1, 128, 256], [2, 64, 512]]
      - name: pow2
        min_power: 6
        max_power: 7
      - name: pow2_extended
        min_power: 7
        max_power: 7
      - name: small_sweep
        min_power: 6
        max_power: 7
      - name: llama3_8b
        m_values: [1, 512]
    high_precision_dtype: torch.bfloat16
    model_type: ln_linear_gelu
    device: cpu
    use_torch_compile: true
    torch_compile_mode: max-autotune
)",
                                           "cfg.yaml");
  ASSERT_EQ(c.recipes.size(), 2u);
  EXPECT_EQ(c.recipes[1].group, 64);
  EXPECT_EQ(c.output_dir, "results");
  ASSERT_EQ(c.models.size(), 1u);
  const ModelParams& m = c.models[0];
  EXPECT_EQ(m.high_precision_dtype, DType::BFloat16);
  EXPECT_EQ(m.model_type, "ln_linear_gelu");
  // custom 2 + pow2 2 + pow2_extended 2 + small_sweep 3 + llama3_8b 2 x 4.
  ASSERT_EQ(m.shapes.size(), 2u + 2 + 2 + 3 + 8);
  EXPECT_EQ(m.shapes[2].m, 64);
  EXPECT_EQ(m.shapes[5].k, 192);  // 2^7 + 2^6
  EXPECT_EQ(m.shapes[6].m, 64);   // small_sweep (64, 64, 64), (64, 128, 128), (128, 128, 128)
  EXPECT_EQ(m.shapes[7].k, 128);
  EXPECT_EQ(m.shapes[9].label, "llama3_8b attn.wqkv");
  EXPECT_EQ(m.shapes[9].k, 4096);
  EXPECT_EQ(m.shapes[9].n, 6144);
  EXPECT_EQ(m.shapes[16].m, 512);
}

TEST(BenchConfig, UnknownRecipeNamesItsPlaceAndTheClosest) {
  const std::string e = config_error(
      std::string("quantization_config_recipe_names:\n  - int8wo\n  - int9dq\n") + kShapes);
  EXPECT_NE(e.find("cfg.yaml:3:5"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown quantization recipe 'int9dq'"), std::string::npos) << e;
  EXPECT_NE(e.find("the closest is 'int8dq'"), std::string::npos) << e;
  // A substring of a recipe is not one.
  EXPECT_NE(config_error(std::string("quantization_config_recipe_names: [int8]\n") + kShapes)
                .find("cfg.yaml:1:36"),
            std::string::npos);
}

TEST(BenchConfig, UnknownKeysAndWrongTypesNameTheirPlace) {
  std::string e = config_error(
      std::string("quantization_config_recipe_names: [int8wo]\nsparsity: x\n") + kShapes);
  EXPECT_NE(e.find("cfg.yaml:2:1"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'sparsity'"), std::string::npos) << e;
  EXPECT_NE(e.find("the keys are: benchmark_mode, model_params, output_dir"), std::string::npos)
      << e;
  e = config_error(
      "quantization_config_recipe_names: [int8wo]\nmodel_params:\n  - matrix_shape:\n      - name: "
      "custom\n");
  EXPECT_NE(e.find("cfg.yaml:3:5: unknown key 'matrix_shape' in a model_params entry"),
            std::string::npos)
      << e;
  e = config_error("quantization_config_recipe_names: int8wo\n" + std::string(kShapes));
  EXPECT_NE(e.find("cfg.yaml:1:35: 'quantization_config_recipe_names' must be a list"),
            std::string::npos)
      << e;
  e = config_error(std::string("quantization_config_recipe_names: [int8wo]\n") + kShapes +
                   "    use_torch_compile: maybe\n");
  EXPECT_NE(e.find("'use_torch_compile' must be true or false"), std::string::npos) << e;
  e = config_error(std::string("quantization_config_recipe_names: [int8wo]\n") + kShapes +
                   "    high_precision_dtype: torch.float64\n");
  EXPECT_NE(e.find("cfg.yaml:8:27"), std::string::npos) << e;
  e = config_error(std::string("quantization_config_recipe_names: [int8wo]\n") + kShapes +
                   "    model_type: ln_linear_tanh\n");
  EXPECT_NE(e.find("unknown model_type 'ln_linear_tanh'"), std::string::npos) << e;
  e = config_error(std::string("quantization_config_recipe_names: [int8wo]\n") + kShapes +
                   "    device: tpu\n");
  EXPECT_NE(e.find("use device: cpu or device: cuda"), std::string::npos) << e;
}

// A model on CUDA with a backend on the CPU (or the other way round) is refused before any
// row runs, naming the fix.
TEST(BenchRun, ADeviceTheBackendDoesNotRunOnIsRefused) {
  const BenchConfig c = parse_bench_config(
      std::string("quantization_config_recipe_names: [int8wo]\n") + kShapes + "    device: cuda\n",
      "cfg.yaml");
  BenchOptions o;
  o.backend = "cpu";
  int rows = 0;
  try {
    run_bench(c, o, [&](const BenchRow&) { ++rows; });
    ADD_FAILURE() << "ran on the wrong device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--backend aten:cuda"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rows, 0);
}

TEST(BenchConfig, MalformedShapesNameTheirPlace) {
  const std::string head =
      "quantization_config_recipe_names: [int8wo]\nmodel_params:\n  - matrix_shapes:\n      - "
      "name: custom\n";
  std::string e = config_error(head + "        shapes: [[4, 64]]\n");
  EXPECT_NE(e.find("cfg.yaml:5:18: a shape is a list of three positive integers [m, k, n]"),
            std::string::npos)
      << e;
  e = config_error(head + "        shapes: [[4, -64, 8]]\n");
  EXPECT_NE(e.find("cfg.yaml:5:22: 'k' must be in [1, 1048576], got -64"), std::string::npos) << e;
  e = config_error(head + "        shapes: [[4, 6.5, 8]]\n");
  EXPECT_NE(e.find("'k' must be an integer, got '6.5'"), std::string::npos) << e;
  e = config_error(
      "quantization_config_recipe_names: [int8wo]\nmodel_params:\n  - matrix_shapes:\n      - "
      "name: pow3\n");
  EXPECT_NE(e.find("cfg.yaml:4:15: unknown matrix_shapes generator 'pow3'"), std::string::npos)
      << e;
  e = config_error(
      "quantization_config_recipe_names: [int8wo]\nmodel_params:\n  - matrix_shapes:\n      - "
      "name: pow2\n        min_power: 9\n        max_power: 8\n");
  EXPECT_NE(e.find("min_power (9) is above max_power (8)"), std::string::npos) << e;
}

TEST(BenchConfig, ImpossibleGroupSizeNamesTheShapeAndTheFix) {
  const std::string e = config_error(
      "quantization_config_recipe_names: [int4wo-128]\nmodel_params:\n  - name: odd\n    "
      "matrix_shapes:\n      - name: custom\n        shapes: [[4, 96, 32]]\n");
  EXPECT_NE(e.find("cfg.yaml:3:5"), std::string::npos) << e;
  EXPECT_NE(e.find("recipe int4wo-128 cannot quantize shape (m=4, k=96, n=32)"), std::string::npos)
      << e;
  EXPECT_NE(e.find("use a group size that divides 96"), std::string::npos) << e;
}

// A bad config fails before anything runs: no run folder is made.
TEST(BenchCli, BadConfigFailsBeforeAnythingRuns) {
  const std::string dir = e2e::temp_dir("bench-bad");
  const std::string cfg = dir + "/bad.yaml";
  std::ofstream(cfg) << "quantization_config_recipe_names: [int8wo, int4wo-100]\n" << kShapes;
  const e2e::Output o = e2e::crucible(fmt::format("bench --config {} --out {}/run", cfg, dir));
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_NE(o.out.find(cfg + ":1:44"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("32, 64, 128 or 256"), std::string::npos) << o.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/run"));
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == ',')
      out.push_back(cur), cur.clear();
    else
      cur += c;
  }
  out.push_back(cur);
  return out;
}

// One run through the binary: every recipe a row, and the files agree.
TEST(BenchCli, GridCsvAndOssJsonAgree) {
  const std::string dir = e2e::temp_dir("bench-run");
  const std::string cfg = dir + "/c.yaml";
  std::ofstream(cfg)
      << "quantization_config_recipe_names: [none, int8wo, int8dq, float8dq-row, uintx-4-32]\n"
      << "model_params:\n  - name: tiny\n    matrix_shapes:\n      - name: custom\n"
      << "        shapes: [[4, 64, 32]]\n    high_precision_dtype: torch.float32\n";
  const e2e::Output o = e2e::crucible(
      fmt::format("bench --config {} --out {}/run --output {}/oss.json --samples 2 --min-sqnr 15",
                  cfg, dir, dir));
  ASSERT_EQ(o.status, 0) << o.out;
  std::ifstream csv_in(dir + "/run/bench.csv");
  std::string header;
  std::getline(csv_in, header);
  const std::vector<std::string> cols = split(header);
  auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin());
  };
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(csv_in, line);) rows.push_back(split(line));
  ASSERT_EQ(rows.size(), 5u);
  const std::string grid = e2e::read_text(dir + "/run/grid.txt");
  EXPECT_NE(o.out.find(grid), std::string::npos);  // the printed grid is the file's
  nlohmann::json records;
  std::ifstream(dir + "/run/bench.json") >> records;
  nlohmann::json output;
  std::ifstream(dir + "/oss.json") >> output;
  EXPECT_EQ(records, output);
  const std::vector<nlohmann::json> lines = e2e::read_jsonl(dir + "/run/bench.jsonl");
  ASSERT_EQ(lines.size(), records.size());
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i], records[i]);
  for (const nlohmann::json& r : records) {
    std::string why;
    EXPECT_TRUE(is_oss_v3_record(r, &why)) << why << ": " << r.dump();
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/run/manifest.json"));
  for (const auto& row : rows) {
    EXPECT_EQ(row[col("status")], "ok") << row[col("recipe")] << ": " << row[col("reason")];
    // The grid shows the CSV's numbers.
    for (const char* c : {"speedup", "sqnr_db", "recipe_ms"})
      EXPECT_NE(grid.find(row[col(c)]), std::string::npos) << c;
    // The JSON records hold the same numbers (the CSV rounds them).
    int matched = 0;
    for (const nlohmann::json& r : records) {
      if (r["benchmark"]["extra_info"]["recipe"] != row[col("recipe")]) continue;
      const std::string metric = r["metric"]["name"];
      const double v = r["metric"]["benchmark_values"][0].get<double>();
      if (metric == "speedup(wrt fp32)") {
        EXPECT_EQ(fmt::format("{:.3f}", v), row[col("speedup")]);
        ++matched;
      }
      if (metric == "sqnr(wrt fp32) (dB)") {
        EXPECT_EQ(fmt::format("{:.2f}", v), row[col("sqnr_db")]);
        ++matched;
      }
    }
    EXPECT_EQ(matched, 2) << row[col("recipe")];
  }
  // none is the model itself: exact; int8dq is less exact than int8wo.
  EXPECT_EQ(rows[0][col("sqnr_db")], "300.00");
  EXPECT_GT(std::stod(rows[1][col("sqnr_db")]), std::stod(rows[2][col("sqnr_db")]));
  EXPECT_EQ(rows[2][col("act_quant_ms")].empty(), false);
  EXPECT_GT(std::stod(rows[2][col("act_quant_ms")]), 0.0);
  EXPECT_EQ(std::stod(rows[1][col("act_quant_ms")]), 0.0);
}

TEST(BenchCli, MinSqnrGateFailsAFastButInaccurateRecipe) {
  const std::string dir = e2e::temp_dir("bench-gate");
  const std::string cfg = dir + "/c.yaml";
  std::ofstream(cfg) << "quantization_config_recipe_names: [uintx-1-32]\n" << kShapes;
  const e2e::Output o = e2e::crucible(
      fmt::format("bench --config {} --out {}/run --samples 1 --min-sqnr 20", cfg, dir));
  EXPECT_EQ(o.status, 1) << o.out;
  EXPECT_NE(o.out.find("failed"), std::string::npos) << o.out;
  EXPECT_NE(e2e::read_text(dir + "/run/bench.csv").find("is below --min-sqnr 20.0 dB"),
            std::string::npos);
}

}  // namespace
}  // namespace crucible::quant
