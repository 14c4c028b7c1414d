// crucible/kernel.hpp, the helpers kernels are written with: its fp16/bf16 rounding agrees with
// crucible's core (round to nearest even, once, subnormals and overflow included), its type
// promotion with ATen's, and its strided iteration visits every element once.
#define CRUCIBLE_NO_PLUGIN_ENTRY  // the test binary is not a plugin
#include "crucible/kernel.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "crucible/core/half.h"

namespace crucible {
namespace {

namespace ck = crucible::kernel;

std::vector<double> probe_values() {
  std::vector<double> xs = {0.0,
                            -0.0,
                            1.0,
                            -1.0,
                            65504.0,
                            65519.99,
                            65520.0,
                            1e-8,
                            5.96e-8,
                            2.98e-8,
                            2.99e-8,
                            6.1e-5,
                            1e38,
                            3.4e38,
                            3.5e38,
                            1e-40,
                            INFINITY,
                            -INFINITY,
                            1.0 + 1.0 / 2048,
                            1.0 + 3.0 / 2048};
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> exp(-140, 40);
  for (int i = 0; i < 20000; ++i) xs.push_back((i % 2 ? -1 : 1) * std::ldexp(mant(rng), exp(rng)));
  // Exact ties between two f16 / bf16 values.
  for (int m = 0; m < 64; ++m) {
    xs.push_back(1.0 + (2 * m + 1) / 2048.0);
    xs.push_back(1.0 + (2 * m + 1) / 256.0);
  }
  return xs;
}

TEST(KernelHpp, HalfAndBFloat16RoundingMatchesTheCore) {
  for (double x : probe_values()) {
    EXPECT_EQ(ck::double_to_half_bits(x), half_from_double(x)) << x;
    EXPECT_EQ(ck::double_to_bf16_bits(x), bf16_from_double(x)) << x;
  }
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const double a = ck::half_bits_to_double(h), c = half_to_float(h);
    if (std::isnan(c))
      EXPECT_TRUE(std::isnan(a)) << b;
    else
      EXPECT_EQ(a, c) << b;
    const double ba = ck::bf16_bits_to_double(h), bc = bf16_to_float(h);
    if (!std::isnan(bc)) {
      EXPECT_EQ(ba, bc) << b;
    }
  }
  EXPECT_TRUE(std::isnan(ck::half_bits_to_double(ck::double_to_half_bits(NAN))));
}

TEST(KernelHpp, PromotionFollowsAten) {
  using T = ck::ScalarType;
  EXPECT_EQ(ck::promote_types(T::UInt8, T::Int8), T::Int16);
  EXPECT_EQ(ck::promote_types(T::Bool, T::Int32), T::Int32);
  EXPECT_EQ(ck::promote_types(T::Int64, T::Float16), T::Float16);
  EXPECT_EQ(ck::promote_types(T::Float16, T::BFloat16), T::Float32);
  EXPECT_EQ(ck::promote_types(T::Float32, T::Float64), T::Float64);
  EXPECT_FALSE(ck::can_cast(T::Float32, T::Int64));
  EXPECT_FALSE(ck::can_cast(T::Int32, T::Bool));
  EXPECT_TRUE(ck::can_cast(T::Int64, T::Float32));
}

TEST(KernelHpp, ResultTypeRanksTensorsOverZeroDimOverNumbers) {
  int64_t shape1[1] = {3}, stride1[1] = {1};
  DLTensor vec{nullptr, {kDLCPU, 0}, 1, ck::dl_dtype(ck::ScalarType::Int32), shape1, stride1, 0};
  DLTensor zero_d{nullptr, {kDLCPU, 0}, 0, ck::dl_dtype(ck::ScalarType::Float64),
                  nullptr, nullptr,     0};
  crucible_value args[3] = {};
  args[0].kind = CRUCIBLE_TENSOR;
  args[0].v.tensor = &vec;
  args[1].kind = CRUCIBLE_FLOAT;
  args[1].v.f = 2.5;
  args[2].kind = CRUCIBLE_TENSOR;
  args[2].v.tensor = &zero_d;
  crucible_call call{};
  call.args = args;
  call.num_args = 3;
  ck::Call k(&call);
  EXPECT_EQ(ck::result_type(k, {0, 1}), ck::ScalarType::Float32);  // i32 tensor + 2.5
  EXPECT_EQ(ck::result_type(k, {0, 2}), ck::ScalarType::Float64);  // i32 + f64 0-d (category)
  args[1].kind = CRUCIBLE_INT;
  args[1].v.i = 2;
  EXPECT_EQ(ck::result_type(k, {0, 1}), ck::ScalarType::Int32);  // an int does not widen
}

TEST(KernelHpp, ForEachVisitsEveryStridedElementOnce) {
  // A [3, 4] view with strides (1, 3) (transposed) and a broadcast operand with strides (0, 1).
  std::set<int64_t> seen;
  int64_t count = 0;
  ck::for_each({3, 4}, {{1, 3}, {0, 1}}, [&](const int64_t* off) {
    seen.insert(off[0]);
    EXPECT_EQ(off[1], count % 4);
    ++count;
  });
  EXPECT_EQ(count, 12);
  EXPECT_EQ(seen.size(), 12u);
  EXPECT_EQ(*seen.rbegin(), 11);
  count = 0;
  ck::for_each({0, 4}, {{4, 1}}, [&](const int64_t*) { ++count; });
  EXPECT_EQ(count, 0);
  ck::for_each({}, {{}}, [&](const int64_t* off) {
    EXPECT_EQ(off[0], 0);
    ++count;
  });
  EXPECT_EQ(count, 1);  // a 0-d tensor has one element
}

}  // namespace
}  // namespace crucible
