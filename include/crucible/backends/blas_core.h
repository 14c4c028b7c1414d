// Which OpenBLAS kernels ("core type") this process uses. OpenBLAS builds with DYNAMIC_ARCH
// pick their kernels from the processor's family and model when the library loads; a model
// newer than the library's table (Debian 12's OpenBLAS 0.3.21 on Sapphire Rapids-class virtual
// machines) falls back to the generic SSE3 "Prescott" kernels, about 3.5x slower than the
// AVX-512 ones. Both the cpu backend and ATen (libtorch links the same OpenBLAS) then run
// their matrix products far below the machine's peak. `crucible` corrects this at start-up
// (src/cli/main.cpp): it sets OPENBLAS_CORETYPE from the processor's features and starts
// itself again, so that every BLAS user in the process gets the right kernels
// (docs/cpu-gemm.md).
#pragma once

#include <string>

namespace crucible::cpu {

// The core type OpenBLAS runs ("Cooperlake", "Haswell", "Prescott", ...).
std::string blas_core_name();

// The OPENBLAS_CORETYPE to set when OpenBLAS fell back to "Prescott" although the processor
// has AVX2 or AVX-512 (and the variable is not set already); empty when nothing is to correct.
std::string blas_core_correction();

// For a program's main(): when blas_core_correction() has a core type, sets OPENBLAS_CORETYPE
// and starts the program again (execv of /proc/self/exe with the same arguments), so that the
// library loads with the right kernels; returns when there is nothing to correct, when
// CRUCIBLE_KEEP_BLAS_CORE is set (keep what the library chose), or when the exec fails.
void restart_with_corrected_blas_core(char** argv);

}  // namespace crucible::cpu
