// The cpu backend's any / all (.default, .dim, .dims). The result is bool (uint8 for a uint8
// input, as ATen keeps it); NaN counts as true; an empty reduction gives false (any) / true
// (all). A whole-tensor reduction of a contiguous f32/f64 or byte tensor scans it in place and
// stops at the first block that decides; other calls first turn the input into 0/1 bytes
// (x != 0, one pass of the elementwise engine) and reduce those as rows or columns.
#include <algorithm>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_ops.h"
#include "backends/cpu/reduction_kernels.h"
#include "backends/cpu/reduction_rows.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/reduction.h"

namespace crucible::cpu {
namespace {

bool is_byte(DType t) { return t == DType::Bool || t == DType::UInt8 || t == DType::Int8; }

// any/all of every element of x (numel > 0).
bool whole(const Tensor& x, bool is_any) {
  const RedKernels& k = red_kernels();
  if (x.is_contiguous()) {
    const int64_t n = x.numel();
    switch (x.dtype()) {
      case DType::Float32:
        return is_any ? k.f32.any_nonzero(x.data<float>(), n)
                      : k.f32.all_nonzero(x.data<float>(), n);
      case DType::Float64:
        return is_any ? k.f64.any_nonzero(x.data<double>(), n)
                      : k.f64.all_nonzero(x.data<double>(), n);
      default:
        if (is_byte(x.dtype())) {
          const auto* p = static_cast<const uint8_t*>(x.data_ptr());
          return is_any ? k.any_byte(p, n) : k.all_byte(p, n);
        }
    }
  }
  const Tensor nz = contiguous_as(x, DType::Bool);
  const auto* p = static_cast<const uint8_t*>(nz.data_ptr());
  return is_any ? k.any_byte(p, nz.numel()) : k.all_byte(p, nz.numel());
}

// Rows or columns of a floating view into o (outer * inner bytes).
template <typename T>
void anyall_floating(const StatLoops<T>& k, const RowsView& v, bool is_any, uint8_t* o) {
  const T* p = v.src.data<T>();
  if (v.inner == 1) {
    parallel_for(0, v.outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(v.red, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t r = lo; r < hi; ++r) {
                     const T* row = p + r * v.red;
                     o[r] =
                         (is_any ? k.any_nonzero(row, v.red) : k.all_nonzero(row, v.red)) ? 1 : 0;
                   }
                 });
    return;
  }
  const int64_t chunk = column_chunk(v.outer, v.inner);
  const int64_t nc = (v.inner + chunk - 1) / chunk;
  parallel_for(0, v.outer * nc, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t r = t / nc, j0 = (t % nc) * chunk, jn = std::min(chunk, v.inner - j0);
      uint8_t* acc = o + r * v.inner + j0;
      std::fill(acc, acc + jn, static_cast<uint8_t>(is_any ? 0 : 1));
      k.col_anyall(p + r * v.red * v.inner + j0, v.red, v.inner, jn, is_any, acc);
    }
  });
}

// Into `out` (contiguous bool, or uint8 for a uint8 input: the meta function's output).
void anyall(const Tensor& x, const stats::ReducePlan& plan, bool is_any, const Tensor& out) {
  auto* o = static_cast<uint8_t*>(out.data_ptr());
  const int64_t n = out.numel();
  if (n == 0) return;
  if (x.numel() == 0) {
    std::fill(o, o + n, static_cast<uint8_t>(is_any ? 0 : 1));
    return;
  }
  if (n == 1) {
    o[0] = whole(x, is_any) ? 1 : 0;
    return;
  }
  const RedKernels& k = red_kernels();
  if (x.dtype() == DType::Float32) {  // in place (or permuted once) as f32 rows or columns
    anyall_floating(k.f32, reduce_rows(x, plan.reduced, DType::Float32), is_any, o);
    return;
  }
  if (x.dtype() == DType::Float64) {
    anyall_floating(k.f64, reduce_rows(x, plan.reduced, DType::Float64), is_any, o);
    return;
  }
  // 0/1 bytes (a bool input is used as it is: any nonzero byte counts as true).
  const Tensor nz = x.dtype() == DType::Bool ? x : contiguous_as(x, DType::Bool);
  const RowsView v = reduce_rows(nz, plan.reduced, DType::Bool);
  const auto* p = static_cast<const uint8_t*>(v.src.data_ptr());
  if (v.inner == 1) {
    parallel_for(0, v.outer, std::max<int64_t>(1, 65536 / std::max<int64_t>(v.red, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t r = lo; r < hi; ++r) {
                     const uint8_t* row = p + r * v.red;
                     o[r] = (is_any ? k.any_byte(row, v.red) : k.all_byte(row, v.red)) ? 1 : 0;
                   }
                 });
  } else {
    parallel_for(0, v.outer, std::max<int64_t>(1, 65536 / std::max<int64_t>(v.red * v.inner, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t r = lo; r < hi; ++r) {
                     uint8_t* acc = o + r * v.inner;
                     std::fill(acc, acc + v.inner, static_cast<uint8_t>(is_any ? 0 : 1));
                     k.col_anyall_byte(p + r * v.red * v.inner, v.red, v.inner, v.inner, is_any,
                                       acc);
                   }
                 });
  }
}

// The reduction's plan (the meta function has checked the dims).
stats::ReducePlan plan_of(const Args& a) {
  const Tensor& x = a.tensor("self");
  if (!a.has("dim")) return stats::plan_reduction(x, {}, false);  // .default
  const Value& dim = a.value("dim");
  if (dim.kind() == ValueKind::Int)
    return stats::plan_reduction(x, {dim.to_int()}, a.flag("keepdim"));  // .dim
  // .dims: dim=None reduces every dim, dim=[] none.
  return stats::plan_reduction(x, stats::dims_of(dim), a.flag("keepdim"), !dim.is_none());
}

void any_into(const OpDef&, const Args& a, const Values& out) {
  anyall(a.tensor("self"), plan_of(a), true, out.at(0).tensor());
}
void all_into(const OpDef&, const Args& a, const Values& out) {
  anyall(a.tensor("self"), plan_of(a), false, out.at(0).tensor());
}

}  // namespace

void register_anyall_kernels(KernelTable& t) {
  const auto all = pw_all_dtypes();
  for (const char* ov : {"default", "dim", "dims"}) {
    t.add(std::string("aten.any.") + ov, {.dtypes = all, .run_into = &any_into});
    t.add(std::string("aten.all.") + ov, {.dtypes = all, .run_into = &all_into});
  }
}

}  // namespace crucible::cpu
