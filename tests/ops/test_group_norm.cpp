// ATen semantics of native_group_norm (values, [N, group] statistics, mixed dtypes, contiguity
// and group checks), its backward and native_layer_norm_backward. Expected values came from
// torch (f64).
#include <gtest/gtest.h>

#include "nn_test_util.h"
#include "ops/families.h"

namespace crucible {
namespace {

using nntest::expect_values;
using nntest::op_error_of;
using nntest::tensor;

const OpRegistry& ops() {
  static const OpRegistry& r = nntest::registry(register_group_norm_ops);
  return r;
}

Tensor gx() {
  std::vector<double> v;
  for (int i = 0; i < 16; ++i) v.push_back((i * 0.37 - 2) * (i * 0.37 - 2) / 3);
  return tensor(v, {2, 4, 2});
}
Tensor gw() { return tensor({1.0, -2.0, 0.5, 3.0}, {4}); }
Tensor gb() { return tensor({0.0, 0.1, -0.1, 0.2}, {4}); }

TEST(GroupNorm, ValuesAndStats) {
  const Values r =
      ops()
          .get("aten.native_group_norm.default")
          .run_ref({gx(), gw(), gb(), int64_t{2}, int64_t{4}, int64_t{2}, int64_t{2}, 1e-5});
  expect_values(r[0],
                {1.4466529799865067, 0.33053176482157154, 1.2161212151649352, 2.5382482744512216,
                 0.24955383407617454, -0.6342237841541528, -2.4513328546909823, 3.959352555158852,
                 -1.22509990718625, -0.5531289401307982, -0.5719709670554523, -2.7844867275786442,
                 -0.7422120880266085, -0.35084662521294696, 1.374096388440982, 4.384255890996345});
  EXPECT_EQ(r[1].tensor().shape(), Shape({2, 2}));
  expect_values(r[1], {0.75305, 0.05744999999999998, 0.8221166666666668, 3.0470499999999996});
  expect_values(r[2],
                {2.4930114254298306, 21.390341707873993, 2.3792197582513346, 1.208850850389688});
}

TEST(GroupNorm, Backward) {
  const Values f =
      ops()
          .get("aten.native_group_norm.default")
          .run_ref({gx(), gw(), gb(), int64_t{2}, int64_t{4}, int64_t{2}, int64_t{2}, 1e-5});
  std::vector<double> gv;
  for (int i = 0; i < 16; ++i) gv.push_back((i - 7) / 5.0);
  const Values r =
      ops()
          .get("aten.native_group_norm_backward.default")
          .run_ref({tensor(gv, {2, 4, 2}), gx(), f[1], f[2], gw(), int64_t{2}, int64_t{4},
                    int64_t{2}, int64_t{2}, std::vector<bool>{true, true, true}});
  expect_values(r[0],
                {0.8352858994690804, -2.484173398374759, 2.4537392030373013, -0.8048517041316234,
                 -2.5319744485579374, 4.656624465349947, -4.427078683498802, 2.302428666706798,
                 -0.5306824220362256, 1.2149992975804182, -0.9115739588801794, 0.2272570833359855,
                 0.4227118977701956, -1.2057742379103829, 1.1501395640429557, -0.367077223902764},
                1e-7);
  expect_values(r[1],
                {-2.8882238472565644, 2.8887458985110497, -1.878541650132377, 2.9562703134499078},
                1e-7);
  expect_values(r[2], {-2.0, -0.4, 1.2, 2.8});
}

TEST(GroupNorm, DtypesAndErrors) {
  const OpDef& op = ops().get("aten.native_group_norm.default");
  const Values m =
      op.run_ref({Tensor::zeros({2, 4, 3}, DType::BFloat16), Tensor::zeros({4}, DType::Float32),
                  Value(), int64_t{2}, int64_t{4}, int64_t{3}, int64_t{2}, 1e-5});
  EXPECT_EQ(m[0].tensor().dtype(), DType::BFloat16);
  EXPECT_EQ(m[1].tensor().dtype(), DType::Float32);
  const Tensor x = Tensor::zeros({2, 6, 5}, DType::Float32);
  EXPECT_EQ(
      op_error_of([&] {
        op.run_ref({x, Value(), Value(), int64_t{2}, int64_t{6}, int64_t{5}, int64_t{4}, 1e-5});
      }),
      "Expected number of channels in input to be divisible by num_groups, but got input of "
      "shape [2, 6, 5] and num_groups=4");
  EXPECT_EQ(op_error_of([&] {
              op.run_ref({x.transpose(1, 2).contiguous().transpose(1, 2), Value(), Value(),
                          int64_t{2}, int64_t{6}, int64_t{5}, int64_t{3}, 1e-5});
            }),
            "Expected X.is_contiguous(memory_format) to be true, but got false.");
  EXPECT_NE(op_error_of([&] {
              op.run_ref({x, Tensor::zeros({5}, DType::Float32), Value(), int64_t{2}, int64_t{6},
                          int64_t{5}, int64_t{3}, 1e-5});
            }),
            "");
}

TEST(LayerNormBackward, ValuesAndDtypes) {
  std::vector<double> xv, gv;
  for (int i = 0; i < 8; ++i) {
    xv.push_back((i * 0.53 - 1) * (i * 0.53 - 1));
    gv.push_back((i - 3) / 2.0);
  }
  const Tensor x = tensor(xv, {2, 4});
  const Tensor w = tensor({1.0, -2.0, 0.5, 3.0}, {4}), b = tensor({0.0, 0.1, -0.1, 0.2}, {4});
  OpRegistry fwd;
  register_norm_ops(fwd);
  const Values f =
      fwd.get("aten.native_layer_norm.default").run_ref({x, std::vector<int64_t>{4}, w, b, 1e-5});
  const OpDef& op = ops().get("aten.native_layer_norm_backward.default");
  const Values r = op.run_ref({tensor(gv, {2, 4}), x, std::vector<int64_t>{4}, f[1], f[2], w, b,
                               std::vector<bool>{true, true, true}});
  expect_values(r[0],
                {-0.7795993331819253, 4.243874985867427, -3.0415552589124655, -0.42272039377303505,
                 0.8993769558307962, -0.8602785360107432, -0.5791915436178161, 0.540093123797762},
                1e-7);
  expect_values(r[1],
                {-3.055242862170057, -0.10287692081796335, 1.0059207515894641, 2.9086279267172324},
                1e-7);
  expect_values(r[2], {-1.0, 0.0, 1.0, 2.0});
  // dgamma takes weight's dtype (mixed: f32 for a bf16 input).
  const Tensor hb = Tensor::zeros({2, 4}, DType::BFloat16);
  const Values mix =
      op.run_ref({hb, hb, std::vector<int64_t>{4}, Tensor::zeros({2, 1}, DType::Float32),
                  Tensor::full({2, 1}, 1.0, DType::Float32), Tensor::zeros({4}, DType::Float32),
                  Value(), std::vector<bool>{true, true, false}});
  EXPECT_EQ(mix[0].tensor().dtype(), DType::BFloat16);
  EXPECT_EQ(mix[1].tensor().dtype(), DType::Float32);
  EXPECT_TRUE(mix[2].is_none());
}

TEST(GroupNorm, SamplesMaterialiseAndRaiseAsLabelled) { nntest::check_samples(ops()); }

}  // namespace
}  // namespace crucible
