// The `cpu` backend's embedding bags: aten._embedding_bag.default (sum, mean, max; per-sample
// weights; padding_idx; include_last_offset) and
// aten._embedding_bag_per_sample_weights_backward.default. Bags are independent and spread over
// the pool. f32/f16/bf16 sums run in f32 in the vector row kernels (index_rows.h), with the
// weight rows read in place when the weight is contiguous f32; f64, and calls with extreme
// values (see nn_util.h), are summed in f64. The argument checks are the shared ones of
// crucible/ops/rules/embedding.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/index_rows.h"
#include "backends/cpu/index_util.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/nn_util.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/embedding.h"

namespace crucible::cpu {
namespace {

// Whether a 2-d tensor holds an extreme value (see nn_util.h), looking only at its rows when
// they are contiguous: a row view of a much larger tensor scans its rows, not the storage
// between them.
bool extreme_rows(const Tensor& t) {
  if (t.dim() != 2 || t.stride(1) != 1 || t.dtype() != DType::Float32 || t.is_contiguous())
    return extreme(t);
  const float* p = t.data<float>();
  const int64_t rows = t.size(0), width = t.size(1), ld = t.stride(0);
  for (int64_t r = 0; r < rows; ++r)
    if (any_extreme_f32(p + r * ld, width)) return true;
  return false;
}

// out[b] for mode 2: the elementwise max of the rows as the reference picks it (the first
// value, replaced by a greater one or a NaN; a NaN stays), with the row each came from.
template <typename W>
void bag_max(W* out, int64_t* arg, const W* w, int64_t d, const int64_t* rows, int64_t count) {
  for (int64_t j = 0; j < d; ++j) {
    W acc = 0;
    int64_t at = -1;
    for (int64_t k = 0; k < count; ++k) {
      const W v = w[rows[k] * d + j];
      if (k == 0 || ((v > acc || std::isnan(v)) && !std::isnan(acc))) {
        acc = v;
        at = rows[k];
      }
    }
    out[j] = acc;
    if (arg) arg[j] = at;
  }
}

// out[b] for sum and mean in the work type W (f32 through the vector kernels, or f64).
template <typename W>
void bag_sum_t(W* out, const W* w, int64_t d, const int64_t* rows, const W* scale, int64_t count) {
  if constexpr (std::is_same_v<W, float>) {
    row_kernels().bag_sum(out, w, d, d, rows, scale, count);
  } else {
    for (int64_t j = 0; j < d; ++j) out[j] = 0;
    for (int64_t k = 0; k < count; ++k) {
      const W s = scale ? scale[k] : W(1);
      const W* r = w + rows[k] * d;
      for (int64_t j = 0; j < d; ++j) out[j] += s * r[j];
    }
  }
}

template <typename W>
void bags_t(const Tensor& weight, const Tensor& out, const Tensor& max_indices, const int64_t* rows,
            const std::vector<int64_t>& starts, const Tensor& psw, int64_t mode) {
  const W* w = weight.data<W>();
  W* o = out.data<W>();
  const W* scale = psw.defined() ? psw.data<W>() : nullptr;
  const int64_t d = weight.size(1);
  const int64_t num_bags = out.size(0);
  int64_t* arg = mode == 2 ? max_indices.data<int64_t>() : nullptr;
  const int64_t per_bag =
      std::max<int64_t>(1, ((starts.back() - starts[0]) / std::max<int64_t>(num_bags, 1)) * d);
  parallel_for(0, num_bags, std::max<int64_t>(1, 65536 / per_bag), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t k0 = starts[b], count = starts[b + 1] - k0;
      W* ob = o + b * d;
      if (mode == 2) {
        bag_max(ob, arg ? arg + b * d : nullptr, w, d, rows + k0, count);
        continue;
      }
      bag_sum_t(ob, w, d, rows + k0, scale ? scale + k0 : nullptr, count);
      if (mode == 1 && count > 0)
        for (int64_t j = 0; j < d; ++j) ob[j] = ob[j] / static_cast<W>(count);
    }
  });
}

template <typename W>
void gather_scales(W* dst, const W* src, const std::vector<int64_t>& at) {
  for (size_t k = 0; k < at.size(); ++k) dst[k] = src[at[k]];
}

// Into the meta function's four outputs (contiguous): the bags, offset2bag, bag_size and
// max_indices. The offsets' and indices' values are checked here.
void embedding_bag_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& weight = a.tensor("weight");
  const Tensor& indices_in = a.tensor("indices");
  const Tensor& offsets = a.tensor("offsets");
  const Tensor psw_in = a.given("per_sample_weights") ? a.tensor("per_sample_weights") : Tensor();
  const int64_t padding_idx = a.integer("padding_idx");
  const embedding::BagSpec spec = embedding::embedding_bag_spec(a);
  const int64_t n = spec.n, num_bags = spec.num_bags, mode = spec.mode;
  const IndexValues idx(indices_in);
  const IndexValues off(offsets);
  const int64_t noff = offsets.size(0);
  embedding::check_bag_offsets({off.data(), static_cast<size_t>(noff)}, n);
  const int64_t rows_n = weight.size(0), d = weight.size(1);
  // Every index inside a bag must be a row (indices after the last bag are not read).
  const int64_t end_all = num_bags == 0 ? 0 : (num_bags < noff ? off[num_bags] : n);
  bool bad = false;
  for (int64_t i = 0; i < end_all; ++i)
    bad |= static_cast<uint64_t>(idx[i]) >= static_cast<uint64_t>(rows_n);
  if (bad)
    for (int64_t i = 0; i < end_all; ++i)
      if (idx[i] < 0 || idx[i] >= rows_n)
        op_error("embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be " +
                 std::to_string(idx[i]));
  const Tensor& offset2bag = outputs[1].tensor();
  const Tensor& bag_size = outputs[2].tensor();
  int64_t* o2b = offset2bag.data<int64_t>();
  std::fill_n(o2b, n, int64_t{0});
  int64_t* bsz = bag_size.data<int64_t>();
  const auto bag_end = [&](int64_t b) { return b + 1 < noff ? off[b + 1] : n; };
  for (int64_t b = 0; b < num_bags; ++b) std::fill(o2b + off[b], o2b + bag_end(b), b);
  // The rows each bag sums, as one list cut at `starts`: the indices themselves when no index
  // can equal padding_idx, else a copy without the padding entries (`kept`: their positions).
  const bool padding = padding_idx >= 0 && padding_idx < rows_n;
  std::vector<int64_t> starts(static_cast<size_t>(num_bags) + 1, 0);
  std::vector<int64_t> compact, kept;
  const int64_t* rows = idx.data();
  if (!padding) {
    for (int64_t b = 0; b < num_bags; ++b) {
      starts[b] = off[b];
      bsz[b] = bag_end(b) - off[b];
    }
    starts[num_bags] = end_all;
  } else {
    compact.reserve(static_cast<size_t>(end_all));
    kept.reserve(static_cast<size_t>(end_all));
    for (int64_t b = 0; b < num_bags; ++b) {
      for (int64_t i = off[b]; i < bag_end(b); ++i) {
        if (idx[i] == padding_idx) continue;
        compact.push_back(idx[i]);
        kept.push_back(i);
      }
      starts[b + 1] = static_cast<int64_t>(compact.size());
      bsz[b] = starts[b + 1] - starts[b];
    }
    rows = compact.data();
  }
  const Tensor& max_indices = outputs[3].tensor();  // [num_bags, d] for max, else [num_bags]
  std::fill_n(max_indices.data<int64_t>(), max_indices.numel(), mode == 2 ? int64_t{-1} : 0);
  const DType dt = weight.dtype();
  DType work = dt == DType::Float64 ? DType::Float64 : DType::Float32;
  if (work == DType::Float32 && mode != 2 && any_extreme({&weight, &psw_in})) work = DType::Float64;
  const Tensor out = output_buffer(outputs[0], {num_bags, d}, work);
  if (out.numel() > 0) {
    const Tensor w = contiguous_as(weight, work);
    // The scales of the rows, in the order of `rows`.
    Tensor psw;
    if (psw_in.defined()) {
      psw = contiguous_as(psw_in.reshape({-1}), work);
      if (padding) {
        Tensor all = psw;
        psw = Tensor::uninitialized({static_cast<int64_t>(kept.size())}, work);
        if (work == DType::Float32)
          gather_scales(psw.data<float>(), all.data<float>(), kept);
        else
          gather_scales(psw.data<double>(), all.data<double>(), kept);
      }
    }
    if (work == DType::Float32)
      bags_t<float>(w, out, max_indices, rows, starts, psw, mode);
    else
      bags_t<double>(w, out, max_indices, rows, starts, psw, mode);
  }
  store_output(out, outputs[0]);
}

// _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode,
// padding_idx): out[i] = dot(grad[offset2bag[i]], weight[indices[i]]), 0 at padding.
void psw_backward_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const embedding::PswBackwardArgs checked = embedding::psw_backward_args(a);
  const Tensor& grad = checked.grad;
  const Tensor& weight = checked.weight;
  const int64_t n = checked.n, d = checked.d, padding_idx = checked.padding_idx;
  const IndexValues idx(checked.indices);
  const IndexValues bag(checked.offset2bag.reshape({-1}));
  // Entry i's weight row and bag, checked; a padded entry reads row 0 of bag 0 (any row in
  // range) and its result is zeroed afterwards.
  const int64_t w_rows = weight.size(0), g_rows = grad.size(0);
  const auto entry = [&](int64_t i, int64_t* row, int64_t* bg) {
    const int64_t r = idx[i], g = bag[i];
    if (r == padding_idx) {
      *row = 0;
      *bg = 0;
      return;
    }
    if (r < 0 || r >= w_rows || g < 0 || g >= g_rows) op_error("index out of range in self");
    *row = r;
    *bg = g;
  };
  bool any_padding = false;
  for (int64_t i = 0; i < n && !any_padding; ++i) any_padding = idx[i] == padding_idx;
  const DType dt = grad.dtype();
  Tensor out = output_buffer(outputs[0], {n}, dt == DType::Float64 ? dt : DType::Float32);
  const bool computable = n > 0 && d > 0 && weight.size(0) > 0 && grad.size(0) > 0;
  const bool f64 = dt == DType::Float64 || extreme_rows(grad) || extreme_rows(weight);
  if (!computable) {
    for (int64_t i = 0; i < n; ++i) {  // the reference's index checks still apply
      int64_t r = 0, b = 0;
      entry(i, &r, &b);
    }
    if (n > 0) std::memset(out.data_ptr(), 0, static_cast<size_t>(n) * out.itemsize());
  } else if (!f64) {
    // Rows are read in place when each is contiguous f32 (grad of the traces is a strided view).
    const auto rows_of = [](const Tensor& t) {
      return t.dtype() == DType::Float32 && t.stride(1) == 1 ? t : contiguous_as(t, DType::Float32);
    };
    const Tensor g = rows_of(grad), w = rows_of(weight);
    float* o = out.data<float>();
    // Entries are checked and resolved in the chunks, 256 at a time (no n-long index arrays).
    parallel_for(0, n, std::max<int64_t>(1, 262144 / d), [&](int64_t i0, int64_t i1) {
      int64_t rb[256], bb[256];
      for (int64_t s = i0; s < i1; s += 256) {
        const int64_t m = std::min<int64_t>(256, i1 - s);
        for (int64_t k = 0; k < m; ++k) entry(s + k, rb + k, bb + k);
        row_kernels().dot_rows(o + s, g.data<float>(), g.stride(0), bb, w.data<float>(),
                               w.stride(0), rb, d, m);
      }
    });
  } else {
    const Tensor g = contiguous_as(grad, DType::Float64), w = contiguous_as(weight, DType::Float64);
    const double* gp = g.data<double>();
    const double* wp = w.data<double>();
    const Tensor o64 = output_buffer(outputs[0], {n}, DType::Float64);
    double* o = o64.data<double>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = 0, b = 0;
      entry(i, &r, &b);
      double s = 0;
      for (int64_t j = 0; j < d; ++j) s += gp[b * d + j] * wp[r * d + j];
      o[i] = s;
    }
    out = o64;
  }
  if (any_padding) {
    const size_t isz = out.itemsize();
    for (int64_t i = 0; i < n; ++i)
      if (idx[i] == padding_idx) std::memset(static_cast<char*>(out.data_ptr()) + i * isz, 0, isz);
  }
  store_output(out, outputs[0]);
}

}  // namespace

void register_embedding_bag_kernels(KernelTable& t) {
  const std::vector<DType> floating = {DType::Float16, DType::BFloat16, DType::Float32,
                                       DType::Float64};
  t.add("aten._embedding_bag.default", {.dtypes = floating, .run_into = &embedding_bag_kernel});
  t.add("aten._embedding_bag_per_sample_weights_backward.default",
        {.dtypes = floating, .run_into = &psw_backward_kernel});
}

}  // namespace crucible::cpu
