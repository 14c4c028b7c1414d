// The executor: the example graphs on ref and cpu agree, the MLP matches a hand computation,
// the f64 (golden) mode, intermediates, the training graph's gradients against finite
// differences, and missing ops refused before anything runs. Materialisation: deterministic and
// per name, every initialiser.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "crucible/backends/backend.h"
#include "crucible/core/error.h"
#include "crucible/graph/executor.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/values.h"
#include "graph/graph_test_util.h"

namespace crucible::graph {
namespace {

using testing::example;
using testing::with_header;

// max over elements of |a - b| / (atol + rtol |b|): at most 1 when they agree.
double agreement(const Tensor& a, const Tensor& b, double atol, double rtol) {
  EXPECT_EQ(a.shape(), b.shape());
  double worst = 0;
  for (int64_t k = 0; k < a.numel(); ++k)
    worst = std::max(worst, std::abs(a.get(k) - b.get(k)) / (atol + rtol * std::abs(b.get(k))));
  return worst;
}

TEST(GraphExecutor, RefAndCpuAgreeOnTheExamples) {
  for (const char* name : {"mlp.graph", "conv_bn.graph", "mlp_train.graph", "attention.graph"}) {
    const Graph g = read_graph(example(name));
    const ExecResult ref = execute(g, "ref", {.seed = 5});
    const ExecResult cpu = execute(g, "cpu", {.seed = 5});
    ASSERT_EQ(ref.outputs.size(), g.outputs.size());
    ASSERT_EQ(cpu.outputs.size(), g.outputs.size());
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      EXPECT_EQ(ref.outputs[i].dtype(), g.value(g.outputs[i].value).spec.dtype);
      EXPECT_EQ(ref.outputs[i].shape(), g.value(g.outputs[i].value).spec.shape);
      EXPECT_LE(agreement(cpu.outputs[i], ref.outputs[i], 1e-5, 1e-4), 1.0) << name << " " << i;
    }
  }
}

// Declarations put on the device once (the timed runs of crucible bench) give the same
// outputs as a plain run, left as the backend's own tensors; a missing one is an internal error.
TEST(GraphExecutor, ResidentDeclarationsGiveThePlainRunsOutputs) {
  const Graph g = read_graph(example("mlp.graph"));
  auto cpu = BackendRegistry::instance().create("cpu");
  const ExecResult plain = execute(g, *cpu, {.seed = 5});
  const TensorMap resident = upload_declarations(g, *cpu, {.seed = 5});
  EXPECT_EQ(resident.size(), g.decls.size());
  ExecOptions o;
  o.resident = &resident;
  o.device_outputs = true;
  for (int run = 0; run < 2; ++run) {
    const ExecResult r = execute(g, *cpu, o);
    cpu->synchronize();
    ASSERT_EQ(r.outputs.size(), plain.outputs.size());
    for (size_t i = 0; i < r.outputs.size(); ++i)
      EXPECT_EQ(agreement(r.outputs[i], plain.outputs[i], 0, 0), 0.0) << run << " " << i;
  }
  TensorMap partial = resident;
  partial.erase(partial.begin());
  o.resident = &partial;
  EXPECT_THROW(execute(g, *cpu, o), Error);
}

// The MLP in double from the materialised values, as the graph computes it.
Tensor mlp_by_hand(const TensorMap& v) {
  const Tensor &x = v.at("x"), &w1 = v.at("fc1.weight"), &b1 = v.at("fc1.bias"),
               &w2 = v.at("fc2.weight"), &b2 = v.at("fc2.bias");
  Tensor out = Tensor::empty({4, 4}, DType::Float64);
  for (int r = 0; r < 4; ++r) {
    double a[16], y[4];
    for (int j = 0; j < 16; ++j) {
      double s = b1.get(j);
      for (int k = 0; k < 8; ++k) s += x.get(r * 8 + k) * w1.get(j * 8 + k);
      a[j] = std::max(s, 0.0);
    }
    double mx = -INFINITY;
    for (int j = 0; j < 4; ++j) {
      double s = b2.get(j);
      for (int k = 0; k < 16; ++k) s += a[k] * w2.get(j * 16 + k);
      y[j] = s;
      mx = std::max(mx, s);
    }
    double z = 0;
    for (int j = 0; j < 4; ++j) z += std::exp(y[j] - mx);
    for (int j = 0; j < 4; ++j) out.set(r * 4 + j, y[j] - mx - std::log(z));
  }
  return out;
}

TEST(GraphExecutor, MlpMatchesAHandComputationAndTheGoldenRunIsF64) {
  const Graph g = read_graph(example("mlp.graph"));
  const ExecResult golden = execute(g, "ref", {.seed = 11, .golden = true, .keep_values = true});
  ASSERT_EQ(golden.outputs.size(), 1u);
  EXPECT_EQ(golden.outputs[0].dtype(), DType::Float64);
  // The golden run's declarations are the f32 run's values, widened.
  const TensorMap decls = materialize_declarations(g, 11);
  for (const auto& [name, t] : decls) {
    const Tensor& w = golden.values.at(name);
    EXPECT_EQ(w.dtype(), DType::Float64) << name;
    for (int64_t k = 0; k < t.numel(); ++k) EXPECT_EQ(w.get(k), t.get(k)) << name;
  }
  const Tensor hand = mlp_by_hand(decls);
  EXPECT_LE(agreement(golden.outputs[0], hand, 1e-13, 1e-12), 1.0);
  const ExecResult f32 = execute(g, "ref", {.seed = 11});
  EXPECT_EQ(f32.outputs[0].dtype(), DType::Float32);
  EXPECT_LE(agreement(f32.outputs[0], hand, 1e-5, 1e-5), 1.0);
  // Another seed gives other values.
  const ExecResult other = execute(g, "ref", {.seed = 12});
  EXPECT_GT(agreement(other.outputs[0], f32.outputs[0], 1e-5, 1e-5), 1.0);
  EXPECT_THROW(execute(g, "cpu", {.golden = true}), Error);
}

TEST(GraphExecutor, AttentionIsCausal) {
  const Graph g = read_graph(example("attention.graph"));
  const ExecResult r = execute(g, "cpu", {.seed = 8});
  const Tensor& p = r.outputs.at(1);  // [1, 2, 4, 4] attention probabilities
  ASSERT_EQ(p.shape(), (Shape{1, 2, 4, 4}));
  for (int64_t row = 0; row < 8; ++row) {
    const int64_t query = row % 4;
    double sum = 0;
    for (int64_t key = 0; key < 4; ++key) {
      const double w = p.get(row * 4 + key);
      sum += w;
      if (key > query) {
        EXPECT_EQ(w, 0.0) << row << " " << key;  // a later position is never attended to
      } else {
        EXPECT_GT(w, 0.0) << row << " " << key;
      }
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(GraphExecutor, KeepsEveryIntermediateValue) {
  const Graph g = read_graph(example("mlp.graph"));
  const ExecResult r = execute(g, "cpu", {.seed = 2, .keep_values = true});
  EXPECT_EQ(r.values.size(), g.values.size());
  const Tensor &h = r.values.at("h"), &a = r.values.at("a");
  EXPECT_EQ(h.shape(), (Shape{4, 16}));
  int negative = 0;
  for (int64_t k = 0; k < h.numel(); ++k) {
    EXPECT_EQ(a.get(k), std::max(h.get(k), 0.0));
    negative += h.get(k) < 0;
  }
  EXPECT_GT(negative, 0);  // relu did something
  EXPECT_EQ(r.values.at("t0").strides(), (Shape{1, 8}));
  EXPECT_TRUE(execute(g, "cpu", {.seed = 2}).values.empty());
}

TEST(GraphExecutor, TrainingGradientsMatchFiniteDifferences) {
  const Graph g = read_graph(example("mlp_train.graph"));
  const TensorMap decls = materialize_declarations(g, 4);
  const ExecResult r = execute(g, "ref", {.seed = 4, .golden = true});
  ASSERT_EQ(r.outputs.size(), 3u);
  const double tangent = decls.at("tangent").get(0);
  // loss(W) with one weight moved by +-h, in f64; the graph's gradient is d(tangent * loss).
  TensorMap weights;
  for (const char* p : {"fc.weight", "fc.bias"}) weights[p] = decls.at(p).to(DType::Float64);
  auto loss_with = [&](const std::string& p, int64_t k, double h) {
    TensorMap w;
    for (const auto& [name, t] : weights) w[name] = t.clone();
    w[p].set(k, w[p].get(k) + h);
    Graph g64 = g;  // the same graph, its params declared f64 to hold the moved weights
    for (Declaration& d : g64.decls) {
      if (d.kind == DeclKind::Param) d.spec.dtype = d.type.dtype = DType::Float64;
    }
    return execute(g64, "ref", {.seed = 4, .golden = true, .weights = &w}).outputs[0].get(0);
  };
  const double h = 1e-6;
  for (const auto& [p, out] : {std::pair{"fc.weight", 1}, std::pair{"fc.bias", 2}}) {
    const Tensor& grad = r.outputs[static_cast<size_t>(out)];
    for (int64_t k : {int64_t{0}, grad.numel() - 1}) {
      const double numeric = (loss_with(p, k, h) - loss_with(p, k, -h)) / (2 * h);
      EXPECT_NEAR(grad.get(k), tangent * numeric, 1e-7) << p << " " << k;
    }
  }
}

TEST(GraphExecutor, MissingOpsAreListedBeforeAnythingRuns) {
  const Graph g = read_graph(example("mlp.graph"));
  const auto faulty = BackendRegistry::instance().create("faulty");
  const std::vector<std::string> missing = missing_ops(g, *faulty);
  ASSERT_EQ(missing.size(), 3u);
  const std::string file = example("mlp.graph");
  EXPECT_EQ(missing[0],
            "aten.t.default: faulty does not implement it (first needed at " + file + ":14)");
  EXPECT_EQ(missing[1],
            "aten.addmm.default: faulty does not implement it (first needed at " + file + ":15)");
  EXPECT_EQ(missing[2],
            "aten._log_softmax.default: faulty does not implement it (first needed "
            "at " +
                file + ":19)");
  try {
    execute(g, *faulty, {});
    FAIL() << "ran a graph on a backend lacking its ops";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    const std::string m = e.what();
    EXPECT_NE(m.find("backend faulty cannot run 3 op(s) of graph mlp-tiny: aten.t.default"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("aten._log_softmax.default"), std::string::npos) << m;
  }
  EXPECT_TRUE(missing_ops(g, *BackendRegistry::instance().create("cpu")).empty());
}

TEST(GraphExecutor, AnErrorWhileRunningNamesTheNode) {
  // The index is in range for meta (no values) but out of range when it runs.
  const Graph g = parse_graph(with_header("param %w : T([3, 2], f32)\n"
                                          "input %i : T([4], i64) data(0, 1, 2, 3)\n"
                                          "%e = aten.embedding(%w, %i)\n"
                                          "output %e\n"),
                              "e.graph");
  try {
    execute(g, "ref", {});
    FAIL() << "an out-of-range index ran";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("e.graph:6: %e = aten.embedding.default(%w, %i) -> "
                                          "T([4, 2], f32): ",
                                          0),
              0u)
        << e.what();
  }
}

TEST(GraphValues, DeterministicAndPerName) {
  const std::string body = "input %x : T([64], f32)\nparam %w : T([8, 8], f32) normal(0, 0.02)\n";
  const Graph a = parse_graph(with_header(body + "output %x\n"), "a");
  const Graph b =
      parse_graph(with_header("param %extra : T([5], f32)\n" + body + "output %x\n"), "b");
  const TensorMap va = materialize_declarations(a, 9), vb = materialize_declarations(b, 9);
  const TensorMap again = materialize_declarations(a, 9), other = materialize_declarations(a, 10);
  for (const char* name : {"x", "w"}) {
    int same_other = 0;
    for (int64_t k = 0; k < va.at(name).numel(); ++k) {
      EXPECT_EQ(va.at(name).get(k), vb.at(name).get(k)) << name;  // the added param changes nothing
      EXPECT_EQ(va.at(name).get(k), again.at(name).get(k)) << name;
      same_other += va.at(name).get(k) == other.at(name).get(k);
    }
    EXPECT_EQ(same_other, 0) << name;
  }
  // x and w draw from different streams.
  EXPECT_NE(va.at("x").get(0) * 0.02, va.at("w").get(0));
}

TEST(GraphValues, EveryInitialiser) {
  const Graph g = parse_graph(with_header("input %n : T([20000], f32) normal(2, 0.5)\n"
                                          "input %u : T([20000], f64) uniform(-3, -1)\n"
                                          "input %i : T([20000], i32) index(-5, 95)\n"
                                          "input %m : T([1000], b8)\n"
                                          "param %z : T([3], f16) zeros\n"
                                          "param %o : T([3], i64) ones\n"
                                          "param %f : T([3], bf16) full(-2.5)\n"
                                          "buffer %r : T([2, 3], i64) arange\n"
                                          "buffer %s : T([3, 2], f32, stride=(1, 3)) arange\n"
                                          "const %d : T([2, 2], f32) data(1.5, -0.25, 3, inf)\n"
                                          "input %g : T([20000], f32) grad\n"
                                          "output %n\n"),
                              "g");
  const TensorMap v = materialize_declarations(g, 1);
  auto moments = [](const Tensor& t) {
    double s = 0, s2 = 0;
    for (int64_t k = 0; k < t.numel(); ++k) {
      s += t.get(k);
      s2 += t.get(k) * t.get(k);
    }
    const double mean = s / static_cast<double>(t.numel());
    return std::pair{mean, std::sqrt(s2 / static_cast<double>(t.numel()) - mean * mean)};
  };
  const auto [nm, ns] = moments(v.at("n"));
  EXPECT_NEAR(nm, 2.0, 0.02);
  EXPECT_NEAR(ns, 0.5, 0.02);
  const auto [gm, gs] = moments(v.at("g"));
  EXPECT_NEAR(gm, 0.0, 0.03);
  EXPECT_NEAR(gs, 1.0, 0.03);
  double umin = 0, umax = -10;
  int64_t imin = 1000, imax = -1000, trues = 0;
  for (int64_t k = 0; k < 20000; ++k) {
    umin = std::min(umin, v.at("u").get(k));
    umax = std::max(umax, v.at("u").get(k));
    imin = std::min(imin, v.at("i").get_int(k));
    imax = std::max(imax, v.at("i").get_int(k));
  }
  for (int64_t k = 0; k < 1000; ++k) trues += v.at("m").get_int(k);
  EXPECT_GE(umin, -3.0);
  EXPECT_LT(umax, -1.0);
  EXPECT_LT(umin, -2.99);
  EXPECT_GT(umax, -1.01);
  EXPECT_EQ(imin, -5);  // both ends of [lo, hi) are drawn, nothing outside
  EXPECT_EQ(imax, 94);
  EXPECT_GT(trues, 400);
  EXPECT_LT(trues, 600);
  EXPECT_EQ(v.at("z").dtype(), DType::Float16);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(v.at("z").get(k), 0.0);
    EXPECT_EQ(v.at("o").get_int(k), 1);
    EXPECT_EQ(v.at("f").get(k), -2.5);
  }
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(v.at("r").get_int(k), k);
    EXPECT_EQ(v.at("s").get(k), k);  // logical order, whatever the strides
  }
  EXPECT_EQ(v.at("s").strides(), (Shape{1, 3}));
  EXPECT_EQ(v.at("d").get(0), 1.5);
  EXPECT_EQ(v.at("d").get(1), -0.25);
  EXPECT_EQ(v.at("d").get(2), 3.0);
  EXPECT_EQ(v.at("d").get(3), INFINITY);
}

}  // namespace
}  // namespace crucible::graph
