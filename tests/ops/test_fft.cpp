// ATen semantics of _fft_r2c, _fft_c2r, _fft_c2c (values checked with torch), the complex
// views, complex add/mul/div, and the family's samples (count, materialisation, errors).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/compare/compare.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "ops/families.h"

namespace crucible {
namespace {

using cd = std::complex<double>;

const OpRegistry& fft_ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_fft_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor run(const char* op, const Values& args) {
  return fft_ops().get(op).run_ref(args).at(0).tensor();
}

Tensor real_tensor(const std::vector<double>& v, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < v.size(); ++i) x.set(static_cast<int64_t>(i), v[i]);
  return x;
}

Tensor complex_tensor(const std::vector<cd>& v, const Shape& shape, DType t) {
  Tensor x = Tensor::empty(shape, t);
  for (size_t i = 0; i < v.size(); ++i) x.set_complex(static_cast<int64_t>(i), v[i]);
  return x;
}

void expect_complex(const Tensor& t, const std::vector<cd>& want, double tol) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const cd z = t.get_complex(static_cast<int64_t>(i));
    EXPECT_NEAR(z.real(), want[i].real(), tol) << "element " << i;
    EXPECT_NEAR(z.imag(), want[i].imag(), tol) << "element " << i;
  }
}

template <typename Fn>
std::string op_error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OpError) << e.what();
    return e.what();
  }
  return "";
}

Value ints(std::vector<int64_t> v) { return Value(std::move(v)); }

TEST(Fft, R2cOnesided) {
  const Tensor x = real_tensor({1, 2, 3, 4, 5}, {5}, DType::Float64);
  const Tensor y = run("aten._fft_r2c.default", {x, ints({0}), Value(int64_t{0}), Value(true)});
  EXPECT_EQ(y.dtype(), DType::Complex128);
  EXPECT_EQ(y.shape(), Shape({3}));
  expect_complex(y, {{15, 0}, {-2.5, 3.440954801178}, {-2.5, 0.812299240582}}, 1e-11);
  // f32 -> c64.
  const Tensor y32 = run("aten._fft_r2c.default",
                         {x.to(DType::Float32), ints({0}), Value(int64_t{0}), Value(true)});
  EXPECT_EQ(y32.dtype(), DType::Complex64);
}

TEST(Fft, R2cMultiDimNormalisationAndFull) {
  const Tensor x = real_tensor({1, 2, 3, 4, 5, 0.5, -1, 2, 0, 1}, {2, 5}, DType::Float64);
  const Tensor by_n =
      run("aten._fft_r2c.default", {x, ints({0, 1}), Value(int64_t{2}), Value(true)});
  EXPECT_EQ(by_n.shape(), Shape({2, 3}));
  expect_complex(by_n,
                 {{1.75, 0},
                  {-0.361803398875, 0.416749732918},
                  {-0.138196601125, 0.388998277776},
                  {1.25, 0},
                  {-0.138196601125, 0.271441227317},
                  {-0.361803398875, -0.226538429659}},
                 1e-11);
  // onesided=False gives the full Hermitian spectrum; dims in the order [1, 0].
  const Tensor full =
      run("aten._fft_r2c.default", {x, ints({1, 0}), Value(int64_t{0}), Value(false)});
  EXPECT_EQ(full.shape(), Shape({2, 5}));
  expect_complex(full,
                 {{17.5, 0},
                  {-3.618033988750, 4.167497329183},
                  {-1.381966011250, 3.889982777758},
                  {-1.381966011250, -3.889982777758},
                  {-3.618033988750, -4.167497329183},
                  {12.5, 0},
                  {-1.381966011250, 2.714412273173},
                  {-3.618033988750, -2.265384296593},
                  {-3.618033988750, 2.265384296593},
                  {-1.381966011250, -2.714412273173}},
                 1e-10);
}

TEST(Fft, C2cForwardBackwardAndNorms) {
  const Tensor c = complex_tensor({{1, 2}, {3, -1}, {0.5, 0}, {-2, 1}}, {4}, DType::Complex128);
  expect_complex(run("aten._fft_c2c.default", {c, ints({0}), Value(int64_t{2}), Value(true)}),
                 {{0.625, 0.5}, {-0.375, -0.75}, {0.125, 0.5}, {0.625, 1.75}}, 1e-14);
  expect_complex(run("aten._fft_c2c.default", {c, ints({0}), Value(int64_t{1}), Value(false)}),
                 {{1.25, 1.0}, {1.25, 3.5}, {0.25, 1.0}, {-0.75, -1.5}}, 1e-14);
  // No dims: a copy.
  expect_complex(run("aten._fft_c2c.default", {c, ints({}), Value(int64_t{2}), Value(true)}),
                 {{1, 2}, {3, -1}, {0.5, 0}, {-2, 1}}, 0);
}

TEST(Fft, C2rIgnoresImaginaryPartsOfDcAndNyquist) {
  const Tensor c = complex_tensor({{1, 2}, {2, 1}, {3, -1}, {7, 7}}, {4}, DType::Complex128);
  auto c2r = [&](int64_t n) {
    return run("aten._fft_c2r.default", {c, ints({0}), Value(int64_t{0}), Value(n)});
  };
  const Tensor y4 = c2r(4);
  EXPECT_EQ(y4.dtype(), DType::Float64);
  const double want4[] = {8, -4, 0, 0};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y4.get(i), want4[i], 1e-13);
  const Tensor y5 = c2r(5);
  const double want5[] = {11.0, -3.344576516755, -3.459649548425, 2.695717525925, -1.891491460745};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(y5.get(i), want5[i], 1e-11);
  const Tensor y2 = c2r(2);
  EXPECT_NEAR(y2.get(0), 3, 1e-14);
  EXPECT_NEAR(y2.get(1), -1, 1e-14);
  // Multi-dim: c2c backward over the leading dims, then c2r over the last (pocketfft/numpy).
  const Tensor m = complex_tensor({{1, 1}, {2, -1}, {0, 0.5}, {3, 0}, {-1, -1}, {2, 2}}, {2, 3},
                                  DType::Complex128);
  const Tensor y =
      run("aten._fft_c2r.default", {m, ints({0, 1}), Value(int64_t{0}), Value(int64_t{4})});
  const double want[] = {8, 6, 4, -2, 2, 0, -10, 0};
  ASSERT_EQ(y.shape(), Shape({2, 4}));
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(y.get(i), want[i], 1e-13);
}

TEST(Fft, RoundTrip) {
  const Tensor x = real_tensor({0.5, -1, 2, 3.25, 0, 1, -2}, {7}, DType::Float32);
  const Tensor spec = run("aten._fft_r2c.default", {x, ints({0}), Value(int64_t{0}), Value(true)});
  const Tensor back =
      run("aten._fft_c2r.default", {spec, ints({0}), Value(int64_t{2}), Value(int64_t{7})});
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(back.get(i), x.get(i), 1e-6);
}

TEST(Fft, Errors) {
  const Tensor f = Tensor::zeros({3, 4}, DType::Float32);
  const Tensor c = Tensor::zeros({3, 4}, DType::Complex64);
  const Value n0(int64_t{0});
  EXPECT_EQ(op_error_of([&] {
              run("aten._fft_r2c.default", {f.to(DType::Float16), ints({1}), n0, Value(true)});
            }),
            "Unsupported dtype Half");
  EXPECT_EQ(op_error_of([&] {
              run("aten._fft_r2c.default", {c, ints({1}), n0, Value(true)});
            }),
            "Expected self.is_floating_point() to be true, but got false.");
  EXPECT_EQ(op_error_of([&] {
              run("aten._fft_c2c.default", {f, ints({1}), n0, Value(true)});
            }),
            "Expected self.is_complex() to be true, but got false.");
  EXPECT_EQ(op_error_of([&] {
              run("aten._fft_c2c.default", {c.to(DType::Complex32), ints({1}), n0, Value(true)});
            }),
            "Unsupported dtype ComplexHalf");
  EXPECT_NE(op_error_of([&] {
              run("aten._fft_c2c.default", {c, ints({2}), n0, Value(true)});
            }),
            "");
  EXPECT_NE(op_error_of([&] {
              run("aten._fft_c2c.default", {c, ints({-1}), n0, Value(true)});
            }),
            "");
  EXPECT_EQ(op_error_of([&] {
              run("aten._fft_c2c.default", {c, ints({0, 0}), n0, Value(true)});
            }),
            "axis specified repeatedly");
  EXPECT_EQ(op_error_of([&] {
              run("aten._fft_c2c.default", {c, ints({0}), Value(int64_t{3}), Value(true)});
            }),
            "Unsupported normalization type3");
  EXPECT_NE(op_error_of([&] { run("aten._fft_r2c.default", {f, ints({}), n0, Value(true)}); }), "");
}

TEST(ComplexViews, ViewAsRealAndBack) {
  const Tensor c =
      complex_tensor({{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}}, {2, 3}, DType::Complex64)
          .transpose(0, 1);
  const Tensor r = run("aten.view_as_real.default", {c});
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(r.shape(), Shape({3, 2, 2}));
  EXPECT_EQ(r.strides(), Shape({2, 6, 1}));
  EXPECT_TRUE(r.shares_storage(c));
  EXPECT_EQ(r.get(2 * 2 + 1), 4.0);  // c[1][0] = 3+4j -> imaginary part
  const Tensor back = run("aten.view_as_complex.default", {r});
  EXPECT_EQ(back.dtype(), DType::Complex64);
  EXPECT_EQ(back.strides(), c.strides());
  EXPECT_EQ(back.get_complex(1), cd(7, 8));  // c.T[0][1] = c[1][0]
  // view_as_complex of [.., 2] f16 -> c32; checks.
  EXPECT_EQ(run("aten.view_as_complex.default", {Tensor::zeros({2}, DType::Float16)}).dtype(),
            DType::Complex32);
  EXPECT_EQ(op_error_of([&] {
              run("aten.view_as_complex.default", {Tensor::zeros({3, 2}, DType::BFloat16)});
            }),
            "view_as_complex is only supported for half, float and double tensors, but got a "
            "tensor of scalar type: BFloat16");
  EXPECT_EQ(op_error_of([&] {
              run("aten.view_as_complex.default",
                  {Tensor::zeros({2, 3}, DType::Float32).transpose(0, 1)});
            }),
            "Tensor must have a last dimension with stride 1");
  EXPECT_EQ(
      op_error_of([&] {
        run("aten.view_as_complex.default", {Tensor::zeros({3, 4}, DType::Float32).slice(1, 1, 3)});
      }),
      "Tensor must have a storage_offset divisible by 2");
  EXPECT_EQ(
      op_error_of([&] { run("aten.view_as_real.default", {Tensor::zeros({2}, DType::Float32)}); }),
      "view_as_real is only supported for complex tensors");
}

TEST(ComplexViews, RealAndImag) {
  const Tensor c = complex_tensor({{1, 2}, {3, 4}, {5, 6}}, {3}, DType::Complex128);
  const Tensor re = run("aten.real.default", {c});
  const Tensor im = run("aten.imag.default", {c.slice(0, 1, 3)});
  EXPECT_EQ(re.dtype(), DType::Float64);
  EXPECT_EQ(re.strides(), Shape({2}));
  EXPECT_EQ(re.get(2), 5.0);
  EXPECT_EQ(im.offset(), 3);
  EXPECT_EQ(im.get(0), 4.0);
  EXPECT_EQ(im.get(1), 6.0);
  const Tensor f = Tensor::zeros({2}, DType::Float32);
  EXPECT_TRUE(run("aten.real.default", {f}).shares_storage(f));
  EXPECT_EQ(op_error_of([&] { run("aten.imag.default", {f}); }),
            "imag is not implemented for tensors with non-complex dtypes.");
}

TEST(ComplexArithmetic, AddMulDivPromoteAndKeepImaginaryParts) {
  OpRegistry r;
  register_pointwise_binary_ops(r);
  const Tensor a = complex_tensor({{1, 2}}, {1}, DType::Complex64);
  const Tensor b = complex_tensor({{3, -1}}, {1}, DType::Complex64);
  const Tensor m = r.get("aten.mul.Tensor").run_ref({a, b})[0].tensor();
  EXPECT_EQ(m.get_complex(0), cd(5, 5));
  const Tensor d = r.get("aten.div.Tensor").run_ref({a, b})[0].tensor();
  EXPECT_NEAR(d.get_complex(0).real(), 0.1, 1e-7);
  EXPECT_NEAR(d.get_complex(0).imag(), 0.7, 1e-7);
  // c64 + f64 -> c128 (torch.promote_types).
  const Tensor s =
      r.get("aten.add.Tensor").run_ref({a, Tensor::full({1}, 2.0, DType::Float64)})[0].tensor();
  EXPECT_EQ(s.dtype(), DType::Complex128);
  EXPECT_EQ(s.get_complex(0), cd(3, 2));
  // A float alpha is allowed with a complex result.
  const Tensor t = r.get("aten.add.Tensor").run_ref({a, b, Value(0.5)})[0].tensor();
  EXPECT_EQ(t.get_complex(0), cd(2.5, 1.5));
}

TEST(FftSamples, EnoughCasesAndEachMaterialisesAndRuns) {
  for (const OpDef* op : fft_ops().all()) {
    const std::vector<Sample> ss = op->samples(SampleContext{false});
    EXPECT_GE(ss.size(), 8u) << op->name;
    for (const Sample& s : ss) {
      const bool must_raise = s.label.starts_with("error:");
      bool raised = false;
      std::string why;
      try {
        const Values args = materialize(*op, s.call, 5);
        const Values out = op->run_ref(args);
        if (op->compare.output_is_view) {
          EXPECT_TRUE(out.at(0).tensor().shares_storage(args.at(0).tensor()))
              << op->name << " " << s.label;
        }
      } catch (const Error& e) {
        raised = true;
        why = e.what();
        EXPECT_EQ(e.kind(), ErrorKind::OpError) << op->name << " " << s.label << ": " << why;
      }
      EXPECT_EQ(raised, must_raise) << op->name << " '" << s.label << "' " << why;
    }
    EXPECT_FALSE(op->samples(SampleContext{true}).empty()) << op->name;
  }
}

// The judge: a signal whose values can overflow an intermediate (n * max|x| past the largest
// finite value) may come out non-finite in one order of the sums and finite in another; a signal
// with NaN or inf inputs and ordinary values must stay non-finite; ordinary signals are held to
// the tolerances.
TEST(FftJudge, OverflowingSignalsAreJudgedNormwiseAndNanSignalsStrictly) {
  const OpDef& op = fft_ops().get("aten._fft_r2c.default");
  const double big = 3.0e38;  // near f32's max
  const double nan = std::nan("");
  // Row 0: NaN input; row 1: +big and -big (cancel at bin 0); row 2: ordinary values.
  const Tensor x =
      real_tensor({nan, 1, 2, 3, big, 1, -big, 0.25, 1, 2, 3, 4}, {3, 4}, DType::Float32);
  const Values in = {Value(x), ints({1}), Value(int64_t{0}), Value(true)};
  const Values ref = op.run_ref(in);
  auto judge = [&](const Tensor& cand) {
    bool ok = true;
    for (const TensorCheck& c : op.compare.custom(in, ref, {Value(cand)})) ok = ok && c.passed;
    return ok;
  };
  EXPECT_TRUE(judge(ref[0].tensor().clone()));
  // Overflow in the big row (bin 0 non-finite, bin 1 off by 1e25): within that signal's limits.
  Tensor overflow = ref[0].tensor().clone();
  overflow.set_complex(3, cd{std::numeric_limits<double>::infinity(), 0});
  overflow.set_complex(4, overflow.get_complex(4) + cd{1e25, 0});
  EXPECT_TRUE(judge(overflow));
  // A finite value where the NaN row's reference is NaN: wrong.
  Tensor finite_nan = ref[0].tensor().clone();
  finite_nan.set_complex(0, cd{0, 0});
  EXPECT_FALSE(judge(finite_nan));
  // The ordinary row off by 1e-3: wrong.
  Tensor off = ref[0].tensor().clone();
  off.set_complex(7, off.get_complex(7) + cd{1e-3, 0});
  EXPECT_FALSE(judge(off));
  // Infinity in the ordinary row: wrong.
  Tensor inf = ref[0].tensor().clone();
  inf.set_complex(6, cd{std::numeric_limits<double>::infinity(), 0});
  EXPECT_FALSE(judge(inf));
}

}  // namespace
}  // namespace crucible
