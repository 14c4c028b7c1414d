// ATen semantics of the reduction catalog entries (sum, mean, amax), plus the sample checks of
// every family in reduction/matmul/softmax/norm/view/embedding: enough cases, unique labels,
// round trips through the case grammar, and the reference raising exactly on "error:" cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_reduction_ops(*reg);
    register_matmul_ops(*reg);
    register_softmax_ops(*reg);
    register_norm_ops(*reg);
    register_view_ops(*reg);
    register_embedding_ops(*reg);
    return reg;
  }();
  return *r;
}

Values call(const std::string& op, const Values& args) { return ops().get(op).run_ref(args); }

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

template <typename Fn>
std::string op_error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    return e.what();
  }
  return "";
}

Value dims(std::vector<int64_t> d) { return Value(std::move(d)); }

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Reduction, SumDtypes) {
  const Tensor i32 = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Int32);
  Tensor s = call("aten.sum.dim_IntList", {i32, dims({1}), false, Value()})[0].tensor();
  EXPECT_EQ(s.dtype(), DType::Int64);
  EXPECT_EQ(s.shape(), Shape({2}));
  EXPECT_EQ(s.get_int(0), 6);
  EXPECT_EQ(s.get_int(1), 15);
  const Tensor b = tensor({1, 0, 1, 1}, {4}, DType::Bool);
  Tensor sb = call("aten.sum.default", {b, Value()})[0].tensor();
  EXPECT_EQ(sb.dtype(), DType::Int64);
  EXPECT_EQ(sb.dim(), 0);
  EXPECT_EQ(sb.get_int(0), 3);
  const Tensor f16 = tensor({1, 2}, {2}, DType::Float16);
  EXPECT_EQ(call("aten.sum.default", {f16, Value()})[0].tensor().dtype(), DType::Float16);
  Tensor sd =
      call("aten.sum.dim_IntList", {i32, Value(), false, Value(DType::Float64)})[0].tensor();
  EXPECT_EQ(sd.dtype(), DType::Float64);
  EXPECT_EQ(sd.get(0), 21.0);
}

TEST(Reduction, SumDtypeConvertsInputFirst) {
  // dtype=i64 truncates each element before summing: 1.9 + 1.9 = 2, not 3.
  const Tensor f = tensor({1.9, 1.9}, {2}, DType::Float32);
  EXPECT_EQ(call("aten.sum.default", {f, Value(DType::Int64)})[0].tensor().get_int(0), 2);
  // An i8 sum wraps: 100 + 100 = -56.
  const Tensor i8 = tensor({100, 100}, {2}, DType::Int8);
  Tensor w = call("aten.sum.default", {i8, Value(DType::Int8)})[0].tensor();
  EXPECT_EQ(w.dtype(), DType::Int8);
  EXPECT_EQ(w.get_int(0), -56);
}

TEST(Reduction, KeepdimAndDims) {
  const Tensor x = Tensor::zeros({2, 3, 4}, DType::Float32);
  auto shape_of = [&](Value d, bool keep) {
    return call("aten.sum.dim_IntList", {x, d, keep, Value()})[0].tensor().shape();
  };
  EXPECT_EQ(shape_of(dims({0, 2}), true), Shape({1, 3, 1}));
  EXPECT_EQ(shape_of(dims({0, 2}), false), Shape({3}));
  EXPECT_EQ(shape_of(dims({-1}), false), Shape({2, 3}));
  EXPECT_EQ(shape_of(dims({}), false), Shape({}));
  EXPECT_EQ(shape_of(Value(), true), Shape({1, 1, 1}));
  EXPECT_EQ(op_error_of([&] { shape_of(dims({3}), false); }),
            "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  EXPECT_NE(op_error_of([&] {
              shape_of(dims({1, -2}), false);
            }).find("appears multiple times"),
            std::string::npos);
  const Tensor zero_d = Tensor::scalar(2.5, DType::Float32);
  EXPECT_EQ(call("aten.sum.dim_IntList", {zero_d, dims({-1}), true, Value()})[0].tensor().shape(),
            Shape({}));
}

TEST(Reduction, EmptyReductions) {
  const Tensor e = Tensor::zeros({0, 3}, DType::Float32);
  Tensor s = call("aten.sum.dim_IntList", {e, dims({0}), false, Value()})[0].tensor();
  EXPECT_EQ(s.shape(), Shape({3}));
  EXPECT_EQ(s.get(0), 0.0);
  Tensor m = call("aten.mean.dim", {e, dims({0}), false, Value()})[0].tensor();
  EXPECT_TRUE(std::isnan(m.get(1)));
  EXPECT_EQ(op_error_of([&] {
              call("aten.amax.default", {e, dims({0}), false});
            }),
            "amax(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_NE(op_error_of([&] { call("aten.amax.default", {e, dims({}), false}); }), "");
  EXPECT_EQ(call("aten.amax.default", {e, dims({1}), false})[0].tensor().shape(), Shape({0}));
}

TEST(Reduction, MeanRequiresFloating) {
  const Tensor i64 = tensor({1, 2, 3, 4}, {2, 2}, DType::Int64);
  EXPECT_EQ(op_error_of([&] {
              call("aten.mean.dim", {i64, dims({1}), false, Value()});
            }),
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            "complex dtype. Got: Long");
  Tensor m = call("aten.mean.dim", {i64, dims({1}), false, Value(DType::Float32)})[0].tensor();
  EXPECT_EQ(m.dtype(), DType::Float32);
  EXPECT_EQ(m.get(0), 1.5);
  EXPECT_EQ(m.get(1), 3.5);
  const Tensor f = tensor({1, 2}, {2}, DType::Float32);
  EXPECT_NE(op_error_of([&] {
              call("aten.mean.dim", {f, Value(), false, Value(DType::Int32)});
            }).find("Optional dtype"),
            std::string::npos);
  Tensor h =
      call("aten.mean.dim", {tensor({1, 2, 4}, {3}, DType::BFloat16), Value(), true, Value()})[0]
          .tensor();
  EXPECT_EQ(h.dtype(), DType::BFloat16);
  EXPECT_EQ(h.shape(), Shape({1}));
  EXPECT_FLOAT_EQ(h.get(0), 2.328125f);  // 7/3 rounded once to bf16
}

TEST(Reduction, AmaxNaNPropagatesAndKeepsDtype) {
  const Tensor x = tensor({1, kNaN, 3, -kInf, 2, 5}, {2, 3}, DType::Float32);
  Tensor r = call("aten.amax.default", {x, dims({1}), false})[0].tensor();
  EXPECT_TRUE(std::isnan(r.get(0)));
  EXPECT_EQ(r.get(1), 5.0);
  Tensor all = call("aten.amax.default", {x, dims({}), true})[0].tensor();
  EXPECT_EQ(all.shape(), Shape({1, 1}));
  EXPECT_TRUE(std::isnan(all.get(0)));
  const Tensor i = tensor({-4, -9, 7, 2}, {4}, DType::Int16);
  Tensor ri = call("aten.amax.default", {i, dims({0}), false})[0].tensor();
  EXPECT_EQ(ri.dtype(), DType::Int16);
  EXPECT_EQ(ri.get_int(0), 7);
  const Tensor b = tensor({0, 1, 0}, {3}, DType::Bool);
  EXPECT_EQ(call("aten.amax.default", {b, dims({}), false})[0].tensor().get_int(0), 1);
}

TEST(Reduction, StridedInputs) {
  // A transposed [2, 3] view of [[1, 2], [3, 4], [5, 6]]: columns of the original are rows.
  Tensor base = tensor({1, 2, 3, 4, 5, 6}, {3, 2}, DType::Float32);
  Tensor t = base.transpose(0, 1);
  Tensor s = call("aten.sum.dim_IntList", {t, dims({1}), false, Value()})[0].tensor();
  EXPECT_EQ(s.get(0), 9.0);
  EXPECT_EQ(s.get(1), 12.0);
}

TEST(Reduction, TolScaleGrowsWithLength) {
  const OpDef& op = ops().get("aten.sum.dim_IntList");
  const Tensor x = Tensor::zeros({16, 100}, DType::Float32);
  EXPECT_DOUBLE_EQ(op.compare.tol_scale({x, dims({1}), false, Value()}), 10.0);
  EXPECT_DOUBLE_EQ(op.compare.tol_scale({x, dims({}), false, Value()}), 40.0);
}

// ---- sample checks for all six families ------------------------------------------------------

TEST(FamilySamples, EveryOpHasEnoughCasesAndRoundTrips) {
  const std::vector<std::string> expected = {"aten.sum.dim_IntList",
                                             "aten.sum.default",
                                             "aten.mean.dim",
                                             "aten.amax.default",
                                             "aten.mm.default",
                                             "aten.addmm.default",
                                             "aten.bmm.default",
                                             "aten._softmax.default",
                                             "aten._log_softmax.default",
                                             "aten.native_layer_norm.default",
                                             "aten.view.default",
                                             "aten.permute.default",
                                             "aten.embedding.default",
                                             "aten.baddbmm.default"};
  EXPECT_EQ(ops().all().size(), expected.size());
  for (const std::string& name : expected) {
    const OpDef& op = ops().get(name);
    EXPECT_FALSE(op.family.empty()) << name;
    EXPECT_FALSE(op.dtypes.empty()) << name;
    const std::vector<Sample> ss = op.samples(SampleContext{false});
    EXPECT_GE(ss.size(), 8u) << name;
    std::set<std::string> labels;
    for (const Sample& s : ss) {
      EXPECT_TRUE(labels.insert(s.label).second) << name << ": duplicate label " << s.label;
      const std::string text = cases::print_call(s.call);
      EXPECT_EQ(cases::print_call(cases::parse_call(text)), text) << name;
    }
    const std::vector<Sample> perf = op.samples(SampleContext{true});
    EXPECT_FALSE(perf.empty()) << name;
    for (const Sample& s : perf) {
      const std::string text = cases::print_call(s.call);
      EXPECT_EQ(cases::print_call(cases::parse_call(text)), text) << name;
    }
  }
}

TEST(FamilySamples, ReferenceRaisesExactlyOnErrorCases) {
  for (const OpDef* op : ops().all()) {
    for (const Sample& s : op->samples(SampleContext{false})) {
      const std::string text = cases::print_call(s.call);
      Values args;
      try {
        args = materialize(*op, s.call, 7);
      } catch (const Error& e) {
        ADD_FAILURE() << op->name << " " << text << ": does not materialise: " << e.what();
        continue;
      }
      const bool must_raise = s.label.starts_with("error:");
      std::string error;
      try {
        const Values out = op->run_ref(args);
        ASSERT_FALSE(out.empty());
        const Cost c = op->run_cost(args, out);
        EXPECT_GE(c.bytes, 0) << op->name;
        if (op->compare.tol_scale) {
          EXPECT_GE(op->compare.tol_scale(args), 1.0) << op->name;
        }
        if (op->compare.output_is_view) {
          EXPECT_TRUE(out[0].tensor().shares_storage(args[0].tensor())) << op->name << " " << text;
        }
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OpError) << op->name << " " << text << ": " << e.what();
        error = e.what();
      }
      EXPECT_EQ(!error.empty(), must_raise)
          << op->name << " [" << s.label << "] " << text << (error.empty() ? "" : ": " + error);
    }
  }
}

}  // namespace
}  // namespace crucible
