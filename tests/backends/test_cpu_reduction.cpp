// The cpu backend's reductions against the reference: long rows split over blocks and threads,
// cancellation of huge terms (summed again in the reference's order), columns (split over the
// pool), the first index of a NaN or a tie in max.dim / argmax, moments, products and any/all;
// and the loops of reduction_kernels.h on every ISA level this machine has (vector bodies,
// tails, non-temporal stores from unaligned starts, wild-value flags).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_features.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/reduction_kernels.h"
#include "crucible/ops/op.h"
#include "test_cpu_nn_check.h"

namespace crucible::cpu {
namespace {

Values run(const char* name, const Values& args) {
  auto cpu = make_cpu_backend();
  return cpu->run(OpRegistry::catalog().get(name), args);
}

Values ref(const char* name, const Values& args) {
  return OpRegistry::catalog().get(name).run_ref(args);
}

TEST(CpuReduction, LongRowSumMatchesReferenceOnEveryThreadCount) {
  Tensor x = Tensor::empty({3, 100003}, DType::Float32);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, std::sin(0.001 * static_cast<double>(i)) + 0.5);
  const Values args{Value(x), Value(std::vector<int64_t>{1}), Value(false), Value()};
  const Tensor want = ref("aten.sum.dim_IntList", args).at(0).tensor();
  const int saved = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    const Tensor got = run("aten.sum.dim_IntList", args).at(0).tensor();
    ASSERT_EQ(got.shape(), (Shape{3}));
    for (int64_t o = 0; o < 3; ++o)
      EXPECT_NEAR(got.get(o), want.get(o), 1e-6 * std::abs(want.get(o))) << threads;
  }
  set_num_threads(saved);
}

TEST(CpuReduction, WideColumnSumsAreSplitByColumnsInTheReferencesOrder) {
  // [tokens, features] summed over tokens (a bias gradient): columns split over the threads,
  // each summed over every row in order, so the f32 results equal the reference's bits on any
  // thread count, cancelling huge terms included.
  Tensor x = Tensor::empty({40, 1500}, DType::Float32);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, std::cos(0.37 * static_cast<double>(i)) * 3);
  x.set(7, 3e38);  // column 7: 3e38 + ... - 3e38 in row order
  x.set(1500 + 7, 1.5);
  x.set(2 * 1500 + 7, -3e38);
  const Values args{Value(x), Value(std::vector<int64_t>{0}), Value(true), Value()};
  const Tensor want = ref("aten.sum.dim_IntList", args).at(0).tensor();
  const int saved = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    const Tensor got = run("aten.sum.dim_IntList", args).at(0).tensor();
    ASSERT_EQ(got.shape(), (Shape{1, 1500}));
    for (int64_t j = 0; j < 1500; ++j) ASSERT_EQ(got.get(j), want.get(j)) << threads << " " << j;
  }
  set_num_threads(saved);
}

TEST(CpuReduction, CancellingHugeTermsAreSummedInOrder) {
  // Row 0 in order: 3e38 + 1.5 loses the 1.5, - 3e38 gives 0 (what the reference computes);
  // summed in eight interleaved accumulators it would give 1.5.
  Tensor x = Tensor::zeros({2, 20}, DType::Float32);
  x.set(0, 3e38);
  x.set(1, 1.5);
  x.set(8, -3e38);
  x.set(25, 1.0);
  const Values args{Value(x), Value(std::vector<int64_t>{-1}), Value(true), Value()};
  const Tensor got = run("aten.sum.dim_IntList", args).at(0).tensor();
  const Tensor want = ref("aten.sum.dim_IntList", args).at(0).tensor();
  ASSERT_EQ(got.shape(), (Shape{2, 1}));
  EXPECT_EQ(want.get(0), 0.0);
  EXPECT_EQ(got.get(0), want.get(0));
  EXPECT_EQ(got.get(1), 1.0);
}

TEST(CpuReduction, ShortRowsWithCancellationGiveTheReferencesBitsOnEveryThreadCount) {
  // Rows of 49 (a pooled 7x7 window) go two at a time, 70 (past the pairs' limit) one at a
  // time; rows whose huge terms cancel (the first of a pair, the second, the odd last row) are
  // summed again in the reference's order, in f32 and f64. The others are summed in f64 lanes,
  // within the comparison's tolerance of the reference.
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (int64_t red : {49, 70}) {
      const int64_t rows = 37;
      Tensor x = Tensor::empty({rows, red}, dt);
      for (int64_t i = 0; i < x.numel(); ++i)
        x.set(i, std::sin(0.37 * static_cast<double>(i)) * 3 + 0.25);
      for (int64_t r : {int64_t{4}, int64_t{9}, rows - 1}) {
        x.set(r * red + 1, 3e38);
        x.set(r * red + 2, 1.5);
        x.set(r * red + red - 3, -3e38);
      }
      const Values args{Value(x), Value(std::vector<int64_t>{-1}), Value(false), Value()};
      const Tensor want = ref("aten.sum.dim_IntList", args).at(0).tensor();
      const int saved = num_threads();
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        const Tensor got = run("aten.sum.dim_IntList", args).at(0).tensor();
        ASSERT_EQ(got.shape(), (Shape{rows}));
        for (int64_t r = 0; r < rows; ++r) {
          if (r == 4 || r == 9 || r == rows - 1)
            EXPECT_EQ(got.get(r), want.get(r)) << r << " " << red << " " << threads;
          else
            EXPECT_NEAR(got.get(r), want.get(r), 1e-6 * (1 + std::abs(want.get(r)))) << r;
        }
      }
      set_num_threads(saved);
    }
  }
}

TEST(CpuReduction, ColumnMeanAndDtypeConversionFirst) {
  Tensor x = Tensor::empty({5, 4}, DType::Float32);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, 0.7 * static_cast<double>(i));
  // sum(dtype=i64) truncates every element before adding, as ATen does.
  const Values args{Value(x), Value(std::vector<int64_t>{0}), Value(false), Value(DType::Int64)};
  const Tensor got = run("aten.sum.dim_IntList", args).at(0).tensor();
  const Tensor want = ref("aten.sum.dim_IntList", args).at(0).tensor();
  ASSERT_EQ(got.dtype(), DType::Int64);
  for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(got.get_int(j), want.get_int(j));
  const Values margs{Value(x), Value(std::vector<int64_t>{0}), Value(false), Value()};
  const Tensor m = run("aten.mean.dim", margs).at(0).tensor();
  for (int64_t j = 0; j < 4; ++j)
    EXPECT_FLOAT_EQ(static_cast<float>(m.get(j)), static_cast<float>(0.7 * (8 + j)));
}

TEST(CpuReduction, MaxDimTakesFirstNanAndFirstTie) {
  Tensor x = Tensor::empty({2, 5}, DType::Float32);
  const double v[] = {1, 4, 4, NAN, NAN, 2, 7, 3, 7, 1};
  for (int64_t i = 0; i < 10; ++i) x.set(i, v[i]);
  const Values out = run("aten.max.dim", {Value(x), Value(int64_t{1}), Value(false)});
  const Tensor& values = out.at(0).tensor();
  const Tensor& idx = out.at(1).tensor();
  EXPECT_TRUE(std::isnan(values.get(0)));
  EXPECT_EQ(idx.get_int(0), 3);
  EXPECT_EQ(values.get(1), 7.0);
  EXPECT_EQ(idx.get_int(1), 1);
  // Column-wise argmin over a transposed (non-contiguous) input.
  const Tensor am =
      run("aten.argmin.default", {Value(x.transpose(0, 1)), Value(int64_t{0}), Value(false)})
          .at(0)
          .tensor();
  EXPECT_EQ(am.get_int(0), 3);  // a NaN is the extreme of argmin too
  EXPECT_EQ(am.get_int(1), 4);
}

using cpu_test::expect_matches_ref;
using cpu_test::filled;
using L = std::vector<int64_t>;
const DType f32 = DType::Float32;

// Runs `body` with 1, 2 and 3 threads.
template <typename F>
void on_thread_counts(F&& body) {
  const int saved = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    body(threads);
  }
  set_num_threads(saved);
}

TEST(CpuReduction, ColumnsSplitOverThePoolWithCancellation) {
  // One output row of 40 columns, 4096 rows: the rows are split over the pool. Column 3 holds
  // +3e38 in the first part and -3e38 in the last, with ones between them that the reference
  // absorbs: only a sum in its order gives its value.
  Tensor x = filled({4096, 40}, f32);
  for (int64_t r = 0; r < 4096; ++r) x.set(r * 40 + 3, 1.0);
  x.set(10 * 40 + 3, 3e38);
  x.set(4000 * 40 + 3, -3e38);
  const Values args{Value(x), Value(L{0}), Value(false), Value()};
  const Tensor want = ref("aten.sum.dim_IntList", args).at(0).tensor();
  EXPECT_EQ(want.get(3), 95.0);  // the ones after -3e38
  on_thread_counts([&](int threads) {
    const Tensor got = run("aten.sum.dim_IntList", args).at(0).tensor();
    EXPECT_EQ(got.get(3), 95.0) << threads;
    for (int64_t j = 0; j < 40; ++j) EXPECT_NEAR(got.get(j), want.get(j), 1e-4) << j;
    expect_matches_ref("aten.mean.dim",
                       {filled({3, 517, 33}, f32), Value(L{1}), Value(true), Value()}, threads);
  });
}

TEST(CpuReduction, OuterAndInnerDimsAndLongRows) {
  // sum over N, H, W of NCHW (runs of H*W, then runs of each channel in order of N)
  expect_matches_ref("aten.sum.dim_IntList",
                     {filled({5, 7, 6, 9}, f32), Value(L{0, 2, 3}), Value(true), Value()});
  expect_matches_ref("aten.mean.dim",
                     {filled({5, 7, 6, 9}, f32), Value(L{0, -1, -2}), Value(false), Value()});
  // a row of 3 blocks of 16K with huge terms cancelling across blocks: summed again in order
  Tensor x = filled({2, 40000}, f32);
  x.set(100, 3e38);
  x.set(33000, -3e38);
  on_thread_counts([&](int threads) {
    expect_matches_ref("aten.sum.dim_IntList", {x, Value(L{1}), Value(false), Value()}, threads);
    expect_matches_ref("aten.sum.default", {filled({300001}, f32), Value()}, threads);
  });
}

TEST(CpuReduction, MomentsRowsColumnsAndHugeValues) {
  on_thread_counts([&](int threads) {
    // a long row split over the pool (blocks of 64K merged with Chan's formula)
    expect_matches_ref("aten.var.correction",
                       {filled({2, 150001}, f32), Value(L{1}), Value(), Value(false)}, threads);
    expect_matches_ref("aten.std_mean.correction",
                       {filled({300001}, f32), Value(), Value(0.5), Value(true)}, threads);
  });
  // columns, f64, and a fractional / excessive correction
  expect_matches_ref("aten.var_mean.correction",
                     {filled({37, 5, 19}, f32), Value(L{0}), Value(2.5), Value(true)});
  expect_matches_ref("aten.std.correction", {filled({9, 40}, DType::Float64), Value(L{1}),
                                             Value(int64_t{40}), Value(false)});
  // huge values: computed in the reference's order (var of a row with 3e38 ... -3e38)
  Tensor x = Tensor::full({4, 100}, 1.0, f32);
  x.set(201, 3e38);
  x.set(204, -3e38);
  const Values out =
      expect_matches_ref("aten.var_mean.correction", {x, Value(L{1}), Value(), Value(false)});
  EXPECT_EQ(out[1].tensor().get(2), static_cast<double>(0.95f));  // 3e38 absorbed 3 ones
}

TEST(CpuReduction, ProductsAndAnyAll) {
  Tensor p = Tensor::full({3, 70000}, 1.0, f32);
  for (int64_t i = 0; i < p.numel(); i += 997) p.set(i, 1.0 + static_cast<double>(i % 7) / 100);
  on_thread_counts([&](int threads) {
    expect_matches_ref("aten.prod.dim_int", {p, Value(int64_t{1}), Value(false), Value()}, threads);
    expect_matches_ref("aten.prod.default", {filled({5, 3}, f32), Value()}, threads);
  });
  expect_matches_ref("aten.prod.dim_int",
                     {filled({6, 4}, DType::Int32), Value(int64_t{0}), Value(true), Value()});
  // any / all: -0.0 is false, NaN true; the first deciding value deep in a long tensor
  Tensor z = Tensor::zeros({3, 9000}, f32);
  z.set(5, -0.0);
  z.set(9000 + 8999, std::nan(""));
  const Tensor any_all = run("aten.any.default", {Value(z)}).at(0).tensor();
  EXPECT_EQ(any_all.get_int(0), 1);
  const Tensor rows =
      run("aten.any.dim", {Value(z), Value(int64_t{1}), Value(false)}).at(0).tensor();
  EXPECT_EQ(rows.get_int(0), 0);
  EXPECT_EQ(rows.get_int(1), 1);
  const Tensor cols =
      run("aten.all.dims", {Value(z.transpose(0, 1)), Value(L{1}), Value(false)}).at(0).tensor();
  EXPECT_EQ(cols.dtype(), DType::Bool);
  EXPECT_EQ(cols.get_int(8999), 0);
  Tensor u = Tensor::full({2, 5000}, 3, DType::UInt8);
  u.set_int(7000, 0);
  const Tensor all_u =
      run("aten.all.dim", {Value(u), Value(int64_t{1}), Value(true)}).at(0).tensor();
  EXPECT_EQ(all_u.dtype(), DType::UInt8);
  EXPECT_EQ(all_u.get_int(0), 1);
  EXPECT_EQ(all_u.get_int(1), 0);
}

TEST(CpuReduction, SelectionsOnLongRowsAndColumns) {
  // argmax over a row of 200000 split over the pool: the maximum is tied in the first and
  // last block (the first wins); argmin finds a NaN in a later block.
  Tensor x = filled({200000}, f32);
  x.set(70000, 5.0);
  x.set(190000, 5.0);
  Tensor y = x.clone();
  y.set(150000, std::nan(""));
  y.set(150001, std::nan(""));
  on_thread_counts([&](int threads) {
    EXPECT_EQ(
        run("aten.argmax.default", {Value(x), Value(), Value(false)}).at(0).tensor().get_int(0),
        70000)
        << threads;
    EXPECT_EQ(
        run("aten.argmin.default", {Value(y), Value(), Value(false)}).at(0).tensor().get_int(0),
        150000);
    EXPECT_TRUE(std::isnan(
        run("aten.amax.default", {Value(y), Value(L{}), Value(false)}).at(0).tensor().get(0)));
  });
  // columns: first index of a tie and of a NaN, every dtype path (f32, f64, i64, f16)
  for (DType t : {f32, DType::Float64, DType::Int64, DType::Float16}) {
    Tensor c = Tensor::zeros({50, 37}, t);
    c.set(5 * 37 + 2, 3);
    c.set(9 * 37 + 2, 3);
    if (is_floating(t)) c.set(20 * 37 + 30, std::nan(""));
    const Values out = run("aten.min.dim", {Value(c), Value(int64_t{0}), Value(false)});
    const Values mx = run("aten.max.dim", {Value(c), Value(int64_t{0}), Value(false)});
    EXPECT_EQ(mx.at(1).tensor().get_int(2), 5);
    EXPECT_EQ(out.at(1).tensor().get_int(0), 0);
    if (is_floating(t)) {
      EXPECT_EQ(out.at(1).tensor().get_int(30), 20);
      EXPECT_TRUE(std::isnan(mx.at(0).tensor().get(30)));
    }
  }
}

// ---- the loops, on every ISA level this machine runs ----

std::vector<const RedKernels*> levels() {
  std::vector<const RedKernels*> out{&red_kernels_portable()};
  const CpuFeatures& f = cpu_features();
  if (f.avx2 && f.fma && f.f16c) out.push_back(&red_kernels_avx2());
  if (f.avx512f && f.avx512bw && f.avx512vl) out.push_back(&red_kernels_avx512());
  return out;
}

std::vector<float> values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(
        std::fmod(static_cast<double>((i + 1) * (seed * 37 + 11) % 1009), 7.0) - 3.5);
  return v;
}

TEST(CpuReductionLoops, ElementwiseStoresPlainAndStreamed) {
  for (const RedKernels* k : levels()) {
    for (int64_t n : {0, 1, 5, 16, 17, 33, 100, 1000}) {
      for (int64_t off : {0, 1, 3, 15}) {  // start positions off 64-byte alignment
        const std::vector<float> x = values(n + 16, 1), g = values(n + 16, 2),
                                 w = values(n + 16, 3), b = values(n + 16, 4);
        std::vector<float> plain(static_cast<size_t>(n + 16)), nt(plain.size());
        for (bool stream : {false, true}) {
          float* y = (stream ? nt.data() : plain.data()) + off;
          EXPECT_FALSE(k->f32.affine(x.data() + off, y, n, 0.25f, 1.5f, -2.0f, 0.125f, stream));
        }
        for (int64_t i = 0; i < n; ++i) {
          const float want = (x[off + i] - 0.25f) * 1.5f * -2.0f + 0.125f;
          EXPECT_EQ(plain[off + i], want);
          EXPECT_EQ(nt[off + i], want);
        }
        for (bool stream : {false, true}) {
          float* y = (stream ? nt.data() : plain.data()) + off;
          k->f32.affine_wb(x.data() + off, y, n, 0.5f, 2.0f, w.data() + off, b.data() + off,
                           stream);
        }
        for (int64_t i = 0; i < n; ++i) {
          const float want = (x[off + i] - 0.5f) * 2.0f * w[off + i] + b[off + i];
          EXPECT_EQ(plain[off + i], want);
          EXPECT_EQ(nt[off + i], want);
        }
        for (bool stream : {false, true}) {
          float* o = (stream ? nt.data() : plain.data()) + off;
          k->f32.backward(g.data() + off, w.data() + off, x.data() + off, o, n, 1.5f, -0.5f, 0.25f,
                          2.0f, stream);
        }
        for (int64_t i = 0; i < n; ++i) {
          EXPECT_NEAR(plain[off + i],
                      1.5f * g[off + i] * w[off + i] - 0.5f * (x[off + i] - 0.25f) + 2.0f, 1e-5);
          EXPECT_EQ(nt[off + i], plain[off + i]);
        }
      }
    }
  }
}

TEST(CpuReductionLoops, WildValuesAreReported) {
  for (const RedKernels* k : levels()) {
    for (int64_t n : {7, 40}) {
      for (int64_t at : {int64_t{0}, n - 1}) {  // in a vector body and in a tail
        for (double bad : {1e16, std::numeric_limits<double>::infinity(), std::nan("")}) {
          std::vector<float> x = values(n, 1), y(static_cast<size_t>(n));
          EXPECT_FALSE(k->f32.moments(x.data(), n).wild);
          x[static_cast<size_t>(at)] = static_cast<float>(bad);
          EXPECT_TRUE(k->f32.moments(x.data(), n).wild) << n << " " << at << " " << bad;
          EXPECT_TRUE(k->f32.affine(x.data(), y.data(), n, 0, 1, 1, 0, false));
          double dot, sum;
          const std::vector<float> g = values(n, 2);
          EXPECT_TRUE(k->f32.dot_sum(g.data(), nullptr, x.data(), n, 0.0, &dot, &sum));
          EXPECT_TRUE(k->f32.backward(g.data(), nullptr, x.data(), y.data(), n, 1, 1, 0, 0, false));
          bool w = false;
          k->f32.prod(x.data(), n, &w);
          EXPECT_TRUE(w);
        }
      }
    }
  }
}

TEST(CpuReductionLoops, StatisticsAndSelections) {
  for (const RedKernels* k : levels()) {
    for (int64_t n : {1, 15, 31, 32, 33, 100, 2047, 2049, 5000}) {
      const std::vector<float> x = values(n, 3);
      double s = 0;
      for (float v : x) s += v;
      const Moments m = k->f32.moments(x.data(), n);
      double m2 = 0;
      for (float v : x) m2 += (v - s / static_cast<double>(n)) * (v - s / static_cast<double>(n));
      EXPECT_NEAR(m.sum, s, 1e-9 * n);
      EXPECT_NEAR(m.m2, m2, 1e-9 * n);
      double abs;
      EXPECT_NEAR(k->f32.sum_abs(x.data(), n, &abs), s, 1e-9 * n);
      // the first maximum among lanes holding the same value, and the first NaN
      std::vector<float> t(static_cast<size_t>(n), 1.0f);
      t[static_cast<size_t>(n / 2)] = 2.0f;
      t[static_cast<size_t>(n - 1)] = 2.0f;
      EXPECT_EQ(k->f32.row_arg(t.data(), n, true), n / 2) << n;
      EXPECT_EQ(k->f32.row_arg(t.data(), n, false), n / 2 == 0 && n > 1 ? 1 : 0) << n;
      EXPECT_EQ(k->f32.row_extreme(t.data(), n, true), 2.0f);
      t[static_cast<size_t>(n - 1)] = std::nanf("");
      EXPECT_EQ(k->f32.row_arg(t.data(), n, false), n - 1);
      EXPECT_TRUE(std::isnan(k->f32.row_extreme(t.data(), n, true)));
    }
    // row sums: each row within the order checks' bound of its exact sum (f64 values whose
    // sums depend on the order too), the |x| of f32 rows bounded within n * 2^-23
    for (int64_t red : {1, 7, 16, 17, 49, 64, 65, 196}) {
      for (int64_t rows : {1, 2, 5}) {
        const std::vector<float> xf = values(rows * red, 7);
        std::vector<double> xd(xf.size());  // sums that depend on their order
        for (size_t i = 0; i < xd.size(); ++i) xd[i] = std::sin(0.7 * static_cast<double>(i)) * 3;
        std::vector<double> sum(static_cast<size_t>(rows)), abs(sum.size());
        k->f32.row_sums(xf.data(), rows, red, sum.data(), abs.data());
        for (int64_t r = 0; r < rows; ++r) {
          double a_exact = 0;
          for (int64_t j = 0; j < red; ++j)
            a_exact += std::abs(xf[static_cast<size_t>(r * red + j)]);
          // within the error the order check assumes of the exact sum (an accumulator per
          // lane, then eight additions, of 2^-53 |x| each)
          long double exact = 0;
          for (int64_t j = 0; j < red; ++j) exact += xf[static_cast<size_t>(r * red + j)];
          EXPECT_LE(std::abs(sum[static_cast<size_t>(r)] - static_cast<double>(exact)),
                    (static_cast<double>(red) / k->f32.lanes + 8) * 0x1p-53 * a_exact)
              << red << " " << rows << " " << r;
          EXPECT_GE(abs[static_cast<size_t>(r)], a_exact * (1 - 1e-15)) << red << " " << r;
          EXPECT_LE(abs[static_cast<size_t>(r)],
                    a_exact * (1 + static_cast<double>(red) * 0x1p-22));
        }
        k->f64.row_sums(xd.data(), rows, red, sum.data(), abs.data());
        for (int64_t r = 0; r < rows; ++r) {
          double a_one;
          (void)k->f64.sum_abs(xd.data() + r * red, red, &a_one);
          long double exact = 0;
          for (int64_t j = 0; j < red; ++j) exact += xd[static_cast<size_t>(r * red + j)];
          EXPECT_LE(std::abs(sum[static_cast<size_t>(r)] - static_cast<double>(exact)),
                    (static_cast<double>(red) / k->f64.lanes + 8) * 0x1p-53 * a_one)
              << red << " " << rows << " " << r;
          EXPECT_NEAR(abs[static_cast<size_t>(r)], a_one, a_one * 1e-15 * static_cast<double>(red));
        }
      }
    }
    // column sums: eight rows at a time in the order of the rows, so exactly the sequential
    // f64 sums; row and column counts off the vector widths
    const int64_t rows = 21, cols = 37, ld = 40;
    const std::vector<float> x = values(rows * ld, 5);
    std::vector<double> acc(cols, 0.5), abs(cols, 0.0);
    k->f32.col_sum(x.data(), rows, ld, cols, acc.data(), abs.data());
    for (int64_t j = 0; j < cols; ++j) {
      double s = 0.5, a = 0;
      for (int64_t r = 0; r < rows; ++r) {
        s += x[static_cast<size_t>(r * ld + j)];
        a += std::abs(x[static_cast<size_t>(r * ld + j)]);
      }
      EXPECT_EQ(acc[static_cast<size_t>(j)], s);
      EXPECT_EQ(abs[static_cast<size_t>(j)], a);
    }
  }
}

}  // namespace
}  // namespace crucible::cpu
