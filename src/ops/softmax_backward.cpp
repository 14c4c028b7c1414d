// Softmax backward: aten._softmax_backward_data.default, aten._log_softmax_backward_data.default.
//
// Reference semantics (PyTorch 2.x, CPU; SoftMax.cpp):
//  - grad_output and output must have the same size ("Expected tensor for argument #1 'grad'
//    to have same size as tensor for argument #2 'output'"); dim wraps (0-d: 0 and -1).
//  - the result has grad_output's dtype, except that grad f32 with input_dtype=f16 asks for an
//    f16 result (the backward of CUDA's half_to_float softmax): ATen's CPU kernels reject it
//    ("expected scalar type Float but found Half"), CUDA's compute in f32 and round to f16; the
//    real-model calls come from CUDA, so the reference computes (docs/aten-differences.md). Any
//    other input_dtype is ignored.
//  - output must have grad's dtype (the kernels read both as one scalar type); only f16, bf16,
//    f32 and f64 are implemented (f16 on the CPU since 2.1; 1.13 rejects it).
//  - softmax:     grad_input = output * (grad - sum(grad * output, dim))
//    log_softmax: grad_input = grad - exp(output) * sum(grad, dim)
//  - an empty input gives an empty result.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/softmax.h"
#include "ops/families.h"
#include "ops/meta_fn.h"
#include "ops/ref_parallel.h"
#include "ops/samples.h"
#include "ops/statistics_internal.h"
#include "ops/util.h"

namespace crucible {

namespace softmax_rules {

BackwardSpec backward_spec(const Tensor& grad, const Tensor& output, int64_t dim,
                           DType input_dtype) {
  if (grad.shape() != output.shape())
    op_error(
        "Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 "
        "'output'; but " +
        shape_str(grad.shape()) + " does not equal " + shape_str(output.shape()) +
        " (while checking arguments for softmax_backward)");
  BackwardSpec spec;
  spec.dim = wrap_dim(dim, grad.dim());
  spec.dtype = grad.dtype() == DType::Float32 && input_dtype == DType::Float16 ? DType::Float16
                                                                               : grad.dtype();
  return spec;
}

void check_backward_dtypes(const Tensor& grad, const Tensor& output, int64_t dim, bool log) {
  const DType t = grad.dtype();
  if (t != DType::Float16 && t != DType::BFloat16 && t != DType::Float32 && t != DType::Float64) {
    const bool last = grad.dim() == 0 || dim == grad.dim() - 1;
    not_implemented_for(
        std::string(log ? "log_" : "") +
            (last ? "softmax_backward_lastdim_kernel_impl" : "softmax_backward_kernel_impl"),
        t);
  }
  if (output.dtype() != t)
    op_error("expected scalar type " + scalar_type_name(t) + " but found " +
             scalar_type_name(output.dtype()));
}

}  // namespace softmax_rules

namespace {

using namespace samples;

// The checks of the softmax backwards and their output as a meta tensor.
Values backward_meta(const Args& a, bool log) {
  const Tensor& grad = a.tensor("grad_output");
  const Tensor& output = a.tensor("output");
  const softmax_rules::BackwardSpec spec =
      softmax_rules::backward_spec(grad, output, a.integer("dim"), a.dtype("input_dtype"));
  Values out{meta::fresh(grad.shape(), spec.dtype)};
  if (output.numel() == 0) return out;
  softmax_rules::check_backward_dtypes(grad, output, spec.dim, log);
  return out;
}

// The backward into its output (meta: backward_meta).
void backward_impl(const Args& a, const Values& outputs, bool log) {
  const Tensor& out = outputs.at(0).tensor();
  const Tensor& grad = a.tensor("grad_output");
  const Tensor& output = a.tensor("output");
  if (output.numel() == 0) return;
  const int64_t dim = wrap_dim(a.integer("dim"), grad.dim());
  const stats::Rows rows = stats::rows_of(grad.shape(), grad.dim() == 0 ? 0 : dim);
  // Rows are independent: spread over the references' threads, each computed in one order.
  const int64_t tasks =
      refpar::task_count(static_cast<double>(grad.numel()) * 6, 1 << 18, rows.count());
  refpar::for_each_task(tasks, [&](int64_t t) {
    const auto len = static_cast<size_t>(rows.len);
    std::vector<double> g(len), y(len);
    for (int64_t r = rows.count() * t / tasks; r < rows.count() * (t + 1) / tasks; ++r) {
      const int64_t first = rows.at(r, 0);
      opsutil::load_row(grad, first, dim, rows.len, g.data());
      opsutil::load_row(output, first, dim, rows.len, y.data());
      double s = 0;
      for (size_t k = 0; k < len; ++k) s += log ? g[k] : g[k] * y[k];
      for (size_t k = 0; k < len; ++k) g[k] = log ? g[k] - std::exp(y[k]) * s : y[k] * (g[k] - s);
      opsutil::store_row(out, first, dim, rows.len, g.data());
    }
  });
}

// The row sum has `len` terms: sqrt(len) widening (as softmax's forward).
ComparePolicy backward_compare(Schema schema) {
  ComparePolicy c;
  c.tol_scale = [schema = std::move(schema)](const Values& values) {
    const Args a(values, schema);
    if (a.size() <= a.index("dim") || !a.value("grad_output").is_tensor() ||
        a.tensor("grad_output").dim() == 0)
      return 1.0;
    const Tensor& t = a.tensor("grad_output");
    const int64_t d = a.integer("dim");
    if (d < -t.dim() || d >= t.dim()) return 1.0;
    return std::sqrt(static_cast<double>(std::max<int64_t>(t.size(d), 1)));
  };
  return c;
}

Cost backward_cost(const Args& a, const Values& out) {
  Cost c = stats::read_write_cost(a, "grad_output", out, 4.0);
  if (a.size() > a.index("output") && a.value("output").is_tensor())
    c.bytes += static_cast<double>(a.tensor("output").numel()) *
               static_cast<double>(a.tensor("output").itemsize());
  return c;
}

std::vector<Sample> backward_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  const DType f32 = DType::Float32;
  // output: drawn by its role (in [0, 1] for softmax, <= 0 for log_softmax).
  auto output = [&](const Shape& s, DType t) { return T(s, t); };
  if (ctx.performance) {
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      out.push_back(make("attention [768, 128, 128] " + dtype_code_str(t),
                         {T({768, 128, 128}, t), output({768, 128, 128}, t), I(-1), DT(t)}));
      out.push_back(make("vocabulary [512, 30522] " + dtype_code_str(t),
                         {T({512, 30522}, t), output({512, 30522}, t), I(1), DT(t)}));
    }
    return out;
  }
  for (DType t : floating_dtypes()) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("rows" + d, {T({4, 33}, t), output({4, 33}, t), I(-1), DT(t)}));
    out.push_back(make("non-last dim" + d, {T({3, 5, 4}, t), output({3, 5, 4}, t), I(1), DT(t)}));
    out.push_back(
        make("special values" + d, {T_fill({6, 8}, t, "special"), output({6, 8}, t), I(1), DT(t)}));
  }
  out.push_back(make("dim 0", {T({6, 5}, f32), output({6, 5}, f32), I(0), DT(f32)}));
  out.push_back(make("negative dim", {T({3, 4, 5}, f32), output({3, 4, 5}, f32), I(-2), DT(f32)}));
  out.push_back(
      make("transposed grad", {T_transposed(9, 7, f32), output({9, 7}, f32), I(1), DT(f32)}));
  out.push_back(make("transposed output", {T({7, 9}, f32), T({7, 9}, f32, {1, 7}), I(1), DT(f32)}));
  out.push_back(make("expanded grad (stride 0)",
                     {T({4, 6}, f32, {0, 1}), output({4, 6}, f32), I(1), DT(f32)}));
  out.push_back(make("sliced output", {T({3, 5}, f32), T({3, 5}, f32, {10, 2}), I(-1), DT(f32)}));
  out.push_back(make("long rows", {T({2, 1000}, f32), output({2, 1000}, f32), I(1), DT(f32)}));
  out.push_back(make("0-d", {T({}, f32), output({}, f32), I(0), DT(f32)}));
  out.push_back(make("0-d, dim -1", {T({}, DType::Float64), output({}, DType::Float64), I(-1),
                                     DT(DType::Float64)}));
  out.push_back(make("empty", {T({0, 5}, f32), output({0, 5}, f32), I(1), DT(f32)}));
  out.push_back(make("input_dtype f64 with f32 grad (ignored)",
                     {T({4, 7}, f32), output({4, 7}, f32), I(1), DT(DType::Float64)}));
  out.push_back(make("input_dtype f32 with f16 grad (ignored)",
                     {T({4, 7}, DType::Float16), output({4, 7}, DType::Float16), I(1), DT(f32)}));
  out.push_back(make("f32 grad with input_dtype f16 -> f16 (CUDA half_to_float)",
                     {T({4, 7}, f32), output({4, 7}, f32), I(1), DT(DType::Float16)}));
  out.push_back(make("error: output dtype differs",
                     {T({4, 7}, f32), output({4, 7}, DType::Float64), I(1), DT(f32)}));
  out.push_back(make("error: sizes differ", {T({4, 7}, f32), output({4, 6}, f32), I(1), DT(f32)}));
  out.push_back(make("error: integral grad",
                     {T({4, 7}, DType::Int64), T({4, 7}, DType::Int64), I(1), DT(DType::Int64)}));
  out.push_back(
      make("error: dim out of range", {T({4, 7}, f32), output({4, 7}, f32), I(2), DT(f32)}));
  return out;
}

}  // namespace

void register_softmax_backward_ops(OpRegistry& r) {
  for (bool log : {false, true}) {
    OpDef op = OpDef::from_schema(
        std::string("aten::_") + (log ? "log_" : "") +
            "softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType "
            "input_dtype) -> Tensor",
        "softmax.backward");
    op.dtypes = floating_dtypes();
    op.meta = [log](const Args& a) { return backward_meta(a, log); };
    op.ref = structured_ref(
        op.meta, [log](const Args& a, const Values& out) { backward_impl(a, out, log); });
    op.samples = backward_samples;
    op.cost = backward_cost;
    op.compare = backward_compare(op.schema);
    // `output` is the forward's output, in every case of every suite (a trace's call too): a
    // softmax output is in [0, 1], a log_softmax output <= 0. Drawn as signed data, exp(output)
    // reaches e^6 on a large call and scales the row sum's rounding past any tolerance that
    // real calls need (ATen itself fails such a call).
    op.roles["output"] = log ? ArgRole::non_positive() : ArgRole::unit();
    r.add(std::move(op));
  }
}

}  // namespace crucible
