// ATen semantics of the batch-norm ops: training statistics and in-place running-stat updates,
// evaluation mode's empty save tensors, mixed dtypes, the backward in both modes, errors.
// Expected values came from torch (aten.native_batch_norm / native_batch_norm_backward, f64).
#include <gtest/gtest.h>

#include "nn_test_util.h"
#include "ops/families.h"

namespace crucible {
namespace {

using nntest::expect_values;
using nntest::op_error_of;
using nntest::tensor;

const OpRegistry& ops() {
  static const OpRegistry& r = nntest::registry(register_batch_norm_ops);
  return r;
}

const std::vector<double> kX = {1.8,   1.058, 0.512, 0.162, 0.008, 0.05,
                                0.288, 0.722, 1.352, 2.178, 3.2,   4.418};

Tensor x() { return tensor(kX, {2, 3, 2}); }
Tensor w() { return tensor({1.5, -1.0, 0.5}, {3}); }
Tensor b() { return tensor({0.1, 0.2, 0.3}, {3}); }

TEST(BatchNorm, TrainingValuesAndRunningStatsUpdatedInPlace) {
  Tensor rm = tensor({0.1, -0.2, 0.3}, {3}), rv = tensor({1.0, 2.0, 0.5}, {3});
  const Values r =
      ops().get("aten.native_batch_norm.default").run_ref({x(), w(), b(), rm, rv, true, 0.1, 1e-5});
  expect_values(
      r[0], {2.359456728901732, 0.34683140735901286, 0.8898909302643884, 1.3378720538126927,
             -0.19290762459891436, -0.18207448999234482, -1.7417420395249408, -0.5645460967358036,
             -0.1852637662515413, -1.2424992178255398, 0.6304106055003713, 0.9445715090908878});
  expect_values(r[1], {0.967, 1.051, 1.919});
  expect_values(r[2], {1.8082886986008253, 1.2799460672808693, 0.515863552693788});
  // running_var uses the unbiased variance.
  expect_values(rm, {0.1867, -0.0749, 0.4619});
  expect_values(rv, {0.9407745333333334, 1.8813857333333333, 0.9510347999999997});
}

TEST(BatchNorm, EvalUsesRunningStatsAndReturnsEmptySaves) {
  Tensor rm = tensor({0.1, -0.2, 0.3}, {3}), rv = tensor({1.0, 2.0, 0.5}, {3});
  const Values r = ops()
                       .get("aten.native_batch_norm.default")
                       .run_ref({x(), w(), b(), rm, rv, false, 0.1, 1e-5});
  expect_values(r[0],
                {2.649987250095624, 1.5369928150538867, -0.3034587695594713, -0.055972014860293046,
                 0.09352688461435842, 0.1232250724438, 0.38199859001057446, 1.0329953350349868,
                 -0.8974269808374988, -1.4814957219275597, 2.35058915965192, 3.211836606705725});
  EXPECT_EQ(r[1].tensor().shape(), Shape({0}));
  EXPECT_EQ(r[2].tensor().shape(), Shape({0}));
  expect_values(rm, {0.1, -0.2, 0.3});  // untouched
  const Values nt = ops()
                        .get("aten._native_batch_norm_legit_no_training.default")
                        .run_ref({x(), w(), b(), rm, rv, 0.1, 1e-5});
  expect_values(nt[0],
                {2.649987250095624, 1.5369928150538867, -0.3034587695594713, -0.055972014860293046,
                 0.09352688461435842, 0.1232250724438, 0.38199859001057446, 1.0329953350349868,
                 -0.8974269808374988, -1.4814957219275597, 2.35058915965192, 3.211836606705725});
}

TEST(BatchNorm, OneValuePerChannelGivesNaNRunningVar) {
  Tensor rm = tensor({0, 0}, {2}, DType::Float32), rv = tensor({1, 1}, {2}, DType::Float32);
  const Tensor in = tensor({0.5, -1.0}, {1, 2}, DType::Float32);
  const Values r = ops()
                       .get("aten._native_batch_norm_legit.default")
                       .run_ref({in, Value(), Value(), rm, rv, true, 0.1, 1e-5});
  EXPECT_TRUE(std::isnan(rv.get(0)));
  EXPECT_FLOAT_EQ(rm.get(0), 0.05f);
  EXPECT_FLOAT_EQ(r[0].tensor().get(0), 0.0f);
}

TEST(BatchNorm, InvStdIsZeroForZeroVarianceAndEps) {
  const Values r =
      ops()
          .get("aten._native_batch_norm_legit.no_stats")
          .run_ref({Tensor::zeros({2, 3}, DType::Float32), Value(), Value(), true, 0.1, 0.0});
  EXPECT_EQ(r[2].tensor().get(0), 0.0);
}

TEST(BatchNorm, MixedDtypes) {
  const Tensor h = Tensor::zeros({2, 3, 4}, DType::BFloat16);
  const Tensor f = Tensor::full({3}, 1.0, DType::Float32);
  const OpDef& op = ops().get("aten.native_batch_norm.default");
  const Values r = op.run_ref({h, f, Value(), Value(), Value(), true, 0.1, 1e-5});
  EXPECT_EQ(r[0].tensor().dtype(), DType::BFloat16);
  EXPECT_EQ(r[1].tensor().dtype(), DType::Float32);
  const Values e = op.run_ref({h, f, Value(), f.clone(), f.clone(), false, 0.1, 1e-5});
  EXPECT_EQ(e[1].tensor().dtype(), DType::Float32);
  EXPECT_EQ(e[1].tensor().numel(), 0);
  const Values same = op.run_ref(
      {Tensor::zeros({2, 3}, DType::Float16), Value(), Value(), Value(), Value(), true, 0.1, 1e-5});
  EXPECT_EQ(same[1].tensor().dtype(), DType::Float16);
  EXPECT_EQ(op_error_of([&] {
              op.run_ref({Tensor::zeros({2, 3}, DType::Float32), Tensor::zeros({3}, DType::Float64),
                          Value(), Value(), Value(), true, 0.1, 1e-5});
            }),
            "mixed dtype (CPU): all inputs must share same datatype.");
  EXPECT_EQ(
      op_error_of([&] {
        op.run_ref({h, f, Tensor::zeros({3}, DType::Float64), Value(), Value(), true, 0.1, 1e-5});
      }),
      "mixed dtype (CPU): expect parameter to have scalar type of Float");
}

TEST(BatchNorm, Errors) {
  const OpDef& op = ops().get("aten.native_batch_norm.default");
  EXPECT_EQ(op_error_of([&] {
              op.run_ref({Tensor::zeros({0, 3}, DType::Float32), Value(), Value(), Value(), Value(),
                          true, 0.1, 1e-5});
            }),
            "input tensor must have at least one element, but got input_sizes = [0, 3]");
  EXPECT_EQ(op_error_of([&] {
              op.run_ref({x(), Value(), Value(), Value(), Value(), false, 0.1, 1e-5});
            }),
            "running_mean must be defined in evaluation mode");
  EXPECT_EQ(op_error_of([&] {
              op.run_ref({x(), tensor({1, 2}, {2}), Value(), Value(), Value(), true, 0.1, 1e-5});
            }),
            "weight should contain 3 elements not 2");
  EXPECT_NE(op_error_of([&] {
              op.run_ref({Tensor::zeros({4, 3}, DType::Int64), Value(), Value(), Value(), Value(),
                          true, 0.1, 1e-5});
            }),
            "");
}

TEST(BatchNorm, BackwardTrainAndEval) {
  const OpDef& op = ops().get("aten.native_batch_norm_backward.default");
  std::vector<double> gv;
  for (int i = 0; i < 12; ++i) gv.push_back((i - 5) / 4.0);
  const Tensor g = tensor(gv, {2, 3, 2});
  const Values fwd = ops()
                         .get("aten.native_batch_norm.default")
                         .run_ref({x(), w(), b(), Value(), Value(), true, 0.1, 1e-5});
  const std::vector<bool> all{true, true, true};
  const Values t = op.run_ref({g, x(), w(), Value(), Value(), fwd[1], fwd[2], true, 1e-5, all});
  expect_values(
      t[0],
      {0.2577493896341759, -1.4078364701893586, 0.49790684785113454, -0.22600561768312583,
       -0.03459169941580928, 0.025691275332722505, -0.4494305697267057, 1.5995176502818893,
       -0.4525899761564666, 0.18068874598845802, 0.033108295401961405, -0.024207871318874644},
      1e-7);
  expect_values(t[1], {-2.5759072511568766, 2.8178012671188335, 3.006194853323049}, 1e-7);
  expect_values(t[2], {-1.5, 0.5, 2.5});
  const Tensor rm = tensor({0.1, -0.2, 0.3}, {3}), rv = tensor({1.0, 2.0, 0.5}, {3});
  const Values e = op.run_ref({g, x(), w(), rm, rv, Value(), Value(), false, 1e-5, all});
  expect_values(e[0],
                {-1.8749906250703121, -1.4999925000562495, 0.5303287600696678, 0.35355250671311184,
                 -0.1767749275562, 0.0, 0.3749981250140624, 0.7499962500281248, -0.5303287600696678,
                 -0.7071050134262237, 0.8838746377810001, 1.0606495653372});
  expect_values(e[1], {-2.724986375102187, 1.998985872955934, 13.965219276939797});
  const Values m = op.run_ref(
      {g, x(), w(), rm, rv, Value(), Value(), false, 1e-5, std::vector<bool>{false, true, false}});
  EXPECT_TRUE(m[0].is_none());
  EXPECT_TRUE(m[1].is_tensor());
  EXPECT_TRUE(m[2].is_none());
}

// Every native_batch_norm_backward call of the traces: f16 input and params with f32 saved
// statistics, as CUDA's forward saves them. CUDA computes it (ATen's CPU kernel raises): the
// reference gives the f64 result rounded to f16, parameter grads in f16.
TEST(BatchNorm, BackwardOfTheCudaRecordedCalls) {
  const OpDef& op = ops().get("aten.native_batch_norm_backward.default");
  std::vector<double> gv;
  for (int i = 0; i < 12; ++i) gv.push_back((i - 5) / 4.0);
  const Tensor g = tensor(gv, {2, 3, 2});
  const Values fwd = ops()
                         .get("aten.native_batch_norm.default")
                         .run_ref({x(), w(), b(), Value(), Value(), true, 0.1, 1e-5});
  const std::vector<bool> all{true, true, true};
  const Values exact = op.run_ref({g, x(), w(), Value(), Value(), fwd[1], fwd[2], true, 1e-5, all});
  const DType h = DType::Float16;
  const Tensor sm = fwd[1].tensor().to(DType::Float32), si = fwd[2].tensor().to(DType::Float32);
  const Values r =
      op.run_ref({g.to(h), x().to(h), w().to(h), Value(), Value(), sm, si, true, 1e-5, all});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].tensor().dtype(), h);
  EXPECT_EQ(r[1].tensor().dtype(), h);
  EXPECT_EQ(r[2].tensor().dtype(), h);
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_NEAR(r[0].tensor().get(i), exact[0].tensor().get(i), 2e-2) << i;
  // Saved statistics in f16 with f32 params stay the CPU's "mixed" error.
  EXPECT_THROW(op.run_ref({g.to(h), x().to(h), w().to(DType::Float32), Value(), Value(), sm.to(h),
                           si.to(h), true, 1e-5, all}),
               Error);
}

TEST(BatchNorm, RunningStatsAreMutatedArguments) {
  const OpDef& op = ops().get("aten.native_batch_norm.default");
  EXPECT_EQ(op.schema.mutated_arguments().size(), 2u);
  EXPECT_TRUE(ops()
                  .get("aten._native_batch_norm_legit_no_training.default")
                  .schema.mutated_arguments()
                  .empty());
}

TEST(BatchNorm, SamplesMaterialiseAndRaiseAsLabelled) { nntest::check_samples(ops()); }

}  // namespace
}  // namespace crucible
