// Declarations of glibc's vector math functions (libmvec, linked through libm's AS_NEEDED entry)
// at one ISA unit's width. Included at global scope by pointwise_{avx512,avx2,portable}.cpp after
// they define CRUCIBLE_MVEC_T (the vector of floats) and CRUCIBLE_MV1(f) / CRUCIBLE_MV2(f) (the
// names of the unary / binary vector variants of libm's f: _ZGVeN16v_sinf, ...). Their accuracy
// is checked against libm in f64 by tests/backends/test_cpu_pointwise_more.cpp.
#pragma once

#define CRUCIBLE_MVEC_DECL1(f) CRUCIBLE_MVEC_T CRUCIBLE_MV1(f)(CRUCIBLE_MVEC_T);
#define CRUCIBLE_MVEC_DECL2(f) CRUCIBLE_MVEC_T CRUCIBLE_MV2(f)(CRUCIBLE_MVEC_T, CRUCIBLE_MVEC_T);
extern "C" {
CRUCIBLE_MVEC_DECL1(sinf)
CRUCIBLE_MVEC_DECL1(cosf)
CRUCIBLE_MVEC_DECL1(tanf)
CRUCIBLE_MVEC_DECL1(atanf)
CRUCIBLE_MVEC_DECL1(sinhf)
CRUCIBLE_MVEC_DECL1(coshf)
CRUCIBLE_MVEC_DECL1(asinhf)
CRUCIBLE_MVEC_DECL1(acoshf)
CRUCIBLE_MVEC_DECL1(atanhf)
CRUCIBLE_MVEC_DECL1(expm1f)
CRUCIBLE_MVEC_DECL2(atan2f)
CRUCIBLE_MVEC_DECL2(powf)
}
#undef CRUCIBLE_MVEC_DECL1
#undef CRUCIBLE_MVEC_DECL2
