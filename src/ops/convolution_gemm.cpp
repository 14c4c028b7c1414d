// The floating convolutions of the reference as f64 matrix products: for each batch element n
// and group g, the columns col[(cx_local, k), y] = X[n, g * cx/g + cx_local, y * st - pd + k * dl]
// (0 outside X) give Y[n, g] = W[g] @ col (gather), col = W[g]^T @ Y[n, g] folded back into X
// (scatter) and W[g] = sum_n Y[n, g] @ col^T (weight, summed over n in order). The products are
// refgemm's (one thread per block of output elements); unfolding and folding are split by rows
// and by X channels, so every element is computed by one thread in a fixed order. The columns of
// an image larger than kColElements are made a band of Y rows at a time (one [128, 640, 959]
// f64 image's 3x3 columns were 5.7 GB); images within it are one band, as they always were.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ops/convolution_internal.h"
#include "ops/ref_gemm.h"
#include "ops/ref_parallel.h"

namespace crucible::conv {
namespace {

constexpr double kCopyGrain = 1 << 18;              // elements per unfolding / folding task
constexpr int64_t kColElements = int64_t{1} << 25;  // 256 MiB of f64 columns at most

struct Dims {
  int64_t cxg, cyg, xsp, ysp, kvol, rows;  // rows = cxg * kvol (col's rows)
};

Dims dims_of(const Geo& q) {
  Dims d{};
  d.cxg = q.cx / q.g;
  d.cyg = q.cy / q.g;
  d.xsp = q.xs[0] * q.xs[1] * q.xs[2];
  d.ysp = q.ys[0] * q.ys[1] * q.ys[2];
  d.kvol = q.ks[0] * q.ks[1] * q.ks[2];
  d.rows = d.cxg * d.kvol;
  return d;
}

// A band of Y rows (yd, yh) = [first, first + count) of the ys[0] * ys[1] rows.
struct Band {
  int64_t first = 0, count = 0;
  int64_t width(const Geo& q) const { return count * q.ys[2]; }  // its Y positions
  int64_t start(const Geo& q) const { return first * q.ys[2]; }  // its first Y position
};

// The bands the columns are made in: every row at once when they fit kColElements.
std::vector<Band> bands_of(const Geo& q, const Dims& d) {
  const int64_t rows = q.ys[0] * q.ys[1];
  const int64_t per_row = std::max<int64_t>(1, d.rows * q.ys[2]);
  const int64_t take = std::clamp<int64_t>(kColElements / per_row, 1, std::max<int64_t>(rows, 1));
  std::vector<Band> out;
  for (int64_t r = 0; r < rows; r += take) out.push_back({r, std::min(take, rows - r)});
  if (out.empty()) out.push_back({0, 0});
  return out;
}

// Calls fn(yr_offset, xr_offset, lo, hi) for every row (yd, yh) of Y positions of the band whose
// X row is in range, for the kernel offset (kd, kh, kw): Y positions [lo, hi) of the row (at
// yr_offset within the band) read X positions xr_offset + o * st[2]. Y rows out of range are
// reported with lo == hi == 0 (left to the caller).
template <typename Fn>
void for_each_row(const Geo& q, const Band& band, int64_t kd, int64_t kh, int64_t kw, Fn fn) {
  const int64_t s2 = q.st[2];
  const int64_t off = kw * q.dl[2] - q.pd[2];
  const int64_t lo = off >= 0 ? 0 : (-off + s2 - 1) / s2;
  const int64_t top = q.xs[2] - 1 - off;
  const int64_t hi = top < 0 ? 0 : std::min(q.ys[2], top / s2 + 1);
  for (int64_t t = band.first; t < band.first + band.count; ++t) {
    const int64_t yd = t / q.ys[1], yh = t % q.ys[1];
    const int64_t xd = yd * q.st[0] - q.pd[0] + kd * q.dl[0];
    const int64_t xh = yh * q.st[1] - q.pd[1] + kh * q.dl[1];
    const int64_t yrow = (t - band.first) * q.ys[2];
    if (xd < 0 || xd >= q.xs[0] || xh < 0 || xh >= q.xs[1] || lo >= hi) {
      fn(yrow, int64_t{0}, int64_t{0}, int64_t{0});
      continue;
    }
    fn(yrow, (xd * q.xs[1] + xh) * q.xs[2] + off, lo, hi);
  }
}

// col = the band's columns of the X channels [x, x + cxg * xsp): [rows, band width].
void unfold(const Geo& q, const Dims& d, const Band& band, const double* x, double* col) {
  const int64_t width = band.width(q);
  const int64_t tasks = refpar::task_count(static_cast<double>(d.rows * width), kCopyGrain, d.rows);
  const int64_t s2 = q.st[2];
  refpar::for_each_task(tasks, [&](int64_t t) {
    for (int64_t r = t * d.rows / tasks; r < (t + 1) * d.rows / tasks; ++r) {
      const int64_t cxl = r / d.kvol, k = r % d.kvol;
      const int64_t kd = k / (q.ks[1] * q.ks[2]), kh = k / q.ks[2] % q.ks[1], kw = k % q.ks[2];
      const double* xc = x + cxl * d.xsp;
      double* cr = col + r * width;
      for_each_row(q, band, kd, kh, kw, [&](int64_t yrow, int64_t xrow, int64_t lo, int64_t hi) {
        double* c = cr + yrow;
        std::fill(c, c + lo, 0.0);
        if (s2 == 1 && hi > lo)
          std::copy(xc + xrow + lo, xc + xrow + hi, c + lo);
        else
          for (int64_t o = lo; o < hi; ++o) c[o] = xc[xrow + o * s2];
        std::fill(c + std::max(hi, lo), c + q.ys[2], 0.0);
      });
    }
  });
}

// X channels [x, x + cxg * xsp) += the band's columns folded back (overwritten by the first
// band): each X element sums the columns that read it, band by band, in the order of the rows
// (kernel offsets) and then Y positions.
void fold(const Geo& q, const Dims& d, const Band& band, bool first, const double* col, double* x) {
  const int64_t width = band.width(q);
  const int64_t tasks = refpar::task_count(static_cast<double>(d.rows * width), kCopyGrain, d.cxg);
  const int64_t s2 = q.st[2];
  refpar::for_each_task(tasks, [&](int64_t t) {
    for (int64_t cxl = t * d.cxg / tasks; cxl < (t + 1) * d.cxg / tasks; ++cxl) {
      double* xc = x + cxl * d.xsp;
      if (first) std::fill(xc, xc + d.xsp, 0.0);
      for (int64_t k = 0; k < d.kvol; ++k) {
        const int64_t kd = k / (q.ks[1] * q.ks[2]), kh = k / q.ks[2] % q.ks[1], kw = k % q.ks[2];
        const double* cr = col + (cxl * d.kvol + k) * width;
        for_each_row(q, band, kd, kh, kw, [&](int64_t yrow, int64_t xrow, int64_t lo, int64_t hi) {
          const double* c = cr + yrow;
          for (int64_t o = lo; o < hi; ++o) xc[xrow + o * s2] += c[o];
        });
      }
    }
  });
}

}  // namespace

double* Columns::get(int64_t elements) {
  const auto n = static_cast<size_t>(elements);
  if (n > buf_.size()) {
    buf_ = opsutil::Doubles();   // the old block goes back before the larger one is taken
    buf_ = opsutil::Doubles(n);  // not zeroed: unfold and the products write all they read
  }
  return buf_.data();
}

void gather_f64(const Geo& q, const double* x, double* y, const double* w, Columns& cols) {
  const Dims d = dims_of(q);
  const std::vector<Band> bands = bands_of(q, d);
  double* col = cols.get(d.rows * bands[0].width(q));
  for (int64_t n = 0; n < q.n; ++n) {
    for (int64_t g = 0; g < q.g; ++g) {
      for (const Band& b : bands) {
        const int64_t width = b.width(q);
        unfold(q, d, b, x + (n * q.cx + g * d.cxg) * d.xsp, col);
        refgemm::gemm(false, false, d.cyg, width, d.rows, w + g * d.cyg * d.rows,
                      std::max<int64_t>(d.rows, 1), col, std::max<int64_t>(width, 1), 0.0,
                      y + (n * q.cy + g * d.cyg) * d.ysp + b.start(q), std::max<int64_t>(d.ysp, 1));
      }
    }
  }
}

void scatter_f64(const Geo& q, double* x, const double* y, const double* w, Columns& cols) {
  const Dims d = dims_of(q);
  const std::vector<Band> bands = bands_of(q, d);
  double* col = cols.get(d.rows * bands[0].width(q));
  for (int64_t n = 0; n < q.n; ++n) {
    for (int64_t g = 0; g < q.g; ++g) {
      for (size_t k = 0; k < bands.size(); ++k) {
        const Band& b = bands[k];
        const int64_t width = b.width(q);
        refgemm::gemm(true, false, d.rows, width, d.cyg, w + g * d.cyg * d.rows,
                      std::max<int64_t>(d.rows, 1), y + (n * q.cy + g * d.cyg) * d.ysp + b.start(q),
                      std::max<int64_t>(d.ysp, 1), 0.0, col, std::max<int64_t>(width, 1));
        fold(q, d, b, k == 0, col, x + (n * q.cx + g * d.cxg) * d.xsp);
      }
    }
  }
}

void weight_f64(const Geo& q, const double* x, const double* y, double* w, Columns& cols) {
  const Dims d = dims_of(q);
  const std::vector<Band> bands = bands_of(q, d);
  double* col = cols.get(d.rows * bands[0].width(q));
  for (int64_t n = 0; n < q.n; ++n) {
    for (int64_t g = 0; g < q.g; ++g) {
      for (const Band& b : bands) {
        const int64_t width = b.width(q);
        unfold(q, d, b, x + (n * q.cx + g * d.cxg) * d.xsp, col);
        refgemm::gemm(false, true, d.cyg, d.rows, width,
                      y + (n * q.cy + g * d.cyg) * d.ysp + b.start(q), std::max<int64_t>(d.ysp, 1),
                      col, std::max<int64_t>(width, 1), 1.0, w + g * d.cyg * d.rows,
                      std::max<int64_t>(d.rows, 1));
      }
    }
  }
}

}  // namespace crucible::conv
