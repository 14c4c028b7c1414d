// ATen semantics of the CUDA flash and memory-efficient attention ops (as libtorch 2.11 computes
// them on an H100): FlashAttention's bottom-right causal alignment and +inf logsumexp of rows
// that see no key, memory-efficient attention's top-left alignment, padded logsumexp and
// attention bias with its gradient, the output layouts and RNG outputs, ATen's errors; and the
// judging: outputs whose values are unspecified (ComparePolicy::unspecified_outputs) are judged
// by shape and dtype only, while a wrong logsumexp fails.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "crucible/backends/backend.h"
#include "crucible/cases/case.h"
#include "crucible/eval/evaluate.h"
#include "nn_test_util.h"

namespace crucible {
namespace {

using nntest::op_error_of;

const OpDef& op(const std::string& name) { return OpRegistry::catalog().get(name); }

const char* const kFlash = "aten._scaled_dot_product_flash_attention.default";
const char* const kFlashBw = "aten._scaled_dot_product_flash_attention_backward.default";
const char* const kEff = "aten._scaled_dot_product_efficient_attention.default";
const char* const kEffBw = "aten._scaled_dot_product_efficient_attention_backward.default";
const char* const kCpu = "aten._scaled_dot_product_flash_attention_for_cpu.default";
const char* const kCpuBw = "aten._scaled_dot_product_flash_attention_for_cpu_backward.default";
const double kInf = std::numeric_limits<double>::infinity();
const DType f16 = DType::Float16, f32 = DType::Float32;

// Deterministic values in [-1.5, 1.5).
Tensor filled(const Shape& shape, DType dt, int seed) {
  Tensor t = Tensor::empty(shape, dt);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, std::fmod(static_cast<double>((i + 3) * (seed * 29 + 7) % 211) / 70.0, 3.0) - 1.5);
  return t;
}

Values flash_args(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  return {q, k, v, 0.0, causal, false, 0.25};
}

// A causal mask aligned so that key j > i + offset is masked, as an f32 [L, S] attn_mask.
Tensor causal_mask(int64_t l, int64_t s, int64_t offset) {
  Tensor m = Tensor::zeros({l, s}, f32);
  for (int64_t i = 0; i < l; ++i)
    for (int64_t j = 0; j < s; ++j)
      if (j > i + offset) m.set(i * s + j, -kInf);
  return m;
}

TEST(AttentionCuda, FlashCausalIsAlignedAtTheBottomRight) {
  const Tensor q = filled({1, 2, 3, 8}, f16, 1), k = filled({1, 2, 7, 8}, f16, 2),
               v = filled({1, 2, 7, 8}, f16, 3);
  const Values f = op(kFlash).run_ref(flash_args(q, k, v, true));
  // The CPU kernel with the mask key j > i + (S - L) gives the same output and logsumexp.
  const Values c = op(kCpu).run_ref({q, k, v, 0.0, false, causal_mask(3, 7, 4), 0.25});
  for (int64_t i = 0; i < f[0].tensor().numel(); ++i)
    EXPECT_EQ(f[0].tensor().get(i), c[0].tensor().get(i)) << i;
  for (int64_t i = 0; i < f[1].tensor().numel(); ++i)
    EXPECT_EQ(f[1].tensor().get(i), c[1].tensor().get(i)) << i;
  // And differs from the top-left alignment.
  const Values top = op(kCpu).run_ref({q, k, v, 0.0, true, Value(), 0.25});
  EXPECT_NE(f[1].tensor().get(0), top[1].tensor().get(0));
}

TEST(AttentionCuda, FlashRowsThatSeeNoKeyGiveZeroAndInfiniteLogsumexp) {
  // L 5 > S 2: rows 0-2 see no key (bottom-right alignment); rows 3, 4 see keys 0 and 0-1.
  const Tensor q = filled({1, 1, 5, 8}, f16, 1), k = filled({1, 1, 2, 8}, f16, 2),
               v = filled({1, 1, 2, 8}, f16, 3);
  const Values f = op(kFlash).run_ref(flash_args(q, k, v, true));
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(f[1].tensor().get(i), kInf) << i;
    for (int64_t e = 0; e < 8; ++e) EXPECT_EQ(f[0].tensor().get(i * 8 + e), 0.0);
  }
  // Row 3 sees key 0 only: its output is v[0].
  for (int64_t e = 0; e < 8; ++e) EXPECT_EQ(f[0].tensor().get(3 * 8 + e), v.get(e));
  EXPECT_TRUE(std::isfinite(f[1].tensor().get(3)));
  // The backward gives those rows zero gradients (P = exp(s - inf) = 0).
  const Tensor g = filled({1, 1, 5, 8}, f16, 4);
  const Values b = op(kFlashBw).run_ref({g, q, k, v, f[0], f[1], Value(), Value(), 5, 2, 0.0, true,
                                         Tensor::zeros({2}, DType::Int64),
                                         Tensor::zeros({}, DType::Int64), 0.25});
  for (int64_t i = 0; i < 3 * 8; ++i) EXPECT_EQ(b[0].tensor().get(i), 0.0) << i;
}

TEST(AttentionCuda, FlashLayoutsAndRngOutputs) {
  // A dense query: out and the gradients take its strides (contiguous here).
  const Tensor q = filled({2, 3, 5, 8}, f16, 1);
  const Values f = op(kFlash).run_ref(flash_args(q, q, q, false));
  EXPECT_EQ(f[0].tensor().strides(), (Shape{120, 40, 8, 1}));
  EXPECT_EQ(f[1].tensor().shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(f[1].tensor().dtype(), f32);
  EXPECT_TRUE(f[2].is_none() && f[3].is_none());
  EXPECT_EQ(f[4].to_int(), 5);
  EXPECT_EQ(f[5].to_int(), 5);
  EXPECT_EQ(f[6].tensor().shape(), Shape{2});  // uint64 in ATen, i64 here
  EXPECT_EQ(f[7].tensor().shape(), Shape{});
  EXPECT_EQ(f[8].tensor().shape(), Shape{0});
  EXPECT_EQ(f[8].tensor().dtype(), f16);
  // A query sliced out of a [B, L, 3 * H * E] projection (not dense): [B, L, H, E] order.
  const Tensor base = filled({1, 7, 96}, f16, 2);
  const Tensor qs = base.as_strided({1, 4, 7, 8}, {672, 8, 96, 1}, 0);
  const Values s = op(kFlash).run_ref(flash_args(qs, qs, qs, true));
  EXPECT_EQ(s[0].tensor().strides(), (Shape{224, 8, 32, 1}));
  const Values b = op(kFlashBw).run_ref(
      {s[0], qs, qs, qs, s[0], s[1], Value(), Value(), 7, 7, 0.0, true, s[6], s[7], 0.25});
  EXPECT_EQ(b[0].tensor().strides(), (Shape{224, 8, 32, 1}));
}

TEST(AttentionCuda, FlashBackwardEqualsTheCpuKernelsWithTheSameMask) {
  const Tensor q = filled({1, 4, 3, 8}, f16, 1), k = filled({1, 2, 5, 8}, f16, 2),
               v = filled({1, 2, 5, 8}, f16, 3), g = filled({1, 4, 3, 8}, f16, 4);
  const Values f = op(kFlash).run_ref(flash_args(q, k, v, true));
  const Values b = op(kFlashBw).run_ref(
      {g, q, k, v, f[0], f[1], Value(), Value(), 3, 5, 0.0, true, f[6], f[7], 0.25});
  // Grouped-query heads: the CPU kernel on repeated key/value heads, gradients summed per group.
  Tensor kr = Tensor::empty({1, 4, 5, 8}, f16), vr = Tensor::empty({1, 4, 5, 8}, f16);
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t i = 0; i < 40; ++i) {
      kr.set(h * 40 + i, k.get((h / 2) * 40 + i));
      vr.set(h * 40 + i, v.get((h / 2) * 40 + i));
    }
  const Tensor mask = causal_mask(3, 5, 2);
  const Values cf = op(kCpu).run_ref({q, kr, vr, 0.0, false, mask, 0.25});
  const Values cb = op(kCpuBw).run_ref({g, q, kr, vr, cf[0], cf[1], 0.0, false, mask, 0.25});
  for (int64_t i = 0; i < b[0].tensor().numel(); ++i)
    EXPECT_NEAR(b[0].tensor().get(i), cb[0].tensor().get(i), 2e-3) << i;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 40; ++i) {
      const double want_k =
          cb[1].tensor().get(2 * h * 40 + i) + cb[1].tensor().get((2 * h + 1) * 40 + i);
      EXPECT_NEAR(b[1].tensor().get(h * 40 + i), want_k, 4e-3) << h << " " << i;
    }
}

TEST(AttentionCuda, FlashErrors) {
  const Tensor x = filled({1, 2, 3, 8}, f16, 1);
  const Tensor x32 = filled({1, 2, 3, 8}, f32, 1);
  EXPECT_EQ(op_error_of([&] { op(kFlash).run_ref(flash_args(x32, x32, x32, false)); }),
            "FlashAttention only support fp16 and bf16 data type");
  const Tensor h12 = filled({1, 2, 3, 12}, f16, 1);
  EXPECT_EQ(op_error_of([&] { op(kFlash).run_ref(flash_args(h12, h12, h12, false)); }),
            "head_size must be a multiple of 8, this is ensured by padding!");
  EXPECT_EQ(op_error_of([&] {
              op(kFlash).run_ref({x, x, x, 0.0, false, true, Value()});
            }),
            "return_softmax is only supported when p_dropout > 0.0");
  const Tensor k3 = filled({1, 3, 3, 8}, f16, 2);
  EXPECT_EQ(op_error_of([&] { op(kFlash).run_ref(flash_args(k3, x, x, false)); }),
            "Number of heads in key/value must divide number of heads in query");
  // dropout_p > 0: random, refused as unsupported.
  try {
    op(kFlash).run_ref({x, x, x, 0.1, false, false, Value()});
    ADD_FAILURE() << "dropout_p 0.1 was computed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
  }
}

Values eff_args(const Tensor& q, const Tensor& k, const Tensor& v, const Value& bias, bool lse,
                bool causal) {
  return {q, k, v, bias, lse, 0.0, causal, 0.25};
}

TEST(AttentionCuda, EfficientPadsLogsumexpAndAlignsCausalAtTheTopLeft) {
  const Tensor q = filled({1, 2, 3, 8}, f16, 1), k = filled({1, 2, 7, 8}, f16, 2),
               v = filled({1, 2, 7, 8}, f16, 3);
  const Values e = op(kEff).run_ref(eff_args(q, k, v, Value(), true, true));
  const Values c = op(kCpu).run_ref({q, k, v, 0.0, true, Value(), 0.25});
  EXPECT_EQ(e[0].tensor().strides(), (Shape{48, 8, 16, 1}));  // [B, L, H, E]
  EXPECT_EQ(e[1].tensor().shape(), (Shape{1, 2, 32}));
  for (int64_t i = 0; i < e[0].tensor().numel(); ++i)
    EXPECT_EQ(e[0].tensor().get(i), c[0].tensor().get(i)) << i;
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < 3; ++i)
      EXPECT_EQ(e[1].tensor().get(h * 32 + i), c[1].tensor().get(h * 3 + i));
    for (int64_t i = 3; i < 32; ++i) EXPECT_EQ(e[1].tensor().get(h * 32 + i), kInf) << i;
  }
  EXPECT_EQ(e[2].tensor().shape(), Shape{});
  EXPECT_EQ(e[2].tensor().dtype(), DType::Int64);
  const Values n = op(kEff).run_ref(eff_args(q, k, v, Value(), false, true));
  EXPECT_EQ(n[1].tensor().shape(), (Shape{1, 2, 0}));
}

TEST(AttentionCuda, EfficientMaskedRowHasZeroLogsumexp) {
  const Tensor q = filled({1, 1, 3, 8}, f32, 1), k = filled({1, 1, 4, 8}, f32, 2);
  Tensor bias = Tensor::zeros({1, 1, 3, 4}, f32);
  for (int64_t j = 0; j < 4; ++j) bias.set(4 + j, -kInf);  // row 1 sees no key
  const Values e = op(kEff).run_ref(eff_args(q, k, k, bias, true, false));
  EXPECT_EQ(e[1].tensor().get(1), 0.0);
  for (int64_t x = 0; x < 8; ++x) EXPECT_EQ(e[0].tensor().get(8 + x), 0.0);
  EXPECT_NE(e[1].tensor().get(0), 0.0);
}

// grad_bias is the gradient of sum(grad_out * out) with respect to the bias (finite differences,
// in f32 through an f64 reference rounded once), and grad_query/key/value match the CPU
// kernel's with the bias as its mask.
TEST(AttentionCuda, EfficientBackwardGradBias) {
  const Tensor q = filled({1, 2, 3, 4}, f32, 1), k = filled({1, 2, 5, 4}, f32, 2),
               v = filled({1, 2, 5, 4}, f32, 3), g = filled({1, 2, 3, 4}, f32, 4);
  // The bias in the aligned layout the kernel takes: rows of 8 elements.
  const Tensor storage = filled({1, 2, 3, 8}, f32, 5);
  const Tensor bias = storage.as_strided({1, 2, 3, 5}, {48, 24, 8, 1}, 0);
  const Values f = op(kEff).run_ref(eff_args(q, k, v, bias, true, true));
  const Values b =
      op(kEffBw).run_ref({g, q, k, v, bias, f[0], f[1], f[2], f[3], 0.0,
                          Value(std::vector<bool>{true, true, true, true}), true, 0.25});
  ASSERT_TRUE(b[3].is_tensor());
  EXPECT_EQ(b[3].tensor().shape(), (Shape{1, 2, 3, 5}));
  EXPECT_EQ(b[3].tensor().strides(), (Shape{96, 48, 16, 1}));  // rows padded to 16
  auto loss = [&](const Tensor& bb) {
    const Tensor o = op(kEff).run_ref(eff_args(q, k, v, bb, true, true))[0].tensor();
    double s = 0;
    for (int64_t i = 0; i < o.numel(); ++i) s += o.get(i) * g.get(i);
    return s;
  };
  for (int64_t i = 0; i < 30; ++i) {
    const int64_t at = (i / 5) * 8 + i % 5;  // element i of the [1, 2, 3, 5] view
    if ((i % 5) > (i / 5) % 3) continue;     // masked by is_causal: gradient 0
    const double h = 1e-2;
    Tensor plus = storage.clone(), minus = storage.clone();
    plus.set(at, plus.get(at) + h);
    minus.set(at, minus.get(at) - h);
    const double num = (loss(plus.as_strided({1, 2, 3, 5}, {48, 24, 8, 1}, 0)) -
                        loss(minus.as_strided({1, 2, 3, 5}, {48, 24, 8, 1}, 0))) /
                       (2 * h);
    EXPECT_NEAR(b[3].tensor().get(i), num, 2e-3) << i;
  }
  // Without grad_input_mask[3], no grad_bias.
  const Values nb =
      op(kEffBw).run_ref({g, q, k, v, bias, f[0], f[1], f[2], f[3], 0.0,
                          Value(std::vector<bool>{true, true, true, false}), true, 0.25});
  EXPECT_TRUE(nb[3].is_none());
  EXPECT_EQ(nb[0].tensor().strides(), (Shape{24, 4, 8, 1}));  // [B, L, H, E]
}

TEST(AttentionCuda, EfficientErrors) {
  const Tensor x = filled({2, 2, 5, 8}, f16, 1);
  const Tensor x64 = filled({1, 2, 3, 8}, DType::Float64, 1);
  EXPECT_EQ(op_error_of([&] { op(kEff).run_ref(eff_args(x64, x64, x64, Value(), true, false)); }),
            "Only fp32, half & bf16 supported at the moment");
  const Tensor h12 = filled({1, 2, 3, 12}, f16, 1);
  EXPECT_EQ(op_error_of([&] { op(kEff).run_ref(eff_args(h12, h12, h12, Value(), true, false)); }),
            "cutlassF: no kernel found to launch!");
  const Tensor h4 = filled({1, 2, 3, 4}, f32, 1);  // f32 takes multiples of 4
  EXPECT_NO_THROW(op(kEff).run_ref(eff_args(h4, h4, h4, Value(), true, false)));
  const Tensor k2 = filled({2, 1, 5, 8}, f16, 2);
  EXPECT_EQ(op_error_of([&] { op(kEff).run_ref(eff_args(x, k2, k2, Value(), true, false)); }),
            "Expected query.size(2) == key.size(2) to be true, but got false.");
  EXPECT_EQ(op_error_of([&] {
              op(kEff).run_ref(eff_args(x, x, x, Tensor::zeros({2, 2, 5, 5}, f16), true, false));
            }),
            "attn_bias is not correctly aligned (strideB). attn_bias.stride( 0) = 50, and should "
            "be a multiple of 4.");
  EXPECT_EQ(op_error_of([&] {
              op(kEff).run_ref(eff_args(x, x, x, Tensor::zeros({1, 1, 5, 5}, f16), true, false));
            }),
            "attn_bias: wrong shape (batch dimension)");
  const Tensor b32 = Tensor::zeros({2, 2, 5, 8}, f32).slice(3, 0, 5);
  EXPECT_EQ(op_error_of([&] { op(kEff).run_ref(eff_args(x, x, x, b32, true, false)); }),
            "invalid dtype for bias - should match query's dtype");
  const Values f = op(kEff).run_ref(eff_args(x, x, x, Value(), true, false));
  EXPECT_EQ(
      op_error_of([&] {
        op(kEffBw).run_ref({x, x, x, x, Value(), f[0], f[1], f[2], f[3], 0.0,
                            Value(std::vector<bool>{true, true, true, true}), false, Value()});
      }),
      "bias_requires_grad is true but no bias was provided");
}

// ---- judging ---------------------------------------------------------------------------------

// A backend that runs the reference and passes `op`'s outputs through `edit`.
class EditingBackend final : public Backend {
 public:
  EditingBackend(std::string op, std::function<void(Values&)> edit)
      : op_(std::move(op)), edit_(std::move(edit)) {}
  std::string name() const override { return "editing"; }
  bool has_op(const OpDef& op) const override { return static_cast<bool>(op.ref); }
  Values run(const OpDef& op, const Values& args) override {
    Values out = op.run_ref(args, seed_);
    if (op.name == op_) edit_(out);
    return out;
  }

 private:
  std::string op_;
  std::function<void(Values&)> edit_;
};

// The numbers of passed and failed computing (non-error) samples of `name` on `candidate`;
// `passed_labels` receives the labels of the passing ones.
std::pair<int, int> run_samples(const std::string& name, Backend& candidate,
                                std::string* passed_labels = nullptr) {
  const OpDef& o = op(name);
  auto ref = BackendRegistry::instance().create("ref");
  int passed = 0, failed = 0;
  for (const Sample& s : o.samples(SampleContext{})) {
    if (s.label.rfind("error:", 0) == 0) continue;
    Case c;
    c.op = o.name;
    c.call = s.call;
    c.seed = 7;
    c.label = s.label;
    const CaseResult r = evaluate_case(c, o, *ref, candidate);
    if (r.status == Status::Passed) {
      ++passed;
      if (passed_labels) *passed_labels += "; " + s.label;
    }
    if (r.status == Status::Failed) ++failed;
  }
  return {passed, failed};
}

TEST(AttentionCuda, UnspecifiedOutputsAreJudgedByShapeAndDtypeOnly) {
  // Other values in rng_state / unused / philox_seed / philox_offset: right.
  for (const auto& [name, idx] : std::vector<std::pair<std::string, std::vector<size_t>>>{
           {kFlash, {6, 7}},
           {kEff, {2, 3}},
           {"aten._scaled_dot_product_cudnn_attention.default", {6, 7}}}) {
    EditingBackend other_values(name, [idx](Values& out) {
      for (size_t i : idx) out[i] = Tensor::full(out[i].tensor().shape(), 12345, DType::Int64);
    });
    const auto [p, f] = run_samples(name, other_values);
    EXPECT_GT(p, 5) << name;
    EXPECT_EQ(f, 0) << name;
    // A wrong shape there fails every case; so does a wrong dtype.
    EditingBackend wrong_shape(
        name, [idx](Values& out) { out[idx[0]] = Tensor::zeros({3}, DType::Int64); });
    const auto [p2, f2] = run_samples(name, wrong_shape);
    EXPECT_EQ(p2, 0) << name;
    EXPECT_GT(f2, 5) << name;
    EditingBackend wrong_dtype(name, [idx](Values& out) {
      out[idx[1]] = Tensor::zeros(out[idx[1]].tensor().shape(), DType::Int32);
    });
    EXPECT_EQ(run_samples(name, wrong_dtype).first, 0) << name;
  }
}

TEST(AttentionCuda, AWrongLogsumexpFails) {
  // logsumexp off by 0.05 in every element (the output itself right): every computing case with
  // a logsumexp fails, for the flash and the memory-efficient forward.
  for (const char* name : {kFlash, kEff}) {
    EditingBackend wrong(name, [](Values& out) {
      Tensor t = out[1].tensor().clone();
      for (int64_t i = 0; i < t.numel(); ++i) t.set(i, t.get(i) + 0.05);
      out[1] = t;
    });
    std::string passing;
    const auto [p, f] = run_samples(name, wrong, &passing);
    EXPECT_GT(f, 5) << name;
    // Cases whose logsumexp is empty (no logsumexp asked for, empty batch or query) or holds
    // only infinities and NaN (special values) pass.
    EXPECT_LE(p, 4) << name << passing;
    EditingBackend honest(name, [](Values&) {});
    EXPECT_EQ(run_samples(name, honest).second, 0) << name;
  }
  // The padding rows must hold +inf: a kernel leaving 0 there fails.
  EditingBackend zero_pad(kEff, [](Values& out) {
    Tensor t = out[1].tensor().clone();
    for (int64_t i = 0; i < t.numel(); ++i)
      if (std::isinf(t.get(i)) && t.get(i) > 0) t.set(i, 0.0);
    out[1] = t;
  });
  EXPECT_GT(run_samples(kEff, zero_pad).second, 5);
}

}  // namespace
}  // namespace crucible
