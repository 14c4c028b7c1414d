// Derived correctness samples (src/ops/sample_completion.h): an op whose generator wrote only
// contiguous f32 cases without special values gets a special-values case, one case per other
// supported dtype the reference computes, a non-contiguous case, its family's value regimes
// and (elementwise and reduction families) a large case.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "crucible/cases/case.h"
#include "crucible/ops/materialize.h"
#include "crucible/core/error.h"
#include "ops/sample_completion.h"
#include "ops/samples.h"

namespace crucible {
namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

// neg on f32/f64/i32, and an i8 input that "ATen" rejects.
OpDef toy_op() {
  OpDef op = OpDef::from_schema("aten::neg(Tensor self) -> Tensor", "pointwise.unary");
  op.dtypes = {DType::Float32, DType::Float64, DType::Int32, DType::Int8};
  op.ref = [](const Values& a) -> Values {
    const Tensor& x = a.at(0).tensor();
    if (x.dtype() == DType::Int8) op_error("neg: i8 is not implemented");
    Tensor out = Tensor::empty(x.shape(), x.dtype());
    for (int64_t i = 0; i < x.numel(); ++i) out.set(i, -x.get(i));
    return {Value(out)};
  };
  op.samples = [](const SampleContext& ctx) {
    if (ctx.performance) return std::vector<Sample>{make("big", {T({1 << 20}, DType::Float32)})};
    return std::vector<Sample>{make("contiguous f32", {T({3, 4}, DType::Float32)}),
                               make("error: bool", {T({3}, DType::Bool)})};
  };
  op.cost = [](const Values&, const Values&) { return Cost{}; };
  return op;
}

TEST(SampleCompletion, DerivesSpecialValuesDtypesAndALayout) {
  OpDef op = toy_op();
  complete_samples(op);
  const std::vector<Sample> s = op.samples(SampleContext{});
  std::set<std::string> labels;
  for (const Sample& x : s) labels.insert(x.label);
  const std::string from = " (from 'contiguous f32')";
  EXPECT_TRUE(labels.count("special values" + from));
  EXPECT_TRUE(labels.count("dtype f64" + from));
  EXPECT_TRUE(labels.count("dtype i32" + from));
  EXPECT_FALSE(labels.count("dtype i8" + from)) << "the reference raises on i8: not derived";
  EXPECT_TRUE(labels.count("non-contiguous" + from));
  // The value regimes of an elementwise family, on its f32 case (it has no f16 one), and a
  // case past 40000 elements.
  const std::vector<std::string> regimes = value_regimes("pointwise.unary");
  EXPECT_EQ(regimes.size(), 7u);
  for (const std::string& r : regimes)
    EXPECT_TRUE(labels.count("values: " + r + " f32" + from)) << r;
  EXPECT_TRUE(labels.count("large" + from));
  EXPECT_EQ(s.size(), 2u + 4u + regimes.size() + 1u);
  for (const Sample& x : s) {
    const cases::TensorLit& t = x.call.args.at(0).tensor;
    if (x.label.starts_with("special")) {
      EXPECT_EQ(t.fill, "special");
    }
    if (x.label == "dtype i32" + from) {
      EXPECT_EQ(t.dtype, DType::Int32);
    }
    if (x.label.starts_with("non-contiguous")) {
      EXPECT_EQ(t.strides, (Shape{1, 3}));  // [3, 4] stored transposed
    }
    if (x.label.starts_with("values: ")) {
      EXPECT_EQ(t.fill, x.label.substr(8, x.label.find(' ', 8) - 8));
      EXPECT_EQ(t.dtype, DType::Float32);
    }
    if (x.label.starts_with("large")) {
      EXPECT_EQ(t.shape, (Shape{10250, 4}));  // rows grown past 40000 elements
    }
  }
  // Performance samples are untouched.
  EXPECT_EQ(op.samples(SampleContext{true}).size(), 1u);
}

// A reduction over the last dim: every vector width, the integer extremes (which must wrap),
// a large case, and only the regimes whose sums stay exact or tiny.
TEST(SampleCompletion, ReductionsGetWidthsIntegerExtremesAndALargeCase) {
  OpDef op = OpDef::from_schema(
      "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
      "dtype=None) -> Tensor",
      "reduction");
  op.dtypes = {DType::Float32, DType::Int32};
  op.ref = [](const Values& a) -> Values {
    const Tensor& x = a.at(0).tensor();
    const int64_t n = x.size(-1), rows = x.numel() / std::max<int64_t>(n, 1);
    Tensor out = Tensor::zeros({rows}, x.dtype() == DType::Int32 ? DType::Int64 : x.dtype());
    for (int64_t r = 0; r < rows; ++r) {
      uint64_t acc = 0;
      double facc = 0;
      for (int64_t k = 0; k < n; ++k) {
        acc += static_cast<uint64_t>(x.get_int(r * n + k));
        facc += x.get(r * n + k);
      }
      if (is_floating(x.dtype()))
        out.set(r, facc);
      else
        out.set_int(r, static_cast<int64_t>(acc));
    }
    return {Value(out)};
  };
  op.samples = [](const SampleContext&) {
    return std::vector<Sample>{make("rows f32", {T({4, 9}, DType::Float32), L({-1})})};
  };
  op.cost = [](const Values&, const Values&) { return Cost{}; };
  complete_samples(op);
  std::set<int64_t> widths;
  bool extremes = false, large = false;
  std::set<std::string> regimes;
  for (const Sample& x : op.samples(SampleContext{})) {
    const cases::TensorLit& t = x.call.args.at(0).tensor;
    if (x.label.starts_with("width ")) {
      widths.insert(t.shape.back());
      EXPECT_EQ(t.shape.front(), 4) << x.label;
    }
    if (x.label.starts_with("integer extremes i32")) {
      extremes = true;
      EXPECT_EQ(t.dtype, DType::Int32);
      EXPECT_EQ(t.fill, "special");
    }
    if (x.label.starts_with("large")) {
      large = true;
      EXPECT_GE(numel_of(t.shape), 40000);
      EXPECT_EQ(t.shape.back(), 9);
    }
    if (x.label.starts_with("values: ")) regimes.insert(*t.fill);
  }
  EXPECT_EQ(widths, (std::set<int64_t>{1, 3, 7, 8, 15, 16, 17, 31, 33, 63, 65}));
  EXPECT_TRUE(extremes);
  EXPECT_TRUE(large);
  EXPECT_EQ(regimes, (std::set<std::string>{"integers", "tiny", "subnormal"}));
}

TEST(SampleCompletion, CatalogOpsCoverTheirDtypesAndNaN) {
  // Ops that copy values: a kernel that reads NaN as 0 must meet a NaN.
  for (const char* name : {"aten.cat.default", "aten.stack.default", "aten.sym_size.int"}) {
    const OpDef& op = OpRegistry::catalog().get(name);
    std::set<DType> computed;
    bool nan = false;
    for (const Sample& s : op.samples(SampleContext{})) {
      if (s.label.starts_with("error")) continue;
      const Values a = materialize(op, s.call, 7);
      for (const Value& v : a) {
        std::vector<Tensor> ts;
        if (v.is_tensor()) ts.push_back(v.tensor());
        if (v.kind() == ValueKind::TensorList) ts = v.tensors();
        for (size_t k = 0; k < ts.size(); ++k) {
          if (k == 0 && &v == &a.front()) computed.insert(ts[k].dtype());
          if (is_floating(ts[k].dtype()))
            for (int64_t i = 0; i < ts[k].numel(); ++i) nan |= std::isnan(ts[k].get(i));
        }
      }
    }
    for (DType t : op.dtypes) EXPECT_TRUE(computed.count(t)) << name << " " << dtype_code(t);
    if (op.family != "meta") {
      EXPECT_TRUE(nan) << name << ": no case holds a NaN";
    }
  }
}

// fill='special' puts the telling values first: NaN in 2 elements; NaN, both infinities and -0
// in 8.
TEST(SampleCompletion, SmallSpecialTensorsHoldNaNAndInfinities) {
  const OpDef& op = OpRegistry::catalog().get("aten.abs.default");
  Values a = materialize(op, cases::parse_call("((T([2], f32, fill='special'),), {})"), 3);
  EXPECT_TRUE(std::isnan(a[0].tensor().get(0)));
  a = materialize(op, cases::parse_call("((T([8], f16, fill='special'),), {})"), 3);
  const Tensor& t = a[0].tensor();
  EXPECT_TRUE(std::isnan(t.get(0)));
  EXPECT_EQ(t.get(2), INFINITY);
  EXPECT_EQ(t.get(4), -INFINITY);
  EXPECT_TRUE(t.get(6) == 0 && std::signbit(t.get(6)));
}

}  // namespace
}  // namespace crucible
