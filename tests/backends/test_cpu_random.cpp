// The cpu backend's random ops under crucible's seeded-generator contract: the same seed gives
// the same bytes (whatever the thread count), another seed or a second call other bytes; the
// values pass the catalog's distribution judges (support, moments, Kolmogorov-Smirnov,
// independence); rand lies on the dtype's grid; bernoulli honours p = 0 and p = 1 and raises
// for a probability outside [0, 1]; dropout's output is input * mask / (1 - p).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;

Values size_args(const Shape& size, DType dt) {
  return {Value(std::vector<int64_t>(size)), Value(dt), Value(), Value(), Value()};
}

Values run_seeded(const std::string& name, const Values& args, uint64_t seed, int threads = 2) {
  auto cpu = make_cpu_backend();
  cpu->set_num_threads(threads);
  cpu->manual_seed(seed);
  Values a = deep_copy(args);
  return cpu->run(OpRegistry::catalog().get(name), a);
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  const Tensor x = a.contiguous(), y = b.contiguous();
  return x.shape() == y.shape() && x.dtype() == y.dtype() &&
         std::memcmp(x.data_ptr(), y.data_ptr(), static_cast<size_t>(x.numel()) * x.itemsize()) ==
             0;
}

// The op's own judge (the one `crucible run` applies) on the cpu outputs; every check passes.
void expect_judged(const std::string& name, const Values& args, uint64_t seed) {
  const OpDef& op = OpRegistry::catalog().get(name);
  const Values ref = op.run_ref(deep_copy(args), seed);
  const Values got = run_seeded(name, args, seed);
  for (const TensorCheck& c : op.compare.custom(args, ref, got))
    EXPECT_TRUE(c.passed) << name << ": " << c.reason;
}

TEST(CpuRandom, SameSeedSameBytesOtherSeedOtherBytes) {
  for (DType dt : {DType::Float16, DType::BFloat16, f32, DType::Float64}) {
    for (const char* name : {"aten.rand.default", "aten.randn.default"}) {
      const Values args = size_args({37, 101}, dt);
      const Tensor a = run_seeded(name, args, 7, 1)[0].tensor();
      EXPECT_TRUE(same_bytes(a, run_seeded(name, args, 7, 2)[0].tensor())) << name;
      EXPECT_FALSE(same_bytes(a, run_seeded(name, args, 8)[0].tensor())) << name;
    }
  }
  // The generator advances: two calls after one seed differ, and the seed replays both.
  auto cpu = make_cpu_backend();
  const OpDef& rand = OpRegistry::catalog().get("aten.rand.default");
  cpu->manual_seed(3);
  const Tensor first = cpu->run(rand, size_args({64}, f32))[0].tensor();
  const Tensor second = cpu->run(rand, size_args({64}, f32))[0].tensor();
  EXPECT_FALSE(same_bytes(first, second));
  cpu->manual_seed(3);
  EXPECT_TRUE(same_bytes(first, cpu->run(rand, size_args({64}, f32))[0].tensor()));
  EXPECT_TRUE(same_bytes(second, cpu->run(rand, size_args({64}, f32))[0].tensor()));
}

TEST(CpuRandom, DistributionsPassTheCatalogJudges) {
  for (DType dt : {DType::Float16, DType::BFloat16, f32, DType::Float64}) {
    expect_judged("aten.rand.default", size_args({100, 123}, dt), 11);
    expect_judged("aten.randn.default", size_args({100, 123}, dt), 12);
  }
  for (DType dt : {DType::Int64, DType::UInt8, DType::Float16, f32})
    expect_judged(
        "aten.randperm.default",
        {Value(int64_t{dt == DType::UInt8 ? 256 : 2000}), Value(dt), Value(), Value(), Value()},
        13);
  const Tensor x = filled({64, 80}, f32);
  for (double p : {0.0, 0.1, 0.5, 1.0}) {
    expect_judged("aten.native_dropout.default", {x, Value(p), Value(true)}, 14);
    expect_judged("aten.bernoulli.p", {filled({50, 70}, DType::Int32), Value(p), Value()}, 15);
  }
  expect_judged("aten.native_dropout.default",
                {filled({64, 48}, DType::BFloat16).transpose(0, 1), Value(0.3), Value()}, 16);
  Tensor probs = Tensor::empty({60, 70}, DType::Float64);
  // Mostly 0.3 (the judge's runs test assumes one probability), with a few certain draws.
  for (int64_t i = 0; i < probs.numel(); ++i)
    probs.set(i, i % 97 == 0 ? 0.0 : i % 89 == 0 ? 1.0 : 0.3);
  expect_judged("aten.bernoulli.default", {probs, Value()}, 17);
}

TEST(CpuRandom, RandLiesOnTheDtypeGrid) {
  for (auto [dt, digits] :
       {std::pair{DType::Float16, 11}, std::pair{DType::BFloat16, 8}, std::pair{f32, 24}}) {
    const Tensor t = run_seeded("aten.rand.default", size_args({5000}, dt), 1)[0].tensor();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double v = t.get(i) * std::ldexp(1.0, digits);
      ASSERT_EQ(v, std::floor(v)) << dtype_code(dt) << " element " << i;
      ASSERT_TRUE(t.get(i) >= 0 && t.get(i) < 1);
    }
  }
}

TEST(CpuRandom, BernoulliExtremesAndErrors) {
  const Tensor self = Tensor::empty({1000}, f32);
  const Tensor zeros = run_seeded("aten.bernoulli.p", {self, Value(0.0), Value()}, 5)[0].tensor();
  const Tensor ones = run_seeded("aten.bernoulli.p", {self, Value(1.0), Value()}, 5)[0].tensor();
  for (int64_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(zeros.get(i), 0.0);
    ASSERT_EQ(ones.get(i), 1.0);
  }
  Tensor probs = Tensor::full({10}, 0.5, f32);
  probs.set(7, 1.5);
  try {
    run_seeded("aten.bernoulli.default", {probs, Value()}, 1);
    FAIL() << "a probability of 1.5 must raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Expected p_in >= 0 && p_in <= 1"), std::string::npos)
        << e.what();
  }
  probs.set(7, NAN);
  EXPECT_THROW(run_seeded("aten.bernoulli.default", {probs, Value()}, 1), Error);
}

TEST(CpuRandom, DropoutScalesTheKeptValues) {
  const Tensor x = filled({300}, f32);
  const Values out = run_seeded("aten.native_dropout.default", {x, Value(0.25), Value(true)}, 9);
  const Tensor& y = out[0].tensor();
  const Tensor& mask = out[1].tensor();
  ASSERT_EQ(mask.dtype(), DType::Bool);
  int64_t kept = 0;
  for (int64_t i = 0; i < 300; ++i) {
    kept += mask.get_int(i);
    EXPECT_FLOAT_EQ(static_cast<float>(y.get(i)),
                    mask.get_int(i) ? static_cast<float>(x.get(i) / 0.75) : 0.0f);
  }
  EXPECT_GT(kept, 180);
  EXPECT_LT(kept, 270);
  // Eval mode copies the input, any dtype, and keeps everything.
  const Tensor xi = filled({4, 6}, DType::Int64);
  const Values ev = run_seeded("aten.native_dropout.default", {xi, Value(0.5), Value(false)}, 9);
  EXPECT_TRUE(same_bytes(ev[0].tensor(), xi));
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(ev[1].tensor().get_int(i), 1);
  // An inf input that is dropped gives NaN ((inf * 0) * scale), as ATen computes.
  Tensor inf = Tensor::full({64}, INFINITY, f32);
  const Values d = run_seeded("aten.native_dropout.default", {inf, Value(0.5), Value(true)}, 4);
  for (int64_t i = 0; i < 64; ++i)
    EXPECT_EQ(std::isnan(d[0].tensor().get(i)), d[1].tensor().get_int(i) == 0) << i;
}

TEST(CpuRandom, RandpermIsAPermutation) {
  const Tensor p =
      run_seeded("aten.randperm.default",
                 {Value(int64_t{10000}), Value(DType::Int32), Value(), Value(), Value()}, 21)[0]
          .tensor();
  std::vector<bool> seen(10000, false);
  for (int64_t i = 0; i < 10000; ++i) {
    const int64_t v = p.get_int(i);
    ASSERT_TRUE(v >= 0 && v < 10000 && !seen[static_cast<size_t>(v)]) << v;
    seen[static_cast<size_t>(v)] = true;
  }
}

}  // namespace
}  // namespace crucible::cpu_test
