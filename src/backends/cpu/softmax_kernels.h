// The row loops of the cpu backend's softmax, log-softmax and their backwards, compiled once per
// ISA level (softmax_avx512.cpp, softmax_avx2.cpp, softmax_portable.cpp) from softmax_loops.h
// and chosen at run time. The input is seen as [outer, n, inner], contiguous, softmax over n:
// `last` loops take whole rows (inner == 1), `cols` loops take a block of w <= kSoftmaxCols
// adjacent columns of one outer slice (rows `inner` apart). softmax.cpp splits the work over
// the thread pool and does the dtype plumbing.
#pragma once

#include <cstdint>

namespace crucible::cpu {

// Columns per block of the `cols` loops (their per-column state lives on the stack).
inline constexpr int64_t kSoftmaxCols = 64;

template <typename T>
struct SoftmaxFns {
  // rows x n -> rows x n. nt: the output is large, stream it past the caches (f32 rows).
  void (*fwd_last)(const T* x, T* y, int64_t rows, int64_t n, bool log, bool nt);
  // One block: x[k * inner + j], k < n, j < w.
  void (*fwd_cols)(const T* x, T* y, int64_t n, int64_t inner, int64_t w, bool log, bool nt);
  // grad g and forward output y -> grad_input o (may not alias g or y).
  void (*bwd_last)(const T* g, const T* y, T* o, int64_t rows, int64_t n, bool log, bool nt);
  void (*bwd_cols)(const T* g, const T* y, T* o, int64_t n, int64_t inner, int64_t w, bool log,
                   bool nt);
};

// The row passes of blocked attention (attention.cpp), from softmax_attention_loops.h: a block
// of `rows` rows of n scores, `ld` apart, changed in place.
template <typename T>
struct AttentionRowFns {
  // Each row's softmax, and lse[r] its logsumexp; NaN anywhere in a row makes the row and its
  // logsumexp NaN; a row whose scores are all -inf (or n == 0) becomes 0, lse[r] = masked_lse.
  void (*softmax_lse)(T* s, int64_t rows, int64_t n, int64_t ld, T* lse, T masked_lse);
  // s = exp(s - l[r]): the probabilities again from a saved logsumexp.
  void (*exp_minus)(T* s, int64_t rows, int64_t n, int64_t ld, const T* l);
  // dp = p * (dp - dd[r]): the scores' gradient from the probabilities' gradient.
  void (*ds)(T* dp, const T* p, int64_t rows, int64_t n, int64_t ld, const T* dd);
};

struct SoftmaxKernels {
  SoftmaxFns<float> f32;
  SoftmaxFns<double> f64;
  AttentionRowFns<float> att_f32;
  AttentionRowFns<double> att_f64;
};

const SoftmaxKernels& softmax_kernels_avx512();
const SoftmaxKernels& softmax_kernels_avx2();
const SoftmaxKernels& softmax_kernels_portable();
// The set for isa_level().
const SoftmaxKernels& softmax_kernels();

}  // namespace crucible::cpu
