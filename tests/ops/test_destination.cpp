// Destination-passing (crucible/ops/destination.h): outputs allocated from the meta function's
// specs, implementations that never see a call the meta function refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/op.h"

namespace crucible {
namespace {

OpDef op_of(std::string_view schema) { return OpDef::from_schema(schema, "test"); }

TEST(Destination, FreshOutputsTakeTheMetaShapeStridesAndDtypeArgumentsPassThrough) {
  const OpDef op =
      op_of("aten::test(Tensor(a!) self, Tensor[] xs) -> (Tensor, Tensor(a!), Tensor[])");
  const Tensor self = Tensor::full({2, 3}, 7, DType::Float32);
  // A channels-last-like layout: the output keeps the meta function's strides, not contiguous.
  const Value fresh(Tensor::meta_strided({2, 3, 4}, {12, 1, 3}, DType::BFloat16));
  const Value list = Value::tensor_list({Tensor::meta({5}, DType::Int64), self});
  for (const OutputFill fill : {OutputFill::Zeros, OutputFill::Uninitialized}) {
    const Values out = allocate_outputs(op, {fresh, Value(self), list}, fill);
    ASSERT_EQ(out.size(), 3u);
    const Tensor& t = out[0].tensor();
    EXPECT_FALSE(t.is_meta());
    EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
    EXPECT_EQ(t.strides(), (Shape{12, 1, 3}));
    EXPECT_EQ(t.dtype(), DType::BFloat16);
    if (fill == OutputFill::Zeros) {
      for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.get(i), 0.0);
    }
    // The argument written in place is the argument itself, not a copy.
    EXPECT_TRUE(out[1].tensor().shares_storage(self));
    const std::vector<Tensor>& l = out[2].tensors();
    ASSERT_EQ(l.size(), 2u);
    EXPECT_FALSE(l[0].is_meta());
    EXPECT_EQ(l[0].shape(), Shape{5});
    EXPECT_EQ(l[0].dtype(), DType::Int64);
    EXPECT_TRUE(l[1].shares_storage(self));
  }
}

TEST(Destination, ADataDependentOpsOutputsAreNotAllocatedFromBounds) {
  OpDef op = op_of("aten::test(Tensor self) -> Tensor");
  op.data_dependent = true;
  EXPECT_THROW(allocate_outputs(op, {Value(Tensor::meta({8}, DType::Int64))}, OutputFill::Zeros),
               Error);
  EXPECT_THROW(
      structured_ref([](const Args&) { return Values{}; }, [](const Args&, const Values&) {}, true),
      Error);
}

TEST(Destination, TheImplementationNeverSeesACallTheMetaFunctionRefuses) {
  const OpDef op = op_of("aten::test(Tensor self) -> Tensor");
  int impl_calls = 0;
  const RefFn ref = structured_ref(
      [](const Args& a) {
        CRUCIBLE_CHECK(a.tensor("self").dtype() != DType::Bool, "no bool");
        return Values{Value(Tensor::meta(a.tensor("self").shape(), DType::Float32))};
      },
      [&impl_calls](const Args& a, const Values& out) {
        ++impl_calls;
        // The output arrives allocated and zeroed; the implementation only computes.
        EXPECT_EQ(out.at(0).tensor().get(0), 0.0);
        out.at(0).tensor().set(0, a.tensor("self").get(0) + 1);
      });
  const Values bad{Value(Tensor::full({1}, 1, DType::Bool))};
  EXPECT_THROW(ref(Args(bad, op.schema)), Error);
  EXPECT_EQ(impl_calls, 0);
  const Values good{Value(Tensor::full({1}, 41, DType::Int32))};
  const Values out = ref(Args(good, op.schema));
  EXPECT_EQ(impl_calls, 1);
  EXPECT_EQ(out.at(0).tensor().dtype(), DType::Float32);
  EXPECT_EQ(out.at(0).tensor().get(0), 42.0);
}

// The catalog's structured references give the outputs their meta functions describe: an
// in-place relu_ writes its argument and returns it.
TEST(Destination, TheCatalogsInPlaceReluWritesItsArgument) {
  const OpDef& op = OpRegistry::catalog().get("aten.relu_.default");
  Tensor x = Tensor::empty({4}, DType::Float32);
  const double in[] = {-2, 0.5, -0.0, 3};
  for (int64_t i = 0; i < 4; ++i) x.set(i, in[i]);
  const Values out = op.run_ref({Value(x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].tensor().shares_storage(x));
  EXPECT_EQ(x.get(0), 0.0);
  EXPECT_EQ(x.get(1), 0.5);
  EXPECT_EQ(x.get(3), 3.0);
  EXPECT_TRUE(std::signbit(x.get(2)));  // relu keeps -0.0, as clamp_min does
}

}  // namespace
}  // namespace crucible
