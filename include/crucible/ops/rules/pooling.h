// ATen's rules that the catalog (src/ops) and backends' kernels share: the checked window geometry
// of pooling calls (2-d pooling seen as 3 spatial dims with a leading size-1 dim). Written once
// here; the catalog's meta functions and references and the cpu kernels call the same code.
#pragma once

#include <cstdint>
#include <string>

#include "crucible/core/tensor.h"
#include "crucible/core/value.h"

namespace crucible::pooling {

// The geometry of one pooling call: planes (N * C) of `in` positions pooled into `out`.
struct Geo {
  int64_t nsp = 2;      // spatial dims of the op (2 or 3)
  bool batched = true;  // input has a batch dim
  int64_t planes = 0;   // N * C
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  bool adaptive = false;  // windows [floor(o*I/O), ceil((o+1)*I/O))
  Shape in_shape, out_shape;
  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  // Adaptive windows along dim `dim` for output index `o`.
  int64_t start(int dim, int64_t o) const { return (o * in[dim]) / out[dim]; }
  int64_t end(int dim, int64_t o) const { return ((o + 1) * in[dim] + out[dim] - 1) / out[dim]; }
  // Whether input index `i` of dim `dim` lies in the window of output index `o`.
  bool in_window(int dim, int64_t o, int64_t i) const;
};

// max_pool{2,3}d / avg_pool{2,3}d argument checks (ATen's parameter parsing, pooling_output_shape
// and pool{2,3}d_shape_check) and output shape. `dilation` is null for average pooling.
Geo window_geo(const std::string& op, const Tensor& self, int64_t nsp, const Value& kernel,
               const Value& stride, const Value& padding, const Value* dilation, bool ceil_mode);

// Adaptive pooling checks ("adaptive_avg_pool2d(): Expected 3D or 4D tensor, ...").
Geo adaptive_geo(const std::string& op, const Tensor& self, int64_t nsp, const Value& output_size);

// Raises ATen's dispatch error for a dtype the kernel does not take: floating types, plus i64
// where `allow_long`.
void check_dtype(const std::string& kernel, DType t, bool allow_long);

// Raises unless `t` has shape `expect` ("Expected <what> of size ..., but got ...").
void check_shape(const Tensor& t, const Shape& expect, const std::string& what);

// The pooled size of one dim (ATen's pooling_output_shape without its checks).
int64_t pooled_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode);

}  // namespace crucible::pooling
