// ATen's rules that the catalog (src/ops) and backends' kernels share: the argument checks of
// the indexing ops (ScatterGatherChecks.h, TensorAdvancedIndexing.cpp, IndexingUtils.h,
// PyTorch 2.x): gather/scatter's shape checks, index_select/index_add's index and shape checks,
// and the index lists of index.Tensor/index_put. Written once here; the catalog's meta
// functions and references and the cpu kernels call the same code.
#pragma once

#include <cstdint>
#include <string>

#include "crucible/core/tensor.h"

namespace crucible::indexing {

// Sizes of a tensor read as at least 1-d (a 0-d tensor as [1]; ATen's ensure_nonempty_size and
// ensure_nonempty_dim).
inline int64_t size_or_1(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.size(d); }
inline int64_t ndim_or_1(const Tensor& t) { return t.dim() < 1 ? 1 : t.dim(); }

// gather's and scatter's shape checks (gather_shape_check, scatter_shape_check; `src` null for
// gather and for a scatter of a value): index is int64 ("<op>(): Expected dtype int64 for
// index"); unless index is empty, index, self (and src) have as many dims (0-d counting as 1-d)
// and index.size(d) <= self.size(d) for d != dim, index.size(d) <= src.size(d) for every d.
// `dim` is already wrapped.
void check_gather_shapes(const Tensor& self, int64_t dim, const Tensor& index, const char* op,
                         const Tensor* src);

// A scatter's checks (`src` null for a value): `dim` wrapped against self, the shape checks
// above, then src of self's dtype ("<op>(): Expected self.dtype to be equal to src.dtype").
// Returns the wrapped dim.
int64_t check_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src,
                      const char* op);

// The index of index_select and index_add: 0-d or 1-d ("<op>(): Index is supposed to be a
// vector"), of i32 or i64 ("<op>(): Expected dtype int32 or int64 for index").
void check_vector_index(const Tensor& index, const std::string& op);

// index_select's checks; returns the output's shape (self's with the wrapped dim's size replaced
// by index.numel(); [] for a 0-d self, which takes exactly one index). The index values are not
// checked here.
Shape index_select_shape(const Tensor& self, int64_t dim, const Tensor& index);

// index_add's checks: the index as above, source of self's dtype, index.numel() ==
// source.size(dim) and source shaped as self outside dim. Returns the wrapped dim (the output is
// shaped like self). The index values are not checked here.
int64_t check_index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);

// One defined entry of index.Tensor's / index_put's index list, `consumed` dims of self being
// taken by the entries before it. A bool or u8 mask must fit in self's remaining dims with
// self's sizes there ("The shape of the mask ..."); a 0-d mask is not modelled (raises
// unsupported). Any other index must be i64 or i32. Returns whether `index` is a mask.
bool check_index_entry(const Tensor& self, const Tensor& index, int64_t consumed);

// Raises "too many indices for tensor of dimension <ndim> (got <count>)" when count > ndim.
void check_index_count(int64_t ndim, int64_t count);

// index_put's values: self's dtype ("Index put requires the source and destination dtypes
// match, ...").
void check_index_put_dtype(const Tensor& self, const Tensor& values);

// index_put's values broadcast to the indexing result's shape `result` ("shape mismatch: value
// tensor of shape ... cannot be broadcast to indexing result of shape ...").
void check_index_put_values(const Tensor& values, const Shape& result);

}  // namespace crucible::indexing
