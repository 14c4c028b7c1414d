// The references' fast paths (f64 dgemm for the matrix products, im2col + dgemm for the
// convolutions, refpar's threads) against plain f64 loops written here, on small random cases
// with non-contiguous operands, groups, strides, padding, dilation, transposed convolutions and
// empty dims; and the same bits for any thread count.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <cblas.h>

#include "crucible/ops/op.h"
#include "ops/families.h"
#include "ops/ref_gemm.h"
#include "ops/ref_parallel.h"

namespace crucible {
namespace {

using Ints = std::vector<int64_t>;

const OpRegistry& ops() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    register_matmul_ops(*reg);
    register_convolution_ops(*reg);
    return reg;
  }();
  return *r;
}

Tensor random(const Shape& shape, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Tensor t = Tensor::empty(shape, DType::Float64);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, u(rng));
  return t;
}

// A view of `shape` whose elements are not contiguous (where its last two dims exceed 1): the
// transpose of a [.., b, a] tensor.
Tensor random_transposed(const Shape& shape, std::mt19937_64& rng) {
  Shape s = shape;
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  Tensor t = random(s, rng).transpose(-1, -2);
  if (shape[shape.size() - 1] > 1 && shape[shape.size() - 2] > 1 && t.numel() > 0) {
    EXPECT_FALSE(t.is_contiguous());
  }
  return t;
}

// Within a few f64 roundings of the sum's magnitude (the summation orders differ).
void expect_close(const Tensor& got, const std::vector<double>& want, double scale,
                  const std::string& what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.get(i), want[static_cast<size_t>(i)], 1e-12 * scale) << what << " at " << i;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), static_cast<size_t>(a.numel()) * a.itemsize()) ==
         0;
}

// ---- matrix products -------------------------------------------------------------------------

// out[b, i, j] = alpha * sum_q a[b, i, q] w[b, q, j] + beta * self[b, i, j] (self broadcast).
std::vector<double> loop_product(const Tensor& a, const Tensor& w, const Tensor* self, double beta,
                                 double alpha) {
  const int64_t nb = a.size(0), m = a.size(1), k = a.size(2), n = w.size(2);
  const Tensor s = self ? self->expand({nb, m, n}) : Tensor();
  std::vector<double> out(static_cast<size_t>(nb * m * n));
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t q = 0; q < k; ++q)
          acc += a.get((b * m + i) * k + q) * w.get((b * k + q) * n + j);
        double v = alpha * acc;
        if (self && beta != 0) v += beta * s.get((b * m + i) * n + j);
        out[static_cast<size_t>((b * m + i) * n + j)] = v;
      }
  return out;
}

TEST(RefProducts, MatrixProductsMatchPlainLoops) {
  std::mt19937_64 rng(7);
  const std::vector<std::array<int64_t, 4>> sizes = {{1, 1, 1, 1}, {2, 5, 7, 3}, {3, 17, 1, 9},
                                                     {2, 0, 4, 3}, {2, 4, 0, 3}, {1, 33, 65, 70}};
  for (const auto& [nb, m, k, n] : sizes) {
    const std::string what = "B=" + std::to_string(nb) + " M=" + std::to_string(m) +
                             " K=" + std::to_string(k) + " N=" + std::to_string(n);
    const Tensor a = random({nb, m, k}, rng), w = random_transposed({nb, k, n}, rng);
    const double scale = static_cast<double>(k + 1);
    // bmm, and mm on the first batch element (a non-contiguous slice of a).
    expect_close(ops().get("aten.bmm.default").run_ref({a, w})[0].tensor(),
                 loop_product(a, w, nullptr, 0, 1), scale, "bmm " + what);
    const Tensor a0 = a.select(0, 0).transpose(0, 1).contiguous().transpose(0, 1);
    const Tensor w0 = w.select(0, 0);
    expect_close(ops().get("aten.mm.default").run_ref({a0, w0})[0].tensor(),
                 loop_product(a0.unsqueeze(0), w0.unsqueeze(0), nullptr, 0, 1), scale,
                 "mm " + what);
    // addmm with a row bias, baddbmm with a full non-contiguous self, both scaled.
    const Tensor bias = random({n}, rng);
    expect_close(ops()
                     .get("aten.addmm.default")
                     .run_ref({bias, a0, w0, Value(0.5), Value(-2.0)})[0]
                     .tensor(),
                 loop_product(a0.unsqueeze(0), w0.unsqueeze(0), &bias, 0.5, -2.0), 2 * scale,
                 "addmm " + what);
    const Tensor self = random_transposed({nb, m, n}, rng);
    expect_close(ops()
                     .get("aten.baddbmm.default")
                     .run_ref({self, a, w, Value(-1.5), Value(0.25)})[0]
                     .tensor(),
                 loop_product(a, w, &self, -1.5, 0.25), 2 * scale, "baddbmm " + what);
  }
}

// f32 operands: the f64 product is rounded once to f32 (as the loop's sum rounded once).
TEST(RefProducts, LowPrecisionRoundsTheF64ProductOnce) {
  std::mt19937_64 rng(11);
  const Tensor a = random({1, 9, 300}, rng).to(DType::Float32);
  const Tensor w = random({1, 300, 5}, rng).to(DType::Float32);
  const Tensor got = ops().get("aten.bmm.default").run_ref({a, w})[0].tensor();
  ASSERT_EQ(got.dtype(), DType::Float32);
  const std::vector<double> want = loop_product(a, w, nullptr, 0, 1);
  for (int64_t i = 0; i < got.numel(); ++i)
    EXPECT_EQ(got.get(i), static_cast<double>(static_cast<float>(want[static_cast<size_t>(i)])))
        << "at " << i;
}

// ---- convolutions --------------------------------------------------------------------------

struct ConvCase {
  Shape input, weight;  // weight [C_out, C_in / g, k...] or, transposed, [C_in, C_out / g, k...]
  Ints stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
};

// Strides of a contiguous shape.
Shape strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// The convolution written out: for every (n, group, y channel, x channel, kernel offset, y
// position) the X position y * s - p + k * d, in range or skipped; the big side X is the input
// (or, transposed, the output).
struct Loop {
  const ConvCase& c;
  int64_t nsp() const { return static_cast<int64_t>(c.weight.size()) - 2; }
  template <typename Fn>  // fn(n, cx, cy, k offset in W, x spatial offset, y spatial offset)
  void each(const Shape& xshape, const Shape& yshape, Fn fn) const {
    const int64_t g = c.groups, cx = xshape[1], cy = yshape[1];
    const int64_t cxg = cx / g, cyg = cy / g;
    const Shape xst = strides_of(xshape), yst = strides_of(yshape);
    Shape ks(c.weight.begin() + 2, c.weight.end());
    const int64_t kvol = numel_of(ks);
    const Shape ysp(yshape.begin() + 2, yshape.end());
    const int64_t yvol = numel_of(ysp);
    for (int64_t n = 0; n < xshape[0]; ++n)
      for (int64_t gi = 0; gi < g; ++gi)
        for (int64_t cyl = 0; cyl < cyg; ++cyl)
          for (int64_t cxl = 0; cxl < cxg; ++cxl)
            for (int64_t k = 0; k < kvol; ++k)
              for (int64_t yi = 0; yi < yvol; ++yi) {
                int64_t xoff = 0, yoff = 0, krem = k, yrem = yi;
                bool in = true;
                for (int64_t d = nsp() - 1; d >= 0; --d) {
                  const int64_t kk = krem % ks[d], yy = yrem % ysp[d];
                  krem /= ks[d];
                  yrem /= ysp[d];
                  const int64_t x = yy * c.stride[d] - c.padding[d] + kk * c.dilation[d];
                  in = in && x >= 0 && x < xshape[d + 2];
                  xoff += x * xst[d + 2];
                  yoff += yy * yst[d + 2];
                }
                if (!in) continue;
                fn(n * xst[0] + (gi * cxg + cxl) * xst[1] + xoff,
                   n * yst[0] + (gi * cyg + cyl) * yst[1] + yoff,
                   ((gi * cyg + cyl) * cxg + cxl) * kvol + k);
              }
  }
};

Shape conv_output_shape(const ConvCase& c) {
  const int64_t nsp = static_cast<int64_t>(c.weight.size()) - 2;
  Shape out{c.input[0], c.transposed ? c.weight[1] * c.groups : c.weight[0]};
  for (int64_t d = 0; d < nsp; ++d) {
    const int64_t i = c.input[d + 2], k = c.weight[d + 2];
    out.push_back(c.transposed
                      ? (i - 1) * c.stride[d] - 2 * c.padding[d] + c.dilation[d] * (k - 1) +
                            c.output_padding[d] + 1
                      : (i + 2 * c.padding[d] - c.dilation[d] * (k - 1) - 1) / c.stride[d] + 1);
  }
  return out;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.get(i);
  return v;
}

Values conv_args(const ConvCase& c, const Tensor& x, const Tensor& w, const Value& bias) {
  return {x,
          w,
          bias,
          Value(c.stride),
          Value(c.padding),
          Value(c.dilation),
          Value(c.transposed),
          Value(c.output_padding),
          Value(c.groups)};
}

Values backward_args(const ConvCase& c, const Tensor& go, const Tensor& x, const Tensor& w) {
  return {go,
          x,
          w,
          Value(Ints{c.transposed ? c.weight[1] * c.groups : c.weight[0]}),
          Value(c.stride),
          Value(c.padding),
          Value(c.dilation),
          Value(c.transposed),
          Value(c.output_padding),
          Value(c.groups),
          Value(std::vector<bool>{true, true, true})};
}

// A non-contiguous copy of a random tensor of `shape` (its last two dims transposed in memory).
Tensor random_strided(const Shape& shape, std::mt19937_64& rng) {
  if (shape.size() < 2 || numel_of(shape) == 0) return random(shape, rng);
  return random_transposed(shape, rng);
}

void check_conv(const ConvCase& c, std::mt19937_64& rng, const std::string& what) {
  const Tensor x = random_strided(c.input, rng), w = random_strided(c.weight, rng);
  const Shape out_shape = conv_output_shape(c);
  const Tensor bias = random({out_shape[1]}, rng);
  const Loop loop{c};
  // Forward: X is the input (or, transposed, the output).
  std::vector<double> want(static_cast<size_t>(numel_of(out_shape)));
  const std::vector<double> xv = values(x), wv = values(w);
  if (!c.transposed) {
    loop.each(c.input, out_shape, [&](int64_t xo, int64_t yo, int64_t wo) {
      want[static_cast<size_t>(yo)] += xv[static_cast<size_t>(xo)] * wv[static_cast<size_t>(wo)];
    });
  } else {
    loop.each(out_shape, c.input, [&](int64_t xo, int64_t yo, int64_t wo) {
      want[static_cast<size_t>(xo)] += xv[static_cast<size_t>(yo)] * wv[static_cast<size_t>(wo)];
    });
  }
  const int64_t sp =
      out_shape[0] * out_shape[1] == 0 ? 0 : numel_of(out_shape) / (out_shape[0] * out_shape[1]);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] += bias.get(static_cast<int64_t>(i) / sp % out_shape[1]);
  const double scale = static_cast<double>(numel_of(c.weight) + 1);
  const Tensor fwd =
      ops().get("aten.convolution.default").run_ref(conv_args(c, x, w, Value(bias)))[0].tensor();
  ASSERT_EQ(fwd.shape(), out_shape) << what;
  expect_close(fwd, want, scale, "forward " + what);

  // Backward of sum(out * go): grad_input, grad_weight, grad_bias.
  const Tensor go = random_strided(out_shape, rng);
  const std::vector<double> gov = values(go);
  std::vector<double> gi(xv.size()), gw(wv.size()), gb(static_cast<size_t>(out_shape[1]));
  auto add = [&](const std::vector<double>& ov, int64_t xo, int64_t yo, int64_t wo, bool x_is_in) {
    const double o = ov[static_cast<size_t>(x_is_in ? yo : xo)];
    const double in = xv[static_cast<size_t>(x_is_in ? xo : yo)];
    gi[static_cast<size_t>(x_is_in ? xo : yo)] += o * wv[static_cast<size_t>(wo)];
    gw[static_cast<size_t>(wo)] += o * in;
  };
  if (!c.transposed) {
    loop.each(c.input, out_shape,
              [&](int64_t xo, int64_t yo, int64_t wo) { add(gov, xo, yo, wo, true); });
  } else {
    loop.each(out_shape, c.input,
              [&](int64_t xo, int64_t yo, int64_t wo) { add(gov, xo, yo, wo, false); });
  }
  for (size_t i = 0; i < gov.size(); ++i)
    gb[static_cast<size_t>(static_cast<int64_t>(i) / sp % out_shape[1])] += gov[i];
  const Values bwd =
      ops().get("aten.convolution_backward.default").run_ref(backward_args(c, go, x, w));
  const double big = scale * static_cast<double>(numel_of(out_shape) + 1);
  expect_close(bwd[0].tensor(), gi, big, "grad_input " + what);
  expect_close(bwd[1].tensor(), gw, big, "grad_weight " + what);
  expect_close(bwd[2].tensor(), gb, big, "grad_bias " + what);
}

std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> v;
  v.push_back({{2, 3, 9, 8}, {4, 3, 3, 2}, {1, 1}, {0, 0}, {1, 1}, {0, 0}});
  v.push_back({{2, 6, 11, 10}, {4, 3, 3, 3}, {2, 3}, {1, 2}, {2, 1}, {0, 0}, false, 2});
  v.push_back({{1, 4, 7, 9}, {4, 1, 3, 3}, {1, 2}, {1, 1}, {1, 2}, {0, 0}, false, 4});  // depthwise
  v.push_back({{3, 2, 13}, {5, 2, 4}, {3}, {2}, {2}, {0}});                             // 1-d
  v.push_back({{1, 4, 5, 6, 4},
               {6, 2, 2, 3, 2},
               {1, 2, 1},
               {1, 0, 1},
               {2, 1, 1},
               {0, 0, 0},
               false,
               2});  // 3-d
  v.push_back({{2, 4, 5, 6}, {4, 3, 3, 2}, {2, 1}, {1, 0}, {1, 2}, {1, 0}, true, 1});
  v.push_back({{1, 6, 4, 5}, {6, 2, 3, 3}, {3, 2}, {2, 1}, {2, 1}, {2, 1}, true, 3});
  v.push_back({{2, 2, 4}, {2, 3, 5}, {2}, {0}, {1}, {1}, true, 1});           // 1-d transposed
  v.push_back({{0, 3, 5, 5}, {2, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}});  // empty batch
  v.push_back({{2, 0, 5, 5}, {2, 0, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}});  // no input channels
  v.push_back({{1, 2, 3, 3}, {3, 2, 1, 1}, {4, 4}, {2, 2}, {1, 1}, {0, 0}});  // padding only
  return v;
}

TEST(RefProducts, ConvolutionsMatchPlainLoops) {
  std::mt19937_64 rng(3);
  int i = 0;
  for (const ConvCase& c : conv_cases()) check_conv(c, rng, "case " + std::to_string(i++));
}

// ---- threads ---------------------------------------------------------------------------------

// Restores refpar's thread count and OpenBLAS's at the end of a test.
struct ThreadsGuard {
  int prev = refpar::set_threads(0);
  int blas = openblas_get_num_threads();
  ThreadsGuard() = default;
  ThreadsGuard(const ThreadsGuard&) = delete;
  ThreadsGuard& operator=(const ThreadsGuard&) = delete;
  ~ThreadsGuard() {
    refpar::set_threads(prev);
    openblas_set_num_threads(blas);
  }
};

// Calls large enough to be cut into several tasks give the same bits on 1, 3 and 8 threads (and
// whatever OpenBLAS's own thread count).
TEST(RefProducts, SameBitsForAnyThreadCount) {
  const ThreadsGuard guard;
  std::mt19937_64 rng(5);
  const ConvCase c{{2, 32, 64, 64}, {64, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}};
  const ConvCase t{{2, 32, 30, 30}, {32, 16, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, 2};
  const Tensor x = random(c.input, rng), w = random(c.weight, rng);
  const Tensor go = random(conv_output_shape(c), rng);
  const Tensor tx = random(t.input, rng), tw = random(t.weight, rng);
  const Tensor tgo = random(conv_output_shape(t), rng);
  const Tensor a = random({2, 300, 200}, rng), b = random_transposed({2, 200, 250}, rng);
  auto run_all = [&] {
    Values out;
    out.push_back(ops().get("aten.convolution.default").run_ref(conv_args(c, x, w, Value()))[0]);
    for (const Value& v :
         ops().get("aten.convolution_backward.default").run_ref(backward_args(c, go, x, w)))
      out.push_back(v);
    out.push_back(ops().get("aten.convolution.default").run_ref(conv_args(t, tx, tw, Value()))[0]);
    for (const Value& v :
         ops().get("aten.convolution_backward.default").run_ref(backward_args(t, tgo, tx, tw)))
      out.push_back(v);
    out.push_back(ops().get("aten.bmm.default").run_ref({a, b})[0]);
    return out;
  };
  refpar::set_threads(1);
  openblas_set_num_threads(1);
  const Values one = run_all();
  for (int n : {3, 8}) {
    refpar::set_threads(n);
    openblas_set_num_threads(n);
    const Values many = run_all();
    ASSERT_EQ(many.size(), one.size());
    for (size_t i = 0; i < one.size(); ++i)
      EXPECT_TRUE(same_bits(one[i].tensor(), many[i].tensor()))
          << "output " << i << " differs on " << n << " threads";
  }
  // And the products are really cut into several tasks at these sizes.
  EXPECT_GT(refpar::task_count(64.0 * 62 * 62 * 288, 1 << 22, 64), 1);
}

TEST(RefProducts, TasksRunOnceEachAndErrorsReachTheCaller) {
  const ThreadsGuard guard;
  for (int n : {1, 2, 7}) {
    refpar::set_threads(n);
    std::vector<std::atomic<int>> runs(100);
    refpar::for_each_task(100, [&](int64_t i) { runs[static_cast<size_t>(i)]++; });
    for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << i << " on " << n;
    EXPECT_THROW(refpar::for_each_task(10,
                                       [](int64_t i) {
                                         if (i == 6) throw std::runtime_error("task 6");
                                       }),
                 std::runtime_error);
  }
  EXPECT_EQ(refpar::task_count(10, 100, 8), 1);
  EXPECT_EQ(refpar::task_count(1000, 100, 8), 8);
  EXPECT_EQ(refpar::task_count(450, 100, 8), 4);
}

// k == 0 gives beta * C; empty m or n leave C alone.
TEST(RefProducts, GemmEdgeSizes) {
  std::vector<double> c{1, 2, 3, 4};
  refgemm::gemm(false, false, 2, 2, 0, nullptr, 1, nullptr, 2, 0.5, c.data(), 2);
  EXPECT_EQ(c, (std::vector<double>{0.5, 1, 1.5, 2}));
  refgemm::gemm(false, false, 2, 2, 0, nullptr, 1, nullptr, 2, 0.0, c.data(), 2);
  EXPECT_EQ(c, (std::vector<double>{0, 0, 0, 0}));
  c = {7, 7, 7, 7};
  refgemm::gemm(false, false, 0, 2, 3, nullptr, 3, nullptr, 2, 0.0, c.data(), 2);
  EXPECT_EQ(c, (std::vector<double>{7, 7, 7, 7}));
  // Transposed operands: A stored [k, m], B stored [n, k].
  const std::vector<double> a{1, 2, 3, 4, 5, 6};  // A^T = [[1, 3, 5], [2, 4, 6]]
  const std::vector<double> b{1, 0, 1, 0, 1, 1};  // B^T = [[1, 0], [0, 1], [1, 1]]
  refgemm::gemm(true, true, 2, 2, 3, a.data(), 2, b.data(), 3, 0.0, c.data(), 2);
  EXPECT_EQ(c, (std::vector<double>{6, 8, 8, 10}));
}

}  // namespace
}  // namespace crucible
