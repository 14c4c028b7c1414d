// The cpu backend's elementwise kernels: one loop per (op, compute type), compiled once per ISA
// level (pointwise_avx512.cpp, pointwise_avx2.cpp, pointwise_portable.cpp) and chosen at run
// time. A loop reads contiguous inputs of its compute type and writes a contiguous output;
// strides, broadcasting and dtype conversion are the engine's job (pointwise_engine.h).
#pragma once

#include <cstdint>

namespace crucible::cpu {

enum class PwOp : uint8_t {
  // unary: out = f(a)
  Identity,
  Neg,
  Abs,
  Relu,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Reciprocal,
  Sigmoid,
  Tanh,
  Erf,
  Gelu,
  GeluTanh,
  Silu,
  Mish,
  Hardsigmoid,
  Hardswish,
  Floor,
  Ceil,
  Trunc,
  Round,
  IsNan,
  IsInf,
  Threshold,     // a <= s0 ? s1 : a
  Hardtanh,      // clamp(a, s0, s1)
  LeakyRelu,     // a > 0 ? a : a * s0
  Elu,           // a > 0 ? a * s1 : s0 * (exp(a * s2) - 1) * s1   (alpha, scale, input_scale)
  Softplus,      // a * s0 > s1 ? a : log1p(exp(a * s0)) / s0      (beta, threshold)
  PowScalar,     // a ^ s0
  Square,        // a * a
  Cube,          // a * a * a (in f64 for f32: rounded once, as pow(a, 3))
  PowHalf,       // pow(a, 0.5): sqrt, but pow(-inf, 0.5) = +inf
  PowMinusHalf,  // pow(a, -0.5): 1 / sqrt, but pow(-inf, -0.5) = +0
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Expm1,
  Log2,
  Log10,
  Log1p,
  Sign,           // (0 < a) - (a < 0): NaN gives 0
  LogicalNot,     // a == 0
  BitNot,         // ~a (integers)
  RoundDecimals,  // s1 == 0: nearbyint(a * s0) / s0, else nearbyint(a / s0) * s0
  Fill,           // s0 (no input)
  // binary: out = f(a, b)
  Add,  // a + s0 * b
  Mul,
  Div,
  DivTrunc,  // integers: the caller rules out a zero divisor
  DivFloor,
  Maximum,
  Minimum,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  BitAnd,
  BitOr,
  BitXor,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  Atan2,
  Pow,
  Fmod,                 // sign of the dividend (integers: the caller rules out a zero divisor)
  Remainder,            // sign of the divisor
  ThresholdBackward,    // (g, x): x <= s0 ? 0 : g
  SigmoidBackward,      // (g, y)
  TanhBackward,         // (g, y)
  GeluBackward,         // (g, x)
  GeluTanhBackward,     // (g, x)
  SiluBackward,         // (g, x)
  MishBackward,         // (g, x)
  HardsigmoidBackward,  // (g, x)
  HardswishBackward,    // (g, x)
  HardtanhBackward,     // (g, x): (x <= s0 || x >= s1) ? 0 : g
  LeakyReluBackward,    // (g, x): x > 0 ? g : g * s0
  EluBackward,          // (g, x) s0..s2 as Elu, s3 != 0: x is the result
  SoftplusBackward,     // (g, x) beta, threshold
  // ternary
  Where,    // (c, a, b): c ? a : b
  Lerp,     // (a, b, w)
  Addcmul,  // (s, t1, t2): s + s0 * t1 * t2
  Addcdiv,  // (s, t1, t2): s + s0 * t1 / t2
  Clamp,    // (x, lo, hi)
  kCount,
};

int pw_arity(PwOp op);  // inputs read: 0..3

// Scalar parameters of an op, in the compute type's precision.
struct PwParams {
  double s[4] = {0, 0, 0, 0};
  int64_t i[4] = {0, 0, 0, 0};
};

template <typename T>
using PwLoop = void (*)(const T* const* in, T* out, int64_t n, const PwParams& p);

// Converters between storage and the f32 compute type, over contiguous runs.
struct PwConvert {
  void (*f16_to_f32)(const uint16_t* in, float* out, int64_t n);
  void (*f32_to_f16)(const float* in, uint16_t* out, int64_t n);
  void (*bf16_to_f32)(const uint16_t* in, float* out, int64_t n);
  void (*f32_to_bf16)(const float* in, uint16_t* out, int64_t n);
  // Bool outputs (comparisons): v != 0 as 0 or 1 (NaN is true).
  void (*f32_to_bool)(const float* in, uint8_t* out, int64_t n);
  void (*i64_to_bool)(const int64_t* in, uint8_t* out, int64_t n);
};

struct PwKernels {
  PwLoop<float> f32[static_cast<int>(PwOp::kCount)];
  PwLoop<double> f64[static_cast<int>(PwOp::kCount)];
  // Binary ops whose second input is one value (in[1][0]) for the whole run: a row times its
  // broadcast column ([N, 192] * [N, 1]), a tensor times a scalar. nullptr for other arities.
  PwLoop<float> f32_b1[static_cast<int>(PwOp::kCount)];
  PwLoop<double> f64_b1[static_cast<int>(PwOp::kCount)];
  // Integral and bool results, computed in their own width where it is one byte (bool and u8
  // in u8, i8 in i8; wrap-around arithmetic gives the same bits as int64's) and in int64
  // otherwise. nullptr: not defined for integers.
  PwLoop<int64_t> i64[static_cast<int>(PwOp::kCount)];
  PwLoop<uint8_t> u8[static_cast<int>(PwOp::kCount)];
  PwLoop<int8_t> i8[static_cast<int>(PwOp::kCount)];
  PwConvert convert;
};

const PwKernels& pw_kernels_avx512();
const PwKernels& pw_kernels_avx2();
const PwKernels& pw_kernels_portable();
// The set for isa_level().
const PwKernels& pw_kernels();

}  // namespace crucible::cpu
