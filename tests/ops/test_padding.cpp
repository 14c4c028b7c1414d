// ATen semantics of reflection/replication padding: index maps (reflection without repeating
// the edge, replication clamping, negative pads cropping), the backward's accumulation, size
// checks. Expected values came from torch (f64).
#include <gtest/gtest.h>

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

TEST(Padding, SamplesMaterialiseAndRaiseAsLabelled) { nntest::check_samples(ops()); }

}  // namespace
}  // namespace crucible
