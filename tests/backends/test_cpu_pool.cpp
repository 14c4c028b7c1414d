// The cpu backend's pooling against the reference: max with indices (padding, dilation,
// ceil_mode), average (count_include_pad, divisor_override), adaptive, and the backwards; every
// ISA's vector plane kernels against the generic ones (strides 1, 2 and 3, rows shorter and
// longer than a vector, 3-d), windows of -inf, values the f32 sums cannot take, strided and
// channels-last inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/pool_kernels.h"
#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

const DType f32 = DType::Float32;
using L = std::vector<int64_t>;

TEST(CpuPool, MaxPoolWithIndices) {
  const Tensor x = filled({2, 3, 9, 8}, f32);
  const Values out = expect_matches_ref(
      "aten.max_pool2d_with_indices.default",
      {x, Value(L{3, 3}), Value(L{2, 2}), Value(L{1, 1}), Value(L{1, 1}), Value(false)});
  // Every index points at the max of its window inside its own plane.
  const Tensor& v = out[0].tensor();
  const Tensor& idx = out[1].tensor();
  for (int64_t i = 0; i < v.numel(); ++i)
    ASSERT_EQ(x.get((i / (v.size(2) * v.size(3))) * 72 + idx.get_int(i)), v.get(i));
  expect_matches_ref("aten.max_pool2d_with_indices.default",
                     {filled({1, 2, 10, 7}, f32), Value(L{3, 2}), Value(L{2, 3}), Value(L{1, 0}),
                      Value(L{2, 1}), Value(true)});
  expect_matches_ref("aten.max_pool2d_with_indices_backward.default",
                     {filled({2, 3, 5, 4}, f32, 2), x, Value(L{3, 3}), Value(L{2, 2}),
                      Value(L{1, 1}), Value(L{1, 1}), Value(false), out[1].tensor()});
}

TEST(CpuPool, AvgPoolAndBackward) {
  const Tensor x = filled({2, 3, 7, 6}, f32);
  for (bool cip : {true, false}) {
    expect_matches_ref(
        "aten.avg_pool2d.default",
        {x, Value(L{3, 3}), Value(L{2, 2}), Value(L{1, 1}), Value(true), Value(cip), Value()});
    expect_matches_ref("aten.avg_pool2d_backward.default",
                       {filled({2, 3, 4, 4}, f32, 2), x, Value(L{3, 3}), Value(L{2, 2}),
                        Value(L{1, 1}), Value(true), Value(cip), Value()});
  }
  expect_matches_ref("aten.avg_pool2d.default", {x, Value(L{2, 2}), Value(L{}), Value(L{0, 0}),
                                                 Value(false), Value(true), Value(int64_t{3})});
}

TEST(CpuPool, AdaptiveAverage) {
  const Tensor x = filled({2, 3, 7, 5}, DType::BFloat16);
  expect_matches_ref("aten._adaptive_avg_pool2d.default", {x, Value(L{3, 4})});
  expect_matches_ref("aten._adaptive_avg_pool2d_backward.default",
                     {filled({2, 3, 3, 4}, DType::BFloat16, 2), x});
  const Values out = expect_matches_ref("aten._adaptive_avg_pool2d.default",
                                        {filled({1, 2, 4, 4}, f32), Value(L{1, 1})});
  double mean = 0;
  const Tensor x1 = filled({1, 2, 4, 4}, f32);
  for (int64_t i = 0; i < 16; ++i) mean += x1.get(i) / 16;
  EXPECT_NEAR(out[0].tensor().get(0), mean, 1e-6);
}

std::vector<std::pair<std::string, const cpu::PoolKernels*>> kernel_sets() {
  std::vector<std::pair<std::string, const cpu::PoolKernels*>> out;
  out.emplace_back("portable", &cpu::pool_kernels_portable());
  const cpu::CpuFeatures& f = cpu::cpu_features();
  if (f.avx2 && f.fma) out.emplace_back("avx2", &cpu::pool_kernels_avx2());
  if (f.avx512f && f.avx512bw && f.avx512vl)
    out.emplace_back("avx512", &cpu::pool_kernels_avx512());
  return out;
}

// A window geometry: in, k, s, p, d per dim (dim 0 is depth; 2-d pooling has 1s there); the
// output size as ATen's (floor mode).
cpu::PoolGeom geom(L in, L k, L s, L p, L d = {1, 1, 1}) {
  cpu::PoolGeom g;
  for (int i = 0; i < 3; ++i) {
    g.in[i] = in[i];
    g.k[i] = k[i];
    g.s[i] = s[i];
    g.p[i] = p[i];
    g.d[i] = d[i];
    g.out[i] = (in[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
  }
  return g;
}

std::vector<float> plane_values(const cpu::PoolGeom& g, int seed) {
  std::vector<float> x(static_cast<size_t>(g.in_plane()));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(
        std::fmod(static_cast<double>((i + 1) * (seed * 37 + 11) % 1009) / 250.0, 4.0) - 2.0);
  return x;
}

const std::vector<cpu::PoolGeom>& kernel_geoms() {
  static const std::vector<cpu::PoolGeom> gs = {
      geom({1, 9, 8}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1}),    // rows shorter than a vector
      geom({1, 7, 40}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1}),   // stride 1, a partial last vector
      geom({1, 6, 75}, {1, 2, 2}, {1, 2, 2}, {0, 0, 0}),   // stride 2, odd width
      geom({1, 11, 70}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1}),  // stride 2 with padding
      geom({1, 9, 50}, {1, 3, 4}, {1, 3, 3}, {0, 1, 2}),   // stride 3 (scalar taps)
      geom({1, 12, 45}, {1, 2, 3}, {1, 1, 2}, {0, 1, 1}, {1, 2, 2}),  // dilation
      geom({4, 6, 37}, {2, 3, 3}, {2, 1, 2}, {1, 1, 1}),              // 3-d
      geom({1, 5, 5}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}),               // identity
  };
  return gs;
}

TEST(CpuPool, VectorKernelsMatchTheGenericOnes) {
  for (const auto& [name, ks] : kernel_sets()) {
    for (cpu::PoolGeom g : kernel_geoms()) {
      for (int mode = 0; mode < 3; ++mode) {  // count_include_pad, not, a divisor override
        g.count_include_pad = mode == 0;
        g.divisor = mode == 2 ? 5 : 0;
        const std::string what = name + " geometry " + std::to_string(g.in[1]) + "x" +
                                 std::to_string(g.in[2]) + " mode " + std::to_string(mode);
        const std::vector<float> x = plane_values(g, 3);
        const size_t op = static_cast<size_t>(g.out_plane()), ip = x.size();
        cpu::PoolScratch scratch;
        cpu::pool_prepare(g, scratch);
        std::vector<float> y(op), want(op), gi(ip), gwant(ip);
        std::vector<int64_t> idx(op), iwant(op);
        ks->max_fwd(g, x.data(), y.data(), idx.data(), scratch);
        cpu::pool_max_plane(g, x.data(), want.data(), iwant.data());
        for (size_t o = 0; o < op; ++o) {
          ASSERT_EQ(y[o], want[o]) << what << " max output " << o;
          ASSERT_TRUE(idx[o] >= 0 && idx[o] < static_cast<int64_t>(ip)) << what;
          EXPECT_EQ(x[static_cast<size_t>(idx[o])], want[o]) << what << " index " << o;
        }
        if (g.d[0] * g.d[1] * g.d[2] != 1) continue;  // average pooling has no dilation
        ASSERT_TRUE(ks->avg_fwd(g, x.data(), y.data(), scratch)) << what;
        cpu::pool_avg_plane(g, x.data(), want.data());
        for (size_t o = 0; o < op; ++o) EXPECT_NEAR(y[o], want[o], 2e-6) << what << " avg " << o;
        const std::vector<float> go = plane_values(g, 7);
        std::vector<double> acc;
        ASSERT_TRUE(ks->avg_bwd(g, go.data(), gi.data(), scratch)) << what;
        cpu::pool_avg_backward_plane(g, go.data(), gwant.data(), acc);
        for (size_t i = 0; i < ip; ++i)
          EXPECT_NEAR(gi[i], gwant[i], 4e-6) << what << " avg backward " << i;
      }
    }
  }
}

TEST(CpuPool, WindowsOfMinusInfinityAndNaN) {
  // Windows whose in-range values are all -inf (a margin tap could win them) and a NaN: every
  // index must point into its window at a value equal to the max (NaN at a NaN).
  for (const auto& [name, ks] : kernel_sets()) {
    const cpu::PoolGeom g = geom({1, 6, 40}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1});
    std::vector<float> x = plane_values(g, 2);
    for (int64_t c = 0; c < 40; ++c) x[static_cast<size_t>(c)] = -INFINITY;  // row 0
    for (int64_t c = 0; c < 5; ++c) x[static_cast<size_t>(40 + c)] = -INFINITY;
    x[static_cast<size_t>(3 * 40 + 17)] = NAN;
    cpu::PoolScratch scratch;
    cpu::pool_prepare(g, scratch);
    const size_t op = static_cast<size_t>(g.out_plane());
    std::vector<float> y(op), want(op);
    std::vector<int64_t> idx(op), iwant(op);
    ks->max_fwd(g, x.data(), y.data(), idx.data(), scratch);
    cpu::pool_max_plane(g, x.data(), want.data(), iwant.data());
    for (size_t o = 0; o < op; ++o) {
      const int64_t oh = static_cast<int64_t>(o) / g.out[2],
                    ow = static_cast<int64_t>(o) % g.out[2];
      const int64_t h = idx[o] / 40, w = idx[o] % 40;
      EXPECT_TRUE(h >= oh * 2 - 1 && h <= oh * 2 + 1 && w >= ow * 2 - 1 && w <= ow * 2 + 1)
          << name << " output " << o << " index " << idx[o];
      const float v = x[static_cast<size_t>(idx[o])];
      if (std::isnan(want[o])) {
        EXPECT_TRUE(std::isnan(y[o]) && std::isnan(v)) << name << " " << o;
      } else {
        EXPECT_EQ(y[o], want[o]) << name << " " << o;
        EXPECT_EQ(v, want[o]) << name << " " << o;
      }
    }
    EXPECT_EQ(y[0], -INFINITY) << name;
  }
}

TEST(CpuPool, HugeValuesAreSummedInDouble) {
  // 3e38 + 3e38 overflows f32; the vector kernels give such planes back and the backend sums
  // them in double as the reference: (3e38 + 3e38 - 3e38 + 0) / 4 = 7.5e37.
  Tensor x = Tensor::zeros({1, 2, 4, 4}, f32);
  x.set(0, 3e38);
  x.set(1, 3e38);
  x.set(4, -3e38);
  const Values out = expect_matches_ref(
      "aten.avg_pool2d.default",
      {x, Value(L{2, 2}), Value(L{2, 2}), Value(L{0, 0}), Value(false), Value(true), Value()});
  EXPECT_NEAR(out[0].tensor().get(0), 7.5e37, 1e32);
  for (const auto& [name, ks] : kernel_sets()) {
    cpu::PoolGeom g = geom({1, 4, 4}, {1, 2, 2}, {1, 2, 2}, {0, 0, 0});
    cpu::PoolScratch scratch;
    cpu::pool_prepare(g, scratch);
    float y[4], gi[16];
    EXPECT_FALSE(ks->avg_fwd(g, x.data<float>(), y, scratch)) << name;
    const float go[4] = {3e38f, 1, 1, 1};
    EXPECT_FALSE(ks->avg_bwd(g, go, gi, scratch)) << name;
  }
  Tensor go = Tensor::zeros({1, 2, 2, 2}, f32);
  go.set(0, 3e38);
  go.set(1, 3e38);
  Tensor idx = Tensor::zeros({1, 2, 2, 2}, DType::Int64);  // both onto position 0: 6e38
  const Values gb = expect_matches_ref(
      "aten.max_pool2d_with_indices_backward.default",
      {go, x, Value(L{2, 2}), Value(L{2, 2}), Value(L{0, 0}), Value(L{1, 1}), Value(false), idx});
  EXPECT_TRUE(std::isinf(gb[0].tensor().get(0)));
}

TEST(CpuPool, LayoutsAndDtypes) {
  // A channel slice (planes contiguous, N and C strides of a larger tensor), channels-last,
  // f16, f64, 3-d and unbatched inputs, several thread counts.
  const Tensor big = filled({4, 6, 13, 12}, f32);
  const Tensor slice = big.slice(1, 1, 4);
  const Tensor cl = filled({2, 13, 12, 3}, f32).permute({0, 3, 1, 2});
  for (int threads : {1, 2, 3})
    for (const Tensor& x : {slice, cl}) {
      expect_matches_ref(
          "aten.max_pool2d_with_indices.default",
          {x, Value(L{3, 3}), Value(L{2, 2}), Value(L{1, 1}), Value(L{1, 1}), Value(true)},
          threads);
      expect_matches_ref(
          "aten.avg_pool2d.default",
          {x, Value(L{3, 3}), Value(L{1, 1}), Value(L{1, 1}), Value(false), Value(false), Value()},
          threads);
      expect_matches_ref("aten.avg_pool2d_backward.default",
                         {filled({x.size(0), 6, 7, 7}, f32, 2).slice(1, 2, 5), x, Value(L{3, 3}),
                          Value(L{2, 2}), Value(L{1, 1}), Value(true), Value(true), Value()},
                         threads);
    }
  for (DType t : {DType::Float16, DType::Float64}) {
    const Tensor x = filled({2, 3, 9, 10}, t);
    expect_matches_ref(
        "aten.avg_pool2d.default",
        {x, Value(L{2, 3}), Value(L{2, 1}), Value(L{1, 1}), Value(true), Value(false), Value()});
    expect_matches_ref(
        "aten.max_pool2d_with_indices.default",
        {x, Value(L{3, 2}), Value(L{2, 2}), Value(L{1, 0}), Value(L{1, 2}), Value(false)});
  }
  const Tensor x3 = filled({2, 3, 6, 7, 9}, f32);
  expect_matches_ref("aten.avg_pool3d.default",
                     {x3, Value(L{2, 3, 3}), Value(L{2, 2, 2}), Value(L{1, 1, 1}), Value(false),
                      Value(true), Value()});
  expect_matches_ref("aten.max_pool3d_with_indices.default",
                     {x3, Value(L{3, 3, 3}), Value(L{2, 2, 2}), Value(L{1, 1, 1}),
                      Value(L{1, 1, 1}), Value(false)});
  expect_matches_ref("aten._adaptive_avg_pool3d.default", {x3, Value(L{3, 7, 3})});
  expect_matches_ref("aten._adaptive_avg_pool2d.default",
                     {filled({3, 10, 9}, f32), Value(L{4, 3})});
  expect_matches_ref("aten.adaptive_max_pool2d.default",
                     {filled({2, 3, 12, 9}, f32), Value(L{4, 3})});
  expect_matches_ref("aten.adaptive_max_pool2d.default",
                     {filled({2, 3, 10, 9}, f32), Value(L{4, 4})});
}

TEST(CpuPool, IntegerAveragePoolingAndDtypeErrors) {
  // int64: exact sums, C++'s truncating division (avg of -1, -2, -3, -1 is -1, not -2).
  Tensor x = Tensor::empty({1, 1, 2, 4}, DType::Int64);
  const int64_t v[] = {-1, -2, 5, 7, -3, -1, 2, 2};
  for (int64_t i = 0; i < 8; ++i) x.set_int(i, v[i]);
  const Values out = expect_matches_ref(
      "aten.avg_pool2d.default",
      {x, Value(L{2, 2}), Value(L{2, 2}), Value(L{0, 0}), Value(false), Value(true), Value()});
  EXPECT_EQ(out[0].tensor().get_int(0), -1);
  EXPECT_EQ(out[0].tensor().get_int(1), 4);
  Tensor go = Tensor::empty({1, 1, 3, 5}, DType::Int64);
  for (int64_t i = 0; i < 15; ++i) go.set_int(i, i * 7 - 20);
  expect_matches_ref(
      "aten.avg_pool2d_backward.default",
      {go, x, Value(L{2, 2}), Value(L{1, 1}), Value(L{1, 1}), Value(false), Value(false), Value()});
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get("aten.max_pool3d_with_indices.default");
  try {
    cpu->run(op, {Tensor::zeros({1, 1, 2, 2, 2}, DType::Bool), Value(L{2, 2, 2}), Value(L{}),
                  Value(L{0}), Value(L{1}), Value(false)});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("\"max_pool3d_with_indices_cpu\" not implemented for 'Bool'"),
        std::string::npos)
        << e.what();
  }
}

TEST(CpuPool, LargeGradInputsAreStreamedThroughScratchPlanes) {
  // grad_input of 4 MiB and more goes through a scratch plane and streaming stores.
  const Tensor x = filled({4, 16, 128, 128}, f32);
  const Values fwd = expect_matches_ref(
      "aten.max_pool2d_with_indices.default",
      {x, Value(L{3, 3}), Value(L{2, 2}), Value(L{1, 1}), Value(L{1, 1}), Value(false)});
  const Tensor go = filled({4, 16, 64, 64}, f32, 3);
  expect_matches_ref("aten.max_pool2d_with_indices_backward.default",
                     {go, x, Value(L{3, 3}), Value(L{2, 2}), Value(L{1, 1}), Value(L{1, 1}),
                      Value(false), fwd[1].tensor()});
  expect_matches_ref(
      "aten.avg_pool2d_backward.default",
      {go, x, Value(L{3, 3}), Value(L{2, 2}), Value(L{1, 1}), Value(false), Value(true), Value()});
}

TEST(CpuPool, MaxBackwardRaisesForAnIndexOutsideThePlane) {
  auto cpu = make_cpu_backend();
  const OpDef& op = OpRegistry::catalog().get("aten.max_pool2d_with_indices_backward.default");
  Tensor idx = Tensor::zeros({1, 1, 2, 2}, DType::Int64);
  idx.set_int(3, 16);
  try {
    cpu->run(op, {filled({1, 1, 2, 2}, f32), filled({1, 1, 4, 4}, f32), Value(L{2, 2}),
                  Value(L{2, 2}), Value(L{0, 0}), Value(L{1, 1}), Value(false), idx});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index 16 is out of bounds"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace crucible::cpu_test
