// ATen semantics of the statistics entries (amin, any/all, argmax/argmin, max/min, mean,
// prod, var/std, logsumexp), plus the sample checks of the statistics, scan, sort, distance,
// softmax backward and nll_loss families: enough cases, unique labels, round trips, and the
// reference raising exactly on "error:" cases.
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
    register_statistics_ops(*reg);
    register_scan_ops(*reg);
    register_sort_ops(*reg);
    register_distance_ops(*reg);
    register_softmax_backward_ops(*reg);
    register_nll_loss_ops(*reg);
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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
Value dims(std::vector<int64_t> d) { return Value(std::move(d)); }

TEST(Statistics, MaxDimFirstOccurrenceAndNaN) {
  const Tensor x = tensor({1, 3, 3, kNaN, 2, kNaN}, {2, 3}, DType::Float32);
  Values r = call("aten.max.dim", {x, Value(int64_t{1}), Value(false)});
  EXPECT_EQ(r[0].tensor().get(0), 3.0);
  EXPECT_EQ(r[1].tensor().get_int(0), 1);  // first of the tie
  EXPECT_TRUE(std::isnan(r[0].tensor().get(1)));
  EXPECT_EQ(r[1].tensor().get_int(1), 0);  // first NaN
  Values m = call("aten.min.dim", {x, Value(int64_t{0}), Value(true)});
  EXPECT_EQ(m[0].tensor().shape(), Shape({1, 3}));
  EXPECT_EQ(m[1].tensor().get_int(0), 1);
  EXPECT_EQ(op_error_of([&] {
              call("aten.max.dim",
                   {Tensor::zeros({0, 3}, DType::Float32), Value(int64_t{0}), Value(false)});
            }),
            "max(): Expected reduction dim 0 to have non-zero size.");
  const Tensor b = tensor({0, 1, 1}, {3}, DType::Bool);
  EXPECT_EQ(call("aten.max.default", {b})[0].tensor().dtype(), DType::Bool);
  EXPECT_NE(op_error_of([&] { call("aten.min.default", {Tensor::zeros({0}, DType::Float32)}); }),
            "");
}

TEST(Statistics, ArgmaxRules) {
  const Tensor x = tensor({1, 5, 5, 2}, {2, 2}, DType::Int32);
  Tensor flat = call("aten.argmax.default", {x, Value(), Value(false)})[0].tensor();
  EXPECT_EQ(flat.dim(), 0);
  EXPECT_EQ(flat.get_int(0), 1);
  Tensor keep = call("aten.argmax.default", {x, Value(), Value(true)})[0].tensor();
  EXPECT_EQ(keep.shape(), Shape({1, 1}));
  EXPECT_EQ(
      call("aten.argmin.default", {x, Value(int64_t{-1}), Value(false)})[0].tensor().get_int(1), 1);
  EXPECT_EQ(
      op_error_of([&] {
        call("aten.argmax.default", {tensor({1, 0}, {2}, DType::Bool), Value(), Value(false)});
      }),
      "\"argmax_cpu\" not implemented for 'Bool'");
  EXPECT_NE(
      op_error_of([&] {
        call("aten.argmax.default", {Tensor::zeros({0}, DType::Float32), Value(), Value(false)});
      }),
      "");
}

TEST(Statistics, ArgmaxJudgeAcceptsAnyTiedIndex) {
  const OpDef& op = ops().get("aten.argmax.default");
  const Tensor x = tensor({1, 5, 5, 2}, {4}, DType::Float32);
  Values in{x, Value(int64_t{0}), Value(false)};
  Values ref = op.run_ref(in);
  EXPECT_EQ(ref[0].tensor().get_int(0), 1);
  Tensor other = Tensor::scalar(2, DType::Int64);
  EXPECT_TRUE(op.compare.custom(in, ref, {other})[0].passed);
  Tensor wrong = Tensor::scalar(3, DType::Int64);
  EXPECT_FALSE(op.compare.custom(in, ref, {wrong})[0].passed);
  Tensor out_of_range = Tensor::scalar(4, DType::Int64);
  EXPECT_FALSE(op.compare.custom(in, ref, {out_of_range})[0].passed);
}

TEST(Statistics, AnyAllDtypesAndEmpty) {
  const Tensor u8 = tensor({0, 3}, {2}, DType::UInt8);
  EXPECT_EQ(call("aten.any.default", {u8})[0].tensor().dtype(), DType::UInt8);
  const Tensor f = tensor({0, kNaN}, {2}, DType::Float32);
  Tensor a = call("aten.any.default", {f})[0].tensor();
  EXPECT_EQ(a.dtype(), DType::Bool);
  EXPECT_EQ(a.get_int(0), 1);  // NaN is true
  EXPECT_EQ(call("aten.all.default", {Tensor::zeros({0}, DType::Float32)})[0].tensor().get_int(0),
            1);
  EXPECT_EQ(call("aten.any.default", {Tensor::zeros({0}, DType::Float32)})[0].tensor().get_int(0),
            0);
  // any.dims: None reduces all, [] reduces nothing.
  const Tensor x = tensor({0, 1, 0, 0}, {2, 2}, DType::Int64);
  EXPECT_EQ(call("aten.any.dims", {x, Value(), Value(false)})[0].tensor().shape(), Shape({}));
  Tensor none = call("aten.any.dims", {x, dims({}), Value(false)})[0].tensor();
  EXPECT_EQ(none.shape(), Shape({2, 2}));
  EXPECT_EQ(none.get_int(1), 1);
  EXPECT_EQ(none.get_int(2), 0);
  Tensor rows = call("aten.all.dim", {x, Value(int64_t{1}), Value(true)})[0].tensor();
  EXPECT_EQ(rows.shape(), Shape({2, 1}));
}

TEST(Statistics, MeanProd) {
  EXPECT_NE(op_error_of([&] {
              call("aten.mean.default", {tensor({1, 2}, {2}, DType::Int64), Value()});
            }).find("Got: Long"),
            std::string::npos);
  EXPECT_TRUE(std::isnan(
      call("aten.mean.default", {Tensor::zeros({0}, DType::Float32), Value()})[0].tensor().get(0)));
  EXPECT_EQ(
      call("aten.prod.default", {tensor({1, 1}, {2}, DType::Bool), Value()})[0].tensor().dtype(),
      DType::Int64);
  EXPECT_EQ(
      call("aten.prod.default", {Tensor::zeros({0}, DType::Float32), Value()})[0].tensor().get(0),
      1.0);
  // int8 wraps: 100 * 100 = 10000 = 16 (mod 256); dtype=i64 truncates 1.5 * 2.5 to 1 * 2.
  EXPECT_EQ(call("aten.prod.default", {tensor({100, 100}, {2}, DType::Int8), Value(DType::Int8)})[0]
                .tensor()
                .get_int(0),
            16);
  EXPECT_EQ(
      call("aten.prod.default", {tensor({1.5, 2.5}, {2}, DType::Float32), Value(DType::Int64)})[0]
          .tensor()
          .get_int(0),
      2);
  Tensor pd = call("aten.prod.dim_int", {tensor({1, 2, 3, 4}, {2, 2}, DType::Float32),
                                         Value(int64_t{1}), Value(false), Value(DType::Float64)})[0]
                  .tensor();
  EXPECT_EQ(pd.dtype(), DType::Float64);
  EXPECT_EQ(pd.get(1), 12.0);
}

TEST(Statistics, VarStdCorrection) {
  const Tensor x = tensor({1, 2, 3, 5}, {2, 2}, DType::Float32);
  auto var = [&](Value dim, Value correction) {
    return call("aten.var.correction", {x, dim, correction, Value(false)})[0].tensor();
  };
  EXPECT_FLOAT_EQ(var(Value(), Value()).get(0), 2.9166667f);   // unbiased by default
  EXPECT_FLOAT_EQ(var(dims({}), Value()).get(0), 2.9166667f);  // [] reduces all
  EXPECT_FLOAT_EQ(var(Value(), Value(int64_t{3})).get(0), 8.75f);
  EXPECT_FLOAT_EQ(var(dims({1}), Value(0.5)).get(1), 2.0f / 1.5f);    // m2 = 2 over 2 - 0.5
  EXPECT_TRUE(std::isinf(var(dims({1}), Value(int64_t{2})).get(0)));  // m2 / 0
  const Tensor ones = tensor({1, 1}, {2}, DType::Float32);
  EXPECT_TRUE(std::isnan(
      call("aten.var.correction", {ones, Value(), Value(int64_t{2}), Value(false)})[0].tensor().get(
          0)));
  Values sm = call("aten.std_mean.correction", {x, dims({0}), Value(), Value(true)});
  EXPECT_EQ(sm[0].tensor().shape(), Shape({1, 2}));
  EXPECT_FLOAT_EQ(sm[0].tensor().get(0), std::sqrt(2.0f));
  EXPECT_FLOAT_EQ(sm[1].tensor().get(1), 3.5f);
  Tensor vd = call("aten.var.dim", {x, dims({1}), Value(false), Value(true)})[0].tensor();
  EXPECT_FLOAT_EQ(vd.get(0), 0.25f);
  EXPECT_FLOAT_EQ(vd.get(1), 1.0f);
  EXPECT_EQ(op_error_of([&] {
              call("aten.var.correction",
                   {tensor({1, 2}, {2}, DType::Int32), Value(), Value(), Value(false)});
            }),
            "std and var only support floating point and complex dtypes");
  EXPECT_TRUE(std::isnan(call("aten.var.correction", {tensor({1, kInf}, {2}, DType::Float32),
                                                      Value(), Value(), Value(false)})[0]
                             .tensor()
                             .get(0)));
}

TEST(Statistics, Logsumexp) {
  Tensor r = call("aten.logsumexp.default",
                  {tensor({1, 2}, {2}, DType::Int64), dims({0}), Value(false)})[0]
                 .tensor();
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_NEAR(r.get(0), 2.3132617, 1e-6);
  const Tensor x = tensor({-kInf, -kInf, kInf, 1, kNaN, 1}, {3, 2}, DType::Float32);
  Tensor s = call("aten.logsumexp.default", {x, dims({1}), Value(false)})[0].tensor();
  EXPECT_EQ(s.get(0), -kInf);
  EXPECT_EQ(s.get(1), kInf);
  EXPECT_TRUE(std::isnan(s.get(2)));
  Tensor e = call("aten.logsumexp.default",
                  {Tensor::zeros({0, 2}, DType::Float32), dims({0}), Value(false)})[0]
                 .tensor();
  EXPECT_EQ(e.get(1), -kInf);
}

// ---- sample checks of the six families -------------------------------------------------------

const std::vector<std::string>& my_ops() {
  static const std::vector<std::string> names = {"aten.amin.default",
                                                 "aten.any.default",
                                                 "aten.any.dim",
                                                 "aten.any.dims",
                                                 "aten.all.default",
                                                 "aten.all.dim",
                                                 "aten.all.dims",
                                                 "aten.argmax.default",
                                                 "aten.argmin.default",
                                                 "aten.max.dim",
                                                 "aten.min.dim",
                                                 "aten.max.default",
                                                 "aten.min.default",
                                                 "aten.mean.default",
                                                 "aten.prod.default",
                                                 "aten.prod.dim_int",
                                                 "aten.var.correction",
                                                 "aten.var.dim",
                                                 "aten.std.correction",
                                                 "aten.var_mean.correction",
                                                 "aten.std_mean.correction",
                                                 "aten.logsumexp.default",
                                                 "aten.cumsum.default",
                                                 "aten.cumprod.default",
                                                 "aten.cumsum_.default",
                                                 "aten.sort.default",
                                                 "aten.sort.stable",
                                                 "aten.topk.default",
                                                 "aten.nonzero.default",
                                                 "aten._local_scalar_dense.default",
                                                 "aten._cdist_forward.default",
                                                 "aten._pdist_forward.default",
                                                 "aten._softmax_backward_data.default",
                                                 "aten._log_softmax_backward_data.default",
                                                 "aten.nll_loss_forward.default",
                                                 "aten.nll_loss_backward.default",
                                                 "aten.nll_loss2d_forward.default",
                                                 "aten.nll_loss2d_backward.default"};
  return names;
}

TEST(StatisticsFamilySamples, EveryOpHasEnoughCasesAndRoundTrips) {
  EXPECT_EQ(ops().all().size(), my_ops().size());
  for (const std::string& name : my_ops()) {
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
  }
}

TEST(StatisticsFamilySamples, ReferenceRaisesExactlyOnErrorCases) {
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
        EXPECT_GE(op->run_cost(args, out).bytes, 0) << op->name;
        if (op->compare.tol_scale) {
          EXPECT_GE(op->compare.tol_scale(args), 1.0) << op->name;
        }
        if (op->compare.kind == ComparePolicy::Kind::Custom) {
          // The reference must pass its own judge.
          for (const TensorCheck& c : op->compare.custom(args, out, out))
            EXPECT_TRUE(c.passed) << op->name << " [" << s.label << "] " << c.reason;
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
