// Binding calls to real ATen schemas (taken from the shipped spec) and coercing values.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/schema/schema.h"

namespace crucible {
namespace {

const Schema& aten(const char* op) {
  static const std::map<std::string, Schema> schemas = [] {
    std::ifstream in(std::string(CRUCIBLE_SOURCE_DIR) + "/data/spec/all_aten_ops.json");
    nlohmann::json j = nlohmann::json::parse(in);
    std::map<std::string, Schema> m;
    for (const auto& o : j.at("ops"))
      m.emplace(o.at("op").get<std::string>(), parse_schema(o.at("schema").get<std::string>()));
    return m;
  }();
  auto it = schemas.find(op);
  if (it == schemas.end()) throw std::runtime_error(std::string("no schema for ") + op);
  return it->second;
}

Tensor t23() { return Tensor::zeros({2, 3}, DType::Float32); }

using Kw = std::vector<std::pair<std::string, Value>>;

// Runs `f`, expects an op error whose message contains every fragment.
template <typename F>
void expect_op_error(F f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    for (const std::string& frag : fragments) {
      EXPECT_NE(std::string(e.what()).find(frag), std::string::npos)
          << "wanted '" << frag << "' in: " << e.what();
    }
  }
}

TEST(SchemaBinding, AddTensorFillsAlphaDefault) {
  const Schema& s = aten("aten.add.Tensor");
  Tensor a = t23(), b = t23();
  Values v = bind_arguments(s, {a, b}, {});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].tensor().storage(), a.storage());
  EXPECT_EQ(v[1].tensor().storage(), b.storage());
  EXPECT_EQ(v[2].kind(), ValueKind::Int);
  EXPECT_EQ(v[2].to_int(), 1);
  // alpha by keyword keeps its kind: Scalar is not coerced to float.
  Values k = bind_arguments(s, {a, b}, {{"alpha", Value(2.5)}});
  EXPECT_EQ(k[2].kind(), ValueKind::Float);
  EXPECT_DOUBLE_EQ(k[2].to_double(), 2.5);
  Values kb = bind_arguments(s, {a}, {{"other", b}, {"alpha", Value(true)}});
  EXPECT_EQ(kb[1].tensor().storage(), b.storage());
  EXPECT_EQ(kb[2].kind(), ValueKind::Bool);
  // all by keyword
  Values all = bind_arguments(s, {}, {{"other", b}, {"self", a}});
  EXPECT_EQ(all[0].tensor().storage(), a.storage());
}

TEST(SchemaBinding, AddTensorErrors) {
  const Schema& s = aten("aten.add.Tensor");
  Tensor a = t23(), b = t23();
  // alpha is keyword-only
  expect_op_error(
      [&] {
        bind_arguments(s, {a, b, Value(2)}, {});
      },
      {"aten.add.Tensor", "alpha", "keyword-only"});
  expect_op_error(
      [&] {
        bind_arguments(s, {a, b}, {{"beta", Value(2)}});
      },
      {"aten.add.Tensor", "unknown keyword argument 'beta'", "self, other, alpha"});
  expect_op_error([&] { bind_arguments(s, {a}, {}); },
                  {"aten.add.Tensor", "missing required argument 'other'"});
  expect_op_error(
      [&] {
        bind_arguments(s, {a, b}, {{"self", a}});
      },
      {"aten.add.Tensor", "'self' given more than once"});
  expect_op_error(
      [&] {
        bind_arguments(s, {a, Value("one")}, {});
      },
      {"aten.add.Tensor", "argument 'other' must be Tensor"});
  // A Python number for a Tensor argument is a wrapped number: it binds and keeps its kind.
  Values wrapped = bind_arguments(s, {a, Value(1)}, {});
  EXPECT_EQ(wrapped[1].kind(), ValueKind::Int);
  expect_op_error(
      [&] {
        bind_arguments(s, {a, b}, {{"alpha", a}});
      },
      {"argument 'alpha' must be Scalar"});
  expect_op_error(
      [&] {
        bind_arguments(s, {a, Value()}, {});
      },
      {"argument 'other'", "not optional"});
}

TEST(SchemaBinding, InplaceAndOutVariants) {
  const Schema& add_ = aten("aten.add_.Tensor");
  EXPECT_TRUE(add_.is_inplace());
  EXPECT_EQ(add_.mutated_arguments(), std::vector<size_t>{0});
  Values v = bind_arguments(add_, {t23(), t23()}, {{"alpha", Value(3)}});
  EXPECT_EQ(v[2].to_int(), 3);

  const Schema& out = aten("aten.add.out");
  EXPECT_TRUE(out.is_out());
  EXPECT_FALSE(out.is_inplace());
  EXPECT_EQ(out.mutated_arguments(), std::vector<size_t>{3});
  Tensor o = t23();
  Values b = bind_arguments(out, {t23(), t23()}, {{"out", o}});
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[2].to_int(), 1);
  EXPECT_EQ(b[3].tensor().storage(), o.storage());
  // out is keyword-only (and required)
  expect_op_error(
      [&] {
        bind_arguments(out, {t23(), t23(), Value(1), o}, {});
      },
      {"aten.add.out", "keyword-only"});
  expect_op_error(
      [&] {
        bind_arguments(out, {t23(), t23()}, {});
      },
      {"aten.add.out", "missing required argument 'out'"});
}

TEST(SchemaBinding, SumDimIntList) {
  const Schema& s = aten("aten.sum.dim_IntList");
  Tensor a = t23();
  Values v = bind_arguments(s, {a, Value(std::vector<int64_t>{0, 1})}, {});
  EXPECT_EQ(v[1].to_int_list(), (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(v[2].to_bool());  // keepdim default
  EXPECT_TRUE(v[3].is_none());   // dtype default
  // int[1] takes a single int; int[1]? takes None.
  Values one = bind_arguments(s, {a, Value(1), Value(true)}, {{"dtype", Value(DType::Float64)}});
  EXPECT_EQ(one[1].to_int_list(), std::vector<int64_t>{1});
  EXPECT_TRUE(one[2].to_bool());
  EXPECT_EQ(one[3].to_dtype(), DType::Float64);
  EXPECT_TRUE(bind_arguments(s, {a, Value()}, {})[1].is_none());
  // dim has no default: required even though optional
  expect_op_error([&] { bind_arguments(s, {a}, {}); }, {"missing required argument 'dim'"});
  // dtype is keyword-only
  expect_op_error(
      [&] {
        bind_arguments(s, {a, Value(1), Value(false), Value(DType::Float32)}, {});
      },
      {"aten.sum.dim_IntList", "'dtype' is keyword-only"});
  // keepdim is bool: an int is not accepted
  expect_op_error(
      [&] {
        bind_arguments(s, {a, Value(1), Value(1)}, {});
      },
      {"argument 'keepdim' must be bool"});
  // dtype by name or c10 number
  EXPECT_EQ(bind_arguments(s, {a, Value(0)}, {{"dtype", Value("float16")}})[3].to_dtype(),
            DType::Float16);
  EXPECT_EQ(bind_arguments(s, {a, Value(0)}, {{"dtype", Value(6)}})[3].to_dtype(), DType::Float32);
}

TEST(SchemaBinding, NativeLayerNorm) {
  const Schema& s = aten("aten.native_layer_norm.default");
  Tensor x = t23(), w = Tensor::zeros({3}, DType::Float32);
  Values v = bind_arguments(s, {x, Value(std::vector<int64_t>{3}), w, Value(), Value(1)}, {});
  EXPECT_EQ(v[2].tensor().storage(), w.storage());
  EXPECT_TRUE(v[3].is_none());
  EXPECT_EQ(v[4].kind(), ValueKind::Float);  // int -> float
  EXPECT_DOUBLE_EQ(v[4].to_double(), 1.0);
  // SymInt[] without a size does not take a single int
  expect_op_error(
      [&] {
        bind_arguments(s, {x, Value(3), w, Value(), Value(1e-5)}, {});
      },
      {"native_layer_norm", "'normalized_shape'", "only for int[N]"});
  // a bool is not a float
  expect_op_error(
      [&] {
        bind_arguments(s, {x, Value(std::vector<int64_t>{3}), w, Value(), Value(true)}, {});
      },
      {"argument 'eps' must be float"});
  // weight and bias have no defaults: they must be given, even as None
  expect_op_error(
      [&] {
        bind_arguments(s, {x, Value(std::vector<int64_t>{3})}, {});
      },
      {"missing required argument 'weight'"});
}

TEST(SchemaBinding, Convolution) {
  const Schema& s = aten("aten.convolution.default");
  Tensor x = Tensor::zeros({1, 2, 5, 5}, DType::Float32);
  Tensor w = Tensor::zeros({4, 2, 3, 3}, DType::Float32);
  std::vector<int64_t> ones{1, 1}, zeros{0, 0};
  Values v =
      bind_arguments(s, {x, w, Value(), ones, zeros, ones, Value(false), zeros, Value(1)}, {});
  ASSERT_EQ(v.size(), 9u);
  EXPECT_TRUE(v[2].is_none());
  EXPECT_EQ(v[3].to_int_list(), ones);
  EXPECT_FALSE(v[6].to_bool());
  EXPECT_EQ(v[8].to_int(), 1);
  // groups is SymInt: a bool is rejected, as ATen's parser does
  expect_op_error(
      [&] {
        bind_arguments(s, {x, w, Value(), ones, zeros, ones, Value(false), zeros, Value(true)}, {});
      },
      {"aten.convolution.default", "argument 'groups'", "a bool is not an int"});
  // a float list is not an int list
  expect_op_error(
      [&] {
        bind_arguments(s,
                       {x, w, Value(), Value(std::vector<double>{1.0, 1.0}), zeros, ones,
                        Value(false), zeros, Value(1)},
                       {});
      },
      {"argument 'stride' must be SymInt[]"});
  expect_op_error(
      [&] {
        bind_arguments(
            s, {x, w, Value(), ones, zeros, ones, Value(false), zeros, Value(1), Value(1)}, {});
      },
      {"takes at most 9 positional arguments, got 10"});
}

TEST(SchemaBinding, MaxPool2dWithIndices) {
  const Schema& s = aten("aten.max_pool2d_with_indices.default");
  Tensor x = Tensor::zeros({1, 1, 4, 4}, DType::Float32);
  Values v = bind_arguments(s, {x, Value(2)}, {});
  EXPECT_EQ(v[1].to_int_list(), (std::vector<int64_t>{2, 2}));  // single int broadcast
  EXPECT_EQ(v[2].kind(), ValueKind::IntList);
  EXPECT_TRUE(v[2].to_int_list().empty());                      // stride=[]
  EXPECT_EQ(v[3].to_int_list(), (std::vector<int64_t>{0, 0}));  // padding=0
  EXPECT_EQ(v[4].to_int_list(), (std::vector<int64_t>{1, 1}));  // dilation=1
  EXPECT_FALSE(v[5].to_bool());
  Values k = bind_arguments(s, {x, Value(std::vector<int64_t>{3})},
                            {{"stride", Value(1)}, {"ceil_mode", Value(true)}});
  EXPECT_EQ(k[1].to_int_list(), std::vector<int64_t>{3});  // length is the kernel's to check
  EXPECT_EQ(k[2].to_int_list(), (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(k[5].to_bool());
}

TEST(SchemaBinding, ToCopyAllKeywordOnly) {
  const Schema& s = aten("aten._to_copy.default");
  Tensor x = t23();
  Values v = bind_arguments(s, {x}, {});
  ASSERT_EQ(v.size(), 7u);
  for (size_t i : {1u, 2u, 3u, 4u, 6u}) EXPECT_TRUE(v[i].is_none()) << i;
  EXPECT_FALSE(v[5].to_bool());
  Values k = bind_arguments(s, {x},
                            {{"dtype", Value(DType::BFloat16)},
                             {"device", Value("cpu")},
                             {"layout", Value(Layout::Strided)},
                             {"memory_format", Value("channels_last")}});
  EXPECT_EQ(k[1].to_dtype(), DType::BFloat16);
  EXPECT_EQ(k[2].to_layout(), Layout::Strided);
  EXPECT_EQ(k[3].to_device(), Device::cpu());
  EXPECT_EQ(k[6].to_memory_format(), MemoryFormat::ChannelsLast);
  expect_op_error(
      [&] {
        bind_arguments(s, {x, Value(DType::Float16)}, {});
      },
      {"aten._to_copy.default", "takes at most 1 positional", "'dtype' is keyword-only"});
  expect_op_error(
      [&] {
        bind_arguments(s, {x}, {{"dtype", Value("complex32")}});
      },
      {"argument 'dtype' must be ScalarType?"});
}

TEST(SchemaBinding, TensorLists) {
  const Schema& cat = aten("aten.cat.default");
  Tensor a = t23(), b = t23();
  Values v = bind_arguments(cat, {Value::tensor_list({a, b})}, {});
  EXPECT_EQ(v[0].kind(), ValueKind::TensorList);
  EXPECT_EQ(v[0].tensors().size(), 2u);
  EXPECT_EQ(v[1].to_int(), 0);
  expect_op_error(
      [&] {
        bind_arguments(cat, {Value::tensor_list({a, Tensor()}, true)}, {});
      },
      {"argument 'tensors'", "element 1 is None"});
  expect_op_error([&] { bind_arguments(cat, {a}, {}); }, {"argument 'tensors' must be Tensor[]"});

  const Schema& index = aten("aten.index.Tensor");
  Values i = bind_arguments(index, {a, Value::tensor_list({Tensor(), b}, true)}, {});
  EXPECT_EQ(i[1].kind(), ValueKind::OptTensorList);
  Values e = bind_arguments(index, {a, Value(std::vector<int64_t>{})}, {});  // "[]"
  EXPECT_EQ(e[1].kind(), ValueKind::OptTensorList);
  EXPECT_TRUE(e[1].tensors().empty());
}

TEST(SchemaBinding, CoerceToType) {
  SchemaType f{.base = BaseType::Float, .name = "float"};
  EXPECT_EQ(coerce_to_type(Value(2), f, "p").kind(), ValueKind::Float);
  EXPECT_EQ(coerce_to_type(Value(0.5), f, "p").to_double(), 0.5);
  expect_op_error([&] { coerce_to_type(Value(true), f, "p"); }, {"argument 'p' must be float"});
  SchemaType scalar{.base = BaseType::Scalar, .name = "Scalar"};
  EXPECT_EQ(coerce_to_type(Value(2), scalar, "s").kind(), ValueKind::Int);
  EXPECT_EQ(coerce_to_type(Value(false), scalar, "s").kind(), ValueKind::Bool);
  SchemaType i2{.base = BaseType::Int, .name = "int", .is_list = true, .fixed_size = 3};
  EXPECT_EQ(coerce_to_type(Value(4), i2, "k").to_int_list(), (std::vector<int64_t>{4, 4, 4}));
  SchemaType fl{.base = BaseType::Float, .name = "float", .is_list = true};
  EXPECT_EQ(coerce_to_type(Value(std::vector<int64_t>{1, 2}), fl, "x").float_list(),
            (std::vector<double>{1.0, 2.0}));
  SchemaType b{.base = BaseType::Bool, .name = "bool"};
  expect_op_error([&] { coerce_to_type(Value(1), b, "flag"); }, {"argument 'flag' must be bool"});
  SchemaType opt_int{.base = BaseType::Int, .name = "int", .optional = true};
  EXPECT_TRUE(coerce_to_type(Value(), opt_int, "n").is_none());
  SchemaType dev{.base = BaseType::Device, .name = "Device"};
  expect_op_error([&] { coerce_to_type(Value("tpu"), dev, "device"); },
                  {"argument 'device' must be Device"});
  SchemaType gen{.base = BaseType::Generator, .name = "Generator", .optional = true};
  EXPECT_EQ(coerce_to_type(Value(7), gen, "generator").to_int(), 7);  // passed through
}

}  // namespace
}  // namespace crucible
