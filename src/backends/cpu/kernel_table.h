// The `cpu` backend's kernels: a table from catalog op name to a kernel and its support check.
// Each kernel family file (pointwise, reduction, matmul, ...) fills the table through its
// register_*_kernels function; the backend consults the table and never falls back.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/ops/args.h"
#include "crucible/ops/op.h"

namespace crucible::cpu {

// Runs `op` on bound arguments (schema order, defaults filled, host tensors) and returns the
// outputs in schema order, exactly as Backend::run. Argument errors raise op_error like ATen.
using KernelFn = Values (*)(const OpDef& op, const Values& args);
// Whether this call is handled (dtypes, layouts, argument values). When not, sets `why`.
// nullptr means: every call whose primary dtype is in the entry's dtypes.
using SupportsFn = bool (*)(const OpDef& op, const Values& args, std::string* why);

// A kernel written destination-passing (crucible/ops/destination.h): it computes into
// `outputs`, allocated uninitialized from the op's meta function after that function checked
// the arguments, so the kernel neither checks nor allocates (only value-dependent checks stay).
using KernelIntoFn = void (*)(const OpDef& op, const Args& args, const Values& outputs);

// Lays out the fresh outputs of the meta function's `specs` as the kernel's family does, before
// they are allocated for run_into (shapes and dtypes stay the meta function's): the elementwise
// ops' outputs follow their inputs' memory order, as ATen's TensorIterator does.
using LayoutFn = void (*)(const OpDef& op, const Args& args, Values& specs);

struct KernelEntry {
  KernelFn run = nullptr;
  SupportsFn supports = nullptr;
  std::vector<DType> dtypes;        // the dtypes of the primary (first tensor) argument it handles
  KernelIntoFn run_into = nullptr;  // set instead of `run`
  LayoutFn layout = nullptr;        // with run_into: the fresh outputs' strides
};

// Runs an entry's kernel on bound arguments: `run`, or the op's meta function, its outputs
// allocated, and `run_into`.
Values run_kernel(const KernelEntry& e, const OpDef& op, const Values& args);

class KernelTable {
 public:
  // Adds a kernel for `op_name` ("aten.relu.default"); a duplicate is an internal error.
  void add(const std::string& op_name, KernelEntry entry);
  const KernelEntry* find(const std::string& op_name) const;
  const std::map<std::string, KernelEntry>& entries() const { return entries_; }

 private:
  std::map<std::string, KernelEntry> entries_;
};

// The kernel families. Each is defined in its own file under src/backends/cpu/.
void register_pointwise_kernels(KernelTable& t);  // unary/binary/ternary, activations, copies
void register_reduction_kernels(KernelTable& t);  // sum/mean/amax/..., softmax and backward
void register_matmul_kernels(KernelTable& t);     // mm, addmm, bmm, baddbmm
void register_nn_kernels(KernelTable& t);         // conv, pooling, norms, embedding, index ops
void register_shape_kernels(KernelTable& t);      // views, joins, splits, new_*, pads (shape.cpp)
void register_sort_kernels(KernelTable& t);       // sort, topk, nonzero, item (sort.cpp)
void register_random_kernels(KernelTable& t);     // rand, randn, randperm, bernoulli, dropout
void register_fft_kernels(KernelTable& t);        // _fft_r2c/c2c/c2r, complex views (fft.cpp)
void register_scatter_kernels(KernelTable& t);    // scatter, scatter_reduce, masked_scatter
void register_distance_kernels(KernelTable& t);   // _cdist_forward, _pdist_forward
void register_grid_sampler_kernels(KernelTable& t);  // grid_sampler_2d and its backward
void register_logsumexp_kernels(KernelTable& t);     // logsumexp (reduction_logsumexp.cpp)
void register_attention_kernels(KernelTable& t);     // sdpa forward/backward (attention.cpp)
void register_export_kernels(KernelTable& t);        // detach, empty_permuted (export_ops.cpp)
void register_sparse_kernels(KernelTable& t);        // the sparse COO constructor (sparse_coo.cpp)

// All families, in one table built on first use.
const KernelTable& kernel_table();

}  // namespace crucible::cpu
