// The `cpu` backend's negative log-likelihood loss: nll_loss_forward / nll_loss_backward and the
// 2-d (spatial) forms. The forward reads one element of self per target, so it is computed in
// f64 straight from the strided inputs (exactly the reference's arithmetic, rounded once). The
// backward's cost is its output: a zero tensor of self's shape, written by the pool, with one
// element per target set afterwards. The argument checks are the catalog's
// (ops/nll_loss_internal.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/nn.h"
#include "backends/cpu/parallel.h"
#include "crucible/core/error.h"
#include "ops/nll_loss_internal.h"

namespace crucible::cpu {
namespace {

// The geometry of a (self, target) call (the catalog's checked shape, ops/nll_loss_internal.h)
// with the strides: element e = (b, s) reads self at b * sb + cls * sc + s's spatial offset,
// and target at its own strides.
struct Geometry : nll::LossShape {
  int64_t sb = 0, sc = 0, sh = 0, sw = 0;  // self strides: batch, class, spatial
  int64_t tb = 0, th = 0, tw = 0;          // target strides
  int64_t self_at(int64_t e, int64_t cls) const {
    const int64_t s = e % (h * w), b = e / (h * w);
    return b * sb + cls * sc + (s / w) * sh + (s % w) * sw;
  }
  int64_t target_at(int64_t e) const {
    const int64_t s = e % (h * w), b = e / (h * w);
    return b * tb + (s / w) * th + (s % w) * tw;
  }
};

Geometry check_inputs(const Tensor& self, const Tensor& target, const Tensor& weight, bool two_d) {
  Geometry g;
  static_cast<nll::LossShape&>(g) = nll::check_inputs(self, target, weight, two_d);
  if (!two_d) {
    g.sc = self.stride(-1);
    if (self.dim() == 2) g.sb = self.stride(0);
    g.tb = target.dim() == 1 ? target.stride(0) : 0;
  } else {
    g.sb = self.stride(0);
    g.sc = self.stride(1);
    g.sh = self.stride(2);
    g.sw = self.stride(3);
    g.tb = target.stride(0);
    g.th = target.stride(1);
    g.tw = target.stride(2);
  }
  return g;
}

// The classes of every element in order (-1 where ignored); raises for the first target out of
// range, as the reference does.
std::vector<int64_t> classes(const Tensor& target, const Geometry& g, int64_t ignore) {
  std::vector<int64_t> cls(static_cast<size_t>(g.n));
  const char* base = static_cast<const char*>(target.data_ptr());
  const bool wide = target.dtype() == DType::Int64;
  for (int64_t e = 0; e < g.n; ++e) {
    const int64_t at = g.target_at(e);
    int64_t t = 0;
    if (wide) {
      std::memcpy(&t, base + at * 8, 8);
    } else {
      t = static_cast<uint8_t>(base[at]);
    }
    if (t == ignore) {
      cls[e] = -1;
      continue;
    }
    if (t < 0 || t >= g.c) op_error("Target " + std::to_string(t) + " is out of bounds.");
    cls[e] = t;
  }
  return cls;
}

// Element `i` (storage offset from the view's start) of a floating tensor, as a double.
double load(const Tensor& t, int64_t i) {
  return load_as_double(static_cast<const char*>(t.data_ptr()) + i * t.itemsize(), t.dtype());
}

// The class weight of class `cls` (1 without weights).
double class_weight(const Tensor& weight, int64_t cls) {
  return weight.defined() ? load(weight, cls * weight.stride(0)) : 1.0;
}

Values forward_kernel(const Values& a, bool two_d) {
  const Tensor& self = a.at(0).tensor();
  const Tensor& target = a.at(1).tensor();
  const Tensor weight = a.at(2).is_none() ? Tensor() : a.at(2).tensor();
  const int64_t reduction = a.at(3).to_int();
  const int64_t ignore = a.at(4).to_int();
  const Geometry g = check_inputs(self, target, weight, two_d);
  if (reduction < 0 || reduction > 2)
    op_error(std::to_string(reduction) + " is not a valid value for reduction");
  const std::vector<int64_t> cls = classes(target, g, ignore);
  const DType dt = self.dtype();
  const char* base = static_cast<const char*>(self.data_ptr());
  const int64_t isz = static_cast<int64_t>(self.itemsize());
  if (reduction == 0) {
    Tensor out = Tensor::uninitialized(g.none_shape, dt);
    char* o = static_cast<char*>(out.data_ptr());
    for (int64_t e = 0; e < g.n; ++e) {
      const int64_t t = cls[e];
      const double v = t < 0 ? 0.0 : -load(self, g.self_at(e, t)) * class_weight(weight, t);
      store_from_double(o + e * out.itemsize(), dt, v);
    }
    return {out, Tensor::zeros({}, dt)};
  }
  // Each element is a cache (and TLB) miss into a large self: the addresses of a chunk are
  // prefetched first so that the misses overlap. (The pool does not pay here: a few hundred
  // misses take less time than waking a worker.)
  constexpr int64_t kChunk = 64;
  double total = 0, sum = 0;
  for (int64_t e0 = 0; e0 < g.n; e0 += kChunk) {
    const int64_t e1 = std::min(g.n, e0 + kChunk);
    for (int64_t e = e0; e < e1; ++e)
      if (cls[e] >= 0) __builtin_prefetch(base + g.self_at(e, cls[e]) * isz);
    for (int64_t e = e0; e < e1; ++e) {
      const int64_t t = cls[e];
      if (t < 0) continue;
      const double w = class_weight(weight, t);
      sum += -load(self, g.self_at(e, t)) * w;
      total += w;
    }
  }
  const double result = reduction == 1 ? sum / total : sum;
  return {Tensor::scalar(result, dt), Tensor::scalar(total, dt)};
}

// Zeros `bytes` bytes at `p`, one block per thread (a large memset streams past the caches).
void parallel_zero(char* p, int64_t bytes) {
  constexpr int64_t kMin = int64_t{1} << 16;
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(num_threads(), bytes / kMin));
  const int64_t step = ((bytes + parts - 1) / parts + 63) / 64 * 64;
  parallel_for(0, parts, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t lo = std::min(bytes, b * step), hi = std::min(bytes, (b + 1) * step);
      std::memset(p + lo, 0, static_cast<size_t>(hi - lo));
    }
  });
}

Values backward_kernel(const Values& a, bool two_d) {
  const Tensor& grad = a.at(0).tensor();
  const Tensor& self = a.at(1).tensor();
  const Tensor& target = a.at(2).tensor();
  const Tensor weight = a.at(3).is_none() ? Tensor() : a.at(3).tensor();
  const int64_t reduction = a.at(4).to_int();
  const int64_t ignore = a.at(5).to_int();
  const Tensor& total_weight = a.at(6).tensor();
  const Geometry g = check_inputs(self, target, weight, two_d);
  nll::check_backward(grad, self, total_weight, reduction, g, two_d);
  const bool per_element = nll::per_element(reduction, self, two_d);
  const std::vector<int64_t> cls = classes(target, g, ignore);
  const DType dt = self.dtype();
  Tensor out = Tensor::uninitialized(self.shape(), dt);
  parallel_zero(static_cast<char*>(out.data_ptr()),
                out.numel() * static_cast<int64_t>(out.itemsize()));
  // The output is contiguous: its element (b, cls, s) is at (b * c + cls) * spatial + s.
  Geometry og = g;
  og.sc = g.h * g.w;
  og.sb = g.c * og.sc;
  og.sh = g.w;
  og.sw = 1;
  const double tw = load(total_weight, 0);
  // grad's element e, at grad's strides (a single element unless per_element).
  Geometry gg = g;
  if (per_element) {
    if (two_d) {
      gg.tb = grad.stride(0);
      gg.th = grad.stride(1);
      gg.tw = grad.stride(2);
    } else {
      gg.tb = grad.stride(0);
    }
  }
  const double g0 = per_element ? 0.0 : load(grad, 0);
  char* o = static_cast<char*>(out.data_ptr());
  for (int64_t e = 0; e < g.n; ++e) {
    const int64_t t = cls[e];
    if (t < 0) continue;
    const double go = per_element ? load(grad, gg.target_at(e)) : g0;
    const double scale = reduction == 1 ? go / tw : go;
    store_from_double(o + og.self_at(e, t) * out.itemsize(), dt, -scale * class_weight(weight, t));
  }
  return {out};
}

std::vector<DType> every_dtype() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_loss_kernels(KernelTable& t) {
  // Every dtype is taken so that the integral-self calls raise as ATen does; the catalog lists
  // the floating ones.
  t.add("aten.nll_loss_forward.default",
        {[](const OpDef&, const Values& a) { return forward_kernel(a, false); }, nullptr,
         every_dtype()});
  t.add("aten.nll_loss2d_forward.default",
        {[](const OpDef&, const Values& a) { return forward_kernel(a, true); }, nullptr,
         every_dtype()});
  t.add("aten.nll_loss_backward.default",
        {[](const OpDef&, const Values& a) { return backward_kernel(a, false); }, nullptr,
         every_dtype()});
  t.add("aten.nll_loss2d_backward.default",
        {[](const OpDef&, const Values& a) { return backward_kernel(a, true); }, nullptr,
         every_dtype()});
}

}  // namespace crucible::cpu
