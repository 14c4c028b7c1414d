// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011) and the derived streams of uniform, normal and integer numbers.
#include "crucible/core/rng.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <tuple>
#include <utility>
#include <vector>

#include "core/rng_internal.h"
#include "crucible/core/error.h"
#include "crucible/core/tensor.h"

namespace crucible {

namespace {

uint64_t splitmix_finalise(uint64_t z) {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z;
}

}  // namespace

// Box-Muller: two independent standard normals (the cosine's, the sine's) from u1 in (0, 1]
// and u2 in [0, 1).
std::pair<double, double> rng_detail::box_muller(double u1, double u2) {
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * std::numbers::pi * u2;
  return {r * std::cos(theta), r * std::sin(theta)};
}

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) {
  rng_detail::philox_rounds(ctr[0], ctr[1], ctr[2], ctr[3], key[0], key[1]);
  return ctr;
}

Rng::Rng(uint64_t seed, uint64_t stream)
    : key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}, stream_(stream) {}

std::array<uint32_t, 4> Rng::next_block() {
  const std::array<uint32_t, 4> b =
      philox4x32({static_cast<uint32_t>(counter_), static_cast<uint32_t>(counter_ >> 32),
                  static_cast<uint32_t>(stream_), static_cast<uint32_t>(stream_ >> 32)},
                 key_);
  ++counter_;
  return b;
}

void Rng::refill() {
  block_ = next_block();
  used_ = 0;
}

uint32_t Rng::next_u32() {
  if (used_ == 4) refill();
  return block_[used_++];
}

uint64_t Rng::next_u64() {
  const uint64_t lo = next_u32();
  const uint64_t hi = next_u32();
  return (hi << 32) | lo;
}

double Rng::uniform() { return rng_detail::unit53(next_u64()); }

double Rng::normal() {
  if (have_spare_) {
    have_spare_ = false;
    return spare_;
  }
  const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
  const double u2 = uniform();
  const auto [c, s] = rng_detail::box_muller(u1, u2);
  spare_ = s;
  have_spare_ = true;
  return c;
}

void Rng::normals(double* out, size_t n) {
  size_t i = 0;
  if (i < n && have_spare_) out[i++] = normal();
  // A pair takes four words; one that starts inside a block ends inside the next, and so do all
  // after it: drawn one at a time.
  if (used_ != 4) {
    for (; i < n; ++i) out[i] = normal();
    return;
  }
  // Each pair as normal() draws it from a fresh block: u1 from words 0-1, u2 from words 2-3
  // (the block is used up at once: used_ stays 4).
  auto word = [](uint32_t lo, uint32_t hi) { return (static_cast<uint64_t>(hi) << 32) | lo; };
  for (; i + 2 <= n; i += 2) {
    const std::array<uint32_t, 4> b = next_block();
    std::tie(out[i], out[i + 1]) = rng_detail::box_muller(
        1.0 - rng_detail::unit53(word(b[0], b[1])), rng_detail::unit53(word(b[2], b[3])));
  }
  if (i < n) out[i] = normal();  // the last one keeps its pair's spare, as normal() does
}

void Rng::normals_to(void* out, DType t, size_t n) {
  char* raw = static_cast<char*>(out);
  const size_t width = itemsize(t);
  if ((t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16) && at_block_start()) {
    const size_t pairs = n / 2;
    rng_detail::draw_normal_pairs(key_, stream_, counter_, pairs, raw, t);
    counter_ += pairs;
    if (n % 2 != 0) store_from_double(raw + (n - 1) * width, t, normal());
    return;
  }
  constexpr size_t kChunk = size_t{1} << 14;
  std::vector<double> v(std::min(n, kChunk));
  for (size_t at = 0; at < n; at += kChunk) {
    const size_t len = std::min(kChunk, n - at);
    normals(v.data(), len);
    if (t == DType::Float64) {
      std::copy(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(len),
                reinterpret_cast<double*>(raw) + at);
    } else {
      for (size_t i = 0; i < len; ++i) store_from_double(raw + (at + i) * width, t, v[i]);
    }
  }
}

void Rng::skip_blocks(uint64_t n) {
  if (!at_block_start()) internal_error("Rng::skip_blocks: the stream is inside a block");
  counter_ += n;
}

int64_t Rng::integer(int64_t lo, int64_t hi) {
  if (lo > hi) {
    internal_error("Rng::integer: empty range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                   "]");
  }
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (span == 0) return static_cast<int64_t>(next_u64());  // the full 64-bit range
  // Reject the lowest partial copy of [0, span) so every residue is equally likely.
  const uint64_t threshold = (0 - span) % span;
  uint64_t r = next_u64();
  while (r < threshold) r = next_u64();
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + r % span);
}

uint64_t hash64(const void* data, size_t n, uint64_t seed) {
  uint64_t h = 0xCBF29CE484222325ull ^ splitmix_finalise(seed + 0x9E3779B97F4A7C15ull);
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001B3ull;
  }
  return splitmix_finalise(h);
}

uint64_t hash_str(const char* s, uint64_t seed) { return hash64(s, std::strlen(s), seed); }

}  // namespace crucible
