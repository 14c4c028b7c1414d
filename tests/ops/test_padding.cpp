// ATen semantics of reflection/replication padding: index maps (reflection without repeating
// the edge, replication clamping, negative pads cropping), the backward's accumulation, size
// checks. Expected values came from torch (f64).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "crucible/ops/materialize.h"
#include "nn_test_util.h"
#include "ops/families.h"

namespace crucible {
namespace {

using nntest::expect_values;
using nntest::op_error_of;
using nntest::tensor;

const OpRegistry& ops() {
  static const OpRegistry& r = nntest::registry(register_padding_ops);
  return r;
}

Tensor iota(const Shape& s, DType t = DType::Float64) {
  std::vector<double> v;
  for (int64_t i = 0; i < numel_of(s); ++i) v.push_back(static_cast<double>(i));
  return tensor(v, s, t);
}

TEST(Padding, ForwardIndexMaps) {
  expect_values(ops()
                    .get("aten.reflection_pad1d.default")
                    .run_ref({iota({1, 2, 3}), std::vector<int64_t>{2, 1}})[0],
                {2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4});
  expect_values(ops()
                    .get("aten.replication_pad1d.default")
                    .run_ref({iota({1, 2, 3}), std::vector<int64_t>{-1, 2}})[0],
                {1, 2, 2, 2, 4, 5, 5, 5});
  expect_values(ops()
                    .get("aten.reflection_pad2d.default")
                    .run_ref({iota({1, 2, 3}), std::vector<int64_t>{1, 2, 1, 0}})[0],
                {4, 3, 4, 5, 4, 3, 1, 0, 1, 2, 1, 0, 4, 3, 4, 5, 4, 3});
  expect_values(ops()
                    .get("aten.replication_pad3d.default")
                    .run_ref({iota({1, 2, 2, 2}), std::vector<int64_t>{1, 0, 0, 1, 1, 0}})[0],
                {0, 0, 1, 2, 2, 3, 2, 2, 3, 0, 0, 1, 2, 2, 3, 2, 2, 3, 4, 4, 5, 6, 6, 7, 6, 6, 7});
  // Integer inputs are copied exactly.
  const Values i = ops()
                       .get("aten.replication_pad1d.default")
                       .run_ref({iota({2, 3}, DType::Int64), std::vector<int64_t>{1, 1}});
  EXPECT_EQ(i[0].tensor().dtype(), DType::Int64);
  EXPECT_EQ(i[0].tensor().get_int(4), 2);
}

TEST(Padding, BackwardAccumulates) {
  const Tensor g = iota({1, 3, 6});
  expect_values(ops()
                    .get("aten.reflection_pad2d_backward.default")
                    .run_ref({g, iota({1, 2, 3}), std::vector<int64_t>{1, 2, 1, 0}})[0],
                {18, 24, 9, 36, 48, 18});
  expect_values(ops()
                    .get("aten.replication_pad2d_backward.default")
                    .run_ref({g, iota({1, 2, 3}), std::vector<int64_t>{1, 2, 1, 0}})[0],
                {14, 10, 42, 25, 14, 48});
}

TEST(Padding, Errors) {
  const OpDef& r1 = ops().get("aten.reflection_pad1d.default");
  EXPECT_EQ(op_error_of([&] {
              r1.run_ref({iota({1, 2, 3}), std::vector<int64_t>{3, 0}});
            }),
            "Argument #4: Padding size should be less than the corresponding input dimension, but "
            "got: padding (3, 0) at dimension 2 of input [1, 2, 3]");
  EXPECT_EQ(op_error_of([&] {
              ops()
                  .get("aten.replication_pad3d.default")
                  .run_ref({iota({1, 2, 3, 4, 5}), std::vector<int64_t>{1, 1, 1, 1}});
            }),
            "padding size is expected to be 6");
  EXPECT_NE(op_error_of([&] { r1.run_ref({iota({1, 2, 3}), std::vector<int64_t>{-2, -1}}); }), "");
  EXPECT_NE(op_error_of([&] {
              r1.run_ref({iota({2, 3}, DType::Bool), std::vector<int64_t>{1, 1}});
            }),
            "");
  EXPECT_NE(op_error_of([&] {
              ops()
                  .get("aten.reflection_pad1d_backward.default")
                  .run_ref({iota({2, 6}), iota({2, 3}), std::vector<int64_t>{1, 1}});
            }),
            "");
  // Replication pads may exceed the input size.
  EXPECT_EQ(ops()
                .get("aten.replication_pad1d.default")
                .run_ref({iota({1, 2, 1}), std::vector<int64_t>{4, 4}})[0]
                .tensor()
                .shape(),
            Shape({1, 2, 9}));
}

// ATen's CUDA backward adds each input's gradients with atomics in the gradient's own
// precision, in an order that changes between runs. Every order must pass (else a verdict moves
// between two runs of the same kernel), and a kernel that drops a reflection must still fail.
TEST(Padding, BackwardToleranceCoversEveryOrderOfAddsInTheOutputsPrecision) {
  int checked = 0, wrong_failed = 0;
  for (const char* name :
       {"aten.reflection_pad1d_backward.default", "aten.reflection_pad2d_backward.default",
        "aten.reflection_pad3d_backward.default", "aten.replication_pad2d_backward.default"}) {
    const OpDef& op = ops().get(name);
    std::string fwd = name;
    fwd.replace(fwd.find("_backward"), 9, "");
    for (const Sample& s : op.samples(SampleContext{false})) {
      if (s.label.rfind("error:", 0) == 0) continue;
      const Values args = materialize(op, s.call, 11);
      const Tensor& g = args[0].tensor();
      if (g.dtype() != DType::Float16 && g.dtype() != DType::BFloat16) continue;
      const Tensor& self = args[1].tensor();
      // Which input element each grad_output element lands on: the forward of an iota.
      Tensor at = Tensor::empty(self.shape(), DType::Float64);
      for (int64_t i = 0; i < at.numel(); ++i) at.set(i, static_cast<double>(i));
      const Tensor src = ops().get(fwd).run_ref({at, args[2]})[0].tensor();
      const Tensor ref = op.run_ref(args)[0].tensor();
      Tensor one = Tensor::empty({1}, g.dtype());
      auto round = [&](double x) {
        one.set(0, x);
        return one.get(0);
      };
      for (int order = 0; order < 3; ++order) {
        std::vector<int64_t> seq(static_cast<size_t>(g.numel()));
        for (int64_t i = 0; i < g.numel(); ++i) seq[static_cast<size_t>(i)] = i;
        if (order == 1) std::reverse(seq.begin(), seq.end());
        if (order == 2) std::shuffle(seq.begin(), seq.end(), std::mt19937(5));
        std::vector<double> acc(static_cast<size_t>(self.numel()), 0.0);
        for (int64_t i : seq) {
          double& a = acc[static_cast<size_t>(src.get(i))];
          a = round(a + g.get(i));
        }
        Tensor got = Tensor::empty(self.shape(), g.dtype());
        for (int64_t i = 0; i < got.numel(); ++i) got.set(i, acc[static_cast<size_t>(i)]);
        const std::vector<TensorCheck> c = op.compare.custom(args, {ref}, {got});
        ASSERT_EQ(c.size(), 1u);
        EXPECT_TRUE(c[0].passed) << name << " " << s.label << " order " << order << ": "
                                 << c[0].reason;
        ++checked;
        if (order == 0 && g.numel() > self.numel()) {
          // Drop the gradient of the first padded element (one reflection lost).
          for (int64_t i = 0; i < g.numel(); ++i) {
            if (src.get(i) != src.get(0) || i == 0) continue;
            got.set(static_cast<int64_t>(src.get(i)),
                    round(ref.get(static_cast<int64_t>(src.get(i))) - g.get(i)));
            break;
          }
          if (!op.compare.custom(args, {ref}, {got}).at(0).passed) ++wrong_failed;
        }
      }
    }
  }
  EXPECT_GE(checked, 12);
  EXPECT_GE(wrong_failed, 2);
}

TEST(Padding, SamplesMaterialiseAndRaiseAsLabelled) { nntest::check_samples(ops()); }

// f64 terms whose own sum overflows in the reference's order (1e308 + 1e308 - 1e308): another
// order's finite result is right; where an infinite gradient reaches the element, it is not.
// (The sum of their magnitudes overflows f64 too, so no finite value is refused by size there.)
TEST(Padding, AFiniteSumIsAcceptedWhereTheReferencesOwnPartialSumsOverflowed) {
  const OpDef& op = ops().get("aten.replication_pad1d_backward.default");
  auto call = [&](double first) {
    Tensor g = Tensor::empty({1, 1, 4}, DType::Float64);  // pad (2, 0): g[0..2] land on x[0]
    const double vals[] = {first, 1e308, -1e308, 5};
    for (int64_t i = 0; i < 4; ++i) g.set(i, vals[i]);
    Tensor self = Tensor::empty({1, 1, 2}, DType::Float64);
    self.set(0, 0);
    self.set(1, 0);
    return Values{g, self, std::vector<int64_t>{2, 0}};
  };
  auto judge = [&](const Values& args, double got0) {
    Tensor ref = op.run_ref(args)[0].tensor();
    Tensor got = ref.clone();
    got.set(0, got0);
    return op.compare.custom(args, {ref}, {got});
  };
  const Values overflowing = call(1e308);
  ASSERT_TRUE(std::isinf(op.run_ref(overflowing)[0].tensor().get(0)));
  std::vector<TensorCheck> c = judge(overflowing, 1e308);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(c[0].passed) << c[0].reason;
  // An infinite gradient reaches x[0]: every order is infinite there.
  const Values infinite = call(INFINITY);
  ASSERT_TRUE(std::isinf(op.run_ref(infinite)[0].tensor().get(0)));
  EXPECT_FALSE(judge(infinite, 1e308)[0].passed);
}

}  // namespace
}  // namespace crucible
