// Helpers shared by the `cpu` backend's indexing kernels (see index_util.h).
#include "backends/cpu/index_util.h"

#include <algorithm>

#include "backends/cpu/nn_util.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_engine.h"
#include "crucible/core/error.h"
#include "crucible/ops/rules/indexing.h"

namespace crucible::cpu {

IndexValues::IndexValues(const Tensor& t) {
  if (t.dtype() == DType::Int64 && t.is_contiguous()) {
    data_ = t.data<int64_t>();
    return;
  }
  owned_ = Tensor::uninitialized(t.shape(), DType::Int64);
  copy_into(t, owned_);
  data_ = owned_.data<int64_t>();
}

Tensor contiguous_as(const Tensor& t, DType dt) {
  if (t.dtype() == dt && t.is_contiguous()) return t;
  return fresh_copy(t, dt);
}

Tensor fresh_copy(const Tensor& t, DType dt) {
  Tensor out = Tensor::uninitialized(t.shape(), dt);
  copy_to_contiguous(t, out);
  return out;
}

void copy_to_contiguous(const Tensor& t, const Tensor& out) {
  if (t.numel() == 0) return;
  if (t.dtype() == out.dtype() && t.is_contiguous()) {
    const int64_t bytes = t.numel() * static_cast<int64_t>(t.itemsize());
    const char* src = static_cast<const char*>(t.data_ptr());
    char* dst = static_cast<char*>(out.data_ptr());
    constexpr int64_t kMin = int64_t{1} << 18;
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(num_threads(), bytes / kMin));
    const int64_t step = ((bytes + parts - 1) / parts + 63) / 64 * 64;
    parallel_for(0, parts, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t lo = std::min(bytes, p * step), hi = std::min(bytes, (p + 1) * step);
        std::memcpy(dst + lo, src + lo, static_cast<size_t>(hi - lo));
      }
    });
    return;
  }
  copy_into(t, out);
}

DType accumulate_work(DType t) {
  if (is_integral(t, true)) return DType::Int64;
  return t == DType::Float64 ? DType::Float64 : DType::Float32;
}

bool any_extreme_f32(const float* p, int64_t n) {
  return any_above32(reinterpret_cast<const char*>(p), n, 0x58800000);
}

namespace {
template <typename T>
void gather_typed(T* dst, const T* src, const int64_t* off, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[off[i]];
}
}  // namespace

void gather_elements(char* dst, const char* src, const int64_t* off, int64_t n, size_t width) {
  switch (width) {
    case 1:
      return gather_typed(reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src),
                          off, n);
    case 2:
      return gather_typed(reinterpret_cast<uint16_t*>(dst), reinterpret_cast<const uint16_t*>(src),
                          off, n);
    case 4:
      return gather_typed(reinterpret_cast<uint32_t*>(dst), reinterpret_cast<const uint32_t*>(src),
                          off, n);
    case 8:
      return gather_typed(reinterpret_cast<uint64_t*>(dst), reinterpret_cast<const uint64_t*>(src),
                          off, n);
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * width, src + off[i] * width, width);
  }
}

void index_out_of_bounds(int64_t v, int64_t dim, int64_t size) {
  op_error("index " + std::to_string(v) + " is out of bounds for dimension " + std::to_string(dim) +
           " with size " + std::to_string(size));
}

bool has_scalar_mask(const std::vector<Tensor>& indices) {
  for (const Tensor& ix : indices)
    if (ix.defined() && (ix.dtype() == DType::Bool || ix.dtype() == DType::UInt8) && ix.dim() == 0)
      return true;
  return false;
}

namespace {

// nonzero() of a mask: one i64 coordinate tensor per mask dim, positions in row-major order.
std::vector<Tensor> mask_coordinates(const Tensor& mask) {
  const Tensor m = contiguous_as(mask, DType::UInt8);
  const uint8_t* p = m.data<uint8_t>();
  int64_t count = 0;
  for (int64_t i = 0; i < m.numel(); ++i) count += p[i] != 0;
  const int64_t nd = mask.dim();
  std::vector<Tensor> coords;
  std::vector<int64_t*> out;
  for (int64_t k = 0; k < nd; ++k) {
    coords.push_back(Tensor::uninitialized({count}, DType::Int64));
    out.push_back(coords.back().data<int64_t>());
  }
  std::vector<int64_t> pos(static_cast<size_t>(nd), 0);
  int64_t j = 0;
  for (int64_t i = 0; i < m.numel(); ++i) {
    if (p[i] != 0) {
      for (int64_t k = 0; k < nd; ++k) out[k][j] = pos[k];
      ++j;
    }
    for (int64_t k = nd - 1; k >= 0; --k) {
      if (++pos[k] < mask.size(k)) break;
      pos[k] = 0;
    }
  }
  return coords;
}

}  // namespace

IndexPlan make_index_plan(const Tensor& self, const std::vector<Tensor>& indices) {
  const int64_t nd = self.dim();
  std::vector<Tensor> per_dim;  // undefined = not indexed
  int64_t consumed = 0;
  for (const Tensor& ix : indices) {
    if (!ix.defined()) {
      per_dim.emplace_back();
      ++consumed;
      continue;
    }
    if (indexing::check_index_entry(self, ix, consumed)) {
      for (Tensor& c : mask_coordinates(ix)) per_dim.push_back(std::move(c));
      consumed += ix.dim();
      continue;
    }
    per_dim.push_back(ix);
    ++consumed;
  }
  indexing::check_index_count(nd, consumed);
  per_dim.resize(static_cast<size_t>(nd));
  IndexPlan plan;
  bool adjacent = true;
  for (int64_t d = 0; d < nd; ++d) {
    if (!per_dim[d].defined()) continue;
    if (plan.indexed.empty()) {
      plan.bshape = per_dim[d].shape();
    } else {
      if (d != plan.indexed.back() + 1) adjacent = false;
      try {
        plan.bshape = broadcast_shapes(plan.bshape, per_dim[d].shape());
      } catch (const Error&) {
        std::string shapes;
        for (const Tensor& o : per_dim)
          if (o.defined()) shapes += (shapes.empty() ? "" : ", ") + shape_str(o.shape());
        op_error("shape mismatch: indexing tensors could not be broadcast together with shapes " +
                 shapes);
      }
    }
    plan.indexed.push_back(d);
    plan.index.push_back(per_dim[d]);
  }
  if (plan.indexed.empty()) {
    for (int64_t d = 0; d < nd; ++d) plan.after.push_back(d);
    plan.result = self.shape();
    return plan;
  }
  for (int64_t d = 0; d < nd; ++d) {
    if (per_dim[d].defined()) continue;
    if (adjacent && d < plan.indexed.front())
      plan.before.push_back(d);
    else
      plan.after.push_back(d);
  }
  for (int64_t d : plan.before) plan.result.push_back(self.size(d));
  plan.result.insert(plan.result.end(), plan.bshape.begin(), plan.bshape.end());
  for (int64_t d : plan.after) plan.result.push_back(self.size(d));
  return plan;
}

std::vector<int64_t> index_offsets(const IndexPlan& plan, const Shape& self_shape,
                                   const Shape& strides) {
  const int64_t nb = numel_of(plan.bshape);
  std::vector<int64_t> off(static_cast<size_t>(nb), 0);
  for (size_t k = 0; k < plan.indexed.size(); ++k) {
    const int64_t d = plan.indexed[k];
    const int64_t size = self_shape[d], stride = strides[d];
    const Tensor& ix = plan.index[k];
    const IndexValues v(ix.shape() == plan.bshape ? ix : ix.expand(plan.bshape));
    bool bad = false;
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t x = v[b];
      bad |= x < -size || x >= size;
      off[b] += (x < 0 ? x + size : x) * stride;
    }
    if (bad)
      for (int64_t b = 0; b < nb; ++b)
        if (v[b] < -size || v[b] >= size) index_out_of_bounds(v[b], d, size);
  }
  return off;
}

std::vector<int64_t> dims_offsets(const std::vector<int64_t>& dims, const Shape& shape,
                                  const Shape& strides) {
  std::vector<int64_t> off{0};
  for (int64_t d : dims) {
    std::vector<int64_t> next;
    next.reserve(off.size() * static_cast<size_t>(shape[d]));
    for (int64_t o : off)
      for (int64_t k = 0; k < shape[d]; ++k) next.push_back(o + k * strides[d]);
    off.swap(next);
  }
  return off;
}

IndexWalk make_index_walk(const Tensor& index, int64_t dim, const Tensor& a, const Tensor& b) {
  IndexWalk w;
  w.nd = ndim_or_1(index);
  w.dim = dim;
  for (int64_t d = 0; d < w.nd; ++d) {
    w.shape.push_back(size_or_1(index, d));
    w.as.push_back(stride_or_1(a, d));
    w.bs.push_back(b.defined() ? stride_or_1(b, d) : 0);
  }
  w.last = w.shape.back();
  w.rows = w.last == 0 ? 0 : index.numel() / w.last;
  return w;
}

}  // namespace crucible::cpu
