// ATen semantics of the 2-d upsampling ops: nearest's float source index and scale handling,
// bilinear and bicubic with align_corners both ways, scale factors driving the source index,
// the backward ops, size checks. Expected values came from torch (f64).
#include <gtest/gtest.h>

#include "nn_test_util.h"
#include "ops/families.h"

namespace crucible {
namespace {

using nntest::expect_values;
using nntest::op_error_of;
using nntest::tensor;

const OpRegistry& ops() {
  static const OpRegistry& r = nntest::registry(register_upsample_ops);
  return r;
}

Tensor ux() {
  std::vector<double> v;
  for (int i = 0; i < 12; ++i) v.push_back((i * 0.9 - 4) * (i * 0.9 - 4) / 7);
  return tensor(v, {1, 1, 3, 4});
}

const Value kNone;

TEST(Upsample, NearestScaleFactorsUseOneOverScale) {
  // scale 1.7: output 5x6, source = floor(dst / 1.7), not dst * 3/5.
  const Values r = ops()
                       .get("aten.upsample_nearest2d.vec")
                       .run_ref({ux(), kNone, std::vector<double>{1.7, 1.7}});
  EXPECT_EQ(r[0].tensor().shape(), Shape({1, 1, 5, 6}));
  expect_values(
      r[0], {2.2857142857142856,   2.2857142857142856,   1.372857142857143,    1.372857142857143,
             0.6914285714285715,   0.6914285714285715,   2.2857142857142856,   2.2857142857142856,
             1.372857142857143,    1.372857142857143,    0.6914285714285715,   0.6914285714285715,
             0.022857142857142847, 0.022857142857142847, 0.03571428571428571,  0.03571428571428571,
             0.28000000000000014,  0.28000000000000014,  0.022857142857142847, 0.022857142857142847,
             0.03571428571428571,  0.03571428571428571,  0.28000000000000014,  0.28000000000000014,
             1.462857142857143,    1.462857142857143,    2.4014285714285712,   2.4014285714285712,
             3.5714285714285716,   3.5714285714285716});
  const Values d = ops()
                       .get("aten.upsample_nearest2d.default")
                       .run_ref({ux(), std::vector<int64_t>{5, 3}, kNone, kNone});
  expect_values(
      d[0], {2.2857142857142856, 1.372857142857143, 0.6914285714285715, 2.2857142857142856,
             1.372857142857143, 0.6914285714285715, 0.022857142857142847, 0.03571428571428571,
             0.28000000000000014, 0.022857142857142847, 0.03571428571428571, 0.28000000000000014,
             1.462857142857143, 2.4014285714285712, 3.5714285714285716});
}

TEST(Upsample, BilinearAlignCornersBothWays) {
  const OpDef& op = ops().get("aten.upsample_bilinear2d.default");
  const Values f = op.run_ref({ux(), std::vector<int64_t>{5, 7}, false, kNone, kNone});
  expect_values(
      f[0], {2.2857142857142856,  1.9596938775510204,  1.4380612244897961,   1.0321428571428573,
             0.6592857142857145,  0.40214285714285714, 0.24142857142857135,  1.3805714285714288,
             1.1867959183673469,  0.8767551020408166,  0.6824285714285716,   0.5211632653061227,
             0.4756122448979592,  0.447142857142857,   0.022857142857142847, 0.027448979591836727,
             0.03479591836734693, 0.15785714285714292, 0.3139795918367347,   0.5858163265306121,
             0.7557142857142856,  0.8868571428571428,  1.0898163265306122,   1.4145510204081628,
             1.8549999999999995,  2.328510204081632,   2.9177346938775504,   3.286,
             1.462857142857143,   1.7980612244897958,  2.3343877551020404,   2.986428571428571,
             3.671530612244898,   4.472346938775511,   4.972857142857143});
  const Values t = op.run_ref({ux(), std::vector<int64_t>{5, 7}, true, kNone, kNone});
  expect_values(
      t[0], {2.2857142857142856,  1.8292857142857142,  1.372857142857143,    1.0321428571428573,
             0.6914285714285715,  0.4664285714285714,  0.24142857142857135,  1.1542857142857141,
             0.9292857142857142,  0.7042857142857144,  0.5950000000000001,   0.4857142857142858,
             0.49214285714285716, 0.49857142857142844, 0.022857142857142847, 0.02928571428571428,
             0.03571428571428571, 0.15785714285714292, 0.28000000000000014,  0.5178571428571428,
             0.7557142857142856,  0.742857142857143,   0.9807142857142856,   1.2185714285714284,
             1.572142857142857,   1.925714285714286,   2.3950000000000005,   2.8642857142857143,
             1.462857142857143,   1.9321428571428572,  2.4014285714285712,   2.986428571428571,
             3.5714285714285716,  4.272142857142858,   4.972857142857143});
  const Values v = ops()
                       .get("aten.upsample_bilinear2d.vec")
                       .run_ref({ux(), kNone, false, std::vector<double>{1.5, 1.5}});
  expect_values(v[0],
                {2.2857142857142856, 1.8292857142857142,  1.2592857142857146,  0.8050000000000002,
                 0.4664285714285714, 0.24142857142857135, 1.1542857142857141,  0.9292857142857142,
                 0.6678571428571429, 0.5221428571428572,  0.4921428571428571,  0.49857142857142844,
                 0.2628571428571427, 0.34642857142857114, 0.49642857142857094, 0.7621428571428568,
                 1.143571428571428,  1.458571428571428,   1.2228571428571429,  1.6149999999999998,
                 2.176428571428571,  2.853571428571428,   3.6464285714285714,  4.2700000000000005});
}

TEST(Upsample, Bicubic) {
  const OpDef& op = ops().get("aten.upsample_bicubic2d.default");
  expect_values(op.run_ref({ux(), std::vector<int64_t>{4, 6}, false, kNone, kNone})[0],
                {2.533145054408483,   2.0285981096540184,  1.285457124255952,  0.8561221168154765,
                 0.3926239885602679,  0.15968418666294623, 0.7167471749441965, 0.4867705426897323,
                 0.19286783854166673, 0.08322033110119063, 0.0689604840959822, 0.11059099469866045,
                 0.2542572893415181,  0.45351963588169647, 0.8619163876488102, 1.252040085565477,
                 1.9400796944754466,  2.410949183872768,   1.4789754813058045, 1.9528081403459825,
                 2.810443173363096,   3.520254371279763,   4.657532261439732,  5.402972063337055});
  expect_values(op.run_ref({ux(), std::vector<int64_t>{2, 3}, true, kNone, kNone})[0],
                {2.2857142857142856, 0.98875, 0.24142857142857135, 1.462857142857143,
                 2.943035714285714, 4.972857142857143});
}

TEST(Upsample, Backward) {
  std::vector<double> gv;
  for (int i = 0; i < 35; ++i) gv.push_back((i - 17) / 9.0);
  const Tensor g = tensor(gv, {1, 1, 5, 7});
  const std::vector<int64_t> in{1, 1, 3, 4};
  expect_values(ops()
                    .get("aten.upsample_bilinear2d_backward.vec")
                    .run_ref({g, std::vector<int64_t>{5, 7}, in, false, kNone})[0],
                {-4.241269841269841, -3.903174603174603, -3.3190476190476197, -2.6920634920634914,
                 -0.8714285714285712, -0.32857142857142824, 0.3285714285714289, 0.8714285714285716,
                 2.6920634920634923, 3.3190476190476184, 3.9031746031746044, 4.24126984126984});
  expect_values(ops()
                    .get("aten.upsample_nearest2d_backward.default")
                    .run_ref({g, std::vector<int64_t>{5, 7}, in, kNone, kNone})[0],
                {-5.777777777777778, -4.888888888888888, -4.0, -1.6666666666666667,
                 0.4444444444444444, 1.3333333333333335, 2.2222222222222223, 1.4444444444444444,
                 2.5555555555555554, 3.0, 3.4444444444444446, 1.8888888888888888});
}

TEST(Upsample, Errors) {
  const OpDef& vec = ops().get("aten.upsample_nearest2d.vec");
  EXPECT_EQ(op_error_of([&] {
              vec.run_ref({ux(), kNone, kNone});
            }),
            "Must specify exactly one of output_size and scale_factors");
  EXPECT_EQ(op_error_of([&] {
              vec.run_ref({ux(), std::vector<int64_t>{4, 4}, std::vector<double>{2.0, 2.0}});
            }),
            "Must specify exactly one of output_size and scale_factors");
  EXPECT_EQ(op_error_of([&] {
              vec.run_ref({ux(), std::vector<int64_t>{0, 4}, kNone});
            }),
            "Input and output sizes should be greater than 0, but got input (H: 3, W: 4) output "
            "(H: 0, W: 4)");
  EXPECT_EQ(op_error_of([&] {
              ops()
                  .get("aten.upsample_nearest2d_backward.vec")
                  .run_ref({Tensor::zeros({1, 1, 5, 6}, DType::Float32), std::vector<int64_t>{5, 7},
                            std::vector<int64_t>{1, 1, 3, 4}, kNone});
            }),
            "Expected grad_output to have the same shape as output; output.size(3) = 7 but got "
            "grad_output.size(3) = 6");
  // uint8 nearest is exact.
  const Values u = vec.run_ref(
      {tensor({1, 2, 3, 4}, {1, 1, 2, 2}, DType::UInt8), std::vector<int64_t>{4, 4}, kNone});
  EXPECT_EQ(u[0].tensor().dtype(), DType::UInt8);
  EXPECT_EQ(u[0].tensor().get_int(5), 1);
}

TEST(Upsample, SamplesMaterialiseAndRaiseAsLabelled) { nntest::check_samples(ops()); }

}  // namespace
}  // namespace crucible
