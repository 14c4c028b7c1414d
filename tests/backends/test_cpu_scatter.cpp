// The cpu backend's scatters: scatter (.src, .value, .reduce, .value_reduce), scatter_reduce.two
// in every reduce mode with and without self, masked_scatter; hand-computed values, strided
// and broadcast arguments against the reference, and the data-dependent errors (an index out
// of range, a source shorter than the mask's true count) with the reference's messages.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;
const DType i64 = DType::Int64;

Tensor ints(const std::vector<int64_t>& v, const Shape& shape, DType dt = i64) {
  Tensor t = Tensor::empty(shape, dt);
  for (size_t i = 0; i < v.size(); ++i) t.set_int(static_cast<int64_t>(i), v[i]);
  return t;
}

Tensor reals(const std::vector<double>& v, const Shape& shape, DType dt = f32) {
  Tensor t = Tensor::empty(shape, dt);
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

std::string error_of(const std::string& op_name, const Values& args) {
  auto cpu = make_cpu_backend();
  try {
    cpu->run(OpRegistry::catalog().get(op_name), args);
  } catch (const crucible::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CpuScatter, SrcAndValueWriteTargets) {
  // self [3, 2] zeros; dim 0, index [[2, 0]]: out[2][0] = src[0][0], out[0][1] = src[0][1].
  const Tensor self = Tensor::zeros({3, 2}, f32);
  const Tensor index = ints({2, 0}, {1, 2});
  const Tensor src = reals({5, 7, 9, 11}, {2, 2});
  const Values out = expect_matches_ref("aten.scatter.src", {self, int64_t{0}, index, src});
  const Tensor o = out[0].tensor();
  EXPECT_EQ(o.get(4), 5.0);
  EXPECT_EQ(o.get(1), 7.0);
  EXPECT_EQ(o.get(0), 0.0);
  const Values v =
      expect_matches_ref("aten.scatter.value", {self, int64_t{1}, ints({1, 1, 0}, {3, 1}), 2.5});
  EXPECT_EQ(v[0].tensor().get(1), 2.5);
  EXPECT_EQ(v[0].tensor().get(4), 2.5);
  EXPECT_EQ(v[0].tensor().get(0), 0.0);
  // Every dtype, a transposed self and a sliced src.
  for (DType t :
       {DType::Bool, DType::UInt8, DType::Int16, DType::Float16, DType::BFloat16, DType::Float64})
    expect_matches_ref(
        "aten.scatter.src",
        {filled({4, 5}, t), int64_t{1}, ints({4, 0, 2, 1, 3, 0}, {2, 3}), filled({3, 6}, t, 2)});
  expect_matches_ref("aten.scatter.src",
                     {filled({5, 4}, f32).transpose(0, 1), int64_t{-1}, ints({4, 0, 2}, {1, 3}),
                      filled({4, 8}, f32).slice(1, 0, 8, 2)});
}

TEST(CpuScatter, ReduceAddAndMultiply) {
  const Tensor self = reals({1, 2, 3}, {3});
  const Tensor index = ints({0, 0, 2, 0}, {4});
  const Tensor src = reals({2, 3, 4, 5}, {4});
  // add: [1 + 2 + 3 + 5, 2, 3 + 4]; multiply: [1 * 2 * 3 * 5, 2, 3 * 4].
  Values out =
      expect_matches_ref("aten.scatter.reduce", {self, int64_t{0}, index, src, std::string("add")});
  EXPECT_EQ(out[0].tensor().get(0), 11.0);
  EXPECT_EQ(out[0].tensor().get(2), 7.0);
  out = expect_matches_ref("aten.scatter.reduce",
                           {self, int64_t{0}, index, src, std::string("multiply")});
  EXPECT_EQ(out[0].tensor().get(0), 30.0);
  EXPECT_EQ(out[0].tensor().get(1), 2.0);
  EXPECT_EQ(out[0].tensor().get(2), 12.0);
  out = expect_matches_ref("aten.scatter.value_reduce", {ints({1, 2, 3}, {3}), int64_t{0}, index,
                                                         int64_t{3}, std::string("multiply")});
  EXPECT_EQ(out[0].tensor().get_int(0), 27);
  EXPECT_EQ(out[0].tensor().get_int(2), 9);
  // int8 products wrap in the dtype's width: 5 * 100 * 100 = 50000 = 80 (mod 256).
  out = expect_matches_ref("aten.scatter.value_reduce",
                           {ints({5}, {1}, DType::Int8), int64_t{0}, ints({0, 0}, {2}),
                            int64_t{100}, std::string("multiply")});
  EXPECT_EQ(out[0].tensor().get_int(0), 80);
}

TEST(CpuScatter, ReduceTwoEveryModeWithAndWithoutSelf) {
  const Tensor self = reals({10, 20, 30}, {3});
  const Tensor index = ints({0, 0, 2}, {3});
  const Tensor src = reals({1, 4, 6}, {3});
  struct Case {
    const char* reduce;
    bool include_self;
    double at0, at2;
  };
  const Case cases[] = {
      {"sum", true, 15, 36},  {"sum", false, 5, 6},  {"prod", true, 40, 180},
      {"prod", false, 4, 6},  {"mean", true, 5, 18}, {"mean", false, 2.5, 6},
      {"amax", true, 10, 30}, {"amax", false, 4, 6}, {"amin", true, 1, 6},
      {"amin", false, 1, 6},
  };
  for (const Case& c : cases) {
    const Values out =
        expect_matches_ref("aten.scatter_reduce.two",
                           {self, int64_t{0}, index, src, std::string(c.reduce), c.include_self});
    EXPECT_EQ(out[0].tensor().get(0), c.at0) << c.reduce << " " << c.include_self;
    EXPECT_EQ(out[0].tensor().get(1), 20.0) << "untouched keeps self";
    EXPECT_EQ(out[0].tensor().get(2), c.at2) << c.reduce << " " << c.include_self;
  }
  // Integer mean floors: (-7 + 0) / 2 -> -4.
  const Values m = expect_matches_ref(
      "aten.scatter_reduce.two",
      {ints({0}, {1}), int64_t{0}, ints({0}, {1}), ints({-7}, {1}), std::string("mean"), true});
  EXPECT_EQ(m[0].tensor().get_int(0), -4);
  // amax propagates NaN.
  const Values n = expect_matches_ref("aten.scatter_reduce.two",
                                      {reals({1, 2}, {2}), int64_t{0}, ints({1, 1}, {2}),
                                       reals({NAN, 5}, {2}), std::string("amax"), true});
  EXPECT_TRUE(std::isnan(n[0].tensor().get(1)));
  // 2-d along dim 1 with a smaller index, every dtype.
  for (DType t : {DType::Int32, DType::Float16, DType::BFloat16, f32, DType::Float64})
    for (const char* r : {"sum", "prod", "mean", "amax", "amin"})
      for (bool inc : {true, false})
        expect_matches_ref("aten.scatter_reduce.two",
                           {filled({3, 4}, t), int64_t{1}, ints({3, 0, 3, 1, 1, 1}, {2, 3}),
                            filled({2, 5}, t, 3), std::string(r), inc});
}

TEST(CpuScatter, ReductionsKeepTheReferencePrecision) {
  // 1e10 + 1 - 1e10 is 1 in f64 (the reference), 0 in f32 arithmetic.
  Values out = expect_matches_ref("aten.scatter_reduce.two",
                                  {reals({1e10}, {1}), int64_t{0}, ints({0, 0}, {2}),
                                   reals({1, -1e10}, {2}), std::string("sum"), true});
  EXPECT_EQ(out[0].tensor().get(0), 1.0);
  // f16: 60000 + 0.001 - 60000 keeps the f16 value of 0.001 (lost in f32 arithmetic too).
  out = expect_matches_ref("aten.scatter.reduce",
                           {reals({60000}, {1}, DType::Float16), int64_t{0}, ints({0, 0}, {2}),
                            reals({0.001, -60000}, {2}, DType::Float16), std::string("add")});
  EXPECT_NEAR(out[0].tensor().get(0), 0.001, 1e-6);
  // 1 + 2^-11 + 2^-24 rounds once to the f16 above the tie, 1 + 2^-10 (through an f32
  // rounded to nearest it would round twice, down to 1).
  out =
      expect_matches_ref("aten.scatter.reduce",
                         {reals({1}, {1}, DType::Float16), int64_t{0}, ints({0, 0}, {2}),
                          reals({std::ldexp(1.0, -11), std::ldexp(1.0, -24)}, {2}, DType::Float16),
                          std::string("add")});
  EXPECT_EQ(out[0].tensor().get(0), 1 + std::ldexp(1.0, -10));
  // 1e-30 * 1e-30 underflows f32 to 0; times 1e30 the f64 product is 1e-30.
  out = expect_matches_ref("aten.scatter.reduce",
                           {reals({1e-30}, {1}), int64_t{0}, ints({0, 0}, {2}),
                            reals({1e-30, 1e30}, {2}), std::string("multiply")});
  EXPECT_NEAR(out[0].tensor().get(0), 1e-30, 1e-35);
}

TEST(CpuScatter, MaskedScatterTakesSourceInOrder) {
  const Tensor self = reals({1, 2, 3, 4, 5, 6}, {2, 3});
  // A [3] mask broadcast over both rows: true at 0 and 2.
  Tensor mask = Tensor::empty({3}, DType::Bool);
  mask.set_int(0, 1);
  mask.set_int(1, 0);
  mask.set_int(2, 1);
  const Tensor source = reals({10, 20, 30, 40, 50}, {5});
  const Values out = expect_matches_ref("aten.masked_scatter.default", {self, mask, source});
  const std::vector<double> expected = {10, 2, 20, 30, 5, 40};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(out[0].tensor().get(i), expected[i]);
  // self broadcast by the mask's shape; a transposed source.
  Tensor m2 = Tensor::empty({4, 3}, DType::Bool);
  for (int64_t i = 0; i < 12; ++i) m2.set_int(i, i % 3 != 1);
  expect_matches_ref("aten.masked_scatter.default",
                     {filled({3}, DType::Int16), m2, filled({3, 4}, DType::Int16).transpose(0, 1)});
}

TEST(CpuScatter, DataErrorsCarryTheReferenceMessages) {
  const Tensor self = Tensor::zeros({3, 2}, f32);
  const Tensor src = filled({2, 2}, f32);
  EXPECT_NE(error_of("aten.scatter.src", {self, int64_t{0}, ints({1, 3}, {1, 2}), src})
                .find("index 3 is out of bounds for dimension 0 with size 3"),
            std::string::npos);
  EXPECT_NE(error_of("aten.scatter_reduce.two",
                     {self, int64_t{1}, ints({-1, 0}, {1, 2}), src, std::string("sum"), true})
                .find("index -1 is out of bounds for dimension 1 with size 2"),
            std::string::npos);
  EXPECT_NE(error_of("aten.scatter.value_reduce",
                     {self, int64_t{0}, ints({0, 7}, {1, 2}), 1.0, std::string("add")})
                .find("index 7 is out of bounds for dimension 0 with size 3"),
            std::string::npos);
  Tensor mask = Tensor::empty({3, 2}, DType::Bool);
  for (int64_t i = 0; i < 6; ++i) mask.set_int(i, 1);
  EXPECT_NE(error_of("aten.masked_scatter.default", {self, mask, filled({5}, f32)})
                .find("Number of elements of source < number of ones in mask"),
            std::string::npos);
  // An argument error comes from the meta function: an unknown reduce.
  EXPECT_NE(error_of("aten.scatter_reduce.two",
                     {self, int64_t{0}, ints({0, 1}, {1, 2}), src, std::string("max"), true})
                .find("reduce argument must be either sum, prod, mean, amax or amin"),
            std::string::npos);
}

}  // namespace
}  // namespace crucible::cpu_test
