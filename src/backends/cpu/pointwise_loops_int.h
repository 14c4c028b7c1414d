// The integer functors of the elementwise loops (part of pointwise_loops.h, included by it inside
// each ISA unit's namespace). Templates over the compute type T: int64_t, or uint8_t / int8_t
// for the one-byte dtypes (bool and u8, i8). Arithmetic is two's complement and wraps: the low
// bits of a wrapped sum or product do not depend on the width it was computed in, so each
// width gives the bits ATen's kernels give in the dtype itself. Parameters (i0, i1) arrive as
// int64 already wrapped to the result dtype and are narrowed to T. The includer provides
// <type_traits>.
template <typename T>
inline T wadd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
inline T wmul(T a, T b) {
  // One-byte operands promote to int, where their product cannot overflow.
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}
template <typename T>
inline T wneg(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
}
template <typename T>
inline bool is_neg(T a) {
  if constexpr (std::is_signed_v<T>) {
    return a < T(0);
  } else {
    return false;
  }
}

// Division and modulo; b != 0 (the caller checks the divisor first: ZeroDivisionError). A
// quotient by -1 is the wrapped negation (INT_MIN / -1 overflows), its remainder 0.
template <typename T>
inline T idiv_trunc(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wneg(a);
  }
  return static_cast<T>(a / b);
}
template <typename T>
inline T imod_trunc(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
  }
  return static_cast<T>(a % b);
}
template <typename T>
inline T idiv_floor(T a, T b) {
  const T q = idiv_trunc(a, b), r = imod_trunc(a, b);
  return (r != T(0) && is_neg(a) != is_neg(b)) ? static_cast<T>(q - T(1)) : q;
}
template <typename T>
inline T imod_floor(T a, T b) {
  const T r = imod_trunc(a, b);
  return (r != T(0) && is_neg(r) != is_neg(b)) ? wadd(r, b) : r;
}
// ATen's powi: wrapping; a negative exponent gives 0, except for bases 1 and -1.
template <typename T>
inline T ipow(T a, T b) {
  if (is_neg(b)) {
    if (a == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (a == T(-1)) return (b % T(2)) != T(0) ? T(-1) : T(1);
    }
    return T(0);
  }
  T result = T(1);
  while (b != T(0)) {
    if ((b & T(1)) != T(0)) result = wmul(result, a);
    b = static_cast<T>(b / T(2));
    a = wmul(a, a);
  }
  return result;
}
template <typename T>
inline T isign(T a) {
  return static_cast<T>(static_cast<int>(a > T(0)) - static_cast<int>(is_neg(a)));
}

#define CRUCIBLE_IUNARY(NAME, EXPR)                                           \
  template <typename T>                                                       \
  struct NAME {                                                               \
    T i0, i1;                                                                 \
    explicit NAME(const PwParams& p) : i0(T(p.i[0])), i1(T(p.i[1])) {}        \
    T operator()([[maybe_unused]] T a) const { return static_cast<T>(EXPR); } \
  };
#define CRUCIBLE_IBINARY(NAME, EXPR)                                   \
  template <typename T>                                                \
  struct NAME {                                                        \
    T i0, i1;                                                          \
    explicit NAME(const PwParams& p) : i0(T(p.i[0])), i1(T(p.i[1])) {} \
    T operator()(T a, T b) const { return static_cast<T>(EXPR); }      \
  };
#define CRUCIBLE_ITERNARY(NAME, EXPR)                                  \
  template <typename T>                                                \
  struct NAME {                                                        \
    T i0, i1;                                                          \
    explicit NAME(const PwParams& p) : i0(T(p.i[0])), i1(T(p.i[1])) {} \
    T operator()(T a, T b, T c) const { return static_cast<T>(EXPR); } \
  };
CRUCIBLE_IUNARY(IIdentity, a)
CRUCIBLE_IUNARY(INeg, wneg(a))
CRUCIBLE_IUNARY(IAbs, is_neg(a) ? wneg(a) : a)
CRUCIBLE_IUNARY(IRelu, a > T(0) ? a : T(0))
CRUCIBLE_IUNARY(IFill, i0)
CRUCIBLE_IUNARY(IZero, T(0))
CRUCIBLE_IUNARY(IThreshold, a <= i0 ? i1 : a)
CRUCIBLE_IUNARY(IHardtanh, (a > i0 ? a : i0) < i1 ? (a > i0 ? a : i0) : i1)
CRUCIBLE_IUNARY(ISquare, wmul(a, a))
CRUCIBLE_IUNARY(ICube, wmul(wmul(a, a), a))
CRUCIBLE_IUNARY(IPowScalar, ipow(a, i0))
CRUCIBLE_IUNARY(ISign, isign(a))
CRUCIBLE_IUNARY(ILogicalNot, a == T(0))
CRUCIBLE_IUNARY(IBitNot, ~a)
CRUCIBLE_IBINARY(IAdd, wadd(a, wmul(i0, b)))
CRUCIBLE_IBINARY(IMul, wmul(a, b))
CRUCIBLE_IBINARY(IDivTrunc, idiv_trunc(a, b))
CRUCIBLE_IBINARY(IDivFloor, idiv_floor(a, b))
CRUCIBLE_IBINARY(IFmod, imod_trunc(a, b))
CRUCIBLE_IBINARY(IRemainder, imod_floor(a, b))
CRUCIBLE_IBINARY(IPow, ipow(a, b))
CRUCIBLE_IBINARY(IMaximum, a > b ? a : b)
CRUCIBLE_IBINARY(IMinimum, a < b ? a : b)
CRUCIBLE_IBINARY(IEq, a == b)
CRUCIBLE_IBINARY(INe, a != b)
CRUCIBLE_IBINARY(ILt, a < b)
CRUCIBLE_IBINARY(ILe, a <= b)
CRUCIBLE_IBINARY(IGt, a > b)
CRUCIBLE_IBINARY(IGe, a >= b)
CRUCIBLE_IBINARY(IBitAnd, a& b)
CRUCIBLE_IBINARY(IBitOr, a | b)
CRUCIBLE_IBINARY(IBitXor, a ^ b)
CRUCIBLE_IBINARY(ILogicalAnd, a != T(0) && b != T(0))
CRUCIBLE_IBINARY(ILogicalOr, a != T(0) || b != T(0))
CRUCIBLE_IBINARY(ILogicalXor, (a != T(0)) != (b != T(0)))
CRUCIBLE_IBINARY(IThresholdBackward, b <= i0 ? T(0) : a)
CRUCIBLE_ITERNARY(IWhere, a != T(0) ? b : c)
CRUCIBLE_ITERNARY(IAddcmul, wadd(a, wmul(wmul(i0, b), c)))
// clamp(x, lo, hi) = min(max(x, lo), hi): lo > hi gives hi.
CRUCIBLE_ITERNARY(IClamp, (a > b ? a : b) < c ? (a > b ? a : b) : c)
