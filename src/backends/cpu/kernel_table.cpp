// The cpu backend's kernel table: filled once from every kernel family.
#include "backends/cpu/kernel_table.h"

#include "backends/cpu/quantized_kernels.h"

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"

namespace crucible::cpu {

void KernelTable::add(const std::string& op_name, KernelEntry entry) {
  if ((entry.run == nullptr) == (entry.run_into == nullptr))
    internal_error("cpu kernel table: " + op_name + " needs exactly one of run and run_into");
  if (!entries_.emplace(op_name, std::move(entry)).second)
    internal_error("cpu kernel table: " + op_name + " registered twice");
}

Values run_kernel(const KernelEntry& e, const OpDef& op, const Values& args) {
  if (e.run) return e.run(op, args);
  const Args a(args, op.schema);
  Values specs = op.run_meta(a);
  if (e.layout) e.layout(op, a, specs);
  const Values outputs = allocate_outputs(op, specs, OutputFill::Uninitialized);
  e.run_into(op, a, outputs);
  return outputs;
}

const KernelEntry* KernelTable::find(const std::string& op_name) const {
  auto it = entries_.find(op_name);
  return it == entries_.end() ? nullptr : &it->second;
}

const KernelTable& kernel_table() {
  static const KernelTable* table = [] {
    auto* t = new KernelTable();
    register_pointwise_kernels(*t);
    register_reduction_kernels(*t);
    register_matmul_kernels(*t);
    register_nn_kernels(*t);
    register_shape_kernels(*t);
    register_sort_kernels(*t);
    register_random_kernels(*t);
    register_fft_kernels(*t);
    register_scatter_kernels(*t);
    register_distance_kernels(*t);
    register_grid_sampler_kernels(*t);
    register_logsumexp_kernels(*t);
    register_attention_kernels(*t);
    register_export_kernels(*t);
    register_sparse_kernels(*t);
    register_quantized_kernels(*t);
    register_quantize_kernels(*t);
    return t;
  }();
  return *table;
}

}  // namespace crucible::cpu
