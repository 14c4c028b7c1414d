// ATen's rules that the catalog (src/ops) and backends' kernels share: the int4 weight
// packing layout of ATen's CPU int4 kernels. Written once
// here; the catalog's meta functions and references and the cpu kernels call the same code.
#pragma once

#include <cstdint>

namespace crucible::quantized {

// The number of output columns ATen's CPU int4 kernels pack together: Vectorized<float>::size()
// * 4 on an AVX-512 build of ATen (the layout `_convert_weight_to_int4pack_for_cpu` writes and
// `_weight_int4pack_mm_for_cpu` reads there).
constexpr int64_t kInt4BlockN = 64;

// The byte of the packed [N, K/2] uint8 weight that holds the 4-bit value of (n, k), and
// whether it is the high nibble.
struct NibblePlace {
  int64_t byte;
  bool high;
};

NibblePlace int4_place(int64_t n, int64_t k, int64_t N, int64_t K);

}  // namespace crucible::quantized
