// Row kernels of the `cpu` backend's embedding-bag and index_add kernels: the f32
// inner loops, compiled once per ISA level (index_rows_avx512.cpp, index_rows_avx2.cpp,
// index_rows_portable.cpp; the loops themselves are in index_rows_loops.h) and chosen at run
// time from isa_level().
#pragma once

#include <cstdint>

namespace crucible::cpu {

struct RowKernels {
  // out[0, d) = sum over k < count of scale[k] * w[rows[k] * ld + (0, d)] (scale null: 1), the
  // terms added in k order per element.
  void (*bag_sum)(float* out, const float* w, int64_t ld, int64_t d, const int64_t* rows,
                  const float* scale, int64_t count);
  // out[k] = dot(a + ia[k] * lda, b + ib[k] * ldb) over d elements, for k < count.
  void (*dot_rows)(float* out, const float* a, int64_t lda, const int64_t* ia, const float* b,
                   int64_t ldb, const int64_t* ib, int64_t d, int64_t count);
  // y[0, n) += alpha * x[0, n) (alpha == 1: y += x).
  void (*axpy)(float* y, const float* x, float alpha, int64_t n);
  // The same, returning whether a value of x is extreme (NaN, infinite or above 2^50 in
  // magnitude, see nn_util.h): the caller then computes the call again in f64.
  bool (*axpy_check)(float* y, const float* x, float alpha, int64_t n);
  // dst[0, n) = src[0, n), returning whether a value is extreme.
  bool (*copy_check)(float* dst, const float* src, int64_t n);
};

const RowKernels& row_kernels();
const RowKernels& row_kernels_avx512();
const RowKernels& row_kernels_avx2();
const RowKernels& row_kernels_portable();

}  // namespace crucible::cpu
