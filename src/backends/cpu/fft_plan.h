// One-dimensional complex FFTs of any length for the `cpu` backend's spectral ops (fft.cpp), in
// float (c64) or double (c128).
//
// A length whose prime factors are all at most kMaxRadix is transformed by a recursive
// mixed-radix decimation in time (radix 4, 2 and 3 butterflies written out, other primes by a
// generic O(p^2) butterfly); any other length by Bluestein's algorithm: the DFT as a chirp
// times a convolution with the conjugate chirp, computed with a power-of-two transform of at
// least 2n - 1 points. Twiddles and chirps are computed in double from exactly reduced angles
// (j mod n, k^2 mod 2n) and rounded once to the working precision. Complex products are
// written out (no library multiplication with its special-value recovery), so NaN and inf
// propagate as in a plain sum of products.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <vector>

namespace crucible::cpu {

template <typename R>
struct Cx {
  R re, im;
};

template <typename R>
inline Cx<R> operator+(Cx<R> a, Cx<R> b) {
  return {a.re + b.re, a.im + b.im};
}
template <typename R>
inline Cx<R> operator-(Cx<R> a, Cx<R> b) {
  return {a.re - b.re, a.im - b.im};
}
// A product with a twiddle: V is R, or a vector of R (one lane per transformed line).
template <typename V, typename R>
inline Cx<V> mul(Cx<V> a, Cx<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// Four f32 or two f64 lines transformed at once, lane by lane (GCC vector extensions).
template <typename R>
struct LanesOf;
template <>
struct LanesOf<float> {
  typedef float type __attribute__((vector_size(16)));
};
template <>
struct LanesOf<double> {
  typedef double type __attribute__((vector_size(16)));
};
template <typename R>
using Lanes = typename LanesOf<R>::type;
template <typename R>
constexpr int kLanes = static_cast<int>(16 / sizeof(R));

template <typename R>
class Fft1d {
 public:
  static constexpr int64_t kMaxRadix = 61;

  // The transform y[k] = sum_j x[j] exp(sign 2 pi i jk / n), sign -1 (forward) or +1.
  Fft1d(int64_t n, int sign) : n_(n), sign_(sign) {
    int64_t rest = n;
    for (int64_t p : {int64_t{4}, int64_t{2}, int64_t{3}})
      while (rest % p == 0) {
        factors_.push_back(p);
        rest /= p;
      }
    for (int64_t p = 5; p * p <= rest; p += 2)
      while (rest % p == 0) {
        factors_.push_back(p);
        rest /= p;
      }
    if (rest > 1) factors_.push_back(rest);
    int64_t largest = 1;
    for (int64_t p : factors_) largest = std::max(largest, p);
    if (largest > kMaxRadix) {
      setup_bluestein();
      return;
    }
    tw_.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) tw_[static_cast<size_t>(j)] = unit(j, n, 2.0);
  }

  int64_t size() const { return n_; }
  // Scratch elements run() needs.
  int64_t scratch_size() const { return bluestein_ ? 2 * m_ + sub_->scratch_size() : 0; }

  // y = the transform of x (both of length n, distinct); scratch of scratch_size(). V is R or
  // Lanes<R>.
  template <typename V>
  void run(const Cx<V>* x, Cx<V>* y, Cx<V>* scratch) const {
    if (n_ == 0) return;
    if (n_ == 1) {
      y[0] = x[0];
      return;
    }
    if (bluestein_) return run_bluestein(x, y, scratch);
    rec(x, 1, y, n_, 0, 1);
  }

 private:
  // exp(sign i pi * scale * j / n) with j reduced exactly.
  Cx<R> unit(int64_t j, int64_t n, double scale) const {
    const double a = scale * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
    return {static_cast<R>(std::cos(a)), static_cast<R>(sign_ * std::sin(a))};
  }

  // y (contiguous, length n) = DFT of x[0], x[xs], ...; W_n^j = tw_[j * ts].
  template <typename V>
  void rec(const Cx<V>* x, int64_t xs, Cx<V>* y, int64_t n, size_t fi, int64_t ts) const {
    const int64_t p = factors_[fi], m = n / p;
    if (m == 1) {
      for (int64_t r = 0; r < p; ++r) y[r] = x[r * xs];
    } else {
      for (int64_t r = 0; r < p; ++r) rec(x + r * xs, xs * p, y + r * m, m, fi + 1, ts * p);
    }
    combine(y, m, p, ts);
  }

  // For each k < m: t_r = y[r m + k] W_n^{rk}; y[q m + k] = sum_r t_r W_p^{rq}.
  template <typename V>
  void combine(Cx<V>* y, int64_t m, int64_t p, int64_t ts) const {
    const Cx<R>* w = tw_.data();
    if (p == 2) {
      for (int64_t k = 0; k < m; ++k) {
        const Cx<V> a = y[k], b = mul(y[m + k], w[k * ts]);
        y[k] = a + b;
        y[m + k] = a - b;
      }
    } else if (p == 4) {
      const R s = static_cast<R>(sign_);
      for (int64_t k = 0; k < m; ++k) {
        const Cx<V> t0 = y[k], t1 = mul(y[m + k], w[k * ts]), t2 = mul(y[2 * m + k], w[2 * k * ts]),
                    t3 = mul(y[3 * m + k], w[3 * k * ts]);
        const Cx<V> a0 = t0 + t2, a1 = t0 - t2, b0 = t1 + t3, d = t1 - t3;
        const Cx<V> b1 = {-s * d.im, s * d.re};  // (t1 - t3) * sign i
        y[k] = a0 + b0;
        y[m + k] = a1 + b1;
        y[2 * m + k] = a0 - b0;
        y[3 * m + k] = a1 - b1;
      }
    } else if (p == 3) {
      const R h = static_cast<R>(sign_ * 0.86602540378443864676);  // sign sqrt(3) / 2
      for (int64_t k = 0; k < m; ++k) {
        const Cx<V> t0 = y[k], t1 = mul(y[m + k], w[k * ts]), t2 = mul(y[2 * m + k], w[2 * k * ts]);
        const Cx<V> s = t1 + t2, d = t1 - t2;
        const Cx<V> m1 = {t0.re - R(0.5) * s.re, t0.im - R(0.5) * s.im};
        const Cx<V> m2 = {-h * d.im, h * d.re};
        y[k] = t0 + s;
        y[m + k] = m1 + m2;
        y[2 * m + k] = m1 - m2;
      }
    } else {
      std::vector<Cx<V>> t(static_cast<size_t>(p));
      const int64_t wp = m * ts;  // W_p^j = tw_[j * wp]
      for (int64_t k = 0; k < m; ++k) {
        for (int64_t r = 0; r < p; ++r) t[r] = r == 0 ? y[k] : mul(y[r * m + k], w[r * k * ts]);
        for (int64_t q = 0; q < p; ++q) {
          Cx<V> acc = t[0];
          for (int64_t r = 1; r < p; ++r) acc = acc + mul(t[r], w[((r * q) % p) * wp]);
          y[q * m + k] = acc;
        }
      }
    }
  }

  void setup_bluestein() {
    bluestein_ = true;
    m_ = 1;
    while (m_ < 2 * n_ - 1) m_ *= 2;
    sub_ = std::make_unique<Fft1d>(m_, -1);
    sub_inv_ = std::make_unique<Fft1d>(m_, +1);
    chirp_.resize(static_cast<size_t>(n_));
    const int64_t two_n = 2 * n_;
    int64_t k2 = 0;  // k^2 mod 2n, stepped by (k + 1)^2 = k^2 + 2k + 1
    for (int64_t k = 0; k < n_; ++k) {
      chirp_[static_cast<size_t>(k)] = unit(k2, n_, 1.0);  // exp(sign pi i k^2 / n)
      k2 = (k2 + 2 * k + 1) % two_n;
    }
    // b_l = conj(chirp_|l|), wrapped to length m; its transform, divided by m.
    std::vector<Cx<R>> b(static_cast<size_t>(m_), Cx<R>{0, 0});
    for (int64_t l = 0; l < n_; ++l) {
      const Cx<R> c = {chirp_[l].re, -chirp_[l].im};
      b[static_cast<size_t>(l)] = c;
      if (l > 0) b[static_cast<size_t>(m_ - l)] = c;
    }
    filter_.resize(static_cast<size_t>(m_));
    sub_->run(b.data(), filter_.data(), static_cast<Cx<R>*>(nullptr));
    const R inv = static_cast<R>(1.0 / static_cast<double>(m_));
    for (Cx<R>& f : filter_) f = {f.re * inv, f.im * inv};
  }

  template <typename V>
  void run_bluestein(const Cx<V>* x, Cx<V>* y, Cx<V>* scratch) const {
    Cx<V>* a = scratch;
    Cx<V>* big = scratch + m_;
    Cx<V>* sub_scratch = scratch + 2 * m_;
    for (int64_t k = 0; k < n_; ++k) a[k] = mul(x[k], chirp_[k]);
    for (int64_t k = n_; k < m_; ++k) a[k] = Cx<V>{};
    sub_->run(a, big, sub_scratch);
    for (int64_t k = 0; k < m_; ++k) big[k] = mul(big[k], filter_[k]);
    sub_inv_->run(big, a, sub_scratch);
    for (int64_t k = 0; k < n_; ++k) y[k] = mul(a[k], chirp_[k]);
  }

  int64_t n_;
  int sign_;
  std::vector<int64_t> factors_;
  std::vector<Cx<R>> tw_;
  bool bluestein_ = false;
  int64_t m_ = 0;
  std::unique_ptr<Fft1d> sub_, sub_inv_;
  std::vector<Cx<R>> chirp_, filter_;
};

}  // namespace crucible::cpu
