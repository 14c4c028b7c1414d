// The cpu backend's softmax family against the reference: every ISA's loop set (vector bodies,
// scalar tails, long rows over several partial-sum flushes, column blocks with a scalar
// remainder), NaN and infinities, the double path of the backward for rows whose f32
// arithmetic would overflow, and the dtype errors ATen raises.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/softmax_kernels.h"
#include "crucible/compare/compare.h"
#include "test_cpu_nn_check.h"

namespace crucible::cpu_test {
namespace {

using cpu::SoftmaxFns;

const DType f32 = DType::Float32;

std::vector<std::pair<std::string, const cpu::SoftmaxKernels*>> loop_sets() {
  std::vector<std::pair<std::string, const cpu::SoftmaxKernels*>> out;
  out.emplace_back("portable", &cpu::softmax_kernels_portable());
  const cpu::CpuFeatures& f = cpu::cpu_features();
  if (f.avx2 && f.fma) out.emplace_back("avx2", &cpu::softmax_kernels_avx2());
  if (f.avx512f && f.avx512bw && f.avx512vl)
    out.emplace_back("avx512", &cpu::softmax_kernels_avx512());
  return out;
}

// The softmax of `x` (contiguous f32) over `dim` with one loop set, as [outer, n, inner].
Tensor run_loops(const SoftmaxFns<float>& k, const Tensor& x, int64_t dim, bool log,
                 const Tensor* grad = nullptr, bool nt = false) {
  int64_t outer = 1, inner = 1;
  const int64_t n = x.size(dim);
  for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  Tensor out = Tensor::empty(x.shape(), f32);
  const float* xp = x.data<float>();
  float* op = out.data<float>();
  if (inner == 1) {
    if (grad)
      k.bwd_last(grad->data<float>(), xp, op, outer, n, log, nt);
    else
      k.fwd_last(xp, op, outer, n, log, nt);
    return out;
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; j += cpu::kSoftmaxCols) {
      const int64_t at = o * n * inner + j, w = std::min(cpu::kSoftmaxCols, inner - j);
      if (grad)
        k.bwd_cols(grad->data<float>() + at, xp + at, op + at, n, inner, w, log, nt);
      else
        k.fwd_cols(xp + at, op + at, n, inner, w, log, nt);
    }
  return out;
}

void expect_close(const std::string& op_name, const Values& args, const Tensor& got,
                  const std::string& what) {
  const OpDef& op = OpRegistry::catalog().get(op_name);
  const Tensor want = op.run_ref(args).at(0).tensor();
  const double scale = std::max(1.0, op.compare.tol_scale(args));
  const TensorCheck c = compare_tensors(want, got, scale, what);
  EXPECT_TRUE(c.passed) << what << ": " << c.reason;
}

TEST(CpuSoftmax, EveryLoopSetMatchesTheReference) {
  // Rows: n below one vector (masked), with tails, long enough for several kFlush partial
  // sums, at every alignment (streamed outputs have unaligned heads); columns: inner below a
  // vector, a vector plus a remainder, and more than one block.
  const std::vector<std::pair<Shape, int64_t>> shapes = {
      {{3, 1}, 1},     {{4, 5}, 1},     {{7, 9}, 1},       {{5, 17}, 1},
      {{3, 33}, 1},    {{2, 1031}, 1},  {{2, 5000}, 1},    {{2, 7, 3}, 1},
      {{2, 9, 21}, 1}, {{2, 5, 70}, 1}, {{1, 300, 16}, 1}, {{3, 4, 130}, 1}};
  for (const auto& [name, ks] : loop_sets()) {
    for (const auto& [shape, dim] : shapes) {
      const Tensor x = filled(shape, f32, 3);
      const Tensor g = filled(shape, f32, 5);
      for (bool log : {false, true})
        for (bool nt : {false, true}) {
          const std::string what = name + (log ? " log" : "") + (nt ? " streamed " : " ") + x.str();
          const Values fa{Value(x), Value(dim), Value(false)};
          expect_close(log ? "aten._log_softmax.default" : "aten._softmax.default", fa,
                       run_loops(ks->f32, x, dim, log, nullptr, nt), what);
          // The backward takes the forward's output; a random y exercises the formula too.
          const Values ba{Value(g), Value(x), Value(dim), Value(f32)};
          expect_close(log ? "aten._log_softmax_backward_data.default"
                           : "aten._softmax_backward_data.default",
                       ba, run_loops(ks->f32, x, dim, log, &g, nt), what + " backward");
        }
    }
  }
}

TEST(CpuSoftmax, NanAndInfinityRowsAsTheReference) {
  // Row 0: a NaN inside the vector part; row 1: a NaN in the scalar tail; row 2: +inf; row 3:
  // all -inf; row 4: finite. Every loop set, rows and columns (the transpose).
  Tensor x = filled({5, 37}, f32, 2);
  x.set(3, NAN);
  x.set(37 + 36, NAN);
  x.set(2 * 37 + 20, INFINITY);
  for (int64_t j = 0; j < 37; ++j) x.set(3 * 37 + j, -INFINITY);
  const Tensor xt = x.transpose(0, 1).contiguous();
  for (const auto& [name, ks] : loop_sets()) {
    for (bool log : {false, true}) {
      const char* op = log ? "aten._log_softmax.default" : "aten._softmax.default";
      const Tensor rows = run_loops(ks->f32, x, 1, log);
      expect_close(op, {Value(x), Value(int64_t{1}), Value(false)}, rows, name + " rows");
      for (int64_t j = 0; j < 37; ++j) EXPECT_TRUE(std::isnan(rows.get(j))) << name;
      expect_close(op, {Value(xt), Value(int64_t{0}), Value(false)}, run_loops(ks->f32, xt, 0, log),
                   name + " columns");
    }
  }
  // Through the backend too, with the threads splitting the rows.
  expect_matches_ref("aten._softmax.default", {x, Value(int64_t{-1}), Value(false)});
  expect_matches_ref("aten._log_softmax.default", {xt, Value(int64_t{0}), Value(false)});
}

TEST(CpuSoftmax, BackwardRowsThatOverflowF32AreComputedInDouble) {
  // softmax: grad - sum is -3.75e38 in row 0 (beyond f32), times y = 0.25 finite again.
  Tensor g = Tensor::zeros({2, 40}, f32), y = Tensor::full({2, 40}, 0.0, f32);
  g.set(0, 3e38);
  g.set(1, -3e38);
  g.set(2, 1.0);
  y.set(0, 0.5);
  y.set(1, 0.25);
  y.set(2, 0.25);
  for (int64_t j = 40; j < 80; ++j) {
    g.set(j, 0.01 * static_cast<double>(j));
    y.set(j, 1.0 / 40);
  }
  // log_softmax: exp(89) overflows f32, times sum(grad) = 1e-3 it does not.
  Tensor lg = Tensor::zeros({2, 40}, f32), ly = Tensor::full({2, 40}, -3.0, f32);
  lg.set(5, 1e-3);
  ly.set(7, 89.0);
  const Tensor gt = g.transpose(0, 1).contiguous(), yt = y.transpose(0, 1).contiguous();
  const Tensor lgt = lg.transpose(0, 1).contiguous(), lyt = ly.transpose(0, 1).contiguous();
  for (const auto& [name, ks] : loop_sets()) {
    const Tensor o = run_loops(ks->f32, y, 1, false, &g);
    EXPECT_TRUE(std::isfinite(o.get(1))) << name << " " << o.get(1);
    expect_close("aten._softmax_backward_data.default",
                 {Value(g), Value(y), Value(int64_t{1}), Value(f32)}, o, name);
    expect_close("aten._softmax_backward_data.default",
                 {Value(gt), Value(yt), Value(int64_t{0}), Value(f32)},
                 run_loops(ks->f32, yt, 0, false, &gt), name + " columns");
    const Tensor lo = run_loops(ks->f32, ly, 1, true, &lg);
    EXPECT_TRUE(std::isfinite(lo.get(7))) << name << " " << lo.get(7);
    expect_close("aten._log_softmax_backward_data.default",
                 {Value(lg), Value(ly), Value(int64_t{1}), Value(f32)}, lo, name);
    expect_close("aten._log_softmax_backward_data.default",
                 {Value(lgt), Value(lyt), Value(int64_t{0}), Value(f32)},
                 run_loops(ks->f32, lyt, 0, true, &lgt), name + " columns");
  }
}

TEST(CpuSoftmax, F64BackwardSumsInTheReferenceOrder) {
  // 1e300 + 1 - 1e300 is 0 summed in order; lanes would keep the 1.
  Tensor g = Tensor::zeros({1, 24}, DType::Float64), y = Tensor::full({1, 24}, 1.0, DType::Float64);
  g.set(0, 1e300);
  g.set(1, 1.0);
  g.set(2, -1e300);
  const Values out = expect_matches_ref("aten._log_softmax_backward_data.default",
                                        {g, y, Value(int64_t{1}), Value(DType::Float64)});
  EXPECT_EQ(out[0].tensor().get(1), 1.0);
}

TEST(CpuSoftmax, LayoutsDtypesAndThreads) {
  const Tensor x = filled({6, 50, 70}, f32, 4);
  for (int threads : {1, 2, 3})
    for (int64_t dim : {0, 1, 2}) {
      expect_matches_ref("aten._softmax.default", {x, Value(dim), Value(false)}, threads);
      expect_matches_ref("aten._log_softmax_backward_data.default",
                         {filled({6, 50, 70}, f32, 6), x, Value(dim), Value(f32)}, threads);
    }
  // Non-contiguous and f16/bf16 inputs are converted once; the output is contiguous.
  const Tensor t = filled({40, 30}, f32).transpose(0, 1);
  const Values o =
      expect_matches_ref("aten._log_softmax.default", {t, Value(int64_t{1}), Value(false)});
  EXPECT_TRUE(o[0].tensor().is_contiguous());
  expect_matches_ref("aten._softmax.default",
                     {filled({3, 4, 90}, DType::BFloat16), Value(int64_t{-1}), Value(false)});
  expect_matches_ref("aten._softmax_backward_data.default",
                     {filled({3, 40, 5}, DType::Float16, 2), filled({3, 40, 5}, DType::Float16),
                      Value(int64_t{1}), Value(DType::Float16)});
  expect_matches_ref("aten._softmax.default",
                     {filled({3, 7}, DType::Float64), Value(int64_t{0}), Value(false)});
  // Outputs of 4 MiB and more with long rows are streamed.
  const Tensor big = filled({21, 50001}, f32, 3);
  expect_matches_ref("aten._softmax.default", {big, Value(int64_t{1}), Value(false)});
  expect_matches_ref("aten._log_softmax_backward_data.default",
                     {filled({21, 50001}, f32, 5), big, Value(int64_t{1}), Value(f32)});
}

// f16 inputs of a call over the last dim are widened a band of rows (4M elements) at a time, not
// whole: [600, 8000] is two bands. The result is the reference's, and the same bits as the
// same call whose transposed inputs are converted whole.
TEST(CpuSoftmax, ReducedPrecisionRowsAreWidenedABandAtATime) {
  const DType f16 = DType::Float16;
  const Tensor g = filled({600, 8000}, f16, 2), y = filled({600, 8000}, f16, 3);
  // The same values in a transposed layout (not banded: converted whole).
  const Tensor gt = g.transpose(0, 1).contiguous().transpose(0, 1);
  const Tensor yt = y.transpose(0, 1).contiguous().transpose(0, 1);
  for (const char* name :
       {"aten._log_softmax_backward_data.default", "aten._softmax_backward_data.default"}) {
    const Values banded = expect_matches_ref(name, {g, y, Value(int64_t{1}), Value(f16)});
    const Values whole = expect_matches_ref(name, {gt, yt, Value(int64_t{1}), Value(f16)});
    const Tensor& a = banded[0].tensor();
    const Tensor& b = whole[0].tensor();
    ASSERT_EQ(a.shape(), b.shape());
    int64_t differ = 0;
    for (int64_t i = 0; i < a.numel(); ++i) differ += a.get(i) != b.get(i);
    EXPECT_EQ(differ, 0) << name;
  }
  for (const char* name : {"aten._log_softmax.default", "aten._softmax.default"}) {
    const Values banded = expect_matches_ref(name, {y, Value(int64_t{1}), Value(false)});
    const Values whole = expect_matches_ref(name, {yt, Value(int64_t{1}), Value(false)});
    int64_t differ = 0;
    for (int64_t i = 0; i < y.numel(); ++i)
      differ += banded[0].tensor().get(i) != whole[0].tensor().get(i);
    EXPECT_EQ(differ, 0) << name;
  }
}

TEST(CpuSoftmax, IntegerInputsRaiseAsAten) {
  auto cpu = make_cpu_backend();
  const OpDef& fwd = OpRegistry::catalog().get("aten._softmax.default");
  const Tensor xi = Tensor::zeros({3, 4}, DType::Int32);
  try {
    cpu->run(fwd, {xi, Value(int64_t{0}), Value(false)});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"softmax_kernel_impl\" not implemented for 'Int'"),
              std::string::npos)
        << e.what();
  }
  // An empty integer input returns before the dtype dispatch.
  const Values empty =
      cpu->run(fwd, {Tensor::zeros({0, 4}, DType::Int64), Value(int64_t{1}), Value(false)});
  EXPECT_EQ(empty[0].tensor().dtype(), DType::Int64);
  const OpDef& bwd = OpRegistry::catalog().get("aten._log_softmax_backward_data.default");
  const Tensor gi = Tensor::zeros({3, 4}, DType::Int64);
  try {
    cpu->run(bwd, {gi, gi, Value(int64_t{-1}), Value(DType::Int64)});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "\"log_softmax_backward_lastdim_kernel_impl\" not implemented for 'Long'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace crucible::cpu_test
