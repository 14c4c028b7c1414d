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

Values anyall(const Tensor& x, const stats::ReducePlan& plan, bool is_any) {
  const DType out_dt = x.dtype() == DType::UInt8 ? DType::UInt8 : DType::Bool;
  Tensor out = Tensor::uninitialized(plan.out_shape, out_dt);
  auto* o = static_cast<uint8_t*>(out.data_ptr());
  const int64_t n = out.numel();
  if (n == 0) return {Value(out)};
  if (x.numel() == 0) {
    std::fill(o, o + n, static_cast<uint8_t>(is_any ? 0 : 1));
    return {Value(out)};
  }
  if (n == 1) {
    o[0] = whole(x, is_any) ? 1 : 0;
    return {Value(out)};
  }
  const RedKernels& k = red_kernels();
  if (x.dtype() == DType::Float32) {  // in place (or permuted once) as f32 rows or columns
    anyall_floating(k.f32, reduce_rows(x, plan.reduced, DType::Float32), is_any, o);
    return {Value(out)};
  }
  if (x.dtype() == DType::Float64) {
    anyall_floating(k.f64, reduce_rows(x, plan.reduced, DType::Float64), is_any, o);
    return {Value(out)};
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
  return {Value(out)};
}

Values any_all_default(const Args& a, bool is_any) {
  const Tensor& x = a.tensor("self");
  return anyall(x, stats::plan_reduction(x, {}, false), is_any);
}
Values any_all_dim(const Args& a, bool is_any) {
  const Tensor& x = a.tensor("self");
  return anyall(x, stats::plan_reduction(x, {a.integer("dim")}, a.flag("keepdim")), is_any);
}
// .dims: dim=None reduces every dim, dim=[] none.
Values any_all_dims(const Args& a, bool is_any) {
  const Tensor& x = a.tensor("self");
  const bool none = !a.given("dim");
  return anyall(x,
                stats::plan_reduction(x, stats::dims_of(a.value("dim")), a.flag("keepdim"), !none),
                is_any);
}

Values any_default(const OpDef& op, const Values& a) {
  return any_all_default(Args(a, op.schema), true);
}
Values all_default(const OpDef& op, const Values& a) {
  return any_all_default(Args(a, op.schema), false);
}
Values any_dim(const OpDef& op, const Values& a) { return any_all_dim(Args(a, op.schema), true); }
Values all_dim(const OpDef& op, const Values& a) { return any_all_dim(Args(a, op.schema), false); }
Values any_dims(const OpDef& op, const Values& a) { return any_all_dims(Args(a, op.schema), true); }
Values all_dims(const OpDef& op, const Values& a) {
  return any_all_dims(Args(a, op.schema), false);
}

}  // namespace

void register_anyall_kernels(KernelTable& t) {
  const auto all = pw_all_dtypes();
  t.add("aten.any.default", {&any_default, nullptr, all});
  t.add("aten.all.default", {&all_default, nullptr, all});
  t.add("aten.any.dim", {&any_dim, nullptr, all});
  t.add("aten.all.dim", {&all_dim, nullptr, all});
  t.add("aten.any.dims", {&any_dims, nullptr, all});
  t.add("aten.all.dims", {&all_dims, nullptr, all});
}

}  // namespace crucible::cpu
