// Which OpenBLAS kernels ("core type") this process uses. OpenBLAS builds with DYNAMIC_ARCH
// pick their kernels from the processor's family and model when the library loads; a model
// newer than the library's table (Debian 12's OpenBLAS 0.3.21 on Sapphire Rapids-class virtual
// machines) falls back to the generic SSE3 "Prescott" kernels, about 3.5x slower than the
// AVX-512 ones, and an AMD Zen 4 (AVX-512) gets the AVX2 "Haswell" kernels of earlier Zens,
// about 1.8x slower on sgemm. Both the cpu backend and ATen (libtorch links the same OpenBLAS) then
// run their matrix products far below the machine's peak. `crucible` corrects this at start-up
// (src/cli/main.cpp): it sets OPENBLAS_CORETYPE from the processor's features and starts
// itself again, so that every BLAS user in the process gets the right kernels
// (docs/cpu-gemm.md).
#pragma once

#include <string>

namespace crucible::cpu {

// The core type OpenBLAS runs ("Cooperlake", "Haswell", "Prescott", ...).
std::string blas_core_name();

// The OPENBLAS_CORETYPE to set when OpenBLAS's kernels use a narrower vector extension than
// the processor has (AVX-512 with F, BW, DQ and VL: "Cooperlake" with AVX512_BF16, else
// "SkylakeX"; AVX2 with FMA: "Haswell") and the variable is not set already; empty when
// nothing is to correct, or when the library names a core type it does not know.
std::string blas_core_correction();

// When the user's OPENBLAS_CORETYPE names kernels narrower than the processor runs (the
// correction above would otherwise apply), a warning for timed runs saying so; else empty.
std::string blas_core_narrowed_by_user();

// For a program's main(): when blas_core_correction() has a core type, sets OPENBLAS_CORETYPE
// and starts the program again (execv of /proc/self/exe with the same arguments), so that the
// library loads with the right kernels; returns when there is nothing to correct, when
// CRUCIBLE_KEEP_BLAS_CORE is set (keep what the library chose), or when the exec fails.
void restart_with_corrected_blas_core(char** argv);

}  // namespace crucible::cpu
