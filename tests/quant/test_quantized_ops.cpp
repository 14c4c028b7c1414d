// The quantized family of the catalog: every op passes its opinfo cases on `ref` (against
// itself) and on `cpu`; ATen's semantics pinned on hand-computed values (the int4 CPU packing
// layout, the int4 dequantization (q - 8) * scale + zero, _int_mm's exact int32 product,
// round-half-even quantization, choose_qparams_per_token's eps and 127).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "crucible/backends/backend.h"
#include "crucible/core/error.h"
#include "crucible/eval/evaluate.h"
#include "crucible/ops/op.h"

namespace crucible {
namespace {

const std::vector<std::string>& quantized_ops() {
  static const std::vector<std::string> ops = {
      "aten._weight_int8pack_mm.default",
      "aten._int_mm.default",
      "aten._convert_weight_to_int4pack_for_cpu.default",
      "aten._weight_int4pack_mm_for_cpu.default",
      "aten._scaled_mm.default",
      "quantized_decomposed.choose_qparams_per_token.default",
      "quantized_decomposed.quantize_per_token.default",
      "quantized_decomposed.dequantize_per_token.default",
      "quantized_decomposed.quantize_per_channel.default",
      "quantized_decomposed.dequantize_per_channel.default",
      "quantized_decomposed.quantize_per_channel_group.default",
      "quantized_decomposed.dequantize_per_channel_group.default",
      "torchao.quantize_affine_float8_non_decomposed.default",
      "torchao.dequantize_affine_float8_non_decomposed.default",
  };
  return ops;
}

struct Tally {
  int passed = 0, computed = 0, errors = 0;
  std::vector<std::string> failures;
};

Tally run_opinfo(const OpDef& op, Backend& reference, Backend& candidate) {
  Tally t;
  for (const Sample& s : op.samples(SampleContext{})) {
    Case c;
    c.op = op.name;
    c.call = s.call;
    c.seed = 11;
    c.label = s.label;
    const CaseResult r = evaluate_case(c, op, reference, candidate);
    if (r.status == Status::Passed) {
      ++t.passed;
      r.expected_error ? ++t.errors : ++t.computed;
    } else {
      t.failures.push_back(s.label + ": " + status_name(r.status) + " " + r.detail);
    }
  }
  return t;
}

void expect_opinfo_passes(const std::string& backend) {
  auto ref = BackendRegistry::instance().create("ref");
  auto cand = BackendRegistry::instance().create(backend);
  for (const std::string& name : quantized_ops()) {
    const OpDef& op = OpRegistry::catalog().get(name);
    EXPECT_EQ(op.family, "quantized") << name;
    const Tally t = run_opinfo(op, *ref, *cand);
    EXPECT_TRUE(t.failures.empty()) << backend << " " << name << ": " << t.failures.size()
                                    << " failed, first: " << t.failures.front();
    EXPECT_GE(t.computed, 3) << name;  // computing cases, not only errors
    EXPECT_GE(t.errors, 1) << name;    // and ATen's argument errors
  }
}

TEST(QuantizedOps, OpinfoPassesOnRef) { expect_opinfo_passes("ref"); }
TEST(QuantizedOps, OpinfoPassesOnCpu) { expect_opinfo_passes("cpu"); }

Values run_ref(const std::string& name, const Values& args) {
  const OpDef& op = OpRegistry::catalog().get(name);
  return op.run_ref(args);
}

Tensor ints(const Shape& shape, DType t, const std::vector<int64_t>& v) {
  Tensor x = Tensor::zeros(shape, t);
  for (size_t i = 0; i < v.size(); ++i) x.set_int(static_cast<int64_t>(i), v[i]);
  return x;
}

Tensor floats(const Shape& shape, DType t, const std::vector<double>& v) {
  Tensor x = Tensor::zeros(shape, t);
  for (size_t i = 0; i < v.size(); ++i) x.set(static_cast<int64_t>(i), v[i]);
  return x;
}

// A full block of 64 columns: byte k * 32 + d holds column d (low) and d + 32 (high); a
// partial block of 16 holds columns n (low) and n + 1 (high).
TEST(QuantizedOps, Int4PackingIsAtensAvx512Layout) {
  const int64_t n = 80, k = 4;
  std::vector<int64_t> w(n * k);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t q = 0; q < k; ++q) w[j * k + q] = (j + 3 * q) % 16;
  const Tensor packed = run_ref("aten._convert_weight_to_int4pack_for_cpu.default",
                                {ints({n, k}, DType::Int32, w), Value(int64_t{2})})[0]
                            .tensor();
  ASSERT_EQ(packed.shape(), (Shape{n, k / 2}));
  auto val = [&](int64_t j, int64_t q) { return (j + 3 * q) % 16; };
  for (int64_t q = 0; q < k; ++q)
    for (int64_t d = 0; d < 32; ++d)
      EXPECT_EQ(packed.get_int(q * 32 + d), val(d, q) | (val(d + 32, q) << 4));
  const int64_t base = 64 * k / 2;  // the partial block of columns 64..79
  for (int64_t q = 0; q < k; ++q)
    for (int64_t j = 0; j < 16; j += 2)
      EXPECT_EQ(packed.get_int(base + q * 8 + j / 2), val(64 + j, q) | (val(65 + j, q) << 4));
}

TEST(QuantizedOps, Int4MatmulDequantizesAsQMinus8TimesScalePlusZero) {
  // N = 16 (one partial block), K = 32, one group: every weight q = 11 -> (11 - 8) * s + z.
  const int64_t n = 16, k = 32;
  const Tensor w = run_ref("aten._convert_weight_to_int4pack_for_cpu.default",
                           {Tensor::full({n, k}, 11, DType::Int32), Value(int64_t{2})})[0]
                       .tensor();
  Tensor sz = Tensor::zeros({1, n, 2}, DType::Float32);
  for (int64_t j = 0; j < n; ++j) {
    sz.set(j * 2, 0.5);       // scale
    sz.set(j * 2 + 1, 0.25);  // zero
  }
  const Tensor a = Tensor::full({2, k}, 1.0, DType::Float32);
  const Tensor out =
      run_ref("aten._weight_int4pack_mm_for_cpu.default", {a, w, Value(int64_t{32}), sz})[0]
          .tensor();
  for (int64_t i = 0; i < out.numel(); ++i) EXPECT_DOUBLE_EQ(out.get(i), 32 * (3 * 0.5 + 0.25));
}

TEST(QuantizedOps, IntMmIsExactInt32) {
  const Tensor a = ints({2, 3}, DType::Int8, {127, -128, 1, 2, 3, 4});
  const Tensor b = ints({3, 2}, DType::Int8, {127, 1, -128, 2, 5, 3});
  const Tensor c = run_ref("aten._int_mm.default", {a, b})[0].tensor();
  ASSERT_EQ(c.dtype(), DType::Int32);
  EXPECT_EQ(c.get_int(0), 127 * 127 + 128 * 128 + 5);
  EXPECT_EQ(c.get_int(1), 127 - 256 + 3);
  EXPECT_EQ(c.get_int(2), 254 - 384 + 20);
  EXPECT_EQ(c.get_int(3), 2 + 6 + 12);
  EXPECT_THROW(run_ref("aten._int_mm.default", {a.to(DType::Int16), b}), Error);
}

TEST(QuantizedOps, WeightInt8PackMmScalesColumns) {
  const Tensor a = floats({1, 2}, DType::Float32, {1.5, -2});
  const Tensor w = ints({3, 2}, DType::Int8, {1, 2, -3, 4, 127, -128});
  const Tensor s = floats({3}, DType::Float32, {0.5, 2, 0.25});
  const Tensor c = run_ref("aten._weight_int8pack_mm.default", {a, w, s})[0].tensor();
  EXPECT_DOUBLE_EQ(c.get(0), (1.5 - 4) * 0.5);
  EXPECT_DOUBLE_EQ(c.get(1), (-4.5 - 8) * 2);
  EXPECT_DOUBLE_EQ(c.get(2), (190.5 + 256) * 0.25);
}

TEST(QuantizedOps, QuantizePerTokenRoundsHalfToEvenAndClamps) {
  const Tensor x = floats({1, 6}, DType::Float32, {2.5, 3.5, -2.5, 1000, -1000, 0.74});
  const Tensor s = floats({1, 1}, DType::Float32, {1});
  const Tensor z = ints({1, 1}, DType::Int64, {0});
  const Tensor q =
      run_ref("quantized_decomposed.quantize_per_token.default",
              {x, s, z, Value(int64_t{-128}), Value(int64_t{127}), Value(DType::Int8)})[0]
          .tensor();
  const std::vector<int64_t> want = {2, 4, -2, 127, -128, 1};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(q.get_int(static_cast<int64_t>(i)), want[i]);
}

TEST(QuantizedOps, ChooseQparamsPerTokenIsAmaxOver127WithEps) {
  const Tensor x = floats({2, 3}, DType::Float32, {0.5, -2.54, 1, 0, 0, 0});
  const Values r =
      run_ref("quantized_decomposed.choose_qparams_per_token.default", {x, Value(DType::Int8)});
  EXPECT_FLOAT_EQ(static_cast<float>(r[0].tensor().get(0)), static_cast<float>(2.54 / 127));
  EXPECT_FLOAT_EQ(static_cast<float>(r[0].tensor().get(1)), static_cast<float>(1e-5 / 127));
  EXPECT_EQ(r[0].tensor().shape(), (Shape{2, 1}));
  EXPECT_EQ(r[1].tensor().get(0), 0.0);
}

TEST(QuantizedOps, QuantizeFloat8SaturatesPerRow) {
  const Tensor x = floats({2, 3}, DType::Float32, {1000, -1000, 3.3, 1, 2, 4});
  const Tensor s = floats({2, 1}, DType::Float32, {1, 0.5});
  const Tensor q = run_ref("torchao.quantize_affine_float8_non_decomposed.default",
                           {x, s, Value(DType::Float8E4M3FN)})[0]
                       .tensor();
  EXPECT_EQ(q.get(0), 448.0);  // saturated, not NaN
  EXPECT_EQ(q.get(1), -448.0);
  EXPECT_EQ(q.get(2), 3.25);  // e4m3: 3 mantissa bits
  EXPECT_EQ(q.get(4), 4.0);   // 2 / 0.5
  const Tensor d = run_ref("torchao.dequantize_affine_float8_non_decomposed.default",
                           {q, s, Value(DType::Float32)})[0]
                       .tensor();
  EXPECT_EQ(d.get(5), 4.0);  // 8 * 0.5
}

TEST(QuantizedOps, ScaledMmRowWiseScales) {
  const DType e4 = DType::Float8E4M3FN;
  const Tensor a = floats({2, 2}, e4, {1, 2, 3, 4});
  const Tensor b = floats({2, 2}, e4, {1, 0, 0, 1});
  const Tensor sa = floats({2, 1}, DType::Float32, {1, 0.5});
  const Tensor sb = floats({1, 2}, DType::Float32, {2, 4});
  const Values args = {a, b, sa, sb, Value(), Value(), Value(DType::Float32), Value(false)};
  const Tensor c = run_ref("aten._scaled_mm.default", args)[0].tensor();
  EXPECT_EQ(c.dtype(), DType::Float32);
  EXPECT_DOUBLE_EQ(c.get(0), 1 * 1 * 2);
  EXPECT_DOUBLE_EQ(c.get(1), 2 * 1 * 4);
  EXPECT_DOUBLE_EQ(c.get(2), 3 * 0.5 * 2);
  EXPECT_DOUBLE_EQ(c.get(3), 4 * 0.5 * 4);
}

// _weight_int8pack_mm sums f32 products in f32 (ATen's CPU kernel): where a row's partial sums
// overflow although the exact result is finite, a non-finite result is ATen's and passes; a
// wrong finite value elsewhere still fails.
TEST(QuantizedOps, Int8PackProductAcceptsAnOverflowingAccumulationOnly) {
  const OpDef& op = OpRegistry::catalog().get("aten._weight_int8pack_mm.default");
  Tensor a = Tensor::zeros({2, 4}, DType::BFloat16);
  for (int64_t k = 0; k < 4; ++k) a.set(k, k % 2 == 0 ? 3.0e38 : -3.0e38);  // row 0: huge terms
  for (int64_t k = 0; k < 4; ++k) a.set(4 + k, 1.0 + static_cast<double>(k));
  Tensor w = Tensor::zeros({3, 4}, DType::Int8);
  for (int64_t i = 0; i < 12; ++i) w.set_int(i, i % 3 == 0 ? 2 : 1);
  Tensor scales = Tensor::zeros({3}, DType::BFloat16);
  for (int64_t i = 0; i < 3; ++i) scales.set(i, 0.5);
  const Values args = {a, w, scales};
  const Tensor ref = op.run_ref(args)[0].tensor();
  ASSERT_TRUE(std::isfinite(ref.get(0)));  // exact: the huge terms cancel
  Tensor nan = ref.clone();
  nan.set(0, std::nan(""));
  EXPECT_TRUE(op.compare.custom(args, {ref}, {nan}).at(0).passed);
  Tensor wrong = ref.clone();
  wrong.set(4, ref.get(4) + 1.0);
  EXPECT_FALSE(op.compare.custom(args, {ref}, {wrong}).at(0).passed);
  Tensor wrong_nan = ref.clone();
  wrong_nan.set(3, std::nan(""));  // row 1 cannot overflow
  EXPECT_FALSE(op.compare.custom(args, {ref}, {wrong_nan}).at(0).passed);
}

}  // namespace
}  // namespace crucible
