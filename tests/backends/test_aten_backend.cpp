// The `aten` backend: dispatcher calls by schema name, zero-copy conversion both ways (strides,
// offsets, shared storage), wrapped numbers, errors mapped to crucible's kinds, seeding. In a
// build without libtorch: the registry says clearly that there is no ATen and how to get it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crucible/backends/backend.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "crucible/schema/schema.h"

namespace crucible {
namespace {

// The error a call raises (kind and message); fails the test when it raises none.
template <typename F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error raised";
  return Error(ErrorKind::Internal, "");
}

#ifdef CRUCIBLE_HAVE_ATEN

Tensor iota(const Shape& shape, DType dtype, double scale = 0.25) {
  Tensor t = Tensor::empty(shape, dtype);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(i) * scale - 1.0);
  return t;
}

Values call(Backend& b, const std::string& op, const Values& positional,
            const std::vector<std::pair<std::string, Value>>& keywords = {}) {
  const OpDef& def = OpRegistry::catalog().get(op);
  return b.run(def, bind_arguments(def.schema, positional, keywords));
}

class AtenBackendTest : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> aten = BackendRegistry::instance().create("aten");
  std::unique_ptr<Backend> ref = BackendRegistry::instance().create("ref");
};

TEST_F(AtenBackendTest, NameVersionAndDevice) {
  EXPECT_EQ(aten->name(), "aten");
  EXPECT_EQ(aten->version().rfind("libtorch ", 0), 0u) << aten->version();
  EXPECT_TRUE(aten->device().is_cpu());
  EXPECT_EQ(BackendRegistry::instance().create("aten:cpu")->name(), "aten:cpu");
}

TEST_F(AtenBackendTest, HasOpFollowsTheDispatcher) {
  const auto& cat = OpRegistry::catalog();
  EXPECT_TRUE(aten->has_op(cat.get("aten.add.Tensor")));
  EXPECT_TRUE(aten->has_op(cat.get("aten.convolution.default")));
  OpDef made_up = OpDef::from_schema("aten::crucible_no_such_op(Tensor self) -> Tensor", "test");
  EXPECT_FALSE(aten->has_op(made_up));
  std::string why;
  EXPECT_FALSE(aten->supports(made_up, {Value(iota({2}, DType::Float32))}, &why));
  EXPECT_NE(why.find("has no aten::crucible_no_such_op"), std::string::npos) << why;
  EXPECT_EQ(error_of([&] { aten->run(made_up, {Value(iota({2}, DType::Float32))}); }).kind(),
            ErrorKind::Unsupported);
}

TEST_F(AtenBackendTest, NonContiguousInputsAndKeywordScalars) {
  Tensor a = iota({3, 4}, DType::Float32).transpose(0, 1);  // strides (1, 4)
  Tensor b = iota({4, 3}, DType::Float32, 0.5);
  Values got = call(*aten, "aten.add.Tensor", {Value(a), Value(b)}, {{"alpha", Value(2.0)}});
  Values want = call(*ref, "aten.add.Tensor", {Value(a), Value(b)}, {{"alpha", Value(2.0)}});
  ASSERT_EQ(got.size(), 1u);
  const Tensor& g = got[0].tensor();
  ASSERT_EQ(g.shape(), (Shape{4, 3}));
  EXPECT_EQ(g.dtype(), DType::Float32);
  for (int64_t i = 0; i < g.numel(); ++i) EXPECT_EQ(g.get(i), want[0].tensor().get(i)) << i;
}

TEST_F(AtenBackendTest, ViewsShareTheInputsStorageWithAtensStrides) {
  Tensor x = iota({2, 3, 4}, DType::Float32).slice(2, 1, 4);  // offset 1, strides (12, 4, 1)
  Values t = call(*aten, "aten.transpose.int", {Value(x), Value(0), Value(2)});
  const Tensor& v = t[0].tensor();
  EXPECT_TRUE(v.shares_storage(x));
  EXPECT_EQ(v.offset(), 1);
  EXPECT_EQ(v.shape(), (Shape{3, 3, 2}));
  EXPECT_EQ(v.strides(), (Shape{1, 4, 12}));
  // A write through the view is visible through the input: one memory.
  v.set(0, 42.0);
  EXPECT_EQ(x.get(0), 42.0);

  Values parts = call(*aten, "aten.split.Tensor", {Value(iota({5, 2}, DType::Float64)), Value(2)});
  ASSERT_EQ(parts.size(), 1u);
  const auto& ts = parts[0].tensors();
  ASSERT_EQ(ts.size(), 3u);
  EXPECT_TRUE(ts[0].shares_storage(ts[2]));
  EXPECT_EQ(ts[2].offset(), 8);
  EXPECT_EQ(ts[2].shape(), (Shape{1, 2}));
}

TEST_F(AtenBackendTest, InPlaceOpsWriteTheArgumentAndReturnIt) {
  Tensor self = iota({2, 3}, DType::Float64);
  Tensor other = iota({3}, DType::Float64, 1.0);
  Tensor expect = call(*ref, "aten.add.Tensor", {Value(self), Value(other)})[0].tensor();
  Values got = call(*aten, "aten.add_.Tensor", {Value(self), Value(other)});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].tensor().shares_storage(self));
  for (int64_t i = 0; i < self.numel(); ++i) EXPECT_EQ(self.get(i), expect.get(i)) << i;
}

TEST_F(AtenBackendTest, PythonNumbersAreWrappedNumbers) {
  // A Python float added to an f16 tensor keeps f16 (a wrapped number does not promote).
  Tensor h = iota({4}, DType::Float16);
  Values got = call(*aten, "aten.add.Tensor", {Value(h), Value(1.5)});
  EXPECT_EQ(got[0].tensor().dtype(), DType::Float16);
  EXPECT_EQ(got[0].tensor().get(0), 0.5);
  // An int tensor times a Python float is the default float dtype.
  Values f = call(*aten, "aten.mul.Tensor", {Value(iota({3}, DType::Int32, 1.0)), Value(0.5)});
  EXPECT_EQ(f[0].tensor().dtype(), DType::Float32);
}

TEST_F(AtenBackendTest, AtenErrorsBecomeOpErrorsAndMissingKernelsUnsupported) {
  Error shape = error_of([&] {
    call(*aten, "aten.add.Tensor",
         {Value(iota({2}, DType::Float32)), Value(iota({3}, DType::Float32))});
  });
  EXPECT_EQ(shape.kind(), ErrorKind::OpError);
  EXPECT_NE(std::string(shape.what()).find("ATen raised"), std::string::npos) << shape.what();
  // ATen has no bitwise kernel for floating dtypes: "... not implemented for 'Float'".
  Error dtype = error_of([&] {
    call(*aten, "aten.bitwise_and.Tensor",
         {Value(iota({2}, DType::Float32)), Value(iota({2}, DType::Float32))});
  });
  EXPECT_EQ(dtype.kind(), ErrorKind::Unsupported) << dtype.what();
  EXPECT_NE(std::string(dtype.what()).find("Float"), std::string::npos) << dtype.what();
}

TEST_F(AtenBackendTest, OptionalTensorListsAndUndefinedOutputs) {
  Tensor x = iota({4, 3}, DType::Float32);
  Tensor idx = Tensor::empty({2}, DType::Int64);
  idx.set_int(0, 2);
  idx.set_int(1, 0);
  // x[:, idx]: the undefined first index keeps dimension 0 whole.
  Values got = call(*aten, "aten.index.Tensor",
                    {Value(x), Value::tensor_list({Tensor(), idx}, /*optional_elements=*/true)});
  const Tensor& g = got[0].tensor();
  ASSERT_EQ(g.shape(), (Shape{4, 2}));
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(g.get(2 * r), x.get(3 * r + 2)) << r;
    EXPECT_EQ(g.get(2 * r + 1), x.get(3 * r)) << r;
  }
}

TEST_F(AtenBackendTest, TheSameSeedGivesTheSameRandomValues) {
  auto draw = [&](uint64_t seed) {
    aten->manual_seed(seed);
    return call(*aten, "aten.rand.default", {Value(std::vector<int64_t>{16})})[0].tensor();
  };
  Tensor a = draw(7), b = draw(7), c = draw(8);
  bool differs = false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_EQ(a.get(i), b.get(i)) << i;
    EXPECT_GE(a.get(i), 0.0);
    EXPECT_LT(a.get(i), 1.0);
    differs = differs || a.get(i) != c.get(i);
  }
  EXPECT_TRUE(differs);
}

TEST_F(AtenBackendTest, CudaIsAUsageErrorOrACudaDevice) {
  try {
    auto cuda = BackendRegistry::instance().create("aten:cuda");
    EXPECT_EQ(cuda->device(), Device::cuda(0));
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
  Error bad = error_of([] { BackendRegistry::instance().create("aten:tpu"); });
  EXPECT_EQ(bad.kind(), ErrorKind::Usage);
  EXPECT_NE(std::string(bad.what()).find("aten:cuda"), std::string::npos) << bad.what();
}

#else  // no libtorch in this build

TEST(AtenBackendAbsent, TheRegistrySaysThereIsNoAtenAndHowToGetIt) {
  for (const char* spec : {"aten", "aten:cuda"}) {
    Error e = error_of([&] { BackendRegistry::instance().create(spec); });
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("no ATen backend"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("install-deps.sh"), std::string::npos) << e.what();
  }
  for (const auto* entry : BackendRegistry::instance().entries())
    EXPECT_NE(entry->name.rfind("aten", 0), 0u) << entry->name;
}

#endif

}  // namespace
}  // namespace crucible
