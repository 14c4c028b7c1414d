// The `cpu` backend's pooling: max_pool{2,3}d_with_indices, adaptive_max_pool2d, avg_pool{2,3}d,
// _adaptive_avg_pool{2,3}d and their backwards, floating dtypes (f16/bf16 in f32). Planes
// (N * C) are split over the thread pool; each is computed by the plane kernels of
// pool_kernels.h, reading the input in place when its planes are contiguous (any N and C
// strides) and writing contiguous outputs, into the meta function's outputs (converted and laid
// out into them where they are not contiguous in the compute dtype). The window geometry is the
// catalog's own (crucible/ops/rules/pooling.h); the checks are the meta functions'.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/nn.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_engine.h"
#include "backends/cpu/pool_kernels.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/pooling.h"

namespace crucible::cpu {
namespace {

using pooling::Geo;

enum class Kind { Max, Avg };

struct PoolSpec {
  Kind kind = Kind::Max;
  bool count_include_pad = true;
  std::optional<int64_t> divisor_override;
};

// The plane geometry of a call; adaptive windows that tile the input evenly (I a multiple of
// O, identity and global pooling included) become window pooling with k = s = I / O.
PoolGeom geom_of(const Geo& geo, const PoolSpec& spec) {
  PoolGeom g;
  bool regular = true;
  for (int i = 0; i < 3; ++i) {
    g.in[i] = geo.in[i];
    g.out[i] = geo.out[i];
    g.k[i] = geo.k[i];
    g.s[i] = geo.s[i];
    g.p[i] = geo.p[i];
    g.d[i] = geo.d[i];
    regular = regular && geo.out[i] > 0 && geo.in[i] % geo.out[i] == 0;
  }
  if (geo.adaptive) {
    g.adaptive = !regular;
    for (int i = 0; i < 3 && regular; ++i) {
      g.k[i] = g.s[i] = geo.in[i] / geo.out[i];
      g.p[i] = 0;
      g.d[i] = 1;
    }
    return g;
  }
  g.count_include_pad = spec.count_include_pad;
  g.divisor = spec.divisor_override.value_or(0);
  return g;
}

// Whether average pooling over `g` is the identity (1x1 windows, stride 1, adaptive pooling
// to the input's size): the output is a copy of the input, the grad_input one of the grad.
bool avg_identity(const PoolGeom& g) {
  bool id = !g.adaptive && (g.divisor == 0 || g.divisor == 1);
  for (int i = 0; i < 3; ++i) id = id && g.k[i] == 1 && g.s[i] == 1 && g.p[i] == 0 && g.d[i] == 1;
  return id;
}

// Whether the last `nsp` dims of `t` are laid out contiguously (a plane is one block).
bool planes_contiguous(const Tensor& t, int64_t nsp) {
  int64_t expect = 1;
  for (int64_t i = 1; i <= nsp; ++i) {
    if (t.size(-i) != 1 && t.stride(-i) != expect) return false;
    expect *= t.size(-i);
  }
  return true;
}

// `t` in dtype `ct` with contiguous planes: t itself when it already is such, else a
// contiguous copy.
Tensor planes_in(const Tensor& t, int64_t nsp, DType ct) {
  if (t.dtype() == ct && planes_contiguous(t, nsp)) return t;
  Tensor c = Tensor::uninitialized(t.shape(), ct);
  if (t.numel() == 0) return c;
  const Tensor ins[] = {t};
  pw_run(PwOp::Identity, ins, c, compute_for(t.dtype()), PwParams{});
  return c;
}

// The element offset of plane `pl` (leading dims [N, C] or [C]) in `t`.
int64_t plane_at(const Tensor& t, int64_t nsp, int64_t pl) {
  if (t.dim() - nsp == 1) return pl * t.stride(0);
  const int64_t c = t.size(1);
  return (pl / c) * t.stride(0) + (pl % c) * t.stride(1);
}

int64_t grain(const PoolGeom& g) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(g.in_plane() + g.out_plane(), 1));
}

// Backward outputs (grad_input) of at least this many bytes are written plane by plane through
// a scratch plane and streamed past the caches: a streaming store saves the read of each line
// before it is written, and such outputs exceed the private caches anyway. (Measured: it pays
// for the backwards, whose output is the large tensor, not for the forwards, whose outputs are
// a fraction of the input and whose planes are often too small for whole streamed lines.)
constexpr int64_t kStreamBytes = int64_t{4} << 20;

// Where a plane's output goes: the output itself, or (streamed) a scratch plane copied to it
// by done().
template <typename T>
class PlaneOut {
 public:
  PlaneOut(T* out, int64_t plane, bool stream)
      : out_(out), plane_(plane), stage_(stream ? static_cast<size_t>(plane) : 0) {}
  T* at(int64_t pl) { return stage_.empty() ? out_ + pl * plane_ : stage_.data(); }
  void done(int64_t pl) {
    if (!stage_.empty())
      pool_stream_copy(out_ + pl * plane_, stage_.data(), plane_ * static_cast<int64_t>(sizeof(T)));
  }
  ~PlaneOut() {
    if (!stage_.empty()) pool_stream_fence();
  }

 private:
  T* out_;
  int64_t plane_;
  std::vector<T> stage_;
};

template <typename E>
void forward_planes(const Geo& geo, const PoolGeom& g, Kind kind, const Tensor& xs, E* y,
                    int64_t* idx) {
  const int64_t nsp = geo.nsp, op = g.out_plane();
  const E* x = xs.data<E>();
  const bool vec = std::is_same_v<E, float> && pool_vector_ok(g);
  parallel_for(0, geo.planes, grain(g), [&](int64_t p0, int64_t p1) {
    PoolScratch scratch;
    if (vec) pool_prepare(g, scratch);
    for (int64_t pl = p0; pl < p1; ++pl) {
      const E* xp = x + plane_at(xs, nsp, pl);
      E* yp = y + pl * op;
      int64_t* ip = idx ? idx + pl * op : nullptr;
      if constexpr (std::is_same_v<E, float>) {
        if (vec && kind == Kind::Max) {
          pool_kernels().max_fwd(g, xp, yp, ip, scratch);
          continue;
        }
        if (vec && pool_kernels().avg_fwd(g, xp, yp, scratch)) continue;
      }
      if constexpr (std::is_integral_v<E>)
        pool_avg_plane(g, xp, yp);
      else if (kind == Kind::Max)
        pool_max_plane(g, xp, yp, ip);
      else
        pool_avg_plane(g, xp, yp);
    }
  });
}

// Into the meta function's outputs: `outs[0]` the pooled values, and for max pooling
// `outs[1]` the indices.
void run_forward(const Geo& geo, const PoolSpec& s, const Tensor& self, const Values& outs) {
  const PoolGeom g = geom_of(geo, s);
  const Tensor& out = outs.at(0).tensor();
  const bool with_index = s.kind == Kind::Max;
  if (!with_index && avg_identity(g)) {
    copy_into(self, out);
    return;
  }
  if (geo.planes == 0) return;
  const Tensor idx = with_index ? output_buffer(outs.at(1), geo.out_shape, DType::Int64) : Tensor();
  int64_t* ip = with_index ? idx.data<int64_t>() : nullptr;
  const DType ct = self.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const Tensor y = output_buffer(outs.at(0), geo.out_shape, ct);
  if (ct == DType::Float64)
    forward_planes(geo, g, s.kind, planes_in(self, geo.nsp, ct), y.data<double>(), ip);
  else
    forward_planes(geo, g, s.kind, planes_in(self, geo.nsp, ct), y.data<float>(), ip);
  store_output(y, outs.at(0));
  if (with_index) store_output(idx, outs.at(1));
}

template <typename E>
void backward_planes(const Geo& geo, const PoolGeom& g, Kind kind, const Tensor& gos,
                     const Tensor& ind, E* gi) {
  const int64_t nsp = geo.nsp, ip = g.in_plane(), op = g.out_plane();
  const E* go = gos.data<E>();
  const int64_t* ix = kind == Kind::Max ? ind.data<int64_t>() : nullptr;
  const bool vec = std::is_same_v<E, float> && kind == Kind::Avg && pool_vector_ok(g);
  const bool stream =
      std::is_same_v<E, float> && geo.planes * ip * static_cast<int64_t>(sizeof(E)) >= kStreamBytes;
  parallel_for(0, geo.planes, grain(g), [&](int64_t p0, int64_t p1) {
    PoolScratch scratch;
    if (vec) pool_prepare(g, scratch);
    std::vector<double> acc;
    PlaneOut<E> gs(gi, ip, stream);
    for (int64_t pl = p0; pl < p1; ++pl) {
      const E* gp = go + plane_at(gos, nsp, pl);
      E* out = gs.at(pl);
      if constexpr (std::is_integral_v<E>) {
        pool_avg_backward_plane(g, gp, out, acc);
      } else if (kind == Kind::Max) {
        const int64_t* xp = ix + plane_at(ind, nsp, pl);
        bool done = false;
        if constexpr (std::is_same_v<E, float>)
          done = pool_max_backward_plane_f32(gp, xp, op, ip, out);
        if (!done) pool_max_backward_plane(gp, xp, op, ip, out, acc);
      } else {
        bool done = false;
        if constexpr (std::is_same_v<E, float>)
          done = vec && pool_kernels().avg_bwd(g, gp, out, scratch);
        if (!done) pool_avg_backward_plane(g, gp, out, acc);
      }
      gs.done(pl);
    }
  });
}

// Into the meta function's grad_input `gi` (self's shape, grad_output's dtype).
void run_backward(const Geo& geo, const PoolSpec& s, const Tensor& grad_out, const Tensor& indices,
                  const Value& out) {
  const Tensor& gi = out.tensor();
  const PoolGeom g = geom_of(geo, s);
  if (geo.planes == 0) return;
  if (s.kind == Kind::Avg && avg_identity(g)) {
    copy_into(grad_out, gi);
    return;
  }
  const Tensor ind = s.kind == Kind::Max ? planes_in(indices, geo.nsp, DType::Int64) : Tensor();
  const DType dt = gi.dtype();
  // f64 and (average pooling's) int64 in their own dtype, the others in f32.
  const DType ct = dt == DType::Float64 || dt == DType::Int64 ? dt : DType::Float32;
  const Tensor r = output_buffer(out, gi.shape(), ct);
  const Tensor go = planes_in(grad_out, geo.nsp, ct);
  if (ct == DType::Float64)
    backward_planes(geo, g, s.kind, go, ind, r.data<double>());
  else if (ct == DType::Int64)
    backward_planes(geo, g, s.kind, go, ind, r.data<int64_t>());
  else
    backward_planes(geo, g, s.kind, go, ind, r.data<float>());
  store_output(r, out);
}

// The kernels below compute into their op's meta function's outputs (KernelEntry::run_into):
// the argument, dtype and shape checks are the meta function's (src/ops/pooling*.cpp), run
// before the kernel; the geometry is worked out again from the same rules.

template <int N>
void max_pool_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& self = a.tensor("self");
  const Geo g = pooling::window_geo(N == 2 ? "max_pool2d" : "max_pool3d", self, N,
                                    a.value("kernel_size"), a.value("stride"), a.value("padding"),
                                    &a.value("dilation"), a.flag("ceil_mode"));
  run_forward(g, PoolSpec{Kind::Max}, self, outs);
}

template <int N>
void max_pool_backward_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& self = a.tensor("self");
  const Geo g = pooling::window_geo(N == 2 ? "max_pool2d" : "max_pool3d", self, N,
                                    a.value("kernel_size"), a.value("stride"), a.value("padding"),
                                    &a.value("dilation"), a.flag("ceil_mode"));
  run_backward(g, PoolSpec{Kind::Max}, a.tensor("grad_output"), a.tensor("indices"), outs.at(0));
}

void adaptive_max_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& self = a.tensor("self");
  const Geo g = pooling::adaptive_geo("adaptive_max_pool2d", self, 2, a.value("output_size"));
  run_forward(g, PoolSpec{Kind::Max}, self, outs);
}

void adaptive_max_backward_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& go = a.tensor("grad_output");
  const Tensor& self = a.tensor("self");
  const Geo g = pooling::adaptive_geo("adaptive_max_pool2d", self, 2,
                                      Value(std::vector<int64_t>{go.size(-2), go.size(-1)}));
  run_backward(g, PoolSpec{Kind::Max}, go, a.tensor("indices"), outs.at(0));
}

PoolSpec avg_spec(const Args& a) {
  return PoolSpec{Kind::Avg, a.flag("count_include_pad"), a.value("divisor_override").opt_int()};
}

template <int N>
void avg_pool_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& self = a.tensor("self");
  const Geo g =
      pooling::window_geo(N == 2 ? "avg_pool2d" : "avg_pool3d", self, N, a.value("kernel_size"),
                          a.value("stride"), a.value("padding"), nullptr, a.flag("ceil_mode"));
  run_forward(g, avg_spec(a), self, outs);
}

template <int N>
void avg_pool_backward_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& self = a.tensor("self");
  const Geo g =
      pooling::window_geo(N == 2 ? "avg_pool2d" : "avg_pool3d", self, N, a.value("kernel_size"),
                          a.value("stride"), a.value("padding"), nullptr, a.flag("ceil_mode"));
  run_backward(g, avg_spec(a), a.tensor("grad_output"), Tensor(), outs.at(0));
}

template <int N>
void adaptive_avg_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& self = a.tensor("self");
  const Geo g = pooling::adaptive_geo(N == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d", self,
                                      N, a.value("output_size"));
  run_forward(g, PoolSpec{Kind::Avg}, self, outs);
}

template <int N>
void adaptive_avg_backward_kernel(const OpDef&, const Args& a, const Values& outs) {
  const Tensor& go = a.tensor("grad_output");
  const Tensor& self = a.tensor("self");
  std::vector<int64_t> os;
  for (int64_t i = N; i >= 1; --i) os.push_back(go.size(-i));
  const Geo g = pooling::adaptive_geo(N == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d", self,
                                      N, Value(os));
  run_backward(g, PoolSpec{Kind::Avg}, go, Tensor(), outs.at(0));
}

// Floating dtypes; average pooling takes int64 too; the other integer dtypes and bool are taken
// to raise ATen's dispatch error (pooling::check_dtype).
std::vector<DType> pool_dtypes() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_pool_kernels(KernelTable& t) {
  const std::vector<DType> d = pool_dtypes();
  t.add("aten.max_pool2d_with_indices.default", {.dtypes = d, .run_into = &max_pool_kernel<2>});
  t.add("aten.max_pool3d_with_indices.default", {.dtypes = d, .run_into = &max_pool_kernel<3>});
  t.add("aten.max_pool2d_with_indices_backward.default",
        {.dtypes = d, .run_into = &max_pool_backward_kernel<2>});
  t.add("aten.max_pool3d_with_indices_backward.default",
        {.dtypes = d, .run_into = &max_pool_backward_kernel<3>});
  t.add("aten.adaptive_max_pool2d.default", {.dtypes = d, .run_into = &adaptive_max_kernel});
  t.add("aten.adaptive_max_pool2d_backward.default",
        {.dtypes = d, .run_into = &adaptive_max_backward_kernel});
  t.add("aten.avg_pool2d.default", {.dtypes = d, .run_into = &avg_pool_kernel<2>});
  t.add("aten.avg_pool3d.default", {.dtypes = d, .run_into = &avg_pool_kernel<3>});
  t.add("aten.avg_pool2d_backward.default",
        {.dtypes = d, .run_into = &avg_pool_backward_kernel<2>});
  t.add("aten.avg_pool3d_backward.default",
        {.dtypes = d, .run_into = &avg_pool_backward_kernel<3>});
  t.add("aten._adaptive_avg_pool2d.default", {.dtypes = d, .run_into = &adaptive_avg_kernel<2>});
  t.add("aten._adaptive_avg_pool3d.default", {.dtypes = d, .run_into = &adaptive_avg_kernel<3>});
  t.add("aten._adaptive_avg_pool2d_backward.default",
        {.dtypes = d, .run_into = &adaptive_avg_backward_kernel<2>});
  t.add("aten._adaptive_avg_pool3d_backward.default",
        {.dtypes = d, .run_into = &adaptive_avg_backward_kernel<3>});
}

}  // namespace crucible::cpu
