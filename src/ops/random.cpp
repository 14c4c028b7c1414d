// Op family: random. rand, randn, randperm, native_dropout, bernoulli.p, bernoulli (tensor of
// probabilities).
//
// The references draw from crucible's counter-based Rng under the case's seed (one stream per
// op), so they are deterministic. A backend's generator differs, so candidates are NOT compared
// with the reference's values: each op has a Custom judge that checks shape and dtype, the
// support of the values (rand in [0, 1), a permutation of 0..n-1, 0/1 masks), the exact
// relations that do not depend on the generator (dropout's output is input * mask / (1 - p) for
// the candidate's own mask; p = 0 keeps everything, p = 1 nothing; probability 0 or 1 gives 0 or
// 1), and, with at least kMinSamples values, the sample mean and variance within kSigmas
// standard errors of the distribution's and a Kolmogorov-Smirnov distance below the 1e-6
// critical value. The evaluator also runs the candidate twice on the same seed (determinism).
//
// Not registered: uniform_ and normal_. They are in-place, and the evaluator compares mutated
// arguments by value against the reference even under a Custom policy, which no backend with
// its own generator can pass; they need the evaluator to judge mutated arguments of random ops
// with the op's judge first.
//
// ATen's rules followed: rand/randn take floating dtypes only (dtype None: f32) and raise
// "\"check_uniform_bounds\" not implemented for 'Long'" / "\"normal_kernel_cpu\" not
// implemented for 'Int'" otherwise; rand's values lie on the dtype's grid k / 2^digits (never
// 1). randperm's dtype defaults to i64; n - 1 must convert to the dtype ("value cannot be
// converted to type uint8_t without overflow"), f16 allows n <= 2049, f32 n <= 2^24 + 1; bool
// is not implemented. native_dropout in training mode (train None or True): mask ~
// Bernoulli(1 - p) as bool, output = (input * mask) * (1 / (1 - p)) (scale 0 when p = 1, so an
// inf or NaN input gives NaN where dropped), p outside [0, 1] raises "bernoulli_ expects p to be
// in [0, 1], but got p=<1 - p>", integral or bool input raises (the float scale cannot be cast
// back); in eval mode (train False) output = input (every dtype, any p) and the mask is all
// true. An empty input gives an empty output and an empty mask of the input's dtype (ATen CPU;
// the judge also accepts bool). bernoulli.p: every dtype (f16 since PyTorch 2.1; 1.13 lacks
// it), p in [0, 1]; bernoulli(self): self holds the probabilities (floating dtypes), each must
// be in [0, 1] ("Expected p_in >= 0 && p_in <= 1 to be true, but got false."). Both return
// contiguous tensors of self's dtype.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "crucible/compare/compare.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/core/rng.h"
#include "crucible/ops/destination.h"
#include "ops/creation_internal.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/random_checks.h"
#include "ops/random_internal.h"
#include "ops/samples.h"

namespace crucible {

namespace {

using namespace samples;         // NOLINT(google-build-using-namespace): the sample vocabulary
using namespace random_samples;  // NOLINT(google-build-using-namespace): the generators

// ---- distribution checks ---------------------------------------------------------------------

// Below this many values, only the support and the exact relations are checked.
constexpr int64_t kMinSamples = 64;
// Moment checks pass within this many standard errors.
constexpr double kSigmas = 6.0;
// Kolmogorov-Smirnov: sqrt(-ln(alpha / 2) / 2) for alpha = 1e-6.
constexpr double kKsCritical = 2.69;

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.get(i);
  return v;
}

// A check that starts passed; fail() records the first reason.
struct Check {
  TensorCheck c;
  Check(std::string what, int64_t numel) {
    c.what = std::move(what);
    c.numel = numel;
  }
  bool ok() const { return c.passed; }
  void fail(const std::string& reason) {
    if (!c.passed) return;
    c.passed = false;
    c.reason = c.what + ": " + reason;
  }
};

// Shape and dtype as the reference's; false when the candidate's output is not even a tensor.
bool check_meta(const Value& ref, const Value& cand, Check& ck) {
  if (!cand.is_tensor() || !cand.tensor().defined()) {
    ck.fail("expected a tensor");
    return false;
  }
  const Tensor& r = ref.tensor();
  const Tensor& c = cand.tensor();
  if (r.shape() != c.shape() || r.dtype() != c.dtype()) {
    ck.fail(fmt::format("expected {}, got {}", r.str(), c.str()));
    return false;
  }
  return true;
}

// Sample mean and variance against the distribution's mean `mu`, variance `var` and fourth
// central moment `mu4` (the standard error of the sample variance is sqrt((mu4 - var^2) / n)).
void check_moments(const std::vector<double>& v, double mu, double var, double mu4, Check& ck) {
  const auto n = static_cast<double>(v.size());
  if (v.size() < static_cast<size_t>(kMinSamples)) return;
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  const double sample_var = ss / (n - 1);
  const double se_mean = std::sqrt(var / n);
  const double se_var = std::sqrt(std::max(mu4 - var * var, 0.0) / n);
  if (!(std::fabs(mean - mu) <= kSigmas * se_mean))
    ck.fail(
        fmt::format("sample mean {:.6g} of {} values is more than {} standard errors ({:.3g}) "
                    "from {:.6g}",
                    mean, v.size(), kSigmas, se_mean, mu));
  if (!(std::fabs(sample_var - var) <= kSigmas * se_var))
    ck.fail(
        fmt::format("sample variance {:.6g} of {} values is more than {} standard errors "
                    "({:.3g}) from {:.6g}",
                    sample_var, v.size(), kSigmas, se_var, var));
}

// Kolmogorov-Smirnov distance of the values from `cdf`; `slack` covers the rounding of the
// values to the dtype.
template <typename Cdf>
void check_ks(std::vector<double> v, Cdf cdf, double slack, Check& ck) {
  if (v.size() < static_cast<size_t>(kMinSamples)) return;
  std::sort(v.begin(), v.end());
  const auto n = static_cast<double>(v.size());
  double d = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double f = cdf(v[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  const double limit = kKsCritical / std::sqrt(n) + slack;
  if (d > limit)
    ck.fail(
        fmt::format("Kolmogorov-Smirnov distance {:.4g} of {} values exceeds {:.4g}: not "
                    "distributed as expected",
                    d, v.size(), limit));
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Bernoulli draws: every value 0 or 1, and the number of ones within kSigmas standard errors of
// sum(p) (the p's may differ per element).
void check_bernoulli(const std::vector<double>& ones, const std::vector<double>& p, Check& ck) {
  double count = 0, expected = 0, variance = 0;
  for (size_t i = 0; i < ones.size(); ++i) {
    if (ones[i] != 0.0 && ones[i] != 1.0) {
      ck.fail(fmt::format("element {} is {}, expected 0 or 1", i, ones[i]));
      return;
    }
    if ((p[i] == 0.0 && ones[i] != 0.0) || (p[i] == 1.0 && ones[i] != 1.0)) {
      ck.fail(fmt::format("element {} is {} with probability {}", i, ones[i], p[i]));
      return;
    }
    count += ones[i];
    expected += p[i];
    variance += p[i] * (1 - p[i]);
  }
  if (ones.size() < static_cast<size_t>(kMinSamples)) return;
  const double se = std::sqrt(variance);
  if (!(std::fabs(count - expected) <= kSigmas * se + 1e-9))
    ck.fail(fmt::format("{} ones among {} draws, expected {:.1f} +- {:.1f} ({} standard errors)",
                        count, ones.size(), expected, kSigmas * se, kSigmas));
}

// ---- references ------------------------------------------------------------------------------

uint64_t stream_of(const char* op) { return hash_str(op); }

// The number of significand bits of a floating dtype (11 for f16, 8 for bf16, 24, 53).
int digits_of(DType t) { return float_info(t).mantissa_bits + 1; }

DType float_dtype_arg(const Args& a, const char* kernel) {
  const DType t = creation::dtype_arg(a, a.index("dtype"), DType::Float32);
  if (!is_floating(t)) not_implemented_for(kernel, t);
  return t;
}

// rand/randn(size, *, dtype, layout, device, pin_memory): the checked result, contiguous (a
// meta tensor).
Tensor sized_float_meta(const Args& a, const char* kernel) {
  const Shape size = a.ints("size");
  creation::check_layout(a, a.index("layout"));
  creation::check_sizes(size);
  return Tensor::meta(size, float_dtype_arg(a, kernel));
}

// rand: uniform on the dtype's grid in [0, 1), into the output its meta function describes.
void rand_impl(const Args&, uint64_t seed, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  Rng rng(seed, stream_of("aten.rand.default"));
  const double grid = std::ldexp(1.0, digits_of(out.dtype()));
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, std::floor(rng.uniform() * grid) / grid);
}

void randn_impl(const Args&, uint64_t seed, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  Rng rng(seed, stream_of("aten.randn.default"));
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, rng.normal());
}

// randperm(n, *, dtype=long, layout, device, pin_memory): the checked dtype.
DType randperm_dtype(const Args& a) {
  const int64_t n = a.integer("n");
  creation::check_layout(a, a.index("layout"));
  creation::check_sizes({n});
  const DType t = creation::dtype_arg(a, a.index("dtype"), DType::Int64);
  if (t == DType::Bool) not_implemented_for("randperm", DType::Bool);
  // ATen's check_supported_max_int_with_precision: scalar_tensor(n - 1) in the dtype, then
  // the precision of the floating dtypes.
  creation::check_convertible(Scalar(n > 0 ? n - 1 : n), t);
  CRUCIBLE_CHECK(t != DType::Float16 || n <= 2049, "n cannot be greater than 2049 for Half type.");
  CRUCIBLE_CHECK(t != DType::Float32 || n <= (int64_t{1} << 24) + 1,
                 "n cannot be greater than 2^24+1 for Float type.");
  CRUCIBLE_CHECK(t != DType::Float64 || n <= (int64_t{1} << 53) + 1,
                 "n cannot be greater than 2^53+1 for Double type.");
  return t;
}

// A permutation of 0 .. n - 1 (Fisher-Yates), into the output of n elements of the dtype.
void randperm_impl(const Args& a, uint64_t seed, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const DType t = out.dtype();
  const int64_t n = a.integer("n");
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng(seed, stream_of("aten.randperm.default"));
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(rng.integer(0, i))]);
  for (int64_t i = 0; i < n; ++i) {
    if (is_floating(t))
      out.set(i, static_cast<double>(perm[static_cast<size_t>(i)]));
    else
      out.set_int(i, perm[static_cast<size_t>(i)]);
  }
}

bool dropout_train(const Args& a) { return !a.given("train") || a.flag("train"); }

double dropout_scale(double p) {
  const double p1m = 1.0 - p;
  return p1m == 0 ? 0.0 : 1.0 / p1m;
}

// out = (input * mask) * scale, rounded once to the input's dtype.
void dropout_output(const Tensor& input, const Tensor& mask, double scale, const Tensor& out) {
  for (int64_t i = 0; i < input.numel(); ++i) {
    const double m = mask.get_int(i) != 0 ? 1.0 : 0.0;
    out.set(i, (input.get(i) * m) * scale);
  }
}

void check_bernoulli_p(double p1m) {
  CRUCIBLE_CHECK(p1m >= 0 && p1m <= 1,
                 fmt::format("bernoulli_ expects p to be in [0, 1], but got p={}", p1m));
}

// native_dropout(input, p, train?): the checked outputs' strides (preserve format) and the
// mask's dtype (an empty input gets a mask of its own dtype, ATen CPU).
struct DropoutSpec {
  Shape strides;
  DType mask_dtype;
};

DropoutSpec native_dropout_spec(const Args& a) {
  const Tensor& input = a.tensor("input");
  const double p = a.real("p");
  const Shape strides = creation::like_strides(input, MemoryFormat::Preserve);
  if (input.numel() == 0) return {strides, input.dtype()};
  if (dropout_train(a)) {
    check_bernoulli_p(1.0 - p);
    CRUCIBLE_CHECK(is_floating(input.dtype()),
                   fmt::format("result type Float can't be cast to the desired output type {}",
                               dtype_scalar_type_name(input.dtype())));
  }
  return {strides, DType::Bool};
}

Values native_dropout_meta(const Args& a) {
  const Tensor& input = a.tensor("input");
  const DropoutSpec spec = native_dropout_spec(a);
  return {meta::fresh_strided(input.shape(), spec.strides, input.dtype()),
          meta::fresh_strided(input.shape(), spec.strides, spec.mask_dtype)};
}

// The output and the mask, into the two outputs native_dropout_meta lays out; outside training
// the input itself and a mask of ones.
void native_dropout_impl(const Args& a, uint64_t seed, const Values& outputs) {
  const Tensor& input = a.tensor("input");
  const Tensor &out = outputs.at(0).tensor(), &mask = outputs.at(1).tensor();
  if (input.numel() == 0) return;
  if (!dropout_train(a)) {
    for (int64_t i = 0; i < mask.numel(); ++i) mask.set_int(i, 1);
    out.copy_from(input);
    return;
  }
  const double p = a.real("p");
  Rng rng(seed, stream_of("aten.native_dropout.default"));
  for (int64_t i = 0; i < mask.numel(); ++i) mask.set_int(i, rng.uniform() < 1.0 - p ? 1 : 0);
  dropout_output(input, mask, dropout_scale(p), out);
}

// bernoulli.p(self, p, *, generator): ones with probability p, into an output like self.
void bernoulli_p_impl(const Args& a, uint64_t seed, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const double p = a.real("p");
  Rng rng(seed, stream_of("aten.bernoulli.p"));
  for (int64_t i = 0; i < out.numel(); ++i) out.set_int(i, rng.uniform() < p ? 1 : 0);
}

// bernoulli(self, *, generator): self holds the probabilities (floating dtypes).
void check_bernoulli_self(const Tensor& self) {
  if (!is_floating(self.dtype())) not_implemented_for("bernoulli_tensor_cpu_p_", self.dtype());
}

// Ones with the probabilities self holds (each checked to lie in [0, 1] as it is read), into an
// output like self.
void bernoulli_impl(const Args& a, uint64_t seed, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& out = outputs.at(0).tensor();
  Rng rng(seed, stream_of("aten.bernoulli.default"));
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double p = self.get(i);
    CRUCIBLE_CHECK(p >= 0 && p <= 1,
                   "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                   "message be improved?  If so, please report an enhancement request to "
                   "PyTorch.)");
    out.set_int(i, rng.uniform() < p ? 1 : 0);
  }
}

// ---- judges ----------------------------------------------------------------------------------

// Independence of consecutive values: lag 1, and the row length (a generator that repeats one
// row, or restarts per row, is caught there).
void check_independence(const std::vector<double>& v, const Tensor& t, Check& ck) {
  if (!ck.ok()) return;
  if (auto why = random_checks::serial_correlation(v, 1)) return ck.fail(*why);
  if (t.dim() >= 2 && t.size(-1) > 1)
    if (auto why = random_checks::serial_correlation(v, static_cast<size_t>(t.size(-1))))
      ck.fail(*why);
}

// A 0/1 sequence: the runs test (for 0/1 values it is the lag-1 serial correlation test, with
// the exact mean and variance).
void check_binary_independence(const std::vector<double>& v, Check& ck) {
  if (!ck.ok()) return;
  if (auto why = random_checks::runs_test(v)) ck.fail(*why);
}

std::vector<TensorCheck> judge_rand(const Args&, const Values& ref, const Values& cand) {
  Check ck("output 0", ref.at(0).tensor().numel());
  if (check_meta(ref.at(0), cand.at(0), ck)) {
    const Tensor& t = cand[0].tensor();
    const std::vector<double> v = values_of(t);
    for (size_t i = 0; i < v.size() && ck.ok(); ++i)
      if (!(v[i] >= 0.0 && v[i] < 1.0))
        ck.fail(fmt::format("element {} is {}, outside [0, 1)", i, v[i]));
    if (ck.ok()) check_moments(v, 0.5, 1.0 / 12, 1.0 / 80, ck);
    if (ck.ok())
      check_ks(
          v, [](double x) { return x; }, std::ldexp(1.0, -digits_of(t.dtype())), ck);
    check_independence(v, t, ck);
  }
  return {ck.c};
}

std::vector<TensorCheck> judge_randn(const Args&, const Values& ref, const Values& cand) {
  Check ck("output 0", ref.at(0).tensor().numel());
  if (check_meta(ref.at(0), cand.at(0), ck)) {
    const Tensor& t = cand[0].tensor();
    const std::vector<double> v = values_of(t);
    for (size_t i = 0; i < v.size() && ck.ok(); ++i)
      if (!std::isfinite(v[i])) ck.fail(fmt::format("element {} is {}", i, v[i]));
    if (ck.ok()) check_moments(v, 0.0, 1.0, 3.0, ck);
    // Rounding x to the dtype moves the CDF by at most pdf(x) |x| eps <= 0.25 eps.
    if (ck.ok()) check_ks(v, normal_cdf, 0.25 * float_info(t.dtype()).eps + 1e-12, ck);
    check_independence(v, t, ck);
  }
  return {ck.c};
}

std::vector<TensorCheck> judge_randperm(const Args&, const Values& ref, const Values& cand) {
  Check ck("output 0", ref.at(0).tensor().numel());
  if (check_meta(ref.at(0), cand.at(0), ck)) {
    // The values, sorted, are 0..n-1 as the dtype represents them (the reference's, sorted).
    const Tensor& r = ref[0].tensor();
    const Tensor& c = cand[0].tensor();
    std::vector<double> rv = values_of(r), cv = values_of(c);
    const std::vector<double> drawn = cv;
    std::sort(rv.begin(), rv.end());
    std::sort(cv.begin(), cv.end());
    for (size_t i = 0; i < rv.size() && ck.ok(); ++i)
      if (!(rv[i] == cv[i]))
        ck.fail(
            fmt::format("not a permutation of 0..{}: the {}th smallest value is {}, expected {}",
                        rv.size() - 1, i, cv[i], rv[i]));
    // For n >= 16 the identity has probability 1/n! < 1e-13: the kernel did not shuffle.
    if (ck.ok() && drawn.size() >= 16) {
      bool identity = true;
      for (size_t i = 0; i < drawn.size() && identity; ++i)
        identity = drawn[i] == static_cast<double>(i);
      if (identity) ck.fail("the identity permutation: the values were not shuffled");
    }
    if (ck.ok())
      if (auto why = random_checks::permutation_uniformity(drawn)) ck.fail(*why);
  }
  return {ck.c};
}

std::vector<TensorCheck> judge_native_dropout(const Args& in, const Values& ref,
                                              const Values& cand) {
  const Tensor& input = in.tensor("input");
  const double p = in.real("p");
  const bool train = dropout_train(in);
  Check out_ck("output 0", input.numel());
  Check mask_ck("output 1 (mask)", input.numel());
  if (cand.size() != 2) {
    out_ck.fail(fmt::format("expected 2 outputs, got {}", cand.size()));
    return {out_ck.c};
  }
  const bool out_ok = check_meta(ref.at(0), cand[0], out_ck);
  // An empty input: ATen's CPU kernel gives a mask of the input's dtype, CUDA a bool one.
  bool mask_ok = false;
  if (input.numel() == 0 && cand[1].is_tensor() && cand[1].tensor().defined() &&
      cand[1].tensor().shape() == input.shape() &&
      (cand[1].tensor().dtype() == DType::Bool || cand[1].tensor().dtype() == input.dtype()))
    mask_ok = true;
  else
    mask_ok = check_meta(ref.at(1), cand[1], mask_ck);
  if (!out_ok || !mask_ok || input.numel() == 0) return {out_ck.c, mask_ck.c};
  const Tensor& mask = cand[1].tensor();
  std::vector<double> kept(static_cast<size_t>(mask.numel()));
  for (int64_t i = 0; i < mask.numel(); ++i) kept[static_cast<size_t>(i)] = mask.get(i);
  // The mask: Bernoulli(1 - p) in training, all ones in eval mode.
  const double keep = train ? 1.0 - p : 1.0;
  check_bernoulli(kept, std::vector<double>(kept.size(), keep), mask_ck);
  check_binary_independence(kept, mask_ck);
  if (!mask_ck.ok()) return {out_ck.c, mask_ck.c};
  // The output follows from the candidate's own mask exactly.
  Tensor expected = input;
  if (train) {
    expected = Tensor::empty(input.shape(), input.dtype());
    dropout_output(input, mask, dropout_scale(p), expected);
  }
  TensorCheck values = compare_tensors(expected, cand[0].tensor(), 1.0, "output 0");
  if (!values.passed) values.reason += " (expected input * mask / (1 - p) for the returned mask)";
  return {values, mask_ck.c};
}

std::vector<TensorCheck> judge_bernoulli_p(const Args& in, const Values& ref, const Values& cand) {
  Check ck("output 0", ref.at(0).tensor().numel());
  if (check_meta(ref.at(0), cand.at(0), ck)) {
    const std::vector<double> v = values_of(cand[0].tensor());
    check_bernoulli(v, std::vector<double>(v.size(), in.real("p")), ck);
    check_binary_independence(v, ck);
  }
  return {ck.c};
}

std::vector<TensorCheck> judge_bernoulli(const Args& in, const Values& ref, const Values& cand) {
  Check ck("output 0", ref.at(0).tensor().numel());
  if (check_meta(ref.at(0), cand.at(0), ck)) {
    const std::vector<double> v = values_of(cand[0].tensor());
    check_bernoulli(v, values_of(in.tensor("self")), ck);
    check_binary_independence(v, ck);
  }
  return {ck.c};
}

// ---- seed dependence -------------------------------------------------------------------------
// log10 of the probability that two seeds give the same bytes (ComparePolicy::
// seed_collision_log10), from the number of draws and the chance two draws agree.

int64_t numel_of_output(const Values& out, size_t k) {
  return out.size() > k && out[k].is_tensor() ? out[k].tensor().numel() : 0;
}

// rand: 2^digits equally likely values per element. randn: at least 64 values share the bulk
// of the mass in every dtype (bf16 included), so two draws agree with probability < 1/64.
double rand_collision(const Args&, const Values& out) {
  if (numel_of_output(out, 0) == 0) return 0;
  const DType t = out[0].tensor().dtype();
  return random_checks::collision_log10(static_cast<double>(numel_of_output(out, 0)),
                                        std::ldexp(1.0, -digits_of(t)));
}
double randn_collision(const Args&, const Values& out) {
  return random_checks::collision_log10(static_cast<double>(numel_of_output(out, 0)), 1.0 / 64);
}
// randperm: one of n! permutations.
double randperm_collision(const Args&, const Values& out) {
  const auto n = static_cast<double>(numel_of_output(out, 0));
  return n < 2 ? 0 : -std::lgamma(n + 1) / std::log(10.0);
}
double bernoulli_q(double p) { return p * p + (1 - p) * (1 - p); }
// native_dropout: the mask, Bernoulli(1 - p) per element in training; nothing drawn in eval.
double dropout_collision(const Args& in, const Values& out) {
  if (!dropout_train(in)) return 0;
  return random_checks::collision_log10(static_cast<double>(numel_of_output(out, 1)),
                                        bernoulli_q(in.real("p")));
}
double bernoulli_p_collision(const Args& in, const Values& out) {
  return random_checks::collision_log10(static_cast<double>(numel_of_output(out, 0)),
                                        bernoulli_q(in.real("p")));
}
double bernoulli_collision(const Args& in, const Values&) {
  double sum = 0;
  const Tensor& p = in.tensor("self");
  if (!is_floating(p.dtype())) return 0;
  for (int64_t i = 0; i < p.numel(); ++i)
    sum += random_checks::collision_log10(1, bernoulli_q(p.get(i)));
  return sum;
}

// ---- registration ----------------------------------------------------------------------------

Cost written_cost(const Args& args, const Values& out) {
  double bytes = 0;
  for (const Value& v : out)
    if (v.is_tensor()) bytes += creation::tensor_bytes(v.tensor());
  // The tensor read (input, self); rand, randn and randperm read none.
  const char* read = args.has("input") ? "input" : "self";
  if (args.has(read) && args.value(read).is_tensor())
    bytes += creation::real_bytes(args.tensor(read));
  return {0, bytes};
}

// A judge and a seed-collision probability reading the inputs by name.
using JudgeFn =
    std::function<std::vector<TensorCheck>(const Args& in, const Values& ref, const Values& cand)>;
using CollisionFn = std::function<double(const Args& in, const Values& ref)>;

OpDef random_op(std::string_view schema, MetaFn meta, SeededImplFn impl, SampleFn samples,
                JudgeFn judge, std::vector<DType> dtypes, CollisionFn collision) {
  OpDef op = OpDef::from_schema(schema, "random");
  op.dtypes = std::move(dtypes);
  op.meta = std::move(meta);
  op.ref_seeded = structured_seeded_ref(op.meta, std::move(impl));
  op.samples = std::move(samples);
  op.cost = written_cost;
  op.compare.kind = ComparePolicy::Kind::Custom;
  op.compare.custom = [judge = std::move(judge), schema = op.schema](
                          const Values& in, const Values& ref_out, const Values& cand) {
    return judge(Args(in, schema), ref_out, cand);
  };
  op.compare.random = true;
  op.compare.seed_collision_log10 = [collision = std::move(collision), schema = op.schema](
                                        const Values& in, const Values& ref_out) {
    return collision(Args(in, schema), ref_out);
  };
  return op;
}

}  // namespace

void register_random_ops(OpRegistry& r) {
  const std::string kw =
      "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
      "pin_memory=None) -> Tensor";
  r.add(random_op(
      "aten::rand(SymInt[] size, " + kw,
      [](const Args& a) { return Values{Value(sized_float_meta(a, "check_uniform_bounds"))}; },
      rand_impl, sized_random_samples, judge_rand, floating_dtypes(), rand_collision));
  r.add(random_op(
      "aten::randn(SymInt[] size, " + kw,
      [](const Args& a) { return Values{Value(sized_float_meta(a, "normal_kernel_cpu"))}; },
      randn_impl, sized_random_samples, judge_randn, floating_dtypes(), randn_collision));
  r.add(random_op(
      "aten::randperm(SymInt n, *, ScalarType? dtype=4, Layout? layout=None, Device? "
      "device=None, bool? pin_memory=None) -> Tensor",
      [](const Args& a) {
        const DType t = randperm_dtype(a);
        return Values{meta::fresh({a.integer("n")}, t)};
      },
      randperm_impl, randperm_samples, judge_randperm,
      {DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::Float16,
       DType::BFloat16, DType::Float32, DType::Float64},
      randperm_collision));
  r.add(random_op("aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
                  native_dropout_meta, native_dropout_impl, native_dropout_samples,
                  judge_native_dropout, floating_dtypes(), dropout_collision));
  r.add(random_op(
      "aten::bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor",
      [](const Args& a) {
        check_bernoulli_p(a.real("p"));
        return Values{meta::fresh_like(a.tensor("self"))};
      },
      bernoulli_p_impl, bernoulli_p_samples, judge_bernoulli_p, all_numeric_dtypes(),
      bernoulli_p_collision));
  OpDef bernoulli = random_op(
      "aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor",
      [](const Args& a) {
        check_bernoulli_self(a.tensor("self"));
        return Values{meta::fresh_like(a.tensor("self"))};
      },
      bernoulli_impl, bernoulli_samples, judge_bernoulli, floating_dtypes(), bernoulli_collision);
  bernoulli.value_checks = true;  // every probability must lie in [0, 1]
  r.add(std::move(bernoulli));
}

}  // namespace crucible
