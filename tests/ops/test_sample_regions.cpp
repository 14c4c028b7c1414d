// The samples reach the regions where wrong kernels hide: each attacking kernel below is right
// on ordinary values and wrong in one region (integer overflow, integer-valued floats, large
// exponents, the seed, the shuffle, the 0/1 pattern), and the opinfo samples of its op must
// fail it -- while the same kernel without the fault (the reference) passes every case.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "crucible/backends/backend.h"
#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/core/rng.h"
#include "crucible/eval/evaluate.h"
#include "crucible/ops/materialize.h"
#include "ops/random_checks.h"
#include "ops/sample_completion.h"

namespace crucible {
namespace {

// A backend that runs the reference, except that `op` goes through `kernel` (given the
// reference's outputs for the same arguments and the seed to post-process or replace them).
using Kernel = std::function<Values(const Values& args, const Values& ref_out, uint64_t seed)>;

class AttackBackend final : public Backend {
 public:
  AttackBackend(std::string op, Kernel kernel) : op_(std::move(op)), kernel_(std::move(kernel)) {}
  std::string name() const override { return "attack"; }
  bool has_op(const OpDef& op) const override { return op.ref || op.ref_seeded; }
  Values run(const OpDef& op, const Values& args) override {
    Values out = op.run_ref(args, seed_);
    if (op.name != op_) return out;
    return kernel_(args, out, seed_);
  }

 private:
  std::string op_;
  Kernel kernel_;
};

struct Tally {
  int failed = 0;
  int passed = 0;
  std::string first_failure;
  std::vector<std::string> failed_labels;
};

Tally run_samples(const OpDef& op, Backend& candidate) {
  auto ref = BackendRegistry::instance().create("ref");
  Tally t;
  for (const Sample& s : op.samples(SampleContext{})) {
    if (s.cpu_only_error) continue;
    Case c;
    c.op = op.name;
    c.call = s.call;
    c.seed = 7;
    c.label = s.label;
    const CaseResult r = evaluate_case(c, op, *ref, candidate);
    if (r.status == Status::Failed) {
      if (t.failed++ == 0) t.first_failure = s.label + ": " + r.detail;
      t.failed_labels.push_back(s.label);
    } else if (r.status == Status::Passed) {
      ++t.passed;
    }
  }
  return t;
}

// Applies `f` to every element of every floating tensor output (in place on a copy).
Values map_outputs(const Values& out, const std::function<double(double, int64_t)>& f) {
  Values res;
  for (const Value& v : out) {
    if (!v.is_tensor() || !v.tensor().defined()) {
      res.push_back(v);
      continue;
    }
    const Tensor& src = v.tensor();
    Tensor t = Tensor::empty_strided(src.shape(), src.strides(), src.dtype());
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, f(src.get(i), i));
    res.emplace_back(t);
  }
  return res;
}

const OpDef& op_named(const std::string& name) { return OpRegistry::catalog().get(name); }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
  return s;
}

// ---- the reference itself passes ---------------------------------------------------------------

TEST(SampleRegions, TheFaultFreeKernelsPass) {
  for (const char* name :
       {"aten.add.Tensor", "aten.div.Tensor", "aten.mul.Tensor", "aten.exp.default",
        "aten.randperm.default", "aten.bernoulli.p", "aten.rand.default"}) {
    AttackBackend honest(name, [](const Values&, const Values& out, uint64_t) { return out; });
    const Tally t = run_samples(op_named(name), honest);
    EXPECT_EQ(t.failed, 0) << name << ": " << t.first_failure;
    EXPECT_GT(t.passed, 0) << name;
  }
}

// ---- integers that overflow
// ----------------------------------------------------------------------

// Clamps to the integral dtype's range.
int64_t clamp_to(int64_t v, DType t) {
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  switch (t) {
    case DType::UInt8:
      lo = 0, hi = 255;
      break;
    case DType::Int8:
      lo = INT8_MIN, hi = INT8_MAX;
      break;
    case DType::Int16:
      lo = INT16_MIN, hi = INT16_MAX;
      break;
    case DType::Int32:
      lo = INT32_MIN, hi = INT32_MAX;
      break;
    default:
      break;
  }
  return std::clamp(v, lo, hi);
}

// x + alpha * y, saturating at the dtype's bounds instead of wrapping.
int64_t saturating_add(int64_t x, int64_t alpha, int64_t y, DType t) {
  int64_t p = 0, r = 0;
  if (__builtin_mul_overflow(alpha, y, &p)) p = (alpha < 0) != (y < 0) ? INT64_MIN : INT64_MAX;
  if (__builtin_add_overflow(x, p, &r)) r = p > 0 ? INT64_MAX : INT64_MIN;
  return clamp_to(r, t);
}

TEST(SampleRegions, ASaturatingIntegerAddFails) {
  // add(self, other, alpha) on integers, saturating at the dtype's bounds instead of wrapping.
  AttackBackend sat("aten.add.Tensor", [](const Values& a, const Values& out, uint64_t) {
    const Tensor& r = out[0].tensor();
    if (!is_integral(r.dtype(), false)) return out;
    Tensor x = a[0].tensor().expand(r.shape()).to(r.dtype());
    Tensor y = a[1].tensor().expand(r.shape()).to(r.dtype());
    Tensor res = Tensor::empty(r.shape(), r.dtype());
    const int64_t alpha = a[2].to_int();
    for (int64_t i = 0; i < r.numel(); ++i)
      res.set_int(i, saturating_add(x.get_int(i), alpha, y.get_int(i), r.dtype()));
    return Values{Value(res)};
  });
  const Tally t = run_samples(op_named("aten.add.Tensor"), sat);
  EXPECT_GT(t.failed, 0) << "a saturating add passed every sample";
  // Every integral dtype's overflow case catches it.
  for (const char* d : {"u8", "i8", "i16", "i32", "i64"}) {
    const bool caught =
        std::any_of(t.failed_labels.begin(), t.failed_labels.end(), [&](const std::string& l) {
          return l.find("overflow") != std::string::npos && l.find(d) != std::string::npos;
        });
    EXPECT_TRUE(caught) << d << ": failed only " << joined(t.failed_labels);
  }
}

TEST(SampleRegions, ASaturatingNegFails) {
  // neg on integers: -INT_MIN saturated to INT_MAX instead of wrapping to INT_MIN.
  AttackBackend sat("aten.neg.default", [](const Values& a, const Values& out, uint64_t) {
    const Tensor& r = out[0].tensor();
    if (!is_integral(r.dtype(), false)) return out;
    Tensor x = a[0].tensor();
    Tensor res = Tensor::empty(r.shape(), r.dtype());
    for (int64_t i = 0; i < r.numel(); ++i)
      res.set_int(i, clamp_to(x.get_int(i) == INT64_MIN ? INT64_MAX : -x.get_int(i), r.dtype()));
    return Values{Value(res)};
  });
  EXPECT_GT(run_samples(op_named("aten.neg.default"), sat).failed, 0);
}

// ---- integer-valued floats
// -----------------------------------------------------------------------

bool integral_value(double v) { return std::isfinite(v) && v == std::trunc(v); }

TEST(SampleRegions, ADivisionThatTruncatesForIntegerValuedFloatsFails) {
  // A "fast path": both operands integer-valued -> integer division (truncating), as a kernel
  // that tests for integers and divides in int64 would.
  AttackBackend trunc_div("aten.div.Tensor", [](const Values& a, const Values& out, uint64_t) {
    const Tensor& r = out[0].tensor();
    if (!is_floating(r.dtype()) || !a[0].is_tensor() || !a[1].is_tensor()) return out;
    const Tensor x = a[0].tensor().expand(r.shape()), y = a[1].tensor().expand(r.shape());
    Tensor res = r.clone();
    for (int64_t i = 0; i < r.numel(); ++i) {
      const double p = x.get(i), q = y.get(i);
      if (integral_value(p) && integral_value(q) && q != 0 && std::fabs(p) < 1e15 &&
          std::fabs(q) < 1e15)
        res.set(i, static_cast<double>(static_cast<int64_t>(p) / static_cast<int64_t>(q)));
    }
    return Values{Value(res)};
  });
  const Tally t = run_samples(op_named("aten.div.Tensor"), trunc_div);
  EXPECT_GT(t.failed, 0) << "a truncating integer fast path in div passed every sample";
}

TEST(SampleRegions, AMulWithAnInt32FastPathForIntegerValuedFloatsFails) {
  // Integer-valued operands multiplied in int32 (overflowing past 2^31).
  AttackBackend int_mul("aten.mul.Tensor", [](const Values& a, const Values& out, uint64_t) {
    const Tensor& r = out[0].tensor();
    if (!is_floating(r.dtype()) || !a[0].is_tensor() || !a[1].is_tensor()) return out;
    const Tensor x = a[0].tensor().expand(r.shape()), y = a[1].tensor().expand(r.shape());
    Tensor res = r.clone();
    for (int64_t i = 0; i < r.numel(); ++i) {
      const double p = x.get(i), q = y.get(i);
      if (integral_value(p) && integral_value(q) && std::fabs(p) < 2e9 && std::fabs(q) < 2e9) {
        const auto prod = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(p)) *
                                               static_cast<uint32_t>(static_cast<int64_t>(q)));
        res.set(i, static_cast<double>(prod));
      }
    }
    return Values{Value(res)};
  });
  EXPECT_GT(run_samples(op_named("aten.mul.Tensor"), int_mul).failed, 0);
}

// ---- large exponents
// -------------------------------------------------------------------------------

TEST(SampleRegions, AnExpThatIsWrongAbove80Fails) {
  // exp right below 80 and saturated to exp(80) above (a table that stops at 80).
  AttackBackend capped("aten.exp.default", [](const Values& a, const Values& out, uint64_t) {
    const Tensor x = a[0].tensor();
    return map_outputs(out, [&](double v, int64_t i) {
      const double in = x.get(i);
      return std::isfinite(in) && in > 80 ? std::exp(80.0) : v;
    });
  });
  const Tally t = run_samples(op_named("aten.exp.default"), capped);
  EXPECT_GT(t.failed, 0) << "an exp wrong above 80 passed every sample";
}

TEST(SampleRegions, ASinWrongForLargeArgumentsFails) {
  // A sin whose range reduction breaks past 1e4 (returns sin of the argument mod 2pi computed
  // in f32, far off for large arguments).
  AttackBackend bad("aten.sin.default", [](const Values& a, const Values& out, uint64_t) {
    const Tensor x = a[0].tensor();
    return map_outputs(out, [&](double v, int64_t i) {
      const double in = x.get(i);
      if (!(std::fabs(in) > 1e4)) return v;
      const float reduced = std::fmod(static_cast<float>(in), 6.2831853f);
      return static_cast<double>(std::sin(reduced));
    });
  });
  EXPECT_GT(run_samples(op_named("aten.sin.default"), bad).failed, 0);
}

// ---- random ops
// ------------------------------------------------------------------------------------

// The verdict the evaluator gives on seed dependence: the candidate run under the case's seed
// and under random_checks::other_seed (what evaluate_case adds for ComparePolicy::
// seed_collision_log10).
std::optional<std::string> seed_verdict(const OpDef& op, Backend& candidate, const Sample& s) {
  auto ref = BackendRegistry::instance().create("ref");
  const Values inputs = materialize(op, s.call, 7);
  ref->manual_seed(7);
  const Values ref_out = ref->run(op, inputs);
  candidate.manual_seed(7);
  const Values first = candidate.run(op, inputs);
  candidate.manual_seed(random_checks::other_seed(7));
  const Values other = candidate.run(op, inputs);
  return random_checks::seed_dependence_failure(op, inputs, ref_out, first, other);
}

TEST(SampleRegions, ARandomOpThatIgnoresTheSeedFails) {
  for (const char* name : {"aten.rand.default", "aten.randn.default", "aten.randperm.default",
                           "aten.bernoulli.p", "aten.native_dropout.default"}) {
    const OpDef& op = op_named(name);
    // The reference under a fixed seed whatever the backend was seeded with.
    AttackBackend fixed(
        name, [&op](const Values& a, const Values&, uint64_t) { return op.run_ref(a, 12345); });
    AttackBackend honest(name, [](const Values&, const Values& out, uint64_t) { return out; });
    int caught = 0, honest_failed = 0, checked = 0;
    for (const Sample& s : op.samples(SampleContext{})) {
      if (s.label.starts_with("error")) continue;
      const Values inputs = materialize(op, s.call, 7);
      const Values ref_out = op.run_ref(inputs, 7);
      if (!(op.compare.seed_collision_log10(inputs, ref_out) < kSeedCollisionLog10)) continue;
      ++checked;
      if (seed_verdict(op, fixed, s)) ++caught;
      if (auto why = seed_verdict(op, honest, s)) {
        ++honest_failed;
        ADD_FAILURE() << name << " " << s.label << ": " << *why;
      }
    }
    EXPECT_GT(checked, 0) << name;
    EXPECT_EQ(caught, checked) << name;
    EXPECT_EQ(honest_failed, 0) << name;
    // Through the evaluator: the seed-ignoring backend fails cases of the op.
    EXPECT_GT(run_samples(op, fixed).failed, 0) << name;
  }
}

// The built-in backends' generators depend on the seed (the cpu backend where it implements
// the op: it reports the random ops unsupported today).
TEST(SampleRegions, TheBuiltInRandomOpsDependOnTheSeed) {
  for (const char* backend : {"ref", "cpu"}) {
    auto b = BackendRegistry::instance().create(backend);
    for (const char* name :
         {"aten.rand.default", "aten.randn.default", "aten.randperm.default", "aten.bernoulli.p",
          "aten.bernoulli.default", "aten.native_dropout.default"}) {
      const OpDef& op = op_named(name);
      int checked = 0;
      for (const Sample& s : op.samples(SampleContext{})) {
        if (s.label.starts_with("error")) continue;
        const Values inputs = materialize(op, s.call, 7);
        if (!b->supports(op, inputs, nullptr)) continue;
        if (!(op.compare.seed_collision_log10(inputs, op.run_ref(inputs, 7)) < kSeedCollisionLog10))
          continue;
        ++checked;
        const auto why = seed_verdict(op, *b, s);
        EXPECT_FALSE(why.has_value())
            << backend << " " << name << " " << s.label << ": " << why.value_or("");
      }
      if (std::string(backend) == "ref") {
        EXPECT_GT(checked, 0) << name;
      }
    }
  }
}

TEST(SampleRegions, NoSeedCheckWhereNothingIsDrawn) {
  const OpDef& drop = op_named("aten.native_dropout.default");
  const Tensor x = Tensor::zeros({64, 64}, DType::Float32);
  const Values eval{x, 0.5, false};
  EXPECT_EQ(drop.compare.seed_collision_log10(eval, drop.run_ref(eval, 7)), 0);
  const OpDef& bern = op_named("aten.bernoulli.p");
  const Values p0{x, 0.0};
  EXPECT_EQ(bern.compare.seed_collision_log10(p0, bern.run_ref(p0, 7)), 0);
  const Values half{x, 0.5};
  EXPECT_NEAR(bern.compare.seed_collision_log10(half, bern.run_ref(half, 7)),
              4096 * std::log10(0.5), 1e-6);
}

// randperm kernels that shuffle too little: each passes "a permutation, not the identity".
TEST(SampleRegions, APermutationThatDoesNotShuffleFails) {
  const std::map<std::string, std::function<int64_t(int64_t, int64_t)>> kinds = {
      {"rotation by one", [](int64_t i, int64_t n) { return (i + 1) % n; }},
      {"reversal", [](int64_t i, int64_t n) { return n - 1 - i; }},
      {"swapped pairs", [](int64_t i, int64_t n) { return (i ^ 1) < n ? (i ^ 1) : i; }},
      {"first two swapped", [](int64_t i, int64_t) { return i < 2 ? 1 - i : i; }},
      {"rotation by half", [](int64_t i, int64_t n) { return (i + n / 2) % n; }},
  };
  const OpDef& op = op_named("aten.randperm.default");
  for (const auto& [what, perm] : kinds) {
    AttackBackend bad(op.name, [perm = perm](const Values&, const Values& out, uint64_t) {
      Tensor t = out[0].tensor().clone();
      const int64_t n = t.numel();
      for (int64_t i = 0; i < n; ++i) t.set(i, static_cast<double>(perm(i, n)));
      return Values{Value(t)};
    });
    const Tally t = run_samples(op, bad);
    EXPECT_GT(t.failed, 0) << what << " passed every randperm sample";
  }
}

TEST(SampleRegions, ABernoulliWithAFixedPatternFails) {
  // The right number of ones, in a fixed pattern: alternating, or in one block.
  for (const bool alternating : {true, false}) {
    for (const char* name : {"aten.bernoulli.p", "aten.native_dropout.default"}) {
      const OpDef& op = op_named(name);
      const bool dropout = op.name == "aten.native_dropout.default";
      AttackBackend bad(name, [=](const Values& a, const Values& out, uint64_t) {
        const int k = dropout ? 1 : 0;
        Tensor m = out[k].tensor().clone();
        const int64_t n = m.numel();
        const double p = dropout ? 1.0 - a[1].to_double() : a[1].to_double();
        const bool train = !dropout || a.size() < 3 || a[2].is_none() || a[2].to_bool();
        if (!train || n == 0 || p <= 0 || p >= 1) return out;
        const auto ones = static_cast<int64_t>(std::llround(p * static_cast<double>(n)));
        for (int64_t i = 0; i < n; ++i) {
          // alternating: spread the ones evenly (every 1/p-th element); else one block.
          const bool one = alternating ? (i * ones) / n != ((i + 1) * ones) / n : i < ones;
          m.set(i, one ? 1.0 : 0.0);
        }
        Values res = out;
        res[k] = m;
        if (dropout) {
          const Tensor& x = a[0].tensor();
          Tensor y = out[0].tensor().clone();
          const double scale = 1.0 / (1.0 - a[1].to_double());
          for (int64_t i = 0; i < n; ++i) y.set(i, x.get(i) * m.get(i) * scale);
          res[0] = y;
        }
        return res;
      });
      const Tally t = run_samples(op, bad);
      EXPECT_GT(t.failed, 0) << name << (alternating ? " alternating" : " one block")
                             << " passed every sample";
    }
  }
}

TEST(SampleRegions, RandomChecksKeepTheirFalseAlarmRateLow) {
  // A good generator (crucible's Philox) passes the independence tests on many seeds.
  int alarms = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed, 99);
    std::vector<double> u(4096), bits(4096), perm(1000);
    for (double& x : u) x = rng.uniform();
    for (double& x : bits) x = rng.uniform() < 0.3 ? 1 : 0;
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<double>(i);
    for (size_t i = perm.size() - 1; i > 0; --i)
      std::swap(perm[i], perm[static_cast<size_t>(rng.integer(0, static_cast<int64_t>(i)))]);
    alarms += random_checks::serial_correlation(u, 1).has_value();
    alarms += random_checks::serial_correlation(u, 64).has_value();
    alarms += random_checks::runs_test(bits).has_value();
    alarms += random_checks::permutation_uniformity(perm).has_value();
  }
  EXPECT_EQ(alarms, 0);
  // The chi-square critical value is above the 1e-6 quantile (chi2(49): 111.4; chi2(9): 46.0).
  EXPECT_GT(random_checks::chi_square_critical(49), 111.4);
  EXPECT_GT(random_checks::chi_square_critical(9), 45.9);
}

// ---- sizes and regimes
// ---------------------------------------------------------------------------

int64_t largest(const OpDef& op, const Sample& s) {
  int64_t m = 0;
  for (const cases::Literal& l : s.call.args) {
    if (l.kind == cases::LitKind::Tensor) m = std::max(m, numel_of(l.tensor.shape));
    for (const cases::Literal& item : l.items)
      if (item.kind == cases::LitKind::Tensor) m = std::max(m, numel_of(item.tensor.shape));
  }
  (void)op;
  return m;
}

TEST(SampleRegions, EveryElementwiseAndReductionOpHasALargeCase) {
  std::string missing;
  for (const OpDef* op : OpRegistry::catalog().all()) {
    if (!is_elementwise_family(op->family) && !is_reduction_family(op->family)) continue;
    bool large = false;
    for (const Sample& s : op->samples(SampleContext{}))
      if (!s.label.starts_with("error")) large |= largest(*op, s) >= 40000;
    if (!large) missing += " " + op->name;
  }
  EXPECT_EQ(missing, "") << "no case past 40000 elements:" << missing;
}

TEST(SampleRegions, ElementwiseOpsGetEveryValueRegime) {
  std::string missing;
  for (const OpDef* op : OpRegistry::catalog().all()) {
    if (!is_elementwise_family(op->family)) continue;
    if (std::none_of(op->dtypes.begin(), op->dtypes.end(), [](DType t) { return is_floating(t); }))
      continue;
    std::set<std::string> fills;
    for (const Sample& s : op->samples(SampleContext{}))
      for (const cases::Literal& l : s.call.args)
        if (l.kind == cases::LitKind::Tensor && l.tensor.fill) fills.insert(*l.tensor.fill);
    for (const std::string& r : value_regimes(op->family)) {
      if (regime_skipped(op->name, r)) continue;
      if (!fills.count(r)) missing += " " + op->name + ":" + r;
    }
  }
  // An op whose reference rejects a regime's every sample is reported here; none may be.
  EXPECT_EQ(missing, "") << "regimes without a case:" << missing;
}

TEST(SampleRegions, UnaryAndBinaryOpsCoverEveryVectorWidth) {
  for (const char* name : {"aten.add.Tensor", "aten.exp.default", "aten.relu.default"}) {
    std::set<int64_t> widths;
    for (const Sample& s : op_named(name).samples(SampleContext{}))
      if (s.label.starts_with("width ") && s.call.args[0].kind == cases::LitKind::Tensor)
        widths.insert(s.call.args[0].tensor.shape.back());
    for (int64_t w : {1, 3, 7, 8, 15, 16, 17, 31, 33, 63, 65})
      EXPECT_TRUE(widths.count(w)) << name << " has no case of width " << w;
  }
}

TEST(SampleRegions, RegimeFillsDrawWhatTheyName) {
  const OpDef& op = op_named("aten.exp.default");
  auto draw = [&](const std::string& fill, DType t) {
    cases::CallSpec call;
    cases::TensorLit lit;
    lit.shape = {4000};
    lit.dtype = t;
    lit.fill = fill;
    call.args.push_back(cases::Literal::tensor_lit(lit));
    return materialize(op, call, 3).at(0).tensor();
  };
  const Tensor ints = draw("integers", DType::Float32);
  for (int64_t i = 0; i < ints.numel(); ++i) ASSERT_EQ(ints.get(i), std::trunc(ints.get(i)));
  const Tensor sub = draw("subnormal", DType::Float32);
  int subnormals = 0;
  for (int64_t i = 0; i < sub.numel(); ++i)
    subnormals += sub.get(i) != 0 && std::fabs(sub.get(i)) < float_info(DType::Float32).tiny;
  EXPECT_GT(subnormals, 2000);
  const Tensor edge = draw("exp_edge", DType::Float32);
  int above80 = 0, below_tiny = 0;
  for (int64_t i = 0; i < edge.numel(); ++i) {
    above80 += edge.get(i) > 80 && edge.get(i) < 90;
    below_tiny += edge.get(i) < -87;
  }
  EXPECT_GT(above80, 500);
  EXPECT_GT(below_tiny, 500);
  const Tensor huge = draw("huge", DType::Float16);
  int pos = 0, neg = 0;
  for (int64_t i = 0; i < huge.numel(); ++i) {
    ASSERT_TRUE(std::isfinite(huge.get(i)));
    ASSERT_GE(std::fabs(huge.get(i)), 65504.0 / 16 * 0.999);
    (huge.get(i) > 0 ? pos : neg) += 1;
  }
  EXPECT_GT(pos, 1000);
  EXPECT_GT(neg, 1000);
  const Tensor wide = draw("wide", DType::Float32);
  double mx = 0;
  for (int64_t i = 0; i < wide.numel(); ++i) mx = std::max(mx, std::fabs(wide.get(i)));
  EXPECT_GT(mx, 1e5);
  // An unknown fill is a clear error, not ordinary values.
  EXPECT_THROW(draw("no such fill", DType::Float32), Error);
}

// ---- ATen behaviour that must pass
// ---------------------------------------------------------------

TEST(SampleRegions, EmptyOpsDeclareTheirValuesUnspecified) {
  for (const char* name :
       {"aten.empty.memory_format", "aten.empty_like.default", "aten.empty_strided.default",
        "aten.new_empty.default", "aten.new_empty_strided.default"}) {
    const OpDef& op = op_named(name);
    EXPECT_TRUE(op.compare.values_unspecified) << name;
    EXPECT_EQ(op.compare.kind, ComparePolicy::Kind::ShapeOnly) << name;
  }
  EXPECT_FALSE(op_named("aten.zeros_like.default").compare.values_unspecified);
  // An empty_like that writes nothing (its storage holds whatever was there) passes.
  AttackBackend lazy("aten.empty_like.default", [](const Values&, const Values& out, uint64_t) {
    return map_outputs(out, [](double, int64_t) { return std::nan(""); });
  });
  const Tally t = run_samples(op_named("aten.empty_like.default"), lazy);
  EXPECT_EQ(t.failed, 0) << t.first_failure;
}

// mm as ATen's CPU kernel computes it: f32 products summed in f32, left to right.
Values f32_accumulating_mm(const Values& a, const Values& out) {
  const Tensor& x = a[0].tensor();
  const Tensor& y = a[1].tensor();
  if (x.dtype() != DType::Float32) return out;
  const int64_t n = x.size(0), k = x.size(1), m = y.size(1);
  Tensor r = Tensor::empty({n, m}, DType::Float32);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += static_cast<float>(x.get(i * k + p)) * static_cast<float>(y.get(p * m + j));
      r.set(i * m + j, acc);
    }
  return {Value(r)};
}

TEST(SampleRegions, MmAccumulatingInF32AsAtenPassesWherePartialSumsOverflow) {
  const OpDef& op = op_named("aten.mm.default");
  // Row [3e38, 3e38, -3e38] . [1, 1, 1]: exactly 3e38 (the reference), but 3e38 + 3e38
  // overflows f32 first (ATen's answer: inf).
  Tensor a = Tensor::empty({2, 3}, DType::Float32);
  const double av[] = {3e38, 3e38, -3e38, 1, 2, 3};
  for (int i = 0; i < 6; ++i) a.set(i, av[i]);
  Tensor b = Tensor::full({3, 1}, 1.0, DType::Float32);
  const Values args{a, b};
  const Values ref = op.run_ref(args);
  EXPECT_NEAR(ref[0].tensor().get(0), 3e38, 1e32);
  const Values aten_like = f32_accumulating_mm(args, ref);
  EXPECT_TRUE(std::isinf(aten_like[0].tensor().get(0)));
  const auto checks = op.compare.custom(args, ref, aten_like);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_TRUE(checks[0].passed) << checks[0].reason;
  // inf where no partial sum can overflow is still wrong.
  Tensor wrong = aten_like[0].tensor().clone();
  wrong.set(1, std::numeric_limits<double>::infinity());
  const auto bad = op.compare.custom(args, ref, {Value(wrong)});
  EXPECT_FALSE(bad[0].passed);
  EXPECT_NE(bad[0].reason.find("accepted"), std::string::npos) << bad[0].reason;
  // A finite but wrong value where the accumulation may overflow is wrong too.
  Tensor off = aten_like[0].tensor().clone();
  off.set(0, 1e38);
  EXPECT_FALSE(op.compare.custom(args, ref, {Value(off)})[0].passed);
}

TEST(SampleRegions, MmAccumulatingInF32PassesEverySample) {
  AttackBackend aten_like("aten.mm.default", [](const Values& a, const Values& out, uint64_t) {
    return f32_accumulating_mm(a, out);
  });
  const Tally t = run_samples(op_named("aten.mm.default"), aten_like);
  EXPECT_EQ(t.failed, 0) << t.first_failure;
}

}  // namespace
}  // namespace crucible
