// The `cpu` backend's sliding blocks: im2col (unfold), col2im (fold) and im2col_backward (fold
// with output_size = input_size). Both read their input at its own strides (the ConvBert
// traces pass transposed columns), so no contiguous copy is made. A block row of im2col is,
// along its faster axis, a shifted strided copy with zeros where the window leaves the input:
// the in-range interval is computed once per row. col2im sums each (n, c) plane's kh * kw
// contributions into a plane buffer (f32 for f16/bf16/f32, f64 for f64 and for calls with
// extreme values, see nn_util.h), planes spread over the pool. Checks follow ops/im2col.cpp.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/index_util.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/parallel.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

struct Pair {
  int64_t h = 0, w = 0;
};

Pair pair_arg(const Value& v, const char* name) {
  const std::vector<int64_t> l = v.to_int_list();
  if (l.size() != 2)
    op_error(std::string("It is expected ") + name + " equals to 2, but got size " +
             std::to_string(l.size()));
  return {l[0], l[1]};
}

std::string pair_str(Pair p) {
  return "(" + std::to_string(p.h) + ", " + std::to_string(p.w) + ")";
}

struct Blocks {
  Pair kernel, dilation, padding, stride;
};

Blocks check_blocks(const Value& k, const Value& d, const Value& p, const Value& s) {
  Blocks b{pair_arg(k, "kernel_size"), pair_arg(d, "dilation"), pair_arg(p, "padding"),
           pair_arg(s, "stride")};
  if (b.kernel.h <= 0 || b.kernel.w <= 0)
    op_error("kernel size should be greater than zero, but got kernel_height: " +
             std::to_string(b.kernel.h) + " kernel_width: " + std::to_string(b.kernel.w));
  if (b.dilation.h <= 0 || b.dilation.w <= 0)
    op_error("dilation should be greater than zero, but got dilation_height: " +
             std::to_string(b.dilation.h) + " dilation_width: " + std::to_string(b.dilation.w));
  if (b.padding.h < 0 || b.padding.w < 0)
    op_error("padding should be non-negative, but got pad_height: " + std::to_string(b.padding.h) +
             " pad_width: " + std::to_string(b.padding.w));
  if (b.stride.h <= 0 || b.stride.w <= 0)
    op_error("stride should be greater than zero, but got stride_height: " +
             std::to_string(b.stride.h) + " stride_width: " + std::to_string(b.stride.w));
  return b;
}

int64_t n_blocks(int64_t n, int64_t k, int64_t d, int64_t p, int64_t s) {
  return (n + 2 * p - (d * (k - 1) + 1)) / s + 1;
}

void check_dtype(DType t, const char* kernel) {
  if (!is_floating(t) || t == DType::Float8E4M3FN || t == DType::Float8E5M2)
    not_implemented_for(kernel, t);
}

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

// The geometry shared by both directions: image [n, c, h, w] at strides `is`, columns
// [n, c * kh * kw, oh * ow] at strides `cs`.
struct Geometry {
  int64_t n = 1, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t is[4] = {}, cs[3] = {};
  Blocks b;
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

Values im2col_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const Blocks b = check_blocks(a.value("kernel_size"), a.value("dilation"), a.value("padding"),
                                a.value("stride"));
  const bool batched = self.dim() == 4;
  const bool ok = (self.dim() == 3 || self.dim() == 4) && self.size(-3) != 0 &&
                  self.size(-2) != 0 && self.size(-1) != 0;
  if (!ok)
    op_error(
        "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
        "dimensions for input, but got: " +
        shape_str(self.shape()));
  Geometry g;
  g.b = b;
  g.n = batched ? self.size(0) : 1;
  g.c = self.size(-3);
  g.h = self.size(-2);
  g.w = self.size(-1);
  g.oh = n_blocks(g.h, b.kernel.h, b.dilation.h, b.padding.h, b.stride.h);
  g.ow = n_blocks(g.w, b.kernel.w, b.dilation.w, b.padding.w, b.stride.w);
  if (g.oh < 1 || g.ow < 1)
    op_error("Given input with spatial size (" + std::to_string(g.h) + ", " + std::to_string(g.w) +
             "), kernel_size=" + pair_str(b.kernel) + ", dilation=" + pair_str(b.dilation) +
             ", padding=" + pair_str(b.padding) +
             ", calculated shape of the array of sliding blocks as (" + std::to_string(g.oh) +
             ", " + std::to_string(g.ow) + "), but its components must be at least one.");
  check_dtype(self.dtype(), "im2col_out_cpu");
  for (int64_t d = 0; d < 4; ++d)
    g.is[d] = batched ? self.stride(d) : (d == 0 ? 0 : self.stride(d - 1));
  Shape out_shape{g.c * b.kernel.h * b.kernel.w, g.oh * g.ow};
  if (batched) out_shape.insert(out_shape.begin(), g.n);
  Tensor out = Tensor::uninitialized(out_shape, self.dtype());
  if (out.numel() == 0) return {out};
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
  return {out};
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

// col2im of `self` into output_size `size` (also im2col_backward).
Tensor fold(const Tensor& self, Pair size, const Blocks& b) {
  const bool batched = self.dim() == 3;
  const bool ok = (self.dim() == 2 || self.dim() == 3) && self.size(-2) != 0 && self.size(-1) != 0;
  if (!ok)
    op_error(
        "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
        "dimensions for input, but got: " +
        shape_str(self.shape()));
  const int64_t kk = b.kernel.h * b.kernel.w;
  const int64_t rows = self.size(-2), l = self.size(-1);
  if (rows % kk != 0)
    op_error(
        "Expected size of input's dimension 1 to be divisible by the product of "
        "kernel_size, but got input.size(1)=" +
        std::to_string(rows) + " and kernel_size=" + pair_str(b.kernel) + ".");
  Geometry g;
  g.b = b;
  g.oh = n_blocks(size.h, b.kernel.h, b.dilation.h, b.padding.h, b.stride.h);
  g.ow = n_blocks(size.w, b.kernel.w, b.dilation.w, b.padding.w, b.stride.w);
  const std::string geometry =
      "Given output_size=" + pair_str(size) + ", kernel_size=" + pair_str(b.kernel) +
      ", dilation=" + pair_str(b.dilation) + ", padding=" + pair_str(b.padding) +
      ", stride=" + pair_str(b.stride);
  if (l != g.oh * g.ow)
    op_error(geometry +
             ", expected size of input's dimension 2 to match the calculated number of sliding "
             "blocks " +
             std::to_string(g.oh) + " * " + std::to_string(g.ow) + " = " +
             std::to_string(g.oh * g.ow) + ", but got input.size(2)=" + std::to_string(l) + ".");
  if (g.oh < 1 || g.ow < 1)
    op_error(geometry + ", calculated shape of the array of sliding blocks as (" +
             std::to_string(g.oh) + ", " + std::to_string(g.ow) +
             "), which is too small (non-positive)");
  check_dtype(self.dtype(), "col2im_out_cpu");
  g.n = batched ? self.size(0) : 1;
  g.c = rows / kk;
  g.h = size.h;
  g.w = size.w;
  g.cs[0] = batched ? self.stride(0) : 0;
  g.cs[1] = self.stride(-2);
  g.cs[2] = self.stride(-1);
  Shape out_shape{g.c, g.h, g.w};
  if (batched) out_shape.insert(out_shape.begin(), g.n);
  const DType dt = self.dtype();
  if (numel_of(out_shape) == 0) return Tensor::uninitialized(out_shape, dt);
  if (dt != DType::Float64) {
    Tensor acc = Tensor::uninitialized(out_shape, DType::Float32);
    const bool extreme =
        dt == DType::Float32
            ? col2im_t<float>(static_cast<const float*>(self.data_ptr()), acc.data<float>(), g, dt)
            : col2im_t<float>(static_cast<const uint16_t*>(self.data_ptr()), acc.data<float>(), g,
                              dt);
    if (!extreme) return dt == DType::Float32 ? acc : fresh_copy(acc, dt);
  }
  Tensor acc = Tensor::uninitialized(out_shape, DType::Float64);
  if (dt == DType::Float64)
    col2im_t<double>(static_cast<const double*>(self.data_ptr()), acc.data<double>(), g, dt);
  else if (dt == DType::Float32)
    col2im_t<double>(static_cast<const float*>(self.data_ptr()), acc.data<double>(), g, dt);
  else
    col2im_t<double>(static_cast<const uint16_t*>(self.data_ptr()), acc.data<double>(), g, dt);
  return dt == DType::Float64 ? acc : fresh_copy(acc, dt);
}

Values col2im_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Pair size = pair_arg(a.value("output_size"), "output_size");
  const Blocks b = check_blocks(a.value("kernel_size"), a.value("dilation"), a.value("padding"),
                                a.value("stride"));
  return {fold(a.tensor("self"), size, b)};
}

Values im2col_backward_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Pair size = pair_arg(a.value("input_size"), "input_size");
  const Blocks b = check_blocks(a.value("kernel_size"), a.value("dilation"), a.value("padding"),
                                a.value("stride"));
  return {fold(a.tensor("grad_output"), size, b)};
}

std::vector<DType> every_dtype() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_im2col_kernels(KernelTable& t) {
  // Integral and bool inputs are taken so that they raise as ATen does; the catalog lists the
  // floating dtypes.
  t.add("aten.im2col.default", {im2col_kernel, nullptr, every_dtype()});
  t.add("aten.col2im.default", {col2im_kernel, nullptr, every_dtype()});
  t.add("aten.im2col_backward.default", {im2col_backward_kernel, nullptr, every_dtype()});
}

}  // namespace crucible::cpu
