// ATen's rules that the catalog (src/ops) and backends' kernels share: the source coordinates of
// grid sampling (GridSampler.h's grid_sampler_compute_source_index_set_grad and its helpers) and
// the bicubic weights. Written once here; the catalog's references and the cpu kernels call the
// same code. These run once per grid point, so they are inline.
#pragma once

#include <cmath>
#include <cstdint>

namespace crucible::grid {

enum Interp : int64_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

// A source coordinate and its derivative with respect to the grid coordinate.
struct Coord {
  double v;     // source coordinate
  double grad;  // d v / d grid coordinate
};

// A grid coordinate in [-1, 1] as a source coordinate along a dim of `size`: align_corners maps
// -1 and 1 to the centres of the corner pixels, otherwise to their outer edges.
inline Coord unnormalize(double c, int64_t size, bool align) {
  if (align)
    return {(c + 1) / 2 * static_cast<double>(size - 1), static_cast<double>(size - 1) / 2};
  return {((c + 1) * static_cast<double>(size) - 1) / 2, static_cast<double>(size) / 2};
}

// Clipped to [0, size - 1]; the derivative is 0 where clipped.
inline Coord clip(Coord c, int64_t size) {
  const double hi = static_cast<double>(size - 1);
  if (c.v <= 0) return {0.0, 0.0};
  if (c.v >= hi) return {hi, 0.0};
  return c;
}

// Reflection about twice_low / 2 and twice_high / 2; the derivative flips with each reflection.
// Only the parity of the number of flips matters: it is taken in double (the count may exceed
// int64's range); a non-finite count (NaN or infinite input) counts as even.
inline Coord reflect(Coord c, double twice_low, double twice_high) {
  if (twice_low == twice_high) return {0.0, 0.0};
  double g = c.grad;
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  double in = c.v - lo;
  if (in < 0) {
    g = -g;
    in = -in;
  }
  const double extra = std::fmod(in, span);
  const double flips = std::floor(in / span);
  if (!std::isfinite(flips) || std::fmod(flips, 2.0) == 0) return {extra + lo, g};
  return {span - extra + lo, -g};
}

// The padding mode applied to a source coordinate: border clips, reflection reflects about the
// pixel edges (align_corners=False: -0.5 and size - 0.5; True: the centres 0 and size - 1) and
// clips; zeros leaves it (out-of-range taps read 0).
inline Coord apply_padding(Coord c, int64_t size, int64_t padding, bool align) {
  if (padding == kBorder) return clip(c, size);
  if (padding == kReflection) {
    const auto s = static_cast<double>(size);
    c = align ? reflect(c, 0, 2 * (s - 1)) : reflect(c, -1, 2 * s - 1);
    return clip(c, size);
  }
  return c;
}

// The bicubic weights (cubic convolution, A = -0.75) of the four taps floor(v) - 1 .. floor(v) + 2
// at fraction t = v - floor(v), and their derivatives with respect to t.
struct CubicWeights {
  double w[4], dw[4];
};

inline CubicWeights cubic_weights(double t) {
  constexpr double a = -0.75;
  auto cc1 = [](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto cc2 = [](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  auto dcc1 = [](double x) { return 3 * (a + 2) * x * x - 2 * (a + 3) * x; };
  auto dcc2 = [](double x) { return 3 * a * x * x - 10 * a * x + 8 * a; };
  return {{cc2(t + 1), cc1(t), cc1(1 - t), cc2(2 - t)},
          {dcc2(t + 1), dcc1(t), -dcc1(1 - t), -dcc2(2 - t)}};
}

}  // namespace crucible::grid
