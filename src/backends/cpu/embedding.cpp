// The `cpu` backend's embedding: aten.embedding.default (row copies, any dtype) and
// aten.embedding_dense_backward.default (row scatter-add, floating; f16/bf16 accumulate in
// f32). Lookups split the indices over the thread pool; the backward splits the embedding
// width, so that no two threads add into the same element. Both compute into the meta
// function's outputs (KernelEntry::run_into).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/nn.h"
#include "backends/cpu/norm_rows.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_ops.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/embedding.h"

namespace crucible::cpu {
namespace {

// The indices as int64, contiguous.
std::vector<int64_t> load_indices(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  const Tensor c = t.contiguous();
  if (v.empty()) return v;  // (no data to copy from)
  if (c.dtype() == DType::Int64) {
    std::memcpy(v.data(), c.data_ptr(), v.size() * sizeof(int64_t));
  } else {
    const int32_t* p = c.data<int32_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  }
  return v;
}

// Into the meta function's output (indices' shape + [width], weight's dtype; every row is
// written); an index out of range, a data check, is this kernel's.
void embedding_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& weight = a.tensor("weight");
  const Tensor& indices = a.tensor("indices");
  const int64_t rows = weight.size(0), width = weight.size(1);
  const std::vector<int64_t> idx = load_indices(indices);
  for (int64_t r : idx)
    if (r < 0 || r >= rows) op_error("index out of range in self");
  const Tensor& out = outs.at(0).tensor();
  if (out.numel() == 0) return;
  const Tensor w = weight.contiguous();
  const size_t row_bytes = static_cast<size_t>(width) * w.itemsize();
  const char* src = static_cast<const char*>(w.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  parallel_for(0, static_cast<int64_t>(idx.size()),
               std::max<int64_t>(1, 65536 / static_cast<int64_t>(std::max<size_t>(row_bytes, 1))),
               [&](int64_t i0, int64_t i1) {
                 for (int64_t i = i0; i < i1; ++i)
                   std::memcpy(dst + i * row_bytes, src + idx[i] * row_bytes, row_bytes);
               });
}

// grad_weight[idx[i]] += grad[i] (times 1/count with scale_grad_by_freq), output row by output
// row: the contributions are bucketed by destination row (a stable counting sort, so each row
// adds its gradient rows in index order, as the reference does), then the pool splits the
// output rows: each row is written once, whole (a zero row where no index hits it), and each
// contributing gradient row is read whole.
template <typename T>
Tensor dense_backward_t(const Tensor& grad_in, const std::vector<int64_t>& idx, int64_t num_weights,
                        int64_t d, int64_t padding_idx, bool scale, DType work, const Value& dst) {
  const Tensor grad = norm_in(grad_in, work);
  Tensor out = output_buffer(dst, {num_weights, d}, work);
  const int64_t n = static_cast<int64_t>(idx.size());
  std::vector<int64_t> start(static_cast<size_t>(num_weights) + 1, 0);
  for (int64_t i = 0; i < n; ++i)
    if (idx[i] != padding_idx) ++start[idx[i] + 1];
  for (int64_t r = 0; r < num_weights; ++r) start[r + 1] += start[r];
  std::vector<int64_t> order(static_cast<size_t>(start[num_weights]));
  {
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (int64_t i = 0; i < n; ++i)
      if (idx[i] != padding_idx) order[fill[idx[i]]++] = i;
  }
  const T* g = grad.data<T>();
  T* o = out.data<T>();
  parallel_for(0, num_weights, std::max<int64_t>(1, 16384 / std::max<int64_t>(d, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   T* orow = o + r * d;
                   const int64_t c0 = start[r], c1 = start[r + 1];
                   if (c0 == c1) {
                     std::memset(orow, 0, static_cast<size_t>(d) * sizeof(T));
                     continue;
                   }
                   const T s = scale ? static_cast<T>(1.0 / static_cast<double>(c1 - c0)) : T(1);
                   const T* g0 = g + order[c0] * d;
                   if (scale)
                     for (int64_t j = 0; j < d; ++j) orow[j] = g0[j] * s + T(0);
                   else
                     for (int64_t j = 0; j < d; ++j) orow[j] = g0[j] + T(0);  // -0 -> +0, as 0 + g
                   for (int64_t c = c0 + 1; c < c1; ++c) {
                     const T* gr = g + order[c] * d;
                     if (scale)
                       for (int64_t j = 0; j < d; ++j) orow[j] += gr[j] * s;
                     else
                       for (int64_t j = 0; j < d; ++j) orow[j] += gr[j];
                   }
                 }
               });
  return out;
}

// Into the meta function's output (computed there when it is in the work dtype, f32 or f64).
void dense_backward_kernel(const OpDef&, const Args& a, const Values& outs) {
  const embedding::DenseBackwardArgs r = embedding::dense_backward_args(a);
  const Tensor& grad = r.grad;
  const int64_t num_weights = r.num_weights, padding_idx = r.padding_idx, d = r.d;
  const std::vector<int64_t> idx = load_indices(r.indices);
  for (int64_t i : idx)
    if (i != padding_idx && (i < 0 || i >= num_weights)) op_error("index out of range in self");
  const DType work = norm_work(grad.dtype());
  const Tensor out = work == DType::Float64
                         ? dense_backward_t<double>(grad, idx, num_weights, d, padding_idx, r.scale,
                                                    work, outs.at(0))
                         : dense_backward_t<float>(grad, idx, num_weights, d, padding_idx, r.scale,
                                                   work, outs.at(0));
  store_output(out, outs.at(0));
}

}  // namespace

void register_embedding_kernels(KernelTable& t) {
  t.add("aten.embedding.default", {.dtypes = pw_all_dtypes(), .run_into = &embedding_kernel});
  t.add("aten.embedding_dense_backward.default",
        {.dtypes = pw_float_dtypes(), .run_into = &dense_backward_kernel});
}

}  // namespace crucible::cpu
