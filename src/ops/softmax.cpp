// Softmax: aten._softmax.default and aten._log_softmax.default.
//
// Reference semantics (PyTorch 2.x, CPU; SoftMax.cpp and cpu/SoftmaxKernel.cpp):
//  - dim wraps (a 0-d input accepts 0 and -1 and is treated as one element).
//  - half_to_float=True raises on the CPU ("softmax with half to float conversion is not
//    supported on CPU") whatever the dtype, but computes an f16 input into an f32 result on
//    CUDA (other dtypes raise there: "conversion is supported for Half type only"). The calls
//    that use it come from models run on CUDA, so the reference follows CUDA; the check comes
//    after the dim check.
//  - an empty input returns an empty tensor of its dtype before any dtype dispatch (so even an
//    empty integer tensor passes); otherwise only f16, bf16, f32 and f64 are implemented.
//  - the kernels subtract the row maximum (vec::maximum, which propagates NaN): a row holding a
//    NaN is all NaN, a row of -inf is all NaN (-inf - -inf), a row holding +inf is all NaN.
//    Computing x - max in double reproduces exactly that.
//  - the output is contiguous, of the input's shape and dtype.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/ref_parallel.h"
#include "ops/samples.h"
#include "ops/util.h"

namespace crucible {
namespace {

using namespace samples;

bool softmax_dtype(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}

// The checks of _softmax / _log_softmax and their output as a meta tensor.
Values softmax_meta_common(const Args& args, bool log) {
  const Tensor& self = args.tensor("self");
  const int64_t dim = wrap_dim(args.integer("dim"), self.dim());
  // half_to_float: ATen's CPU kernel raises for every dtype; CUDA's computes an f16 input into
  // an f32 result and raises for the others. The real-model calls that ask for it were recorded
  // on CUDA, so the reference computes as CUDA does (docs/aten-differences.md).
  const bool half_to_float = args.flag("half_to_float");
  if (half_to_float && self.dtype() != DType::Float16)
    op_error("conversion is supported for Half type only");
  Values out{meta::fresh(self.shape(), half_to_float ? DType::Float32 : self.dtype())};
  if (self.numel() == 0) return out;
  const bool last = self.dim() == 0 || dim == self.dim() - 1;
  if (!softmax_dtype(self.dtype())) {
    not_implemented_for(std::string(log ? "log_" : "") +
                            (last ? "softmax_lastdim_kernel_impl" : "softmax_kernel_impl"),
                        self.dtype());
  }
  return out;
}

// softmax or log_softmax into its output (meta: softmax_meta_common).
void softmax_impl(const Args& args, const Values& outputs, bool log) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& self = args.tensor("self");
  if (self.numel() == 0) return;
  const int64_t dim = wrap_dim(args.integer("dim"), self.dim());
  // Rows along `dim`: outer x len x inner over the logical (row-major) index.
  const int64_t len = self.dim() == 0 ? 1 : self.size(dim);
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  const int64_t outer = self.numel() / (len * inner);
  // Rows are independent: spread over the references' threads, each computed in one order.
  const int64_t rows = outer * inner;
  const int64_t tasks = refpar::task_count(static_cast<double>(self.numel()) * 8, 1 << 18, rows);
  refpar::for_each_task(tasks, [&](int64_t t) {
    std::vector<double> row(static_cast<size_t>(len));
    for (int64_t r = rows * t / tasks; r < rows * (t + 1) / tasks; ++r) {
      const int64_t first = ((r / inner) * len) * inner + r % inner;
      opsutil::load_row(self, first, dim, len, row.data());
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < len; ++k) {
        if (std::isnan(row[k]) || std::isnan(mx)) {
          mx = std::numeric_limits<double>::quiet_NaN();
        } else {
          mx = std::max(mx, row[k]);
        }
      }
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(row[k] - mx);
      for (int64_t k = 0; k < len; ++k) {
        const double shifted = row[k] - mx;
        row[k] = log ? shifted - std::log(sum) : std::exp(shifted) / sum;
      }
      opsutil::store_row(out, first, dim, len, row.data());
    }
  });
}

Values softmax_meta(const Args& args) { return softmax_meta_common(args, /*log=*/false); }
Values log_softmax_meta(const Args& args) { return softmax_meta_common(args, /*log=*/true); }

// The normaliser is a sum of `len` exponentials; rounding it in the candidate's accumulator
// costs about sqrt(len) roundoffs (independent errors), so the tolerance grows by sqrt(len).
ComparePolicy softmax_compare(Schema schema) {
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

// max, subtract, exp, sum, divide (or log): five operations per element; one read, one write.
Cost softmax_cost(const Args& a, const Values&) {
  Cost c;
  if (a.size() == 0 || !a.value("self").is_tensor()) return c;
  const Tensor& t = a.tensor("self");
  c.flops = 5.0 * static_cast<double>(t.numel());
  c.bytes = 2.0 * static_cast<double>(t.numel() * t.itemsize());
  return c;
}

std::vector<Sample> softmax_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(make("attention [768, 128, 128] " + dtype_code_str(t),
                         {T({64 * 12, 128, 128}, t), I(-1), B(false)}));
      out.push_back(make("vocabulary [512, 30522] " + dtype_code_str(t),
                         {T({512, 30522}, t), I(1), B(false)}));
      out.push_back(make("non-last dim [64, 1000, 64] " + dtype_code_str(t),
                         {T({64, 1000, 64}, t), I(1), B(false)}));
    }
    return out;
  }
  for (DType t : floating_dtypes()) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("rows" + d, {T({4, 33}, t), I(-1), B(false)}));
    out.push_back(make("columns (non-last dim)" + d, {T({9, 7}, t), I(0), B(false)}));
    out.push_back(make("0-d" + d, {T({}, t), I(0), B(false)}));
    out.push_back(make("special values" + d, {T_fill({6, 16}, t, "special"), I(1), B(false)}));
    out.push_back(
        make("special values, non-last dim" + d, {T_fill({16, 6}, t, "special"), I(0), B(false)}));
  }
  out.push_back(make("middle dim of 3-d", {T({2, 5, 3}, f32), I(1), B(false)}));
  out.push_back(make("middle dim as negative", {T({2, 5, 3}, f32), I(-2), B(false)}));
  out.push_back(make("long rows (vector tails)", {T({3, 1031}, f32), I(1), B(false)}));
  out.push_back(make("one-element rows", {T({5, 1}, f32), I(1), B(false)}));
  out.push_back(make("1-d", {T({17}, DType::Float64), I(0), B(false)}));
  out.push_back(make("0-d, dim -1", {T({}, f32), I(-1), B(false)}));
  out.push_back(make("transposed", {T_transposed(8, 12, f32), I(1), B(false)}));
  out.push_back(make("transposed f16", {T_transposed(8, 12, DType::Float16), I(-1), B(false)}));
  out.push_back(make("expanded (stride 0)", {T({4, 9}, f32, {0, 1}), I(1), B(false)}));
  out.push_back(make("expanded rows, reduced over them", {T({4, 9}, f32, {0, 1}), I(0), B(false)}));
  out.push_back(make("sliced with a step", {T({6, 5}, f32, {10, 2}), I(-1), B(false)}));
  out.push_back(make("large magnitudes (needs the max shift)",
                     {T_fill({4, 64}, f32, "special"), I(-1), B(false)}));
  out.push_back(make("empty rows", {T({0, 5}, f32), I(1), B(false)}));
  out.push_back(make("empty softmax dim", {T({3, 0}, f32), I(-1), B(false)}));
  out.push_back(
      make("empty integer input (no dispatch)", {T({0, 4}, DType::Int64), I(1), B(false)}));
  out.push_back(make("error: dim out of range", {T({3, 4}, f32), I(2), B(false)}));
  out.push_back(make("error: negative dim out of range", {T({3, 4}, f32), I(-3), B(false)}));
  out.push_back(make("error: 0-d dim out of range", {T({}, f32), I(1), B(false)}));
  // CUDA's half_to_float (ATen's CPU kernel raises for it; the traces record it on CUDA).
  out.push_back(
      make("half_to_float f16 -> f32 (CUDA)", {T({48, 33}, DType::Float16), I(-1), B(true)}));
  out.push_back(make("half_to_float f16 -> f32, special values (CUDA)",
                     {T_fill({6, 16}, DType::Float16, "special"), I(1), B(true)}));
  out.push_back(make("half_to_float f16 -> f32, non-last dim (CUDA)",
                     {T({9, 7}, DType::Float16), I(0), B(true)}));
  // Raises on every device: only f16 converts.
  out.push_back(make("error: half_to_float with f32 input", {T({3, 4}, f32), I(-1), B(true)}));
  out.push_back(
      make("error: half_to_float with bf16 input", {T({3, 4}, DType::BFloat16), I(-1), B(true)}));
  for (DType t : integral_dtypes(/*include_bool=*/true)) {
    out.push_back(
        make("error: integral input " + dtype_code_str(t), {T({3, 4}, t), I(-1), B(false)}));
  }
  out.push_back(
      make("error: integral input, non-last dim", {T({3, 4}, DType::Int32), I(0), B(false)}));
  return out;
}

}  // namespace

void register_softmax_ops(OpRegistry& r) {
  {
    OpDef op = OpDef::from_schema(
        "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", "softmax");
    op.dtypes = floating_dtypes();
    op.meta = softmax_meta;
    op.ref = structured_ref(
        op.meta, [](const Args& a, const Values& out) { softmax_impl(a, out, /*log=*/false); });
    op.samples = softmax_samples;
    op.cost = softmax_cost;
    op.compare = softmax_compare(op.schema);
    r.add(std::move(op));
  }
  {
    OpDef op = OpDef::from_schema(
        "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", "softmax");
    op.dtypes = floating_dtypes();
    op.meta = log_softmax_meta;
    op.ref = structured_ref(
        op.meta, [](const Args& a, const Values& out) { softmax_impl(a, out, /*log=*/true); });
    op.samples = softmax_samples;
    op.cost = softmax_cost;
    op.compare = softmax_compare(op.schema);
    r.add(std::move(op));
  }
}

}  // namespace crucible
