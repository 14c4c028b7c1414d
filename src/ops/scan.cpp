// Scans: aten.cumsum.default, aten.cumprod.default, aten.cumsum_.default.
//
// Reference semantics (PyTorch 2.x, CPU; ReduceOps.cpp cum_sum_meta / cumsum_out):
//  - the result dtype is dtype= when given, else i64 for bool and integer inputs and the input
//    dtype otherwise; the input is converted to the result dtype first (cumsum of [1.5, 2.7]
//    with dtype=i64 is [1, 3]); integer scans wrap in the result width.
//  - dim wraps; a 0-d input accepts 0 and -1 and is returned as is; an empty input gives an
//    empty result.
//  - cumsum_ (in place) keeps self's dtype: an i32 self accumulates (and wraps) in i32, and a
//    dtype= different from self's raises ("Bad in-place call: input tensor dtype ... and output
//    tensor dtype ... should match").
//  - floating scans accumulate in double on the CPU (acc_type), so the f64 reference rounding
//    each prefix once is what ATen computes up to the last bit of f64.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"
#include "ops/statistics_internal.h"

namespace crucible {
namespace {

using namespace samples;

// The scan kernel's dtype dispatch, for a source of dtype `src` and a result of dtype `dt`.
void check_scan_dtypes(DType src, DType dt, bool product) {
  if (dt == DType::Float8E4M3FN || dt == DType::Float8E5M2 || src == DType::Float8E4M3FN ||
      src == DType::Float8E5M2)
    not_implemented_for(product ? "cumprod_out_cpu" : "cumsum_out_cpu", dt);
}

// Scans `src` along `dim` into `out` (same shape; `out` has the result dtype; the dtypes checked
// by the meta function).
void scan_into(const Tensor& src, const Tensor& out, int64_t dim, bool product) {
  const DType dt = out.dtype();
  const stats::Rows rows = stats::rows_of(src.shape(), dim);
  const bool integral = is_integral(dt, /*include_bool=*/true);
  const bool convert = src.dtype() != dt;
  // Values are read first (the source may be `out` itself, for cumsum_).
  std::vector<double> fv(static_cast<size_t>(src.numel()));
  std::vector<int64_t> iv(static_cast<size_t>(src.numel()));
  for (int64_t i = 0; i < src.numel(); ++i) {
    if (integral) {
      if (is_floating(src.dtype())) {
        alignas(8) unsigned char buf[8] = {};
        store_from_double(buf, dt, src.get(i));  // ATen's float -> integer conversion
        iv[static_cast<size_t>(i)] = load_as_int(buf, dt);
      } else {
        iv[static_cast<size_t>(i)] = src.get_int(i);
      }
    } else {
      const double v = stats::element(src, i);
      fv[static_cast<size_t>(i)] = convert ? stats::round_to(v, dt) : v;
    }
  }
  for (int64_t r = 0; r < rows.count(); ++r) {
    uint64_t iacc = product ? 1 : 0;
    double facc = product ? 1.0 : 0.0;
    for (int64_t k = 0; k < rows.len; ++k) {
      const int64_t at = rows.at(r, k);
      if (integral) {
        const auto v = static_cast<uint64_t>(iv[static_cast<size_t>(at)]);
        iacc = product ? iacc * v : iacc + v;
        out.set_int(at, static_cast<int64_t>(iacc));
      } else {
        const double v = fv[static_cast<size_t>(at)];
        facc = product ? facc * v : facc + v;
        out.set(at, facc);
      }
    }
  }
}

// The scanned dim, wrapped (a 0-d input accepts 0 and -1).
int64_t scan_dim(const Args& a) {
  const Tensor& self = a.tensor("self");
  const int64_t dim = self.dim() == 0 ? 0 : wrap_dim(a.integer("dim"), self.dim());
  if (self.dim() == 0) wrap_dim(a.integer("dim"), 0);
  return dim;
}

// The result dtype of cumsum/cumprod.
DType scan_dtype(const Args& a) {
  const Tensor& self = a.tensor("self");
  const std::optional<DType> dtype = a.opt_dtype("dtype");
  return dtype ? *dtype
               : (is_integral(self.dtype(), /*include_bool=*/true) ? DType::Int64 : self.dtype());
}

Values scan_meta(const Args& a, bool product) {
  const Tensor& self = a.tensor("self");
  scan_dim(a);
  const DType dt = scan_dtype(a);
  check_scan_dtypes(self.dtype(), dt, product);
  return {meta::fresh(self.shape(), dt)};
}

// cumsum/cumprod into their output (meta: scan_meta).
void scan_impl(const Args& a, const Values& out, bool product) {
  scan_into(a.tensor("self"), out.at(0).tensor(), scan_dim(a), product);
}

// cumsum_'s checks; returns the wrapped dim.
int64_t cumsum_inplace_dim(const Args& a) {
  const Tensor& self = a.tensor("self");
  const int64_t dim = scan_dim(a);
  if (auto dtype = a.opt_dtype("dtype"); dtype && *dtype != self.dtype())
    op_error("Bad in-place call: input tensor dtype " +
             std::string(dtype_cpp_type_name(self.dtype())) + " and output tensor dtype " +
             std::string(dtype_cpp_type_name(*dtype)) + " should match");
  return dim;
}

Values cumsum_inplace_meta(const Args& a) {
  cumsum_inplace_dim(a);
  check_scan_dtypes(a.tensor("self").dtype(), a.tensor("self").dtype(), /*product=*/false);
  return {a.value("self")};
}

// cumsum_ into self (meta: cumsum_inplace_meta): each element is read before it is written.
void cumsum_inplace_impl(const Args& a, const Values& out) {
  scan_into(a.tensor("self"), out.at(0).tensor(), scan_dim(a), /*product=*/false);
}

// Each prefix is a sum (product) of up to `len` terms: sqrt(len) widening, as for sums.
ComparePolicy scan_compare(Schema schema) {
  ComparePolicy c;
  c.tol_scale = [schema = std::move(schema)](const Values& values) {
    const Args a(values, schema);
    if (a.size() <= a.index("dim") || !a.value("self").is_tensor() || a.tensor("self").dim() == 0)
      return 1.0;
    const Tensor& t = a.tensor("self");
    const int64_t d = a.integer("dim");
    if (d < -t.dim() || d >= t.dim()) return 1.0;
    return std::sqrt(static_cast<double>(std::max<int64_t>(t.size(d), 1)));
  };
  return c;
}

Cost scan_cost(const Args& a, const Values& out) { return stats::read_write_cost(a, "self", out); }

std::vector<Sample> scan_samples(const SampleContext& ctx, bool product, bool inplace) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  const std::string fill = product ? "positive" : "";
  auto data = [&](const Shape& s, DType t) { return fill.empty() ? T(s, t) : T_fill(s, t, fill); };
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(
          make("rows of [4096, 4096] " + dtype_code_str(t), {data({4096, 4096}, t), I(-1)}));
      out.push_back(
          make("columns of [4096, 4096] " + dtype_code_str(t), {data({4096, 4096}, t), I(0)}));
    }
    out.push_back(make("rows of [4096, 4096] i64", {T({4096, 4096}, DType::Int64), I(1)}));
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("rows " + dtype_code_str(t), {T({5, 9}, t), I(1)}));
    out.push_back(make("3-d dim 0 " + dtype_code_str(t), {T({4, 3, 5}, t), I(0)}));
  }
  for (DType t : {f32, DType::Float16, DType::Int32}) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("negative dim" + d, {T({4, 5, 6}, t), I(-1)}));
    out.push_back(make("transposed" + d, {T_transposed(9, 7, t), I(0)}));
    out.push_back(make("sliced with a step" + d, {T({3, 5}, t, {10, 2}), I(1)}));
    if (!inplace) out.push_back(make("expanded (stride 0)" + d, {T({4, 6}, t, {0, 1}), I(0)}));
  }
  out.push_back(make("1-d long", {data({300}, f32), I(0)}));
  out.push_back(make("long rows bf16", {data({2, 200}, DType::BFloat16), I(1)}));
  out.push_back(make("0-d, dim 0", {T({}, f32), I(0)}));
  out.push_back(make("0-d i32, dim -1", {T({}, DType::Int32), I(-1)}));
  out.push_back(make("empty", {T({0, 4}, f32), I(0)}));
  out.push_back(make("empty, other dim", {T({3, 0}, DType::Int64), I(0)}));
  for (DType t : floating_dtypes())
    out.push_back(
        make("special values " + dtype_code_str(t), {T_fill({6, 8}, t, "special"), I(1)}));
  out.push_back(
      make("special values i64 (wraps)", {T_fill({6, 8}, DType::Int64, "special"), I(1)}));
  out.push_back(make("special values i8", {T_fill({6, 8}, DType::Int8, "special"), I(0)}));
  out.push_back(make("dim as keyword", {T({4, 5}, f32)}, {{"dim", I(1)}}));
  if (inplace) {
    out.push_back(make("dtype= equal to self's", {T({4, 5}, f32), I(1)}, {{"dtype", DT(f32)}}));
    out.push_back(make("error: dtype= differs from self's", {T({4, 5}, DType::Int32), I(1)},
                       {{"dtype", DT(DType::Int64)}}));
    out.push_back(
        make("error: dtype=f64 on f32", {T({4, 5}, f32), I(1)}, {{"dtype", DT(DType::Float64)}}));
  } else {
    out.push_back(
        make("dtype=f64 from f32", {T({4, 5}, f32), I(1)}, {{"dtype", DT(DType::Float64)}}));
    out.push_back(
        make("dtype=f16 from f32", {T({4, 50}, f32), I(1)}, {{"dtype", DT(DType::Float16)}}));
    out.push_back(make("dtype=i64 from f32 (truncates first)", {T({4, 5}, f32), I(1)},
                       {{"dtype", DT(DType::Int64)}}));
    out.push_back(make("dtype=i8 from i32 (wraps)",
                       {T_fill({4, 30}, DType::Int32, "special"), I(1)},
                       {{"dtype", DT(DType::Int8)}}));
    out.push_back(
        make("dtype=f32 from bool", {T({4, 5}, DType::Bool), I(0)}, {{"dtype", DT(f32)}}));
  }
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), I(2)}));
  out.push_back(make("error: negative dim out of range", {T({3, 4}, f32), I(-3)}));
  out.push_back(make("error: 0-d dim out of range", {T({}, f32), I(1)}));
  return out;
}

}  // namespace

void register_scan_ops(OpRegistry& r) {
  for (bool product : {false, true}) {
    OpDef op = OpDef::from_schema(std::string("aten::") + (product ? "cumprod" : "cumsum") +
                                      "(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
                                  "scan");
    op.dtypes = all_numeric_dtypes();
    op.meta = [product](const Args& a) { return scan_meta(a, product); };
    op.ref = structured_ref(
        op.meta, [product](const Args& a, const Values& out) { scan_impl(a, out, product); });
    op.samples = [product](const SampleContext& ctx) { return scan_samples(ctx, product, false); };
    op.cost = scan_cost;
    op.compare = scan_compare(op.schema);
    r.add(std::move(op));
  }
  OpDef op = OpDef::from_schema(
      "aten::cumsum_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)", "scan");
  op.dtypes = all_numeric_dtypes();
  op.meta = cumsum_inplace_meta;
  op.ref = structured_ref(op.meta, cumsum_inplace_impl);
  op.samples = [](const SampleContext& ctx) { return scan_samples(ctx, false, true); };
  op.cost = scan_cost;
  op.compare = scan_compare(op.schema);
  r.add(std::move(op));
}

}  // namespace crucible
