// The `cpu` backend's random ops: rand, randn, randperm, bernoulli (p and tensor of
// probabilities) and native_dropout.
//
// The generator is a seed and a position (random.h): a call reserves the Philox blocks it needs
// from the position and advances it, so two calls after one seed draw different numbers, and
// the same seed replays the same calls exactly. Block b of a call is philox4x32 at counter
// (position + b, stream of the op) under the seed: a pure function of its index, so the blocks
// are drawn in parallel chunks and the result does not depend on the thread count.
//
// Uniforms take the top bits of one 32-bit word (two words for f64): rand's values lie on the
// dtype's grid k / 2^digits in [0, 1) (f32: 24 bits, f16: 11, bf16: 8, f64: 53). randn is
// Box-Muller on pairs of uniforms (the radius from a uniform in (0, 1]): in float for f32, f16
// and bf16 (a branch-free log and polynomial sine and cosine of the turn that vectorise,
// errors far below what a distribution test can see), in double for f64. f16 and bf16 values
// are drawn in f32 and rounded once by the pointwise engine. Bernoulli draws compare a word w
// with the probability: w / 2^32 < p, i.e. w < ceil(p 2^32) (p = 0 never, p = 1 always).
// randperm is a Fisher-Yates shuffle with unbiased integer draws (Lemire's multiply-shift with
// rejection) from a stream of its own per call.
#include "backends/cpu/random.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_engine.h"
#include "crucible/core/error.h"
#include "crucible/core/rng.h"
#include "crucible/ops/args.h"

// The draw loops are written to vectorise (branch-free math on the words of a chunk).
#pragma GCC optimize("O3")

namespace crucible::cpu {
namespace {

// The backend's generator (one per process, as ATen's default CPU generator).
struct Generator {
  std::mutex mu;
  uint64_t seed = 0;
  uint64_t position = 0;  // Philox blocks drawn since the seed
};

Generator& generator() {
  static Generator g;
  return g;
}

constexpr uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v); }
constexpr uint32_t hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

// The blocks one call draws: `blocks` Philox blocks reserved from the generator's position.
class Draws {
 public:
  Draws(const char* op, uint64_t blocks) : stream_(hash_str(op)) {
    Generator& g = generator();
    std::lock_guard<std::mutex> lock(g.mu);
    seed_ = g.seed;
    start_ = g.position;
    g.position += blocks;
  }
  std::array<uint32_t, 4> block(uint64_t b) const {
    const uint64_t c = start_ + b;
    return philox4x32({lo32(c), hi32(c), lo32(stream_), hi32(stream_)}, {lo32(seed_), hi32(seed_)});
  }
  uint64_t seed() const { return seed_; }
  // A stream id unique to this call (for draws whose count is not known in advance).
  uint64_t call_stream() const { return hash64(&start_, sizeof(start_), stream_); }

 private:
  uint64_t stream_;
  uint64_t seed_ = 0;
  uint64_t start_ = 0;
};

// Calls emit(i, block, count) for the elements [i, i + count) of n, kPer elements per block,
// over the pool; reserves the blocks from the generator first.
template <int kPer, typename Emit>
void for_blocks(const char* op, int64_t n, Emit emit) {
  const int64_t blocks = (n + kPer - 1) / kPer;
  const Draws d(op, static_cast<uint64_t>(blocks));
  parallel_for(0, blocks, 2048, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t i = b * kPer;
      emit(i, d.block(static_cast<uint64_t>(b)), std::min<int64_t>(kPer, n - i));
    }
  });
}

// Calls fn(i, words, count) for chunks [i, i + count) of n elements, `kWords` words per element
// (words[k] is the chunk's word k), over the pool; reserves the blocks from the generator
// first. The loops over a chunk's words vectorise, where a block at a time would not.
template <int kWords, typename Fn>
void for_words(const char* op, int64_t n, Fn fn) {
  constexpr int64_t kChunk = 1024;  // elements; a chunk starts on a block
  const int64_t blocks = (n * kWords + 3) / 4;
  const Draws d(op, static_cast<uint64_t>(blocks));
  parallel_for(0, (n + kChunk - 1) / kChunk, 16, [&](int64_t c0, int64_t c1) {
    alignas(64) uint32_t w[kChunk * kWords + 4];
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t i = c * kChunk, count = std::min(kChunk, n - i);
      const int64_t b0 = i * kWords / 4, nb = (count * kWords + 3) / 4;
      for (int64_t b = 0; b < nb; ++b) {
        const std::array<uint32_t, 4> r = d.block(static_cast<uint64_t>(b0 + b));
        std::memcpy(w + 4 * b, r.data(), sizeof(r));
      }
      fn(i, w, count);
    }
  });
}

// A uniform in [0, 1) from 53 bits of two words.
inline double u53(uint32_t a, uint32_t b) {
  return static_cast<double>(((static_cast<uint64_t>(a) << 32) | b) >> 11) * 0x1p-53;
}

// ---- rand, randn -----------------------------------------------------------------------------

// Box-Muller: two standard normals from u1 in (0, 1] and u2 in [0, 1).
inline void box_muller(double u1, double u2, double& z0, double& z1) {
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * std::numbers::pi * u2;
  z0 = r * std::cos(theta);
  z1 = r * std::sin(theta);
}

// a where c, else b, by bit masks (a select the loops vectorise with SSE2).
inline float select(bool c, float a, float b) {
  const int32_t m = -static_cast<int32_t>(c);
  return std::bit_cast<float>((std::bit_cast<int32_t>(a) & m) | (std::bit_cast<int32_t>(b) & ~m));
}

// log(x) for x in [2^-24, 1] (no zero, subnormal, inf or NaN): x = m 2^e with m in
// [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(f / (2 + f)) with f = m - 1 (a few ulp).
inline float log_unit(float x) {
  const int32_t bits = std::bit_cast<int32_t>(x);
  const float m0 = std::bit_cast<float>((bits & 0x007fffff) | 0x3f800000);  // [1, 2)
  const bool big = m0 > 1.41421356f;
  const float m = select(big, m0 * 0.5f, m0);
  const float e = static_cast<float>(((bits >> 23) & 0xff) - 127) + select(big, 1.0f, 0.0f);
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float p = 2.0f / 13.0f;
  p = p * z + 2.0f / 11.0f;
  p = p * z + 2.0f / 9.0f;
  p = p * z + 2.0f / 7.0f;
  p = p * z + 2.0f / 5.0f;
  p = p * z + 2.0f / 3.0f;
  return e * 0.693147180559945f + (2.0f * s + s * z * p);
}

// sin and cos of 2 pi u for u in [0, 1) in float, branch-free (errors below 4e-7): a quarter
// turn q = floor(4u), the rest as pi/4 + phi with |phi| <= pi/4 (Taylor to phi^7 and phi^8).
inline void sincos_turn(float u, float& s, float& c) {
  const float t = u * 4.0f;
  const int32_t q = static_cast<int32_t>(t);
  const float phi = (t - static_cast<float>(q) - 0.5f) * 1.57079632679489662f;
  const float p2 = phi * phi;
  const float sp = phi * (1.0f - p2 / 6.0f * (1.0f - p2 / 20.0f * (1.0f - p2 / 42.0f)));
  const float cp =
      1.0f - p2 / 2.0f * (1.0f - p2 / 12.0f * (1.0f - p2 / 30.0f * (1.0f - p2 / 56.0f)));
  const float r2 = 0.70710678118654752f;
  const float s0 = (sp + cp) * r2, c0 = (cp - sp) * r2;  // of pi/4 + phi
  // A quarter turn maps (s, c) to (c, -s); two flip both signs.
  const bool odd = (q & 1) != 0;
  const float s1 = select(odd, c0, s0), c1 = select(odd, -s0, c0);
  const float sign = select((q & 2) != 0, -1.0f, 1.0f);
  s = sign * s1;
  c = sign * c1;
}

// sqrt(x) for x in [0, 34] by three Newton steps from the exponent-halving guess (relative
// error below 1e-7; x = 0 gives about 1e-20): arithmetic only, so the loop vectorises (libm's
// sqrtf sets errno and keeps the loop scalar).
inline float sqrt_newton(float x) {
  float y = std::bit_cast<float>(0x1fbd1df5 + (std::bit_cast<int32_t>(x) >> 1));
  y = 0.5f * (y + x / y);
  y = 0.5f * (y + x / y);
  return 0.5f * (y + x / y);
}

// Standard normals z[0, 2 pairs) from 2 pairs words: radius from w[p], angle from
// w[pairs + p]; z[p] = r cos, z[pairs + p] = r sin.
void normals_f32(const uint32_t* w, float* z, int64_t pairs) {
  for (int64_t p = 0; p < pairs; ++p) {
    const float u1 = static_cast<float>(static_cast<int32_t>(w[p] >> 8) + 1) * 0x1p-24f;
    const float u2 = static_cast<float>(static_cast<int32_t>(w[pairs + p] >> 8)) * 0x1p-24f;
    const float rad = sqrt_newton(-2.0f * log_unit(u1));
    float sn, cs;
    sincos_turn(u2, sn, cs);
    z[p] = rad * cs;
    z[pairs + p] = rad * sn;
  }
}

// randn in f32: Box-Muller in float on 24-bit uniforms (the radius's uniform in (0, 1]).
void randn_f32(float* o, int64_t n) {
  for_words<1>("cpu.randn", n, [&](int64_t i, const uint32_t* w, int64_t count) {
    alignas(64) float z[1024 + 2];
    const int64_t pairs = (count + 1) / 2;
    normals_f32(w, z, pairs);
    std::memcpy(o + i, z, static_cast<size_t>(count) * sizeof(float));
  });
}

// Draws f32 values with `fill` and rounds them once into `out` (f16, bf16) with the
// pointwise engine's vectorised conversion.
template <typename Fill>
void through_f32(const Tensor& out, Fill fill) {
  const Tensor tmp = Tensor::uninitialized(out.shape(), DType::Float32);
  fill(tmp.data<float>(), tmp.numel());
  const Tensor ins[] = {tmp};
  pw_run(PwOp::Identity, ins, out, compute_for(DType::Float32), PwParams{});
}

// rand on the grid of a dtype with `kDigits` significand bits, as f32 values (exact in it).
template <int kDigits>
void grid_values(const uint32_t* w, float* o, int64_t n) {
  for (int64_t k = 0; k < n; ++k)
    o[k] =
        static_cast<float>(static_cast<int32_t>(w[k] >> (32 - kDigits))) * (1.0f / (1 << kDigits));
}

template <int kDigits>
void rand_grid(float* o, int64_t n) {
  for_words<1>("cpu.rand", n, [&](int64_t i, const uint32_t* w, int64_t count) {
    grid_values<kDigits>(w, o + i, count);
  });
}

void rand_kernel(const OpDef&, const Args&, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  if (out.numel() == 0) return;
  switch (out.dtype()) {
    case DType::Float32:
      rand_grid<24>(out.data<float>(), out.numel());
      break;
    case DType::Float16:
      through_f32(out, rand_grid<11>);
      break;
    case DType::BFloat16:
      through_f32(out, rand_grid<8>);
      break;
    case DType::Float64: {
      double* o = out.data<double>();
      for_blocks<2>("cpu.rand", out.numel(),
                    [&](int64_t i, const std::array<uint32_t, 4>& r, int64_t c) {
                      o[i] = u53(r[0], r[1]);
                      if (c > 1) o[i + 1] = u53(r[2], r[3]);
                    });
      break;
    }
    default:
      unsupported("the cpu backend's rand does not draw " + std::string(dtype_code(out.dtype())));
  }
}

void randn_kernel(const OpDef&, const Args&, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  if (out.numel() == 0) return;
  switch (out.dtype()) {
    case DType::Float32:
      randn_f32(out.data<float>(), out.numel());
      break;
    case DType::Float16:
    case DType::BFloat16:
      through_f32(out, randn_f32);
      break;
    case DType::Float64: {
      double* o = out.data<double>();
      for_blocks<2>("cpu.randn", out.numel(),
                    [&](int64_t i, const std::array<uint32_t, 4>& r, int64_t c) {
                      double z0, z1;
                      box_muller(u53(r[0], r[1]) + 0x1p-53, u53(r[2], r[3]), z0, z1);
                      o[i] = z0;
                      if (c > 1) o[i + 1] = z1;
                    });
      break;
    }
    default:
      unsupported("the cpu backend's randn does not draw " + std::string(dtype_code(out.dtype())));
  }
}

// ---- randperm --------------------------------------------------------------------------------

__extension__ typedef unsigned __int128 U128;

// Uniform in [0, range) (range >= 1): Lemire's multiply-shift, rejecting the few draws that
// would bias it.
inline uint64_t below(Rng& rng, uint64_t range) {
  U128 m = static_cast<U128>(rng.next_u64()) * range;
  auto low = static_cast<uint64_t>(m);
  if (low < range) {
    const uint64_t reject = (0 - range) % range;
    while (low < reject) {
      m = static_cast<U128>(rng.next_u64()) * range;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

// Fisher-Yates: for i = n - 1 down to 1, swap slot i with a uniform slot j in [0, i]. The j's
// do not depend on the permutation, so they are drawn a batch ahead and their slots
// prefetched (the swaps of a large permutation are cache misses).
void randperm_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const int64_t n = a.integer("n");
  const Draws d("cpu.randperm", 1);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  Rng rng(d.seed(), d.call_stream());
  constexpr int64_t kAhead = 32;
  int64_t js[kAhead];
  for (int64_t i = n - 1; i > 0; i -= kAhead) {
    const int64_t count = std::min(kAhead, i);
    for (int64_t k = 0; k < count; ++k) {
      js[k] = static_cast<int64_t>(below(rng, static_cast<uint64_t>(i - k + 1)));
      __builtin_prefetch(perm.data() + js[k], 1);
    }
    for (int64_t k = 0; k < count; ++k)
      std::swap(perm[static_cast<size_t>(i - k)], perm[static_cast<size_t>(js[k])]);
  }
  if (perm.empty()) return;  // randperm(0)
  if (out.dtype() == DType::Int64) {
    std::memcpy(out.data_ptr(), perm.data(), perm.size() * sizeof(int64_t));
  } else {
    auto* o = static_cast<char*>(out.data_ptr());
    const size_t item = out.itemsize();
    for (int64_t i = 0; i < n; ++i)
      store_from_int(o + static_cast<size_t>(i) * item, out.dtype(), perm[static_cast<size_t>(i)]);
  }
}

// ---- bernoulli -------------------------------------------------------------------------------

// u = w / 2^32 < p  <=>  w < ceil(p * 2^32) (exact: p * 2^32 is a double times a power of 2).
inline uint64_t threshold_of(double p) { return static_cast<uint64_t>(std::ceil(p * 0x1p32)); }

// Writes 0/1 draws into n contiguous elements whose representation is U (the dtype's bits of
// one: `one`): element i is one when its word is below thr(i).
template <typename U, typename Thr>
void bernoulli_chunk(const uint32_t* w, U* o, int64_t i, int64_t n, U one, Thr thr) {
  for (int64_t k = 0; k < n; ++k) o[k] = w[k] < thr(i + k) ? one : U{0};
}

template <typename U, typename Thr>
void bernoulli_bits(const char* op, U* o, int64_t n, U one, Thr thr) {
  for_words<1>(op, n, [&](int64_t i, const uint32_t* w, int64_t count) {
    bernoulli_chunk(w, o + i, i, count, one, thr);
  });
}

template <typename Thr>
void bernoulli_fill(const char* op, const Tensor& out, Thr thr) {
  unsigned char one[8] = {};
  store_from_int(one, out.dtype(), 1);
  auto run = [&](auto tag) {
    using U = decltype(tag);
    U bits;
    std::memcpy(&bits, one, sizeof(U));
    bernoulli_bits(op, static_cast<U*>(out.data_ptr()), out.numel(), bits, thr);
  };
  switch (out.itemsize()) {
    case 1:
      return run(uint8_t{});
    case 2:
      return run(uint16_t{});
    case 4:
      return run(uint32_t{});
    case 8:
      return run(uint64_t{});
    default:
      unsupported("the cpu backend's bernoulli does not write " +
                  std::string(dtype_code(out.dtype())));
  }
}

void bernoulli_p_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const uint64_t thr = threshold_of(a.real("p"));
  bernoulli_fill("cpu.bernoulli.p", out, [thr](int64_t) { return thr; });
}

// A contiguous copy of floating `t` in f32 (f16, bf16, f32) or f64, by the pointwise engine.
Tensor contiguous_wide(const Tensor& t) {
  const DType wide = t.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  if (t.dtype() == wide && t.is_contiguous()) return t;
  const Tensor out = Tensor::uninitialized(t.shape(), wide);
  if (out.numel() == 0) return out;
  const Tensor ins[] = {t};
  pw_run(PwOp::Identity, ins, out, compute_for(t.dtype()), PwParams{});
  return out;
}

template <typename P>
void bernoulli_probs(const Tensor& out, const P* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!(p[i] >= 0 && p[i] <= 1))
      op_error(
          "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
          "message be improved?  If so, please report an enhancement request to PyTorch.)");
  bernoulli_fill("cpu.bernoulli", out,
                 [p](int64_t i) { return threshold_of(static_cast<double>(p[i])); });
}

void bernoulli_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor probs = contiguous_wide(a.tensor("self"));
  if (probs.dtype() == DType::Float64)
    bernoulli_probs(out, probs.data<double>(), probs.numel());
  else
    bernoulli_probs(out, probs.data<float>(), probs.numel());
}

// ---- native_dropout --------------------------------------------------------------------------

// Training mode on n contiguous elements (o may be x): m[i] = (w < thr), o[i] = (x[i] * m[i])
// * scale.
template <typename T>
void dropout_chunk(const uint32_t* w, const T* x, T* o, uint8_t* m, int64_t n, uint64_t thr,
                   T scale) {
  for (int64_t k = 0; k < n; ++k) {
    const bool kept = w[k] < thr;
    m[k] = kept ? 1 : 0;
    o[k] = (x[k] * static_cast<T>(kept ? 1 : 0)) * scale;
  }
}

template <typename T>
void dropout_rows(const T* x, T* o, uint8_t* m, int64_t n, uint64_t thr, T scale) {
  for_words<1>("cpu.native_dropout", n, [&](int64_t i, const uint32_t* w, int64_t count) {
    dropout_chunk(w, x + i, o + i, m + i, count, thr, scale);
  });
}

void native_dropout_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& input = a.tensor("input");
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& mask = outputs.at(1).tensor();
  if (input.numel() == 0) return;
  const bool train = !a.given("train") || a.flag("train");
  if (!train) {
    out.copy_from(input);
    mask.fill(1);
    return;
  }
  const double keep = 1.0 - a.real("p");
  const double scale = keep == 0 ? 0.0 : 1.0 / keep;
  const uint64_t thr = threshold_of(keep);
  // Computed in f32 (f16, bf16, f32) or f64 over a contiguous copy, rounded once into `out`
  // (any layout) by the pointwise engine; the mask is written directly when contiguous.
  const Tensor m = mask.is_contiguous() ? mask : Tensor::uninitialized(input.shape(), DType::Bool);
  const bool direct = out.is_contiguous() && input.is_contiguous() &&
                      (input.dtype() == DType::Float32 || input.dtype() == DType::Float64);
  const Tensor x = direct ? input : contiguous_wide(input);
  const Tensor o = direct ? out : Tensor::uninitialized(input.shape(), x.dtype());
  if (x.dtype() == DType::Float64)
    dropout_rows(x.data<double>(), o.data<double>(), m.data<uint8_t>(), x.numel(), thr, scale);
  else
    dropout_rows(x.data<float>(), o.data<float>(), m.data<uint8_t>(), x.numel(), thr,
                 static_cast<float>(scale));
  if (!direct) {
    const Tensor ins[] = {o};
    pw_run(PwOp::Identity, ins, out, compute_for(o.dtype()), PwParams{});
  }
  if (!mask.is_contiguous()) mask.copy_from(m);
}

}  // namespace

void seed_generator(uint64_t seed) {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  g.position = 0;
}

void register_random_kernels(KernelTable& t) {
  const std::vector<DType> floating = {DType::Float16, DType::BFloat16, DType::Float32,
                                       DType::Float64};
  const std::vector<DType> numeric = {
      DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
      DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  // rand, randn and randperm take no tensor: every call is theirs (the dtype comes from the
  // meta layer, which raises for the ones ATen refuses).
  t.add("aten.rand.default", {.dtypes = floating, .run_into = rand_kernel});
  t.add("aten.randn.default", {.dtypes = floating, .run_into = randn_kernel});
  t.add("aten.randperm.default", {.dtypes = numeric, .run_into = randperm_kernel});
  t.add("aten.bernoulli.p", {.dtypes = numeric, .run_into = bernoulli_p_kernel});
  // Integral probabilities raise (the meta layer says so).
  t.add("aten.bernoulli.default", {.dtypes = numeric, .run_into = bernoulli_kernel});
  // Eval mode copies any dtype; training on a non-floating input raises in the meta layer.
  t.add("aten.native_dropout.default", {.dtypes = numeric, .run_into = native_dropout_kernel});
}

}  // namespace crucible::cpu
