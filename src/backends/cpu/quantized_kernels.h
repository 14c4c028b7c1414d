// The `cpu` backend's quantized inner loops: the AVX-512 VNNI / AVX-512 versions live in
// quantized_avx512.cpp (called only where cpu_features() reports the instructions), the
// portable ones in quantized.cpp.
#pragma once

#include <cstdint>

namespace crucible::cpu {
class KernelTable;
// The family's kernels (kernel_table.cpp calls these): the products in quantized.cpp, the
// quantize and dequantize steps in quantized_qdq.cpp.
void register_quantized_kernels(KernelTable& t);
void register_quantize_kernels(KernelTable& t);
}  // namespace crucible::cpu

namespace crucible::cpu::qk {

// c[i * ldc + j] = sum_q a[i * k + q] * w[j * k + q] for int8 a [m, k] and w [n, k], exactly
// (int32, wrapping), with vpdpbusd.
void int8_gemm_nt_vnni(int64_t m, int64_t n, int64_t k, const int8_t* a, const int8_t* w,
                       int32_t* c, int64_t ldc);

// q[i] = clamp(round_half_even(x[i] / scale + zp), qmin, qmax) as int8 (NaN -> 0, clamped),
// x / scale in double: the catalog's definition, eight elements at a time.
void quantize_int8_avx512(const float* x, int64_t n, double scale, double zp, double qmin,
                          double qmax, int8_t* q);

// The float8 code of a double that is not NaN and within the format's range (the float8
// quantize clamps first), rounded to nearest, ties to even: fp8e4m3fn_from_double's and
// fp8e5m2_from_double's result, without their generic encoder.
uint8_t e4m3_from_double(double v);
uint8_t e5m2_from_double(double v);

}  // namespace crucible::cpu::qk
