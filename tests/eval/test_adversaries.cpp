// The opinfo suite catches the classic wrong kernels: identity, constant, sign-blind, wrong on
// odd sizes, wrong for non-contiguous input, wrong for one dtype, wrong only on NaN. For a
// representative op of every family in the catalog, every adversary (src/backends/faulty/
// adversary.h) must fail at least one opinfo case of the op -- and "wrong for one dtype" must be
// caught whichever supported dtype is the wrong one. Where an adversary is genuinely not wrong
// for the op (a sign-blind abs is abs), the test proves that instead: the adversary passes
// every case, with at least one case that computes a result.
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backends/faulty/adversary.h"
#include "crucible/backends/backend.h"
#include "crucible/eval/evaluate.h"

namespace crucible {
namespace {

struct Representative {
  const char* family;
  const char* op;
  // Faults that do not change the op's results, each with the reason.
  std::map<Fault, const char*> not_wrong;
};

const char* const kValuesUnused = "the result does not depend on the input's values";
const char* const kViewNoValues = "a view computes no values";

const std::vector<Representative>& representatives() {
  static const std::vector<Representative> reps = {
      {"activation", "aten.hardswish.default", {}},
      {"activation.backward", "aten.gelu_backward.default", {}},
      {"comparison", "aten.lt.Tensor", {}},
      {"convolution", "aten.convolution.default", {}},
      {"copy", "aten.clone.default", {}},  // identity misses clone's memory_format errors
      {"creation", "aten.full_like.default", {{Fault::SignBlind, kValuesUnused}}},
      {"distance", "aten._cdist_forward.default", {}},
      {"embedding", "aten.embedding.default", {}},
      {"fft", "aten._fft_r2c.default", {}},
      {"indexing", "aten.index_select.default", {}},
      {"join", "aten.cat.default", {}},
      {"loss", "aten.mse_loss.default", {}},
      {"matmul", "aten.mm.default", {}},
      {"meta",
       "aten.sym_size.int",
       {{Fault::SignBlind, kValuesUnused}, {Fault::NaNOnly, kValuesUnused}}},
      {"norm", "aten.native_layer_norm.default", {}},
      {"padding", "aten.reflection_pad2d.default", {}},
      {"pointwise.binary", "aten.add.Tensor", {}},
      {"pointwise.math", "aten.abs.default", {{Fault::SignBlind, "abs(|x|) is abs(x)"}}},
      {"pointwise.unary", "aten.relu.default", {}},
      {"pooling", "aten.max_pool2d_with_indices.default", {}},
      {"quantized", "quantized_decomposed.quantize_per_token.default", {}},
      {"random", "aten.native_dropout.default", {}},
      {"reduction", "aten.sum.dim_IntList", {}},
      {"sampling", "aten.grid_sampler_2d.default", {}},
      {"scan", "aten.cumsum.default", {}},
      {"selection", "aten.clamp.default", {}},
      {"softmax", "aten._softmax.default", {}},
      {"softmax.backward", "aten._softmax_backward_data.default", {}},
      {"sort", "aten.sort.default", {}},
      {"upsample", "aten.upsample_bilinear2d.vec", {}},
      {"view",
       "aten.permute.default",
       {{Fault::SignBlind, kViewNoValues}, {Fault::NaNOnly, kViewNoValues}}},
      {"view.backward", "aten.slice_scatter.default", {}},
  };
  return reps;
}

struct Tally {
  int failed = 0;
  int computed = 0;  // passed with a result (not an expected error)
  std::string first_failure;
};

Tally run_opinfo(const OpDef& op, Backend& reference, Backend& candidate) {
  Tally t;
  for (const Sample& s : op.samples(SampleContext{})) {
    Case c;
    c.op = op.name;
    c.call = s.call;
    c.seed = 7;
    c.label = s.label;
    const CaseResult r = evaluate_case(c, op, reference, candidate);
    if (r.status == Status::Failed) {
      if (t.failed++ == 0) t.first_failure = s.label + ": " + r.detail;
    }
    if (r.status == Status::Passed && !r.expected_error) ++t.computed;
  }
  return t;
}

TEST(Adversaries, EveryFamilyOfTheCatalogHasARepresentative) {
  std::set<std::string> covered;
  for (const Representative& rep : representatives()) {
    const OpDef* op = OpRegistry::catalog().find(rep.op);
    ASSERT_NE(op, nullptr) << rep.op;
    EXPECT_EQ(op->family, rep.family) << rep.op;
    covered.insert(op->family);
  }
  for (const OpDef* op : OpRegistry::catalog().all())
    EXPECT_TRUE(covered.count(op->family))
        << "family '" << op->family << "' (" << op->name << ") has no representative here";
}

class AdversaryTest : public testing::TestWithParam<Representative> {};

TEST_P(AdversaryTest, OpinfoCatchesEveryAdversaryWhereItIsWrong) {
  const Representative& rep = GetParam();
  const OpDef& op = OpRegistry::catalog().get(rep.op);
  auto ref = BackendRegistry::instance().create("ref");
  for (Fault f : all_faults()) {
    // "Wrong for one dtype" must be caught for each dtype the op supports.
    std::vector<DType> victims = {DType::Float32};
    if (f == Fault::OneDType) victims = op.dtypes;
    for (DType victim : victims) {
      auto adversary = make_adversary(f, victim);
      const Tally t = run_opinfo(op, *ref, *adversary);
      const std::string what =
          fmt::format("{}: the '{}' kernel{}", rep.op, fault_name(f),
                      f == Fault::OneDType ? fmt::format(" (wrong for {})", dtype_code(victim))
                                           : std::string());
      auto exempt = rep.not_wrong.find(f);
      if (exempt == rep.not_wrong.end()) {
        EXPECT_GT(t.failed, 0) << what << " passed every opinfo case";
      } else {
        EXPECT_EQ(t.failed, 0) << what << " is declared not wrong (" << exempt->second
                               << ") but failed: " << t.first_failure;
        EXPECT_GT(t.computed, 0) << what << ": no case computed a result";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, AdversaryTest, testing::ValuesIn(representatives()),
                         [](const testing::TestParamInfo<Representative>& param_info) {
                           std::string name = param_info.param.family;
                           for (char& ch : name)
                             if (ch == '.') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace crucible
