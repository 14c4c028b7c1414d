// Scalar, Value (typed access, printing) and deep_copy (layout and aliasing kept).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "crucible/core/error.h"
#include "crucible/core/value.h"

namespace crucible {
namespace {

TEST(Scalar, KindsAndConversions) {
  EXPECT_TRUE(Scalar(true).is_bool());
  EXPECT_TRUE(Scalar(3).is_integral());
  EXPECT_TRUE(Scalar(int64_t{1} << 60).is_integral());
  EXPECT_TRUE(Scalar(2.5).is_floating());
  EXPECT_EQ(Scalar(true).category(), DTypeCategory::Bool);
  EXPECT_EQ(Scalar(1).category(), DTypeCategory::Integral);
  EXPECT_EQ(Scalar(1.0).category(), DTypeCategory::Floating);
  EXPECT_EQ(Scalar(2.9).to_int(), 2);
  EXPECT_EQ(Scalar(-2.9).to_int(), -2);
  EXPECT_EQ(Scalar(true).to_double(), 1.0);
  EXPECT_TRUE(Scalar(0.5).to_bool());
  EXPECT_FALSE(Scalar(0).to_bool());
  EXPECT_EQ(Scalar(std::numeric_limits<int64_t>::max()).to_int(),
            std::numeric_limits<int64_t>::max());
  EXPECT_THROW(Scalar(std::nan("")).to_int(), Error);
}

TEST(Scalar, PrintsLikePython) {
  EXPECT_EQ(Scalar(true).str(), "True");
  EXPECT_EQ(Scalar(-7).str(), "-7");
  EXPECT_EQ(Scalar(1.0).str(), "1.0");
  EXPECT_EQ(Scalar(1e-05).str(), "1e-05");
  EXPECT_EQ(Scalar(0.0001).str(), "0.0001");
  EXPECT_EQ(Scalar(0.1).str(), "0.1");
  EXPECT_EQ(Scalar(-65504.0).str(), "-65504.0");
  EXPECT_EQ(Scalar(1e16).str(), "1e+16");
  EXPECT_EQ(Scalar(123456789012345.6).str(), "123456789012345.6");
  EXPECT_EQ(Scalar(2.5e-300).str(), "2.5e-300");
  EXPECT_EQ(Scalar(-0.0).str(), "-0.0");
  EXPECT_EQ(Scalar(std::numeric_limits<double>::infinity()).str(), "inf");
  EXPECT_EQ(Scalar(-std::numeric_limits<double>::infinity()).str(), "-inf");
  EXPECT_EQ(Scalar(std::nan("")).str(), "nan");
}

TEST(Value, TypedAccess) {
  Value none;
  EXPECT_TRUE(none.is_none());
  EXPECT_EQ(none.opt_int(), std::nullopt);
  EXPECT_EQ(none.opt_tensor(), std::nullopt);
  EXPECT_EQ(none.opt_dtype(), std::nullopt);
  Value i(int64_t{5});
  EXPECT_EQ(i.kind(), ValueKind::Int);
  EXPECT_TRUE(i.is_scalar());
  EXPECT_EQ(i.to_int(), 5);
  EXPECT_EQ(i.to_double(), 5.0);
  EXPECT_EQ(i.to_int_list(), (std::vector<int64_t>{5}));
  EXPECT_TRUE(i.to_scalar().is_integral());
  EXPECT_EQ(i.opt_double(), 5.0);
  EXPECT_TRUE(Value(2.5).to_scalar().is_floating());
  EXPECT_TRUE(Value(false).to_scalar().is_bool());
  EXPECT_EQ(Value(Scalar(1.5)).kind(), ValueKind::Float);
  EXPECT_EQ(Value(Scalar(true)).kind(), ValueKind::Bool);
  EXPECT_EQ(Value(Scalar(3)).kind(), ValueKind::Int);
  EXPECT_EQ(Value("mean").str_value(), "mean");
  EXPECT_EQ(Value(std::vector<int64_t>{1, 2}).to_int_list(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Value(std::vector<double>{0.5}).float_list(), (std::vector<double>{0.5}));
  EXPECT_EQ(Value(std::vector<bool>{true}).bool_list(), (std::vector<bool>{true}));
  EXPECT_EQ(Value(DType::Float16).to_dtype(), DType::Float16);
  EXPECT_EQ(Value(DType::Float16).opt_dtype(), DType::Float16);
  EXPECT_EQ(Value(Device::cuda(1)).to_device(), Device::cuda(1));
  EXPECT_EQ(Value("cuda:1").to_device(), Device::cuda(1));
  EXPECT_EQ(Value(Layout::Strided).to_layout(), Layout::Strided);
  EXPECT_EQ(Value(MemoryFormat::ChannelsLast).to_memory_format(), MemoryFormat::ChannelsLast);
  Tensor t = Tensor::empty({2}, DType::Float32);
  EXPECT_EQ(Value(t).tensor().storage(), t.storage());
  EXPECT_TRUE(Value(t).opt_tensor().has_value());
}

TEST(Value, WrongKindIsAnOpErrorNamingBothKinds) {
  try {
    Value(2.5).tensor();
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError);
    EXPECT_EQ(std::string(e.what()), "expected a value of type Tensor but got float");
  }
  EXPECT_THROW(Value("x").to_int(), Error);
  EXPECT_THROW(Value(1.5).to_int(), Error);
  EXPECT_THROW(Value().to_double(), Error);
  EXPECT_THROW(Value(1).to_dtype(), Error);
  EXPECT_THROW(Value(1).tensors(), Error);
}

TEST(Value, TensorLists) {
  Tensor a = Tensor::empty({1}, DType::Float32);
  Value l = Value::tensor_list({a, a});
  EXPECT_EQ(l.kind(), ValueKind::TensorList);
  EXPECT_EQ(l.tensors().size(), 2u);
  Value o = Value::tensor_list({a, Tensor()}, true);
  EXPECT_EQ(o.kind(), ValueKind::OptTensorList);
  EXPECT_FALSE(o.tensors()[1].defined());
  EXPECT_THROW(Value::tensor_list({a, Tensor()}), Error);
  EXPECT_EQ(o.debug_str(), "[T([1], f32), None]");
  EXPECT_STREQ(value_kind_name(ValueKind::OptTensorList), "Tensor?[]");
}

TEST(Value, DebugStr) {
  EXPECT_EQ(Value().debug_str(), "None");
  EXPECT_EQ(Value(std::vector<int64_t>{1, -2}).debug_str(), "[1, -2]");
  EXPECT_EQ(Value(std::vector<double>{1.0, 1e-05}).debug_str(), "[1.0, 1e-05]");
  EXPECT_EQ(Value(true).debug_str(), "True");
  EXPECT_EQ(Value("sum").debug_str(), "'sum'");
  EXPECT_EQ(Value(DType::BFloat16).debug_str(), "bf16");
  EXPECT_EQ(Value(Device::cpu()).debug_str(), "'cpu'");
  EXPECT_EQ(Value(Layout::Strided).debug_str(), "torch.strided");
  EXPECT_EQ(Value(MemoryFormat::Contiguous).debug_str(), "torch.contiguous_format");
  EXPECT_EQ(Value(Tensor::empty({2, 3}, DType::Float32).transpose(0, 1)).debug_str(),
            "T([3, 2], f32, stride=(1, 3))");
}

TEST(DeepCopy, KeepsLayoutAndContents) {
  Tensor base = Tensor::empty({4, 5}, DType::Float32);
  for (int64_t i = 0; i < 20; ++i) base.set(i, static_cast<double>(i));
  Tensor view = base.slice(1, 1, 5, 2).transpose(0, 1);  // offset 1, strides (2, 5)
  Values out = deep_copy({Value(view), Value(int64_t{3})});
  const Tensor& c = out[0].tensor();
  EXPECT_NE(c.storage(), base.storage());
  EXPECT_EQ(c.shape(), view.shape());
  EXPECT_EQ(c.strides(), view.strides());
  EXPECT_EQ(c.offset(), view.offset());
  EXPECT_FALSE(c.is_contiguous());
  for (int64_t i = 0; i < view.numel(); ++i) EXPECT_EQ(c.get(i), view.get(i));
  EXPECT_EQ(out[1].to_int(), 3);
  c.set(0, -1);
  EXPECT_EQ(view.get(0), 1);  // the original is untouched
}

TEST(DeepCopy, KeepsAliasingBetweenArguments) {
  Tensor base = Tensor::zeros({6}, DType::Int32);
  Tensor other = Tensor::zeros({2}, DType::Int32);
  Values in = {Value(base.slice(0, 0, 3)), Value::tensor_list({base.slice(0, 3, 6), other}),
               Value(base.view({2, 3}))};
  Values out = deep_copy(in);
  const Tensor& a = out[0].tensor();
  const Tensor& b = out[1].tensors()[0];
  const Tensor& c = out[2].tensor();
  EXPECT_EQ(a.storage(), b.storage());
  EXPECT_EQ(a.storage(), c.storage());
  EXPECT_NE(a.storage(), base.storage());
  EXPECT_NE(out[1].tensors()[1].storage(), a.storage());
  EXPECT_EQ(b.offset(), 3);
  b.set(0, 9);
  EXPECT_EQ(c.get(3), 9);
  EXPECT_EQ(base.get(3), 0);
  EXPECT_EQ(out[1].kind(), ValueKind::TensorList);
}

TEST(DeepCopy, EmptyAndUndefined) {
  Values out = deep_copy(
      {Value(Tensor::empty({0}, DType::Float32)), Value(), Value::tensor_list({Tensor()}, true)});
  EXPECT_EQ(out[0].tensor().numel(), 0);
  EXPECT_TRUE(out[1].is_none());
  EXPECT_FALSE(out[2].tensors()[0].defined());
}

}  // namespace
}  // namespace crucible
