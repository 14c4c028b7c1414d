// Recipes: the strict grammar, and each recipe applied to a `linear` model giving the SQNR of an
// independent computation of the same quantization (written here with plain loops) within 1 dB,
// on cpu; every rewritten layer; layers a recipe cannot take refused with the fix.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "crucible/backends/backend.h"
#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/parse.h"
#include "crucible/quant/bench.h"
#include "crucible/quant/recipe.h"
#include "crucible/quant/rewrite.h"
#include "quant/bench_models.h"

namespace crucible::quant {
namespace {

std::string error_of(const std::string& name) {
  try {
    parse_recipe(name, "--quant");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Recipes, GrammarAcceptsExactlyTheForms) {
  EXPECT_EQ(parse_recipe("int8wo").kind, RecipeKind::Int8WeightOnly);
  EXPECT_EQ(parse_recipe("int8dq").kind, RecipeKind::Int8Dynamic);
  EXPECT_EQ(parse_recipe("float8dq-row").kind, RecipeKind::Float8DynamicRow);
  EXPECT_EQ(parse_recipe("float8dq-tensor").kind, RecipeKind::Float8DynamicTensor);
  EXPECT_EQ(parse_recipe("float8wo").kind, RecipeKind::Float8WeightOnly);
  EXPECT_EQ(parse_recipe("none").kind, RecipeKind::None);
  const Recipe r = parse_recipe("int4wo-128");
  EXPECT_EQ(r.kind, RecipeKind::Int4WeightOnly);
  EXPECT_EQ(r.group, 128);
  const Recipe u = parse_recipe("uintx-3-64");
  EXPECT_EQ(u.kind, RecipeKind::UIntX);
  EXPECT_EQ(u.bits, 3);
  EXPECT_EQ(u.group, 64);
  EXPECT_TRUE(parse_recipe("int8dq").quantizes_activations());
  EXPECT_FALSE(parse_recipe("int8wo").quantizes_activations());
}

TEST(Recipes, WrongNamesListTheFormsAndTheClosest) {
  // Substrings, case, spacing and fields are not matched loosely.
  for (const char* bad :
       {"int8", "int8wo ", "INT8WO", "xint8wo", "int8wo-1", "int4wo", "int4wo-", "int4wo-100",
        "int4wo-064", "uintx-9-64", "uintx-4", "uintx-0-32", "float8dq", "fp8", ""}) {
    const std::string e = error_of(bad);
    EXPECT_NE(e.find("--quant"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("valid recipes: none, int8wo, int8dq, int4wo-<group>"), std::string::npos)
        << bad << ": " << e;
    EXPECT_NE(e.find("the closest is"), std::string::npos) << bad;
  }
  EXPECT_NE(error_of("int8").find("the closest is 'int8wo'"), std::string::npos);
  EXPECT_NE(error_of("float8dq-rows").find("the closest is 'float8dq-row'"), std::string::npos);
  EXPECT_NE(error_of("int4wo-100").find("32, 64, 128 or 256"), std::string::npos);
}

// --- an independent computation of each recipe on a linear layer ---

double round_e4m3(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const int e = std::max(static_cast<int>(std::floor(std::log2(std::abs(v)))), -6);
  const double q = std::nearbyint(std::ldexp(v, 3 - e));
  return std::min(448.0, std::max(-448.0, std::ldexp(q, e - 3)));
}

using Matrix = std::vector<double>;

Matrix values(const Tensor& t) {
  const Tensor c = t.contiguous().to(DType::Float64);
  return Matrix(c.data<double>(), c.data<double>() + c.numel());
}

// x [m, k] (rows), w [n, k]: y = x @ w^T.
Matrix product(const Matrix& x, const Matrix& w, int64_t m, int64_t k, int64_t n) {
  Matrix y(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t q = 0; q < k; ++q) y[i * n + j] += x[i * k + q] * w[j * k + q];
  return y;
}

// Symmetric absmax quantization of rows of length `len` with `levels` (127 for int8; 448 as
// fp8's max with e4m3 rounding when `fp8`).
Matrix fake_quant_rows(const Matrix& v, int64_t len, double levels, bool fp8, bool whole) {
  Matrix out(v.size());
  const int64_t rows = whole ? 1 : static_cast<int64_t>(v.size()) / len;
  const int64_t span = whole ? static_cast<int64_t>(v.size()) : len;
  for (int64_t r = 0; r < rows; ++r) {
    double amax = 0;
    for (int64_t i = 0; i < span; ++i) amax = std::max(amax, std::abs(v[r * span + i]));
    const double s = std::max(amax, 1e-12) / levels;
    for (int64_t i = 0; i < span; ++i) {
      const double t = v[r * span + i] / s;
      out[r * span + i] = (fp8 ? round_e4m3(t) : std::clamp(std::nearbyint(t), -128.0, 127.0)) * s;
    }
  }
  return out;
}

// Asymmetric min/max quantization per group with `levels` + 1 levels.
Matrix fake_quant_groups(const Matrix& v, int64_t group, double levels, bool include_zero) {
  Matrix out(v.size());
  for (size_t g = 0; g < v.size() / group; ++g) {
    double lo = include_zero ? 0 : INFINITY, hi = include_zero ? 0 : -INFINITY;
    for (int64_t i = 0; i < group; ++i)
      lo = std::min(lo, v[g * group + i]), hi = std::max(hi, v[g * group + i]);
    const double s = (hi - lo) / levels;
    // With zero included the grid is anchored at an integer zero point (0 is exact).
    const double zp = include_zero ? std::nearbyint(-lo / s) : 0.0;
    for (int64_t i = 0; i < group; ++i)
      out[g * group + i] =
          include_zero
              ? (std::clamp(std::nearbyint(v[g * group + i] / s) + zp, 0.0, levels) - zp) * s
              : lo + s * std::clamp(std::nearbyint((v[g * group + i] - lo) / s), 0.0, levels);
  }
  return out;
}

double sqnr(const Matrix& ref, const Matrix& out) {
  double s = 0, e = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    s += ref[i] * ref[i], e += (ref[i] - out[i]) * (ref[i] - out[i]);
  return 10 * std::log10(s / e);
}

Matrix independent(const Recipe& r, const Matrix& x, const Matrix& w, int64_t m, int64_t k,
                   int64_t n) {
  switch (r.kind) {
    case RecipeKind::Int8WeightOnly:
      return product(x, fake_quant_rows(w, k, 127, false, false), m, k, n);
    case RecipeKind::Int8Dynamic:
      return product(fake_quant_rows(x, k, 127, false, false),
                     fake_quant_rows(w, k, 127, false, false), m, k, n);
    case RecipeKind::Float8WeightOnly:
      return product(x, fake_quant_rows(w, k, 448, true, false), m, k, n);
    case RecipeKind::Float8DynamicTensor:
      return product(fake_quant_rows(x, k, 448, true, true), fake_quant_rows(w, k, 448, true, true),
                     m, k, n);
    case RecipeKind::Float8DynamicRow:
      return product(fake_quant_rows(x, k, 448, true, false),
                     fake_quant_rows(w, k, 448, true, false), m, k, n);
    case RecipeKind::Int4WeightOnly:
      return product(x, fake_quant_groups(w, r.group, 15, false), m, k, n);
    case RecipeKind::UIntX:
      return product(x, fake_quant_groups(w, r.group, std::ldexp(1.0, r.bits) - 1, true), m, k, n);
    case RecipeKind::None:
      break;
  }
  return product(x, w, m, k, n);
}

TEST(Recipes, LinearModelSqnrMatchesAnIndependentComputation) {
  const MatrixShape shape{8, 256, 48, "test"};
  const graph::Graph g = bench_model("linear", shape, DType::Float32);
  graph::TensorMap params = graph::materialize_declarations(g, 5);
  graph::TensorMap inputs;
  inputs["x"] = params.at("x");
  params.erase("x");
  // Outlier channels, as the benchmark draws them.
  for (int64_t i = 0; i < shape.m; ++i)
    inputs["x"].set(i * shape.k + 17, inputs["x"].get(i * shape.k + 17) * 30);
  auto cpu = BackendRegistry::instance().create("cpu");
  graph::ExecOptions e;
  e.weights = &params;
  e.inputs = &inputs;
  const Tensor hp = graph::execute(g, *cpu, e).outputs.at(0);
  const Matrix x = values(inputs["x"]), w = values(params.at("fc.weight"));
  const Matrix hpv = values(hp);
  for (const char* name :
       {"int8wo", "int8dq", "int4wo-32", "int4wo-128", "float8wo", "float8dq-tensor",
        "float8dq-row", "uintx-4-64", "uintx-2-32", "uintx-8-128"}) {
    const Recipe r = parse_recipe(name);
    const QuantizedGraph q = apply_recipe(r, g, params);
    EXPECT_EQ(q.layers, 1) << name;
    graph::ExecOptions qe;
    qe.weights = &q.weights;
    qe.inputs = &inputs;
    const Tensor out = graph::execute(q.graph, *cpu, qe).outputs.at(0);
    const double got = sqnr_db(hp, out);
    const double want = sqnr(hpv, independent(r, x, w, shape.m, shape.k, shape.n));
    EXPECT_NEAR(got, want, 1.0) << name;
    EXPECT_GT(got, 5.0) << name;   // it computed the layer
    EXPECT_LT(got, 80.0) << name;  // and quantized it
  }
}

TEST(Recipes, EveryLinearLayerOfAModelIsRewritten) {
  const graph::Graph g = bench_model("transformer_block", {16, 128, 128, "t"}, DType::Float32);
  graph::TensorMap params = graph::materialize_declarations(g, 1);
  params.erase("x");
  const QuantizedGraph q = apply_recipe(parse_recipe("int8dq"), g, params);
  EXPECT_EQ(q.layers, 4);  // qkv, proj, fc1, fc2
  for (const graph::Node& n : q.graph.nodes) EXPECT_NE(n.op, "aten.mm.default") << n.line;
  EXPECT_EQ(find_linear_layers(q.graph).size(), 0u);
}

TEST(Recipes, ALayerTheRecipeCannotTakeIsRefusedWithTheFix) {
  const graph::Graph g = bench_model("linear", {4, 96, 40, "t"}, DType::Float32);
  graph::TensorMap params = graph::materialize_declarations(g, 1);
  params.erase("x");
  try {
    apply_recipe(parse_recipe("int4wo-64"), g, params);
    FAIL() << "int4wo-64 on K=96 must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("K=96"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("multiple of the group size 64"), std::string::npos);
  }
}

}  // namespace
}  // namespace crucible::quant
