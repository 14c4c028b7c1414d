// The random family: the seeded references follow ATen's rules (dtypes, errors, dropout's
// scale and mask), and the distribution judges accept another generator's draws while rejecting
// constant, shifted, unshuffled or inconsistent outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

const OpRegistry& random_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_random_ops(*reg);
    return reg;
  }();
  return *r;
}

const OpDef& op(const std::string& name) { return random_ops().get(name); }

Values inputs(const std::string& name, const std::string& call) {
  return materialize(op(name), cases::parse_call(call), 5);
}

Values run(const std::string& name, const std::string& call, uint64_t seed = 1) {
  return op(name).run_ref(inputs(name, call), seed);
}

std::string error_of(const std::string& name, const std::string& call) {
  try {
    run(name, call);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    return e.what();
  }
  return "";
}

// Runs the op's judge on a candidate output; true when every check passed.
bool judged_ok(const std::string& name, const Values& in, const Values& cand,
               std::string* why = nullptr) {
  const OpDef& def = op(name);
  const Values ref = def.run_ref(in, 1);
  for (const TensorCheck& c : def.compare.custom(in, ref, cand)) {
    if (!c.passed) {
      if (why) *why = c.reason;
      return false;
    }
  }
  return true;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
  return v;
}

TEST(RandomOps, AreJudgedByDistribution) {
  EXPECT_EQ(random_ops().all().size(), 6u);
  for (const OpDef* d : random_ops().all()) {
    EXPECT_EQ(d->family, "random");
    EXPECT_TRUE(d->compare.random) << d->name;
    EXPECT_EQ(d->compare.kind, ComparePolicy::Kind::Custom) << d->name;
    EXPECT_TRUE(static_cast<bool>(d->ref_seeded)) << d->name;
  }
}

TEST(Rand, ValuesOnTheDtypeGridInZeroOne) {
  const Tensor t = run("aten.rand.default", "(([4096],), {})")[0].tensor();
  EXPECT_EQ(t.dtype(), DType::Float32);
  for (double v : values(t)) ASSERT_TRUE(v >= 0 && v < 1) << v;
  const Tensor h = run("aten.rand.default", "(([512],), {'dtype': f16})")[0].tensor();
  for (double v : values(h)) ASSERT_EQ(v * 2048, std::floor(v * 2048)) << v;
  // Deterministic for a seed, different across seeds.
  EXPECT_EQ(values(t), values(run("aten.rand.default", "(([4096],), {})", 1)[0].tensor()));
  EXPECT_NE(values(t), values(run("aten.rand.default", "(([4096],), {})", 2)[0].tensor()));
  EXPECT_EQ(error_of("aten.rand.default", "(([3],), {'dtype': i64})"),
            "\"check_uniform_bounds\" not implemented for 'Long'");
  EXPECT_EQ(error_of("aten.randn.default", "(([3],), {'dtype': i32})"),
            "\"normal_kernel_cpu\" not implemented for 'Int'");
}

TEST(Rand, JudgeAcceptsAnotherGeneratorAndRejectsBadDraws) {
  const Values in = inputs("aten.rand.default", "(([4096],), {})");
  EXPECT_TRUE(judged_ok("aten.rand.default", in, op("aten.rand.default").run_ref(in, 99)));
  std::string why;
  EXPECT_FALSE(
      judged_ok("aten.rand.default", in, {Value(Tensor::full({4096}, 0.5, DType::Float32))}, &why));
  EXPECT_NE(why.find("variance"), std::string::npos) << why;
  // Squared uniforms: right support, wrong distribution.
  Tensor sq = op("aten.rand.default").run_ref(in, 3)[0].tensor();
  for (int64_t i = 0; i < sq.numel(); ++i) sq.set(i, sq.get(i) * sq.get(i));
  EXPECT_FALSE(judged_ok("aten.rand.default", in, {Value(sq)}));
  // A value of 1 is outside [0, 1).
  Tensor one = op("aten.rand.default").run_ref(in, 3)[0].tensor();
  one.set(7, 1.0);
  EXPECT_FALSE(judged_ok("aten.rand.default", in, {Value(one)}, &why));
  EXPECT_NE(why.find("outside [0, 1)"), std::string::npos) << why;
  // Wrong dtype.
  EXPECT_FALSE(judged_ok("aten.rand.default", in, {Value(Tensor::zeros({4096}, DType::Float64))}));
}

TEST(Randn, JudgeChecksMeanAndVariance) {
  const Values in = inputs("aten.randn.default", "(([64, 64],), {'dtype': bf16})");
  EXPECT_TRUE(judged_ok("aten.randn.default", in, op("aten.randn.default").run_ref(in, 42)));
  Tensor scaled = op("aten.randn.default").run_ref(in, 42)[0].tensor();
  for (int64_t i = 0; i < scaled.numel(); ++i) scaled.set(i, 1.2 * scaled.get(i));
  EXPECT_FALSE(judged_ok("aten.randn.default", in, {Value(scaled)}));
  Tensor shifted = op("aten.randn.default").run_ref(in, 42)[0].tensor();
  for (int64_t i = 0; i < shifted.numel(); ++i) shifted.set(i, shifted.get(i) + 0.2);
  EXPECT_FALSE(judged_ok("aten.randn.default", in, {Value(shifted)}));
  // Uniform values with the normal's mean and variance fail the Kolmogorov-Smirnov check.
  Tensor uni = Tensor::empty({64, 64}, DType::BFloat16);
  for (int64_t i = 0; i < uni.numel(); ++i)
    uni.set(i, std::sqrt(3.0) * (2.0 * (static_cast<double>(i) + 0.5) / 4096.0 - 1.0));
  std::string why;
  EXPECT_FALSE(judged_ok("aten.randn.default", in, {Value(uni)}, &why));
  EXPECT_NE(why.find("Kolmogorov"), std::string::npos) << why;
}

TEST(Randperm, PermutationsAndErrors) {
  const Tensor p = run("aten.randperm.default", "((100,), {})")[0].tensor();
  EXPECT_EQ(p.dtype(), DType::Int64);
  std::vector<double> v = values(p);
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], static_cast<double>(i));
  EXPECT_EQ(run("aten.randperm.default", "((256,), {'dtype': u8})")[0].tensor().numel(), 256);
  EXPECT_EQ(error_of("aten.randperm.default", "((257,), {'dtype': u8})"),
            "value cannot be converted to type uint8_t without overflow");
  EXPECT_EQ(error_of("aten.randperm.default", "((2050,), {'dtype': f16})"),
            "n cannot be greater than 2049 for Half type.");
  EXPECT_EQ(error_of("aten.randperm.default", "((2,), {'dtype': b8})"),
            "\"randperm\" not implemented for 'Bool'");
  EXPECT_NE(error_of("aten.randperm.default", "((-1,), {})"), "");
}

TEST(Randperm, JudgeNeedsAShuffledPermutation) {
  const Values in = inputs("aten.randperm.default", "((100,), {})");
  EXPECT_TRUE(judged_ok("aten.randperm.default", in, op("aten.randperm.default").run_ref(in, 8)));
  Tensor id = Tensor::empty({100}, DType::Int64);
  for (int64_t i = 0; i < 100; ++i) id.set_int(i, i);
  std::string why;
  EXPECT_FALSE(judged_ok("aten.randperm.default", in, {Value(id)}, &why));
  EXPECT_NE(why.find("identity"), std::string::npos) << why;
  Tensor dup = op("aten.randperm.default").run_ref(in, 8)[0].tensor();
  dup.set_int(0, dup.get_int(1));
  EXPECT_FALSE(judged_ok("aten.randperm.default", in, {Value(dup)}));
}

TEST(NativeDropout, ScaleMaskAndModes) {
  const std::string name = "aten.native_dropout.default";
  const Values in = inputs(name, "((T([64, 64], f32), 0.25, True), {})");
  const Values out = op(name).run_ref(in, 3);
  const Tensor& x = in[0].tensor();
  const Tensor& y = out[0].tensor();
  const Tensor& m = out[1].tensor();
  EXPECT_EQ(m.dtype(), DType::Bool);
  for (int64_t i = 0; i < x.numel(); ++i)
    ASSERT_EQ(y.get(i), m.get_int(i)
                            ? static_cast<double>(static_cast<float>(x.get(i) * (1.0 / 0.75)))
                            : 0.0);
  // p = 0 keeps everything, p = 1 drops everything (inf * 0 is NaN).
  const Values keep = run(name, "((T([8], f32), 0.0, True), {})");
  EXPECT_EQ(values(keep[1].tensor()), std::vector<double>(8, 1.0));
  const std::string special = "((T([96], f32, fill='special'), 1.0, True), {})";
  const Values drop = run(name, special);
  EXPECT_EQ(values(drop[1].tensor()), std::vector<double>(96, 0.0));
  // input * mask * scale: an infinite or NaN input gives NaN (inf * 0), every other one 0.
  const Values special_in = inputs(name, special);
  const Tensor& sx = special_in[0].tensor();
  int non_finite = 0;
  for (int64_t i = 0; i < sx.numel(); ++i) {
    const bool nf = !std::isfinite(sx.get(i));
    non_finite += nf;
    if (nf)
      EXPECT_TRUE(std::isnan(drop[0].tensor().get(i))) << i;
    else
      EXPECT_EQ(drop[0].tensor().get(i), 0.0) << i;
  }
  EXPECT_GE(non_finite, 3);  // the special fill holds NaN, inf and -inf
  // Eval mode: the input and an all-true mask, for any dtype and any p.
  const Values ev = run(name, "((T([4], i64), 1.5, False), {})");
  EXPECT_EQ(ev[1].tensor().dtype(), DType::Bool);
  EXPECT_EQ(values(ev[1].tensor()), std::vector<double>(4, 1.0));
  EXPECT_EQ(error_of(name, "((T([4], i64), 0.5, True), {})"),
            "result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(error_of(name, "((T([4], f32), 1.5, True), {})"),
            "bernoulli_ expects p to be in [0, 1], but got p=-0.5");
  // An empty input gives a mask of the input's dtype (ATen CPU).
  EXPECT_EQ(run(name, "((T([0, 3], f16), 0.5, True), {})")[1].tensor().dtype(), DType::Float16);
}

TEST(NativeDropout, JudgeUsesTheCandidatesOwnMask) {
  const std::string name = "aten.native_dropout.default";
  const Values in = inputs(name, "((T([64, 64], f16), 0.5, True), {})");
  EXPECT_TRUE(judged_ok(name, in, op(name).run_ref(in, 77)));
  // The output of one mask with another mask: wrong.
  Values mixed = op(name).run_ref(in, 77);
  mixed[1] = op(name).run_ref(in, 78)[1];
  std::string why;
  EXPECT_FALSE(judged_ok(name, in, mixed, &why));
  // Unscaled output.
  Values unscaled = op(name).run_ref(in, 77);
  const Tensor& y = unscaled[0].tensor();
  for (int64_t i = 0; i < y.numel(); ++i) y.set(i, y.get(i) / 2);
  EXPECT_FALSE(judged_ok(name, in, unscaled));
  // Keeping everything at p = 0.5 is not dropout.
  Values all = op(name).run_ref(inputs(name, "((T([64, 64], f16), 0.0, True), {})"), 1);
  EXPECT_FALSE(judged_ok(name, in, all, &why));
  EXPECT_NE(why.find("ones among"), std::string::npos) << why;
}

TEST(Bernoulli, ProbabilitiesAndErrors) {
  const Tensor b = run("aten.bernoulli.p", "((T([64, 64], i32), 0.3), {})")[0].tensor();
  EXPECT_EQ(b.dtype(), DType::Int32);
  double ones = 0;
  for (double v : values(b)) ones += v;
  EXPECT_NEAR(ones / 4096, 0.3, 0.05);
  EXPECT_EQ(error_of("aten.bernoulli.p", "((T([3], f32), 1.3), {})"),
            "bernoulli_ expects p to be in [0, 1], but got p=1.3");
  EXPECT_NE(error_of("aten.bernoulli.default", "((T([16], f32, fill='special'),), {})")
                .find("Expected p_in >= 0 && p_in <= 1"),
            std::string::npos);
  EXPECT_EQ(error_of("aten.bernoulli.default", "((T([3], i64),), {})"),
            "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'");
  // The judge: a p = 0.7 draw is not a p = 0.3 draw.
  const Values in = inputs("aten.bernoulli.p", "((T([64, 64], f32), 0.3), {})");
  EXPECT_TRUE(judged_ok("aten.bernoulli.p", in, op("aten.bernoulli.p").run_ref(in, 12)));
  const Values other = inputs("aten.bernoulli.p", "((T([64, 64], f32), 0.7), {})");
  EXPECT_FALSE(judged_ok("aten.bernoulli.p", in, op("aten.bernoulli.p").run_ref(other, 12)));
  const Values pin = inputs("aten.bernoulli.default", "((T([64, 64], f32, fill='uniform'),), {})");
  EXPECT_TRUE(
      judged_ok("aten.bernoulli.default", pin, op("aten.bernoulli.default").run_ref(pin, 5)));
  EXPECT_FALSE(
      judged_ok("aten.bernoulli.default", pin, {Value(Tensor::zeros({64, 64}, DType::Float32))}));
}

TEST(RandomSamples, ReferenceRaisesExactlyOnErrorCasesAndJudgesItself) {
  for (const OpDef* d : random_ops().all()) {
    EXPECT_GE(d->samples(SampleContext{false}).size(), 8u) << d->name;
    EXPECT_FALSE(d->samples(SampleContext{true}).empty()) << d->name;
    for (const Sample& s : d->samples(SampleContext{false})) {
      const std::string text = cases::print_call(s.call);
      Values args;
      try {
        args = materialize(*d, s.call, 7);
      } catch (const Error& e) {
        ADD_FAILURE() << d->name << " " << text << ": does not materialise: " << e.what();
        continue;
      }
      std::string error;
      try {
        const Values out = d->run_ref(args, 7);
        EXPECT_GE(d->run_cost(args, out).bytes, 0);
        // Another seed's draws pass the judge.
        const Values other = d->run_ref(args, 8);
        for (const TensorCheck& c : d->compare.custom(args, out, other))
          EXPECT_TRUE(c.passed) << d->name << " [" << s.label << "] " << c.reason;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OpError) << d->name << " " << text << ": " << e.what();
        error = e.what();
      }
      EXPECT_EQ(!error.empty(), s.label.starts_with("error:"))
          << d->name << " [" << s.label << "] " << text << (error.empty() ? "" : ": " + error);
    }
  }
}

}  // namespace
}  // namespace crucible
