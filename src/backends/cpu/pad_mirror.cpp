// The cpu backend's reflection_pad{1,2,3}d and replication_pad{1,2,3}d and their backward.
//
// Each padded dim has an index map (output index -> input index: reflected without repeating
// the edge, or clamped). Forward: output rows (one per index of the dims before the last) are
// produced in parallel chunks (shape_copy.h); the input row of an output row comes from the
// maps of the outer padded dims, and the last dim's map is cut once into runs that step +1
// (copied as one block), -1 (reflection) or 0 (replication). Backward: each input row is owned
// by one thread, which sums, in double and in the reference's order (output rows ascending,
// then columns), every output row that maps onto it, then rounds once.
//
// Destination-passing: the meta function (ops/padding.cpp: ATen's ReflectionPad.cpp and
// ReplicationPadding.cpp rules: pad sizes, input dims, reflection pads smaller than the input
// dim, the output size, the dtypes, grad_output's shape) checked the call and sized the output.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "backends/cpu/shape_kernels.h"
#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/core/half.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {

namespace {

enum class Kind { Reflect, Replicate };

std::string op_name(Kind k, int dims, bool backward) {
  return std::string(k == Kind::Reflect ? "reflection" : "replication") + "_pad" +
         std::to_string(dims) + "d" + (backward ? "_backward" : "");
}

// The input and output shapes and, per dim of the input, the output -> input index map (empty
// for dims that are not padded). The meta function (ops/padding.cpp) checked the call.
struct Plan {
  Shape in, out;
  std::vector<std::vector<int64_t>> maps;
};

Plan plan_of(Kind kind, int dims, const Shape& in, const Shape& out,
             const std::vector<int64_t>& pad) {
  const auto nd = static_cast<int64_t>(in.size());
  Plan p{in, out, std::vector<std::vector<int64_t>>(static_cast<size_t>(nd))};
  for (int k = 0; k < dims; ++k) {
    const int64_t d = nd - 1 - k, before = pad[static_cast<size_t>(2 * k)];
    std::vector<int64_t>& m = p.maps[static_cast<size_t>(d)];
    m.resize(static_cast<size_t>(out[d]));
    for (int64_t o = 0; o < out[d]; ++o) {
      int64_t i = o - before;
      if (kind == Kind::Replicate) {
        i = std::clamp<int64_t>(i, 0, in[d] - 1);
      } else {
        if (i < 0) i = -i;
        if (i >= in[d]) i = 2 * (in[d] - 1) - i;
      }
      m[static_cast<size_t>(o)] = i;
    }
  }
  return p;
}

int64_t mapped(const Plan& p, size_t d, int64_t o) { return p.maps[d].empty() ? o : p.maps[d][o]; }

// A run of the last dim's map: output [at, at + len) reads input start, start + step, ...
struct Run {
  int64_t at, len, start, step;
};

std::vector<Run> runs_of(const std::vector<int64_t>& m) {
  std::vector<Run> runs;
  for (int64_t j = 0; j < static_cast<int64_t>(m.size());) {
    const int64_t step = j + 1 < static_cast<int64_t>(m.size()) ? m[j + 1] - m[j] : 1;
    int64_t len = 1;
    if (step >= -1 && step <= 1)
      while (j + len < static_cast<int64_t>(m.size()) && m[j + len] - m[j + len - 1] == step) ++len;
    runs.push_back({j, len, m[static_cast<size_t>(j)], len > 1 ? step : 1});
    j += len;
  }
  return runs;
}

void forward(Kind kind, int dims, const Args& a, const Tensor& out) {
  const Tensor& x = a.tensor("self");
  const Plan p = plan_of(kind, dims, x.shape(), out.shape(), a.ints("padding"));
  if (out.numel() == 0) return;
  const auto nd = static_cast<int64_t>(p.out.size());
  const int64_t width = p.out[nd - 1], s_last = x.strides()[nd - 1];
  const std::vector<Run> runs = runs_of(p.maps[static_cast<size_t>(nd - 1)]);
  const char* base = static_cast<const char*>(x.data_ptr());
  const int64_t is = static_cast<int64_t>(x.itemsize());
  produce_bytes(static_cast<char*>(out.data_ptr()), out.numel() * is,
                [&](int64_t lo, int64_t hi, char* dst) {
                  const int64_t e1 = hi / is;
                  int64_t e = lo / is;
                  int64_t j = e % width;
                  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
                  for (int64_t d = nd - 2, rem = e / width; d >= 0; --d) {
                    idx[d] = rem % p.out[d];
                    rem /= p.out[d];
                  }
                  while (e < e1) {
                    const char* row = base;
                    for (int64_t d = 0; d < nd - 1; ++d)
                      row += mapped(p, static_cast<size_t>(d), idx[d]) * x.strides()[d] * is;
                    const int64_t j1 = std::min(width, j + (e1 - e));
                    for (const Run& r : runs) {
                      const int64_t a0 = std::max(j, r.at), a1 = std::min(j1, r.at + r.len);
                      if (a0 >= a1) continue;
                      const char* src = row + (r.start + (a0 - r.at) * r.step) * s_last * is;
                      char* to = dst + (a0 - j) * is;
                      if (r.step * s_last == 1)
                        copy_run(to, src, (a1 - a0) * is);
                      else
                        strided_elems(to, src, r.step * s_last, a1 - a0, is);
                    }
                    dst += (j1 - j) * is;
                    e += j1 - j;
                    j = 0;
                    for (int64_t d = nd - 2; d >= 0; --d) {
                      if (++idx[d] < p.out[d]) break;
                      idx[d] = 0;
                    }
                  }
                });
}

// acc[m[j]] += g[j] over one grad row (stride s), run by run in ascending j (the reference's
// order), converting each element as it is read: the row is never staged, so acc stays in L1.
template <typename T, typename Load>
void add_row(const std::vector<Run>& runs, const char* grow, int64_t s, double* acc, Load load) {
  const T* g = reinterpret_cast<const T*>(grow);
  for (const Run& run : runs) {
    double* to = acc + run.start;
    const T* from = g + run.at * s;
    if (run.step == 1 && s == 1) {
      for (int64_t k = 0; k < run.len; ++k) to[k] += load(from[k]);
    } else {
      for (int64_t k = 0; k < run.len; ++k) to[k * run.step] += load(from[k * s]);
    }
  }
}

void add_row(const std::vector<Run>& runs, const char* grow, int64_t s, DType t, double* acc) {
  switch (t) {
    case DType::Float32:
      return add_row<float>(runs, grow, s, acc, [](float v) { return double{v}; });
    case DType::Float64:
      return add_row<double>(runs, grow, s, acc, [](double v) { return v; });
    case DType::Float16:
      return add_row<uint16_t>(runs, grow, s, acc,
                               [](uint16_t v) { return double{half_to_float(v)}; });
    case DType::BFloat16:
      return add_row<uint16_t>(runs, grow, s, acc,
                               [](uint16_t v) { return double{bf16_to_float(v)}; });
    default:
      internal_error("pad backward: not a floating dtype");
  }
}

// n doubles rounded once into dtype t (contiguous).
void store_row(const double* in, DType t, char* p, int64_t n) {
  switch (t) {
    case DType::Float32:
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<float*>(p)[i] = static_cast<float>(in[i]);
      return;
    case DType::Float64:
      std::memcpy(p, in, static_cast<size_t>(n) * sizeof(double));
      return;
    case DType::Float16:
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(p)[i] = half_from_double(in[i]);
      return;
    case DType::BFloat16:
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(p)[i] = bf16_from_double(in[i]);
      return;
    default:
      internal_error("pad backward: not a floating dtype");
  }
}

void backward(Kind kind, int dims, const Args& a, const Tensor& gi) {
  const Tensor& g = a.tensor("grad_output");
  const Plan p = plan_of(kind, dims, gi.shape(), g.shape(), a.ints("padding"));
  if (gi.numel() == 0) return;
  const auto nd = static_cast<int64_t>(p.in.size());
  // For every outer dim and input index: the output indices that read it, ascending.
  std::vector<std::vector<std::vector<int64_t>>> inv(static_cast<size_t>(nd - 1));
  for (int64_t d = 0; d < nd - 1; ++d) {
    auto& v = inv[static_cast<size_t>(d)];
    v.resize(static_cast<size_t>(p.in[d]));
    for (int64_t o = 0; o < p.out[d]; ++o)
      v[static_cast<size_t>(mapped(p, static_cast<size_t>(d), o))].push_back(o);
  }
  // The last dim is always padded; its runs add grad columns in ascending order, as the
  // reference does.
  const std::vector<Run> runs = runs_of(p.maps[static_cast<size_t>(nd - 1)]);
  const int64_t w_in = p.in[nd - 1], w_out = p.out[nd - 1];
  const int64_t rows = gi.numel() / w_in;
  const char* gbase = static_cast<const char*>(g.data_ptr());
  const int64_t gis = static_cast<int64_t>(g.itemsize()), gs_last = g.strides()[nd - 1];
  char* obase = static_cast<char*>(gi.data_ptr());
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(w_out, 1));
  parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) {
    std::vector<double> acc(static_cast<size_t>(w_in));
    std::vector<int64_t> idx(static_cast<size_t>(nd), 0), pick(static_cast<size_t>(nd), 0);
    for (int64_t r = r0; r < r1; ++r) {
      for (int64_t d = nd - 2, rem = r; d >= 0; --d) {
        idx[d] = rem % p.in[d];
        rem /= p.in[d];
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      // Every combination of the output rows reading this input row, in row-major order.
      std::fill(pick.begin(), pick.end(), 0);
      bool any = true;
      for (int64_t d = 0; d < nd - 1; ++d)
        any = any && !inv[static_cast<size_t>(d)][static_cast<size_t>(idx[d])].empty();
      while (any) {
        const char* grow = gbase;
        for (int64_t d = 0; d < nd - 1; ++d)
          grow += inv[static_cast<size_t>(d)][static_cast<size_t>(idx[d])]
                     [static_cast<size_t>(pick[d])] *
                  g.strides()[d] * gis;
        add_row(runs, grow, gs_last, g.dtype(), acc.data());
        int64_t d = nd - 2;
        for (; d >= 0; --d) {
          const auto n =
              static_cast<int64_t>(inv[static_cast<size_t>(d)][static_cast<size_t>(idx[d])].size());
          if (++pick[d] < n) break;
          pick[d] = 0;
        }
        any = d >= 0;
      }
      store_row(acc.data(), g.dtype(), obase + r * w_in * gis, w_in);
    }
  });
}

template <Kind K, int D>
void pad_fwd(const OpDef&, const Args& a, const Values& out) {
  forward(K, D, a, out[0].tensor());
}

template <Kind K, int D>
void pad_bwd(const OpDef&, const Args& a, const Values& out) {
  backward(K, D, a, out[0].tensor());
}

}  // namespace

void register_pad_mirror_kernels(KernelTable& t) {
  const std::vector<DType> all = shape_dtypes();
  auto add = [&](Kind k, int d, KernelIntoFn fwd, KernelIntoFn bwd) {
    t.add("aten." + op_name(k, d, false) + ".default",
          {.supports = &shape_supports, .dtypes = all, .run_into = fwd});
    t.add("aten." + op_name(k, d, true) + ".default",
          {.supports = &shape_supports, .dtypes = all, .run_into = bwd});
  };
  add(Kind::Reflect, 1, &pad_fwd<Kind::Reflect, 1>, &pad_bwd<Kind::Reflect, 1>);
  add(Kind::Reflect, 2, &pad_fwd<Kind::Reflect, 2>, &pad_bwd<Kind::Reflect, 2>);
  add(Kind::Reflect, 3, &pad_fwd<Kind::Reflect, 3>, &pad_bwd<Kind::Reflect, 3>);
  add(Kind::Replicate, 1, &pad_fwd<Kind::Replicate, 1>, &pad_bwd<Kind::Replicate, 1>);
  add(Kind::Replicate, 2, &pad_fwd<Kind::Replicate, 2>, &pad_bwd<Kind::Replicate, 2>);
  add(Kind::Replicate, 3, &pad_fwd<Kind::Replicate, 3>, &pad_bwd<Kind::Replicate, 3>);
}

}  // namespace crucible::cpu
