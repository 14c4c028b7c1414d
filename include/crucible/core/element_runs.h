// Runs of elements loaded or stored with the per-element conversions of tensor.h
// (load_as_double, load_as_int, store_from_double, store_from_int): n elements from `base`,
// `stride` elements apart (any sign, 0 for a broadcast), each converted exactly as the
// per-element function converts it, with one switch on the dtype per run instead of one per
// element. The loops of the catalog's references read and write through these.
#pragma once

#include <cstdint>

#include "crucible/core/dtype.h"

namespace crucible {

void load_run_as_double(const void* base, int64_t stride, int64_t n, DType t, double* out);
void load_run_as_int(const void* base, int64_t stride, int64_t n, DType t, int64_t* out);
void store_run_from_double(void* base, int64_t stride, int64_t n, DType t, const double* in);
void store_run_from_int(void* base, int64_t stride, int64_t n, DType t, const int64_t* in);

// The same, chosen by the values' type (generic loops over doubles or int64).
inline void load_run(const void* base, int64_t stride, int64_t n, DType t, double* out) {
  load_run_as_double(base, stride, n, t, out);
}
inline void load_run(const void* base, int64_t stride, int64_t n, DType t, int64_t* out) {
  load_run_as_int(base, stride, n, t, out);
}
inline void store_run(void* base, int64_t stride, int64_t n, DType t, const double* in) {
  store_run_from_double(base, stride, n, t, in);
}
inline void store_run(void* base, int64_t stride, int64_t n, DType t, const int64_t* in) {
  store_run_from_int(base, stride, n, t, in);
}

}  // namespace crucible
