// The `cpu` backend's kernels for ops that exported (functionalised) graphs and PyTorch 2.x
// eager traces call around the computing ones: detach (a view of self), empty_permuted (an
// uninitialised tensor with the meta function's permuted strides) and
// _native_batch_norm_legit_functional (the batch norm kernel run on copies of the running
// statistics, which are returned).
#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

Values detach_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  return {self.as_strided(self.shape(), self.strides(), self.offset())};
}

// The output, uninitialised with the meta function's permuted strides, is the whole op.
void empty_permuted_kernel(const OpDef&, const Args&, const Values&) {}

// A fresh copy of `t` laid out as the meta output `spec` describes it.
Tensor copy_as(const Value& spec, const Tensor& t) {
  const Tensor& m = spec.tensor();
  Tensor c = Tensor::uninitialized_strided(m.shape(), m.strides(), m.dtype());
  c.copy_from(t);
  return c;
}

Values batch_norm_functional_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Values spec = op.run_meta(a);
  static const char* const kLegit = "aten._native_batch_norm_legit.default";
  const KernelEntry* legit = kernel_table().find(kLegit);
  if (!legit) internal_error(std::string("cpu: no kernel for ") + kLegit);
  const Tensor rm = copy_as(spec.at(3), a.tensor("running_mean"));
  const Tensor rv = copy_as(spec.at(4), a.tensor("running_var"));
  // The functional op's arguments are the legit op's, in the same order.
  Values legit_args = args;
  legit_args.at(a.index("running_mean")) = rm;
  legit_args.at(a.index("running_var")) = rv;
  Values out = run_kernel(*legit, OpRegistry::catalog().get(kLegit), legit_args);
  out.push_back(rm);
  out.push_back(rv);
  return out;
}

std::vector<DType> every_dtype() {
  return {DType::Bool,  DType::UInt8,   DType::Int8,     DType::Int16,   DType::Int32,
          DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
}

}  // namespace

void register_export_kernels(KernelTable& t) {
  t.add("aten.detach.default", {detach_kernel, nullptr, every_dtype()});
  t.add("aten.empty_permuted.default",
        {.dtypes = every_dtype(), .run_into = empty_permuted_kernel});
  t.add("aten._native_batch_norm_legit_functional.default",
        {batch_norm_functional_kernel, nullptr, every_dtype()});
}

}  // namespace crucible::cpu
