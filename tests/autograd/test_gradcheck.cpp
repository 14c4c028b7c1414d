// Every derivative rule against finite differences in f64: a tiny graph of the op (its inputs
// are parameters), made a training graph (loss = sum(y * tangent)) and run on ref; each
// parameter's gradient is compared, element by element, with the central difference of the loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "crucible/autograd/autograd.h"
#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/values.h"
#include "crucible/nn/functional.h"

namespace {

using crucible::DType;
using crucible::Shape;
using crucible::Tensor;
using crucible::graph::DeclKind;
using crucible::graph::Initializer;
using crucible::nn::Tracer;
using crucible::nn::Var;
namespace F = crucible::nn::F;

Initializer init(Initializer::Kind k, std::vector<double> args = {}) {
  Initializer i;
  i.kind = k;
  for (double a : args) i.args.push_back(crucible::cases::Literal::floating(a));
  return i;
}

Var P(Tracer& t, const std::string& name, const Shape& shape) {
  return t.declare(DeclKind::Param, name, shape, DType::Float64,
                   init(Initializer::Kind::Normal, {0, 1}));
}
Var P(Tracer& t, const std::string& name, const Shape& shape, double lo, double hi) {
  return t.declare(DeclKind::Param, name, shape, DType::Float64,
                   init(Initializer::Kind::Uniform, {lo, hi}));
}

struct RuleCase {
  std::string op;
  std::function<Var(Tracer&)> build;
};

void PrintTo(const RuleCase& rc, std::ostream* os) { *os << rc.op; }

std::vector<RuleCase> rule_cases() {
  return {
      {"aten.mm.default",
       [](Tracer& t) {
         return F::mm(t, P(t, "a", {3, 4}), P(t, "b", {4, 5}));
       }},
      {"aten.addmm.default",
       [](Tracer& t) {
         return F::linear(t, P(t, "x", {3, 4}), P(t, "w", {5, 4}), P(t, "bias", {5}));
       }},
      {"aten.bmm.default",
       [](Tracer& t) {
         return t.call1("aten.bmm.default", {P(t, "a", {2, 3, 4}), P(t, "b", {2, 4, 5})});
       }},
      {"aten.t.default",
       [](Tracer& t) {
         return t.call1("aten.t.default", {P(t, "a", {3, 4})});
       }},
      {"aten.view.default",
       [](Tracer& t) {
         return F::view(t, P(t, "a", {3, 4}), {2, 6});
       }},
      {"aten.permute.default",
       [](Tracer& t) {
         return F::permute(t, P(t, "a", {2, 3, 4}), {2, 0, 1});
       }},
      {"aten.transpose.int",
       [](Tracer& t) {
         return F::transpose(t, P(t, "a", {2, 3, 4}), 0, 2);
       }},
      {"aten.expand.default",
       [](Tracer& t) {
         return F::expand(t, P(t, "a", {3, 1}), {2, 3, 4});
       }},
      {"aten.clone.default",
       [](Tracer& t) {
         return F::contiguous(t, F::permute(t, P(t, "a", {3, 4}), {1, 0}));
       }},
      {"aten.slice.Tensor",
       [](Tracer& t) {
         return F::slice(t, P(t, "a", {4, 6}), 1, 1, 4);
       }},
      {"aten.select.int",
       [](Tracer& t) {
         return F::select(t, P(t, "a", {3, 4}), 0, 1);
       }},
      {"aten.cat.default",
       [](Tracer& t) {
         return F::cat(t, {P(t, "a", {2, 3}), P(t, "b", {2, 2})}, 1);
       }},
      {"aten.add.Tensor",
       [](Tracer& t) {
         return F::add(t, P(t, "a", {3, 4}), P(t, "b", {4}));
       }},
      {"aten.sub.Tensor",
       [](Tracer& t) {
         return F::sub(t, P(t, "a", {3, 4}), P(t, "b", {3, 1}));
       }},
      {"aten.mul.Tensor",
       [](Tracer& t) {
         return F::mul(t, P(t, "a", {3, 4}), P(t, "b", {1, 4}));
       }},
      {"aten.mul.Scalar",
       [](Tracer& t) {
         return F::mul(t, P(t, "a", {3, 4}), 1.5);
       }},
      {"aten.add.Scalar",
       [](Tracer& t) {
         return F::add(t, P(t, "a", {3, 4}), 0.5);
       }},
      {"aten.neg.default",
       [](Tracer& t) {
         return F::neg(t, P(t, "a", {3, 4}));
       }},
      {"aten.relu.default",
       [](Tracer& t) {
         return F::relu(t, P(t, "a", {3, 4}));
       }},
      {"aten.gelu.default",
       [](Tracer& t) {
         return F::gelu(t, P(t, "a", {3, 4}), "tanh");
       }},
      {"aten.silu.default",
       [](Tracer& t) {
         return F::silu(t, P(t, "a", {3, 4}));
       }},
      {"aten.tanh.default",
       [](Tracer& t) {
         return F::tanh(t, P(t, "a", {3, 4}));
       }},
      {"aten.hardtanh.default",
       [](Tracer& t) {
         return F::relu6(t, P(t, "a", {3, 4}, -2, 8));
       }},
      {"aten.rsqrt.default",
       [](Tracer& t) {
         return t.call1("aten.rsqrt.default", {P(t, "a", {3, 4}, 0.5, 2)});
       }},
      {"aten.pow.Tensor_Scalar",
       [](Tracer& t) {
         return t.call1("aten.pow.Tensor_Scalar", {P(t, "a", {3, 4}), 3});
       }},
      {"aten.mean.dim",
       [](Tracer& t) {
         return F::mean(t, P(t, "a", {3, 4, 5}), {1}, false);
       }},
      {"aten.sum.dim_IntList",
       [](Tracer& t) {
         return F::sum(t, P(t, "a", {3, 4}), {0}, true);
       }},
      {"aten.sum.default",
       [](Tracer& t) {
         return F::sum(t, P(t, "a", {3, 4}));
       }},
      {"aten._softmax.default",
       [](Tracer& t) {
         return F::softmax(t, P(t, "a", {3, 5}), -1);
       }},
      {"aten.native_layer_norm.default",
       [](Tracer& t) {
         return F::layer_norm(t, P(t, "x", {3, 5}), {5}, P(t, "w", {5}), P(t, "b", {5}), 1e-5);
       }},
      {"aten.native_group_norm.default",
       [](Tracer& t) {
         return F::group_norm(t, P(t, "x", {2, 4, 3, 3}), 2, P(t, "w", {4}), P(t, "b", {4}), 1e-5);
       }},
      {"aten.native_batch_norm.default",
       [](Tracer& t) {
         const Var rm =
             t.declare(DeclKind::Buffer, "rm", {3}, DType::Float64, init(Initializer::Kind::Zeros));
         const Var rv =
             t.declare(DeclKind::Buffer, "rv", {3}, DType::Float64, init(Initializer::Kind::Ones));
         return F::batch_norm(t, P(t, "x", {4, 3, 2, 2}), P(t, "w", {3}), P(t, "b", {3}), rm, rv,
                              true, 0.1, 1e-5);
       }},
      {"aten._native_batch_norm_legit_no_training.default",
       [](Tracer& t) {
         // Eval mode: normalised with the running statistics (mean away from 0, var from 1).
         const Var rm = t.declare(DeclKind::Buffer, "rm", {3}, DType::Float64,
                                  init(Initializer::Kind::Normal, {0, 1}));
         const Var rv = t.declare(DeclKind::Buffer, "rv", {3}, DType::Float64,
                                  init(Initializer::Kind::Uniform, {0.5, 2.0}));
         return F::batch_norm(t, P(t, "x", {4, 3, 2, 2}), P(t, "w", {3}), P(t, "b", {3}), rm, rv,
                              false, 0.1, 1e-5);
       }},
      {"aten.convolution.default",
       [](Tracer& t) {
         return F::conv2d(t, P(t, "x", {2, 4, 5, 5}), P(t, "w", {6, 2, 3, 3}), P(t, "b", {6}), 2, 1,
                          2);
       }},
      {"aten.max_pool2d_with_indices.default",
       [](Tracer& t) {
         return F::max_pool2d(t, P(t, "x", {1, 2, 4, 4}), 2, 2);
       }},
      {"aten.avg_pool2d.default",
       [](Tracer& t) {
         return F::avg_pool2d(t, P(t, "x", {1, 2, 4, 4}), 2, 2);
       }},
      {"aten._adaptive_avg_pool2d.default",
       [](Tracer& t) {
         return F::adaptive_avg_pool2d(t, P(t, "x", {1, 2, 5, 5}), 2, 2);
       }},
      {"aten.embedding.default",
       [](Tracer& t) {
         Initializer ids;
         ids.kind = Initializer::Kind::Index;
         ids.args = {crucible::cases::Literal::integer(0), crucible::cases::Literal::integer(6)};
         const Var idx = t.declare(DeclKind::Input, "idx", {2, 3}, DType::Int64, ids);
         return F::embedding(t, P(t, "w", {6, 3}), idx);
       }},
      {"aten.native_dropout.default",
       [](Tracer& t) {
         return F::dropout(t, P(t, "a", {4, 5}), 0.3, true);
       }},
  };
}

class GradCheck : public ::testing::TestWithParam<RuleCase> {};

TEST_P(GradCheck, MatchesFiniteDifferences) {
  const RuleCase& rc = GetParam();
  Tracer t("gradcheck");
  const Var y = rc.build(t);
  const auto ops = crucible::autograd::make_training(t, y);
  EXPECT_TRUE(std::find(ops.forward.begin(), ops.forward.end(), rc.op) != ops.forward.end())
      << rc.op << " is not in the forward of its case";
  const crucible::graph::Graph g = t.finish();
  const uint64_t seed = 7;
  crucible::graph::ExecOptions opts;
  opts.seed = seed;
  const auto base = crucible::graph::execute(g, "ref", opts);
  crucible::graph::TensorMap weights = crucible::graph::materialize_declarations(g, seed);
  auto loss_with = [&](const crucible::graph::TensorMap& w) {
    crucible::graph::ExecOptions o;
    o.seed = seed;
    o.weights = &w;
    o.weights_file = "<perturbed>";
    return crucible::graph::execute(g, "ref", o).outputs[0].get(0);
  };
  int checked = 0;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    if (g.outputs[k].kind != crucible::graph::GraphOutput::Kind::Grad) continue;
    const std::string& p = g.outputs[k].param;
    const Tensor& analytic = base.outputs[k];
    const Tensor orig = weights.at(p);
    ASSERT_EQ(analytic.shape(), orig.shape()) << p;
    for (int64_t j = 0; j < orig.numel(); ++j) {
      const double h = 1e-6;
      crucible::graph::TensorMap plus = weights, minus = weights;
      plus[p] = orig.clone();
      plus[p].set(j, orig.get(j) + h);
      minus[p] = orig.clone();
      minus[p].set(j, orig.get(j) - h);
      const double fd = (loss_with(plus) - loss_with(minus)) / (2 * h);
      const double an = analytic.get(j);
      EXPECT_NEAR(an, fd, 1e-5 * std::max(1.0, std::abs(fd)))
          << rc.op << ": d loss / d " << p << "[" << j << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 0) << rc.op << ": no gradient was checked";
}

INSTANTIATE_TEST_SUITE_P(Rules, GradCheck, ::testing::ValuesIn(rule_cases()),
                         [](const ::testing::TestParamInfo<RuleCase>& param_info) {
                           std::string n = param_info.param.op.substr(5);
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(GradCheck, EveryRuleHasACase) {
  std::set<std::string> cased;
  for (const RuleCase& rc : rule_cases()) cased.insert(rc.op);
  for (const std::string& op : crucible::autograd::rule_ops())
    EXPECT_TRUE(cased.contains(op)) << op << " has a derivative rule and no gradient check";
}

TEST(GradCheck, AnOpWithoutARuleIsANamedError) {
  Tracer t("norule");
  const Var a = P(t, "a", {3, 4});
  const Var y = t.call1("aten.exp.default", {a});
  try {
    crucible::autograd::make_training(t, y);
    FAIL() << "exp has no rule and backward went through";
  } catch (const crucible::Error& e) {
    EXPECT_NE(std::string(e.what()).find("aten.exp.default has no derivative rule"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
