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
// Box-Muller on pairs of uniforms (the radius from a uniform in (0, 1]), computed in double
// and rounded once. Bernoulli draws compare a 32-bit uniform u = w / 2^32 with the
// probability: u < p (p = 0 never, p = 1 always). randperm is a Fisher-Yates shuffle with
// unbiased integer draws (Rng::integer) in a stream of its own per call.
#include "backends/cpu/random.h"

#include <array>
#include <cmath>
#include <cstring>
#include <mutex>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "crucible/core/error.h"
#include "crucible/core/rng.h"

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

// Uniforms: the top 24 bits of a word in [0, 1); 53 bits of two words in [0, 1).
inline double u24(uint32_t w) { return static_cast<double>(w >> 8) * 0x1p-24; }
inline double u32(uint32_t w) { return static_cast<double>(w) * 0x1p-32; }
inline double u53(uint32_t a, uint32_t b) {
  return static_cast<double>(((static_cast<uint64_t>(a) << 32) | b) >> 11) * 0x1p-53;
}

// The meta layer's output 0 as a fresh tensor.
Tensor fresh_output(const Values& meta, size_t k = 0) {
  const Tensor& m = meta.at(k).tensor();
  return Tensor::uninitialized_strided(m.shape(), m.strides(), m.dtype());
}

template <typename T>
T to_t(double v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    return static_cast<T>(v);
  else
    return T(v);
}

// ---- rand, randn -----------------------------------------------------------------------------

// rand in a dtype whose grid has `digits` bits (one word per element).
template <typename T, int kDigits>
void rand_words(const Tensor& out) {
  T* o = out.data<T>();
  for_blocks<4>(
      "cpu.rand", out.numel(), [&](int64_t i, const std::array<uint32_t, 4>& r, int64_t c) {
        for (int64_t l = 0; l < c; ++l)
          o[i + l] =
              to_t<T>(static_cast<double>(r[l] >> (32 - kDigits)) * std::ldexp(1.0, -kDigits));
      });
}

Values rand_kernel(const OpDef& op, const Values& a) {
  const Tensor out = fresh_output(op.run_meta(a));
  switch (out.dtype()) {
    case DType::Float32:
      rand_words<float, 24>(out);
      break;
    case DType::Float16:
      rand_words<Half, 11>(out);
      break;
    case DType::BFloat16:
      rand_words<BFloat16, 8>(out);
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
  return {out};
}

// Box-Muller: two standard normals from u1 in (0, 1] and u2 in [0, 1).
inline void box_muller(double u1, double u2, double& z0, double& z1) {
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * std::numbers::pi * u2;
  z0 = r * std::cos(theta);
  z1 = r * std::sin(theta);
}

template <typename T>
void randn_words(const Tensor& out) {
  T* o = out.data<T>();
  for_blocks<4>("cpu.randn", out.numel(),
                [&](int64_t i, const std::array<uint32_t, 4>& r, int64_t c) {
                  double z[4];
                  box_muller(u24(r[0]) + 0x1p-24, u24(r[1]), z[0], z[1]);
                  if (c > 2) box_muller(u24(r[2]) + 0x1p-24, u24(r[3]), z[2], z[3]);
                  for (int64_t l = 0; l < c; ++l) o[i + l] = to_t<T>(z[l]);
                });
}

Values randn_kernel(const OpDef& op, const Values& a) {
  const Tensor out = fresh_output(op.run_meta(a));
  switch (out.dtype()) {
    case DType::Float32:
      randn_words<float>(out);
      break;
    case DType::Float16:
      randn_words<Half>(out);
      break;
    case DType::BFloat16:
      randn_words<BFloat16>(out);
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
  return {out};
}

// ---- randperm --------------------------------------------------------------------------------

Values randperm_kernel(const OpDef& op, const Values& a) {
  const Tensor out = fresh_output(op.run_meta(a));
  const int64_t n = a.at(0).to_int();
  const Draws d("cpu.randperm", 1);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  Rng rng(d.seed(), d.call_stream());
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(rng.integer(0, i))]);
  if (out.dtype() == DType::Int64) {
    std::memcpy(out.data_ptr(), perm.data(), perm.size() * sizeof(int64_t));
  } else {
    auto* o = static_cast<char*>(out.data_ptr());
    const size_t item = out.itemsize();
    for (int64_t i = 0; i < n; ++i)
      store_from_int(o + static_cast<size_t>(i) * item, out.dtype(), perm[static_cast<size_t>(i)]);
  }
  return {out};
}

// ---- bernoulli -------------------------------------------------------------------------------

// Writes 0/1 draws into contiguous `out` (any dtype): element i is one when its uniform is
// below p(i).
template <typename P>
void bernoulli_fill(const char* op, const Tensor& out, P p) {
  const size_t item = out.itemsize();
  unsigned char one[16] = {};
  store_from_int(one, out.dtype(), 1);
  auto* o = static_cast<unsigned char*>(out.data_ptr());
  for_blocks<4>(op, out.numel(), [&](int64_t i, const std::array<uint32_t, 4>& r, int64_t c) {
    for (int64_t l = 0; l < c; ++l) {
      unsigned char* dst = o + static_cast<size_t>(i + l) * item;
      if (u32(r[l]) < p(i + l))
        std::memcpy(dst, one, item);
      else
        std::memset(dst, 0, item);
    }
  });
}

Values bernoulli_p_kernel(const OpDef& op, const Values& a) {
  const Tensor out = fresh_output(op.run_meta(a));
  const double p = a.at(1).to_double();
  bernoulli_fill("cpu.bernoulli.p", out, [p](int64_t) { return p; });
  return {out};
}

Values bernoulli_kernel(const OpDef& op, const Values& a) {
  const Tensor out = fresh_output(op.run_meta(a));
  const Tensor probs = a.at(0).tensor().to(DType::Float64);
  const double* p = probs.data<double>();
  for (int64_t i = 0; i < probs.numel(); ++i)
    if (!(p[i] >= 0 && p[i] <= 1))
      op_error(
          "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
          "message be improved?  If so, please report an enhancement request to PyTorch.)");
  bernoulli_fill("cpu.bernoulli", out, [p](int64_t i) { return p[i]; });
  return {out};
}

// ---- native_dropout --------------------------------------------------------------------------

// Training mode on contiguous x: mask[i] = u < keep, out[i] = (x[i] * mask[i]) * scale.
template <typename T, typename C>
void dropout_typed(const Tensor& x, const Tensor& out, const Tensor& mask, double keep,
                   double scale) {
  const T* xi = x.data<T>();
  T* o = out.data<T>();
  auto* m = mask.data<uint8_t>();
  const C s = static_cast<C>(scale);
  for_blocks<4>("cpu.native_dropout", x.numel(),
                [&](int64_t i, const std::array<uint32_t, 4>& r, int64_t c) {
                  for (int64_t l = 0; l < c; ++l) {
                    const bool kept = u32(r[l]) < keep;
                    m[i + l] = kept ? 1 : 0;
                    const C v = static_cast<C>(xi[i + l]) * static_cast<C>(kept ? 1 : 0);
                    o[i + l] = to_t<T>(v * s);
                  }
                });
}

Values native_dropout_kernel(const OpDef& op, const Values& a) {
  const Values meta = op.run_meta(a);
  const Tensor& input = a.at(0).tensor();
  Tensor out = fresh_output(meta, 0);
  Tensor mask = fresh_output(meta, 1);
  if (input.numel() == 0) return {out, mask};
  const bool train = a.at(2).is_none() || a.at(2).to_bool();
  if (!train) {
    out.copy_from(input);
    mask.fill(1);
    return {out, mask};
  }
  const double p = a.at(1).to_double();
  const double keep = 1.0 - p;
  const double scale = keep == 0 ? 0.0 : 1.0 / keep;
  // Contiguous operands; strided outputs (the input's layout) are written from them.
  const Tensor x = input.contiguous();
  const bool direct = out.is_contiguous() && mask.is_contiguous();
  const Tensor o = direct ? out : Tensor::uninitialized(input.shape(), input.dtype());
  const Tensor m = direct ? mask : Tensor::uninitialized(input.shape(), DType::Bool);
  switch (input.dtype()) {
    case DType::Float32:
      dropout_typed<float, float>(x, o, m, keep, scale);
      break;
    case DType::Float64:
      dropout_typed<double, double>(x, o, m, keep, scale);
      break;
    case DType::Float16:
      dropout_typed<Half, float>(x, o, m, keep, scale);
      break;
    case DType::BFloat16:
      dropout_typed<BFloat16, float>(x, o, m, keep, scale);
      break;
    default:
      unsupported("the cpu backend's native_dropout does not train on " +
                  std::string(dtype_code(input.dtype())));
  }
  if (!direct) {
    out.copy_from(o);
    mask.copy_from(m);
  }
  return {out, mask};
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
  t.add("aten.rand.default", {rand_kernel, nullptr, floating});
  t.add("aten.randn.default", {randn_kernel, nullptr, floating});
  t.add("aten.randperm.default", {randperm_kernel, nullptr, numeric});
  t.add("aten.bernoulli.p", {bernoulli_p_kernel, nullptr, numeric});
  // Integral probabilities raise (the meta layer says so).
  t.add("aten.bernoulli.default", {bernoulli_kernel, nullptr, numeric});
  // Eval mode copies any dtype; training on a non-floating input raises in the meta layer.
  t.add("aten.native_dropout.default", {native_dropout_kernel, nullptr, numeric});
}

}  // namespace crucible::cpu
