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

// The batch norm kernel (_native_batch_norm_legit, destination-passing) into the first three
// outputs, with the running statistics copied into the last two, which it then updates.
void batch_norm_functional_kernel(const OpDef&, const Args& a, const Values& outputs) {
  static const char* const kLegit = "aten._native_batch_norm_legit.default";
  const KernelEntry* legit = kernel_table().find(kLegit);
  if (!legit || !legit->run_into) internal_error(std::string("cpu: no kernel for ") + kLegit);
  const Tensor& rm = outputs.at(3).tensor();
  const Tensor& rv = outputs.at(4).tensor();
  rm.copy_from(a.tensor("running_mean"));
  rv.copy_from(a.tensor("running_var"));
  // The functional op's arguments are the legit op's, in the same order.
  Values legit_args = a.values();
  legit_args.at(a.index("running_mean")) = rm;
  legit_args.at(a.index("running_var")) = rv;
  const OpDef& legit_op = OpRegistry::catalog().get(kLegit);
  legit->run_into(legit_op, Args(legit_args, legit_op.schema),
                  Values(outputs.begin(), outputs.begin() + 3));
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
        {.dtypes = every_dtype(), .run_into = &batch_norm_functional_kernel});
}

}  // namespace crucible::cpu
