// The `cpu` backend's sliding blocks: im2col (unfold), col2im (fold) and im2col_backward (fold
// with output_size = input_size). Both read their input at its own strides (the ConvBert
// traces pass transposed columns), so no contiguous copy is made. A block row of im2col is,
// along its faster axis, a shifted strided copy with zeros where the window leaves the input:
// the in-range interval is computed once per row. col2im sums each (n, c) plane's kh * kw
// contributions into a plane buffer (f32 for f16/bf16/f32, f64 for f64 and for calls with
// extreme values, see nn_util.h), planes spread over the pool. The checks are the catalog's
// (crucible/ops/rules/im2col.h).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/index_util.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/im2col.h"

namespace crucible::cpu {
namespace {

using im2col::Blocks;

// The positions o in [0, count) with 0 <= o * step + off < size, as [lo, hi).
struct Range {
  int64_t lo = 0, hi = 0;
};
Range valid(int64_t count, int64_t step, int64_t off, int64_t size) {
  Range r;
  r.lo = off >= 0 ? 0 : (-off + step - 1) / step;
  r.hi = size - 1 - off < 0 ? 0 : (size - 1 - off) / step + 1;
  r.lo = std::min(r.lo, count);
  r.hi = std::clamp(r.hi, r.lo, count);
  return r;
}

// dst[o] = src[o * step] for o in [0, count) (elements of T).
template <typename T>
void strided_copy(T* dst, const T* src, int64_t step, int64_t count) {
  if (step == 1) {
    std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(T));
    return;
  }
  for (int64_t o = 0; o < count; ++o) dst[o] = src[o * step];
}

// The geometry shared by both directions (the catalog's checked geometry): image [n, c, h, w]
// at strides `is`, columns [n, c * kh * kw, oh * ow] at strides `cs`.
struct Geometry : im2col::Unfold {
  explicit Geometry(const im2col::Unfold& u) : im2col::Unfold(u) {}
  int64_t is[4] = {}, cs[3] = {};
};

template <typename T>
void im2col_t(const T* in, T* out, const Geometry& g) {
  const Blocks& b = g.b;
  const int64_t kk = b.kernel.h * b.kernel.w, l = g.oh * g.ow;
  parallel_for(0, g.n * g.c * kk, std::max<int64_t>(1, 16384 / std::max<int64_t>(l, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t in_n = r / (g.c * kk), row = r % (g.c * kk);
                   const int64_t c = row / kk, i = (row % kk) / b.kernel.w, j = row % b.kernel.w;
                   T* dst = out + r * l;
                   const int64_t offh = i * b.dilation.h - b.padding.h;
                   const int64_t offw = j * b.dilation.w - b.padding.w;
                   const Range ry = valid(g.oh, b.stride.h, offh, g.h);
                   const Range rx = valid(g.ow, b.stride.w, offw, g.w);
                   const T* plane = in + in_n * g.is[0] + c * g.is[1];
                   if (rx.lo == rx.hi || ry.lo == ry.hi) {
                     std::fill(dst, dst + l, T{});
                     continue;
                   }
                   if (g.ow == 1) {
                     // One column: the row runs along y.
                     std::fill(dst, dst + ry.lo, T{});
                     strided_copy(dst + ry.lo,
                                  plane + (ry.lo * b.stride.h + offh) * g.is[2] + offw * g.is[3],
                                  b.stride.h * g.is[2], ry.hi - ry.lo);
                     std::fill(dst + ry.hi, dst + l, T{});
                     continue;
                   }
                   std::fill(dst, dst + ry.lo * g.ow, T{});
                   for (int64_t y = ry.lo; y < ry.hi; ++y) {
                     T* d = dst + y * g.ow;
                     const T* s = plane + (y * b.stride.h + offh) * g.is[2];
                     std::fill(d, d + rx.lo, T{});
                     strided_copy(d + rx.lo, s + (rx.lo * b.stride.w + offw) * g.is[3],
                                  b.stride.w * g.is[3], rx.hi - rx.lo);
                     std::fill(d + rx.hi, d + g.ow, T{});
                   }
                   std::fill(dst + ry.hi * g.ow, dst + l, T{});
                 }
               });
}

void im2col_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& out = outputs[0].tensor();
  if (out.numel() == 0) return;
  Geometry g(im2col::im2col_plan(a));
  const bool batched = self.dim() == 4;
  for (int64_t d = 0; d < 4; ++d)
    g.is[d] = batched ? self.stride(d) : (d == 0 ? 0 : self.stride(d - 1));
  switch (self.itemsize()) {
    case 2:
      im2col_t(static_cast<const uint16_t*>(self.data_ptr()), out.data<uint16_t>(), g);
      break;
    case 4:
      im2col_t(static_cast<const uint32_t*>(self.data_ptr()), out.data<uint32_t>(), g);
      break;
    default:
      im2col_t(static_cast<const uint64_t*>(self.data_ptr()), out.data<uint64_t>(), g);
  }
}

// Loads element `i` of a floating tensor's data (f16/bf16/f32/f64) as W.
template <typename W>
inline W load_elem(const void* p, int64_t i, DType t) {
  switch (t) {
    case DType::Float32:
      return static_cast<W>(static_cast<const float*>(p)[i]);
    case DType::Float64:
      return static_cast<W>(static_cast<const double*>(p)[i]);
    case DType::Float16:
      return static_cast<W>(static_cast<float>(static_cast<const Half*>(p)[i]));
    default:
      return static_cast<W>(static_cast<float>(static_cast<const BFloat16*>(p)[i]));
  }
}

// Sums the columns into `out` (contiguous [n, c, h, w] of W). With W = float, returns whether
// a value read was extreme (the call is then computed again in f64).
template <typename W, typename S>
bool col2im_t(const S* cols, W* out, const Geometry& g, DType src_dtype) {
  const Blocks& b = g.b;
  const int64_t kk = b.kernel.h * b.kernel.w, hw = g.h * g.w;
  std::atomic<bool> extreme{false};
  parallel_for(0, g.n * g.c, std::max<int64_t>(1, 16384 / std::max<int64_t>(kk * g.oh * g.ow, 1)),
               [&](int64_t p0, int64_t p1) {
                 bool bad = false;
                 for (int64_t p = p0; p < p1; ++p) {
                   const int64_t in_n = p / g.c, c = p % g.c;
                   W* plane = out + p * hw;
                   std::fill(plane, plane + hw, W{});
                   for (int64_t i = 0; i < b.kernel.h; ++i) {
                     for (int64_t j = 0; j < b.kernel.w; ++j) {
                       const int64_t row = (c * b.kernel.h + i) * b.kernel.w + j;
                       const S* src = cols + in_n * g.cs[0] + row * g.cs[1];
                       const int64_t offh = i * b.dilation.h - b.padding.h;
                       const int64_t offw = j * b.dilation.w - b.padding.w;
                       const Range ry = valid(g.oh, b.stride.h, offh, g.h);
                       const Range rx = valid(g.ow, b.stride.w, offw, g.w);
                       // A value at (y, x) lands on plane[(y * sh + offh) * w + x * sw + offw];
                       // with one block column the walk runs along y.
                       const bool along_y = g.ow == 1;
                       const int64_t outer_lo = along_y ? 0 : ry.lo, outer_hi = along_y ? 1 : ry.hi;
                       const Range in = along_y ? ry : rx;
                       const int64_t dstep = along_y ? b.stride.h * g.w : b.stride.w;
                       const int64_t sstep = g.cs[2];
                       if (along_y && rx.lo == rx.hi) continue;
                       for (int64_t y = outer_lo; y < outer_hi; ++y) {
                         W* dst = plane + (along_y ? offh : y * b.stride.h + offh) * g.w + offw;
                         const S* s = src + (along_y ? 0 : y * g.ow) * sstep;
                         for (int64_t x = in.lo; x < in.hi; ++x) {
                           W v;
                           if constexpr (std::is_same_v<S, W>)
                             v = s[x * sstep];
                           else
                             v = load_elem<W>(s, x * sstep, src_dtype);
                           if constexpr (std::is_same_v<W, float>) {
                             uint32_t u;
                             std::memcpy(&u, &v, 4);
                             bad |= (u & 0x7fffffffu) > 0x58800000u;
                           }
                           dst[x * dstep] += v;
                         }
                       }
                     }
                   }
                 }
                 if (bad) extreme = true;
               });
  return extreme;
}

// col2im of `input_name` into the image size `size_name` (col2im and im2col_backward), into the
// meta function's output (contiguous, the input's dtype): summed in f32 (in the output itself when
// it is f32), or in f64 for f64 and for calls with extreme values.
void fold(const Args& a, const char* input_name, const char* size_name, const Value& out) {
  const Tensor& self = a.tensor(input_name);
  const Shape& out_shape = out.tensor().shape();
  if (numel_of(out_shape) == 0) return;
  Geometry g(im2col::fold_plan(a, input_name, size_name));
  const bool batched = self.dim() == 3;
  g.cs[0] = batched ? self.stride(0) : 0;
  g.cs[1] = self.stride(-2);
  g.cs[2] = self.stride(-1);
  const DType dt = self.dtype();
  if (dt != DType::Float64) {
    const Tensor acc = output_buffer(out, out_shape, DType::Float32);
    const bool extreme =
        dt == DType::Float32
            ? col2im_t<float>(static_cast<const float*>(self.data_ptr()), acc.data<float>(), g, dt)
            : col2im_t<float>(static_cast<const uint16_t*>(self.data_ptr()), acc.data<float>(), g,
                              dt);
    if (!extreme) return store_output(acc, out);
  }
  const Tensor acc = output_buffer(out, out_shape, DType::Float64);
  if (dt == DType::Float64)
    col2im_t<double>(static_cast<const double*>(self.data_ptr()), acc.data<double>(), g, dt);
  else if (dt == DType::Float32)
    col2im_t<double>(static_cast<const float*>(self.data_ptr()), acc.data<double>(), g, dt);
  else
    col2im_t<double>(static_cast<const uint16_t*>(self.data_ptr()), acc.data<double>(), g, dt);
  store_output(acc, out);
}

void col2im_kernel(const OpDef&, const Args& a, const Values& out) {
  fold(a, "self", "output_size", out[0]);
}

void im2col_backward_kernel(const OpDef&, const Args& a, const Values& out) {
  fold(a, "grad_output", "input_size", out[0]);
}

std::vector<DType> every_dtype() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_im2col_kernels(KernelTable& t) {
  // Integral and bool inputs are taken so that they raise as ATen does; the catalog lists the
  // floating dtypes.
  t.add("aten.im2col.default", {.dtypes = every_dtype(), .run_into = &im2col_kernel});
  t.add("aten.col2im.default", {.dtypes = every_dtype(), .run_into = &col2im_kernel});
  t.add("aten.im2col_backward.default",
        {.dtypes = every_dtype(), .run_into = &im2col_backward_kernel});
}

}  // namespace crucible::cpu
