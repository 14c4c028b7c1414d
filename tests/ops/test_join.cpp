// ATen semantics of cat, stack, repeat, flip, roll, tril, triu and constant_pad_nd, with values
// checked against torch.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& join_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_join_ops(*reg);
    return reg;
  }();
  return *r;
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

Tensor tensor(const std::vector<double>& vals, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < vals.size(); ++i) x.set(static_cast<int64_t>(i), vals[i]);
  return x;
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
  return v;
}

// Every op: >= 8 correctness samples, each materialises, and its reference raises exactly when
// the label starts with "error:".
void check_all_samples(const OpRegistry& reg) {
  for (const OpDef* op : reg.all()) {
    const auto samples = op->samples(SampleContext{false});
    EXPECT_GE(samples.size(), 8u) << op->name;
    for (const Sample& s : samples) {
      const bool must_raise = s.label.rfind("error:", 0) == 0;
      bool raised = false;
      std::string msg;
      try {
        const Values args = materialize(*op, s.call, 7);
        op->run_ref(args, 7);
      } catch (const Error& e) {
        raised = true;
        msg = e.what();
      }
      EXPECT_EQ(raised, must_raise) << op->name << " / " << s.label << ": " << msg;
    }
    EXPECT_FALSE(op->samples(SampleContext{true}).empty()) << op->name;
  }
}

Tensor run1(const std::string& op, Values args) {
  return join_ops().get(op).run_ref(args)[0].tensor();
}
Value list(std::vector<int64_t> v) { return Value(std::move(v)); }

const Tensor a23 = tensor({0, 1, 2, 3, 4, 5}, {2, 3}, DType::Int64);

TEST(JoinOps, CatPromotesAndSkipsLegacyEmpty) {
  // cat([bool [2], i8 [1]]) -> i8 [1, 0, 3].
  Tensor c =
      run1("aten.cat.default",
           {Value::tensor_list({tensor({1, 0}, {2}, DType::Bool), tensor({3}, {1}, DType::Int8)}),
            Value(0)});
  EXPECT_EQ(c.dtype(), DType::Int8);
  EXPECT_EQ(values_of(c), std::vector<double>({1, 0, 3}));
  // A skipped f64 [0] still takes part in promotion; the dim wraps against the 2-d tensor.
  c = run1("aten.cat.default", {Value::tensor_list({Tensor::zeros({0}, DType::Float64),
                                                    Tensor::zeros({2, 3}, DType::Float32)}),
                                Value(-1)});
  EXPECT_EQ(c.dtype(), DType::Float64);
  EXPECT_EQ(c.shape(), Shape({2, 3}));
  c = run1(
      "aten.cat.default",
      {Value::tensor_list({Tensor::zeros({0}, DType::Int8), Tensor::zeros({0}, DType::Float16)}),
       Value(3)});
  EXPECT_EQ(c.shape(), Shape({0}));
  EXPECT_EQ(c.dtype(), DType::Float16);
  EXPECT_EQ(op_error_of([&] {
              run1("aten.cat.default", {Value::tensor_list({Tensor::zeros({2, 3}, DType::Float32),
                                                            Tensor::zeros({2, 4}, DType::Float32)}),
                                        Value(0)});
            }),
            "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for "
            "tensor number 1 in the list.");
  EXPECT_EQ(op_error_of([&] {
              run1("aten.cat.default",
                   {Value::tensor_list({Tensor::scalar(1, DType::Float32)}), Value(0)});
            }),
            "zero-dimensional tensor (at position 0) cannot be concatenated");
}

TEST(JoinOps, StackRepeatFlipRoll) {
  Tensor s = run1("aten.stack.default", {Value::tensor_list({a23, a23}), Value(1)});
  EXPECT_EQ(s.shape(), Shape({2, 2, 3}));
  EXPECT_EQ(values_of(s), std::vector<double>({0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(values_of(run1("aten.repeat.default", {a23, list({1, 2})})),
            std::vector<double>({0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(run1("aten.repeat.default", {a23, list({2, 1, 2})}).shape(), Shape({2, 2, 6}));
  EXPECT_EQ(values_of(run1("aten.flip.default", {a23, list({1})})),
            std::vector<double>({2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(values_of(run1("aten.roll.default", {a23, list({1}), list({})})),
            std::vector<double>({5, 0, 1, 2, 3, 4}));
  EXPECT_EQ(values_of(run1("aten.roll.default", {a23, list({1, -1}), list({0, 1})})),
            std::vector<double>({4, 5, 3, 1, 2, 0}));
  EXPECT_EQ(op_error_of([&] {
              run1("aten.roll.default", {a23, list({1, 2}), list({})});
            }),
            "shifts and dimensions must align. shifts: 2, dims:0");
  EXPECT_EQ(op_error_of([&] {
              run1("aten.flip.default", {a23, list({0, -2})});
            }),
            "dim 0 appears multiple times in the list of dims");
  EXPECT_EQ(op_error_of([&] {
              run1("aten.repeat.default", {a23, list({2})});
            }),
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
            "tensor");
}

TEST(JoinOps, TriangularAndPad) {
  const Tensor m = tensor({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}, DType::Int32);
  EXPECT_EQ(values_of(run1("aten.tril.default", {m, Value(-1)})),
            std::vector<double>({0, 0, 0, 4, 0, 0, 7, 8, 0}));
  EXPECT_EQ(values_of(run1("aten.triu.default",
                           {tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float16), Value(1)})),
            std::vector<double>({0, 2, 3, 0, 0, 6}));
  EXPECT_EQ(op_error_of([&] {
              run1("aten.tril.default", {Tensor::zeros({3}, DType::Float32), Value(0)});
            }),
            "tril: input tensor must have at least 2 dimensions");
  const Tensor p = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float32);
  // Negative pads crop: pad (1, -1) on the last dim, (0, 1) on the first.
  EXPECT_EQ(values_of(run1("aten.constant_pad_nd.default", {p, list({1, -1, 0, 1}), Value(9.0)})),
            std::vector<double>({9, 1, 2, 9, 4, 5, 9, 9, 9}));
  // A float value on an integer tensor is truncated; on bool it is != 0.
  EXPECT_EQ(values_of(run1("aten.constant_pad_nd.default", {a23, list({0, 1}), Value(2.7)})),
            std::vector<double>({0, 1, 2, 2, 3, 4, 5, 2}));
  EXPECT_EQ(run1("aten.constant_pad_nd.default",
                 {Tensor::zeros({1, 1}, DType::Bool), list({1, 0}), Value(0.5)})
                .get(0),
            1.0);
  EXPECT_EQ(op_error_of([&] {
              run1("aten.constant_pad_nd.default", {p, list({1, 2, 3}), Value(0)});
            }),
            "Length of pad must be even but instead it equals 3");
  EXPECT_NE(op_error_of([&] {
              run1("aten.constant_pad_nd.default", {p, list({-2, -2}), Value(0)});
            }).find("resulted in a negative output size"),
            std::string::npos);
}

TEST(JoinOps, SamplesMaterialiseAndRaiseAsLabelled) { check_all_samples(join_ops()); }

}  // namespace
}  // namespace crucible
