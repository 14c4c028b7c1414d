// The dequantizing loops of quantized_deq.h, written for the vectorizer: included once per ISA
// level inside a namespace of its own (quantized_deq_{avx512,avx2,portable}.cpp, at -O3).
// Each loop is branch-free per element so that it vectorizes whole.

// float8 -> f32 by bit arithmetic (no denormal f32 is formed: the fp8 subnormals are
// converted as integers and scaled): e4m3fn has no infinities and one NaN code per sign
// (0x7f), e5m2 is IEEE-like (exponent 31: infinity or NaN).
inline float e4m3_to_f32(uint8_t b) {
  const uint32_t v = b & 0x7Fu;
  const float normal = std::bit_cast<float>((v << 20) + (120u << 23));
  const float sub = static_cast<float>(static_cast<int32_t>(v & 7u)) * 0x1p-9f;
  uint32_t r = std::bit_cast<uint32_t>((v >> 3) == 0 ? sub : normal);
  r = v == 0x7Fu ? 0x7FC00000u : r;
  return std::bit_cast<float>(r | (static_cast<uint32_t>(b & 0x80u) << 24));
}

inline float e5m2_to_f32(uint8_t b) {
  const uint32_t v = b & 0x7Fu;
  const float normal = std::bit_cast<float>((v << 21) + (112u << 23));
  const float sub = static_cast<float>(static_cast<int32_t>(v & 3u)) * 0x1p-16f;
  uint32_t r = std::bit_cast<uint32_t>((v >> 2) == 0 ? sub : normal);
  r = (v >> 2) == 31 ? (0x7F800000u | ((v & 3u) << 21)) : r;
  return std::bit_cast<float>(r | (static_cast<uint32_t>(b & 0x80u) << 24));
}

void int8_scaled(const int8_t* w, int64_t len, float s, float* out) {
  for (int64_t q = 0; q < len; ++q) out[q] = static_cast<float>(w[q]) * s;
}

void fp8_scaled(const uint8_t* w, int64_t len, bool e4m3, float s, float* out) {
  if (e4m3)
    for (int64_t q = 0; q < len; ++q) out[q] = e4m3_to_f32(w[q]) * s;
  else
    for (int64_t q = 0; q < len; ++q) out[q] = e5m2_to_f32(w[q]) * s;
}

inline float nibble(uint32_t v, float s, float z) {
  return static_cast<float>(static_cast<int32_t>(v) - 8) * s + z;
}

void int4_block(const uint8_t* blk, int64_t width, int64_t q0, int64_t q1, const float* s,
                const float* z, float* out, int64_t ld) {
  const int64_t half = width / 2;
  for (int64_t q = q0; q < q1; ++q) {
    const uint8_t* row = blk + q * half;
    float* o = out + (q - q0) * ld;
    if (width == 64) {  // a full block: column d in the low nibbles, d + 32 in the high ones
      for (int64_t d = 0; d < 32; ++d) {
        o[d] = nibble(row[d] & 0xFu, s[d], z[d]);
        o[d + 32] = nibble(row[d] >> 4, s[d + 32], z[d + 32]);
      }
    } else {  // a partial block: columns 2d, 2d + 1 in one byte
      for (int64_t d = 0; d < half; ++d) {
        o[2 * d] = nibble(row[d] & 0xFu, s[2 * d], z[2 * d]);
        o[2 * d + 1] = nibble(row[d] >> 4, s[2 * d + 1], z[2 * d + 1]);
      }
    }
  }
}

template <typename T>
void affine(const T* q, int64_t len, double z, double s, float* out) {
  for (int64_t i = 0; i < len; ++i)
    out[i] = static_cast<float>((static_cast<double>(q[i]) - z) * s);
}

QuantDeqKernels make_kernels() {
  return {int8_scaled, fp8_scaled, int4_block, affine<uint8_t>, affine<int8_t>, affine<int32_t>};
}
