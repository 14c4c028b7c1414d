// ATen semantics of the copy ops' references: clone's memory formats and strides, _to_copy's
// conversions and keyword arguments, copy_'s broadcasting, conversion and in-place result.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& copy_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_copy_ops(*reg);
    return reg;
  }();
  return *r;
}

Values call(const std::string& op, const Values& args) { return copy_ops().get(op).run_ref(args); }

Tensor iota(const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i));
  return x;
}
Tensor vec(const std::vector<double>& vals, DType t) {
  Tensor x = Tensor::empty({static_cast<int64_t>(vals.size())}, t);
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

void expect_same_values(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.get(i), b.get(i)) << "at " << i;
}

Values clone(const Tensor& t, Value mf = Value()) { return call("aten.clone.default", {t, mf}); }

TEST(Clone, PreserveKeepsStridesOfDenseInputs) {
  const Tensor t = iota({3, 4}, DType::Float32).transpose(0, 1);
  const Tensor c = clone(t)[0].tensor();
  EXPECT_EQ(c.strides(), (Shape{1, 4}));
  EXPECT_FALSE(c.shares_storage(t));
  expect_same_values(c, t);
  EXPECT_EQ(clone(t, Value(MemoryFormat::Preserve))[0].tensor().strides(), (Shape{1, 4}));
  const Tensor cc = clone(t, Value(MemoryFormat::Contiguous))[0].tensor();
  EXPECT_EQ(cc.strides(), (Shape{3, 1}));
  expect_same_values(cc, t);
}

TEST(Clone, PreserveOfNonDenseKeepsThePermutation) {
  // Every other column of a [6, 10] matrix, then transposed: strides (2, 10) -> dense (1, 5).
  const Tensor base = iota({6, 10}, DType::Int32);
  const Tensor sliced = base.slice(1, 0, 10, 2);
  EXPECT_EQ(clone(sliced)[0].tensor().strides(), (Shape{5, 1}));
  const Tensor st = sliced.transpose(0, 1);
  const Tensor c = clone(st)[0].tensor();
  EXPECT_EQ(c.strides(), (Shape{1, 5}));
  expect_same_values(c, st);
  // Expanded (stride 0) dims keep their place: contiguous strides.
  const Tensor e = iota({1, 8}, DType::Float16).expand({4, 8});
  EXPECT_EQ(clone(e)[0].tensor().strides(), (Shape{8, 1}));
  // Empty tensors are dense: their strides are kept.
  const Tensor empty = Tensor::empty_strided({3, 0}, {1, 3}, DType::Float32);
  EXPECT_EQ(clone(empty)[0].tensor().strides(), (Shape{1, 3}));
}

TEST(Clone, ChannelsLast) {
  const Tensor t = iota({2, 3, 4, 5}, DType::Float32);
  const Tensor c = clone(t, Value(MemoryFormat::ChannelsLast))[0].tensor();
  EXPECT_EQ(c.strides(), (Shape{60, 1, 15, 3}));
  expect_same_values(c, t);
  EXPECT_EQ(op_error_of([] {
              clone(iota({3, 4, 5}, DType::Float32), Value(MemoryFormat::ChannelsLast));
            }),
            "required rank 4 tensor to use channels_last format");
  const Tensor c3 =
      clone(iota({2, 3, 2, 4, 5}, DType::Float32), Value(MemoryFormat::ChannelsLast3d))[0].tensor();
  EXPECT_EQ(c3.strides(), (Shape{120, 1, 60, 15, 3}));
}

Values to_copy(const Tensor& t, Value dtype, Value layout = Value(), Value device = Value(),
               Value mf = Value()) {
  return call("aten._to_copy.default", {t, dtype, layout, device, Value(), Value(false), mf});
}

TEST(ToCopy, Conversions) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor r = to_copy(vec({1.0 / 3, 70000}, DType::Float32), Value(DType::Float16))[0].tensor();
  EXPECT_EQ(r.dtype(), DType::Float16);
  EXPECT_EQ(r.get(0), 0.333251953125);
  EXPECT_EQ(r.get(1), std::numeric_limits<double>::infinity());
  r = to_copy(vec({-2.7, 2.7, -0.5}, DType::Float32), Value(DType::Int32))[0].tensor();
  EXPECT_EQ(r.get_int(0), -2);  // truncation toward zero
  EXPECT_EQ(r.get_int(1), 2);
  EXPECT_EQ(r.get_int(2), 0);
  r = to_copy(vec({-1.0, 256.5}, DType::Float32), Value(DType::UInt8))[0].tensor();
  EXPECT_EQ(r.get_int(0), 255);  // through int64, then wrapped
  EXPECT_EQ(r.get_int(1), 0);
  r = to_copy(vec({0.0, -0.0, nan, 0.1}, DType::Float32), Value(DType::Bool))[0].tensor();
  EXPECT_EQ(r.get_int(0), 0);
  EXPECT_EQ(r.get_int(1), 0);
  EXPECT_EQ(r.get_int(2), 1);
  EXPECT_EQ(r.get_int(3), 1);
  r = to_copy(vec({300, -1}, DType::Int64), Value(DType::Int8))[0].tensor();
  EXPECT_EQ(r.get_int(0), 44);
  EXPECT_EQ(r.get_int(1), -1);
  r = to_copy(vec({1, 0}, DType::Bool), Value(DType::Float32))[0].tensor();
  EXPECT_EQ(r.get(0), 1.0);
}

TEST(ToCopy, KeywordArguments) {
  const Tensor t = iota({3, 4}, DType::Float32).transpose(0, 1);
  // No dtype: a plain copy; layout strided and device 'cuda' are accepted (the device is
  // informational for the reference, which runs on the CPU).
  Tensor r = to_copy(t, Value(), Value(Layout::Strided), Value(Device::cuda()))[0].tensor();
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(r.strides(), (Shape{1, 4}));
  expect_same_values(r, t);
  r = to_copy(t, Value(DType::Float64), Value(), Value(), Value(MemoryFormat::Contiguous))[0]
          .tensor();
  EXPECT_EQ(r.strides(), (Shape{3, 1}));
  EXPECT_NE(op_error_of([&] {
              to_copy(t, Value(), Value(Layout::SparseCoo));
            }).find("doesn't support converting to a different layout"),
            std::string::npos);
  // The traced case: an expanded f16 input copied to f16 gets contiguous strides.
  const Tensor e = iota({1, 1, 2, 2}, DType::Float16).expand({4, 1, 2, 2});
  EXPECT_EQ(to_copy(e, Value(DType::Float16))[0].tensor().strides(), (Shape{4, 4, 2, 1}));
}

TEST(CopyInplace, BroadcastsConvertsAndReturnsSelf) {
  const Tensor self = Tensor::zeros({3, 2}, DType::Int32);
  const Values r =
      call("aten.copy_.default", {self, vec({-1.5, 7.9}, DType::Float32), Value(false)});
  EXPECT_EQ(r[0].tensor().data_ptr(), self.data_ptr());
  const std::vector<int64_t> want = {-1, 7, -1, 7, -1, 7};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(self.get_int(i), want[i]);
  // Into a non-contiguous self.
  const Tensor base = Tensor::zeros({2, 3}, DType::Float16);
  call("aten.copy_.default", {base.transpose(0, 1), iota({3, 2}, DType::Float64), Value(true)});
  const std::vector<double> want_base = {0, 2, 4, 1, 3, 5};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(base.get(i), want_base[i]);
  // A 0-d source fills self; i64 -1 into u8 wraps.
  const Tensor u = Tensor::zeros({4}, DType::UInt8);
  call("aten.copy_.default", {u, Tensor::scalar(-1, DType::Int64), Value(false)});
  EXPECT_EQ(u.get_int(3), 255);
}

TEST(CopyInplace, OverlappingSourceIsReadFirst) {
  const Tensor base = iota({6}, DType::Float32);
  call("aten.copy_.default", {base.slice(0, 1, 6), base.slice(0, 0, 5), Value(false)});
  const std::vector<double> want = {0, 0, 1, 2, 3, 4};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(base.get(i), want[i]);
}

TEST(CopyInplace, Errors) {
  EXPECT_EQ(op_error_of([] {
              call("aten.copy_.default", {Tensor::zeros({2}, DType::Float32),
                                          iota({3, 2}, DType::Float32), Value(false)});
            }),
            "output with shape [2] doesn't match the broadcast shape [3, 2]");
  const Tensor expanded = Tensor::zeros({1, 2}, DType::Float32).expand({3, 2});
  EXPECT_NE(op_error_of([&] {
              call("aten.copy_.default", {expanded, iota({3, 2}, DType::Float32), Value(false)});
            }).find("more than one element of the written-to tensor"),
            std::string::npos);
}

TEST(CopyCost, CountsBytesMoved) {
  const OpDef& op = copy_ops().get("aten._to_copy.default");
  const Tensor t = iota({4, 8}, DType::Float32);
  const Values args = {t, Value(DType::Float16), Value(), Value(), Value(), Value(false), Value()};
  const Cost c = op.run_cost(args, op.run_ref(args));
  EXPECT_EQ(c.bytes, 32 * 4 + 32 * 2);
  const Tensor e = iota({1, 8}, DType::Float32).expand({4, 8});
  const Values cargs = {e, Value()};
  EXPECT_EQ(copy_ops().get("aten.clone.default").run_cost(cargs, clone(e)).bytes, 8 * 4 + 32 * 4);
}

}  // namespace
}  // namespace crucible
