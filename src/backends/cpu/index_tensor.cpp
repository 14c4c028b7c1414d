// The `cpu` backend's advanced indexing: aten.index.Tensor (any dtype). The result is
// [before, B, after] (index_util.h): every element of B has one offset into self (the sum of
// its indexed dims), every position of the plain dims another, so the copy is a loop over
// (before, B) rows of the `after` block, which is one memcpy when self's trailing dims are a
// contiguous run and an element gather otherwise.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/index_util.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/parallel.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

// Whether the `after` dims of t are one run of stride 1 (size-1 dims ignored).
bool after_contiguous(const Tensor& t, const std::vector<int64_t>& after) {
  int64_t expected = 1;
  for (auto it = after.rbegin(); it != after.rend(); ++it) {
    if (t.size(*it) == 1) continue;
    if (t.stride(*it) != expected) return false;
    expected *= t.size(*it);
  }
  return true;
}

bool index_supports(const OpDef& op, const Values& args, std::string* why) {
  const Args a(args, op.schema);
  if (!has_scalar_mask(a.tensors("indices"))) return true;
  if (why) *why = "0-d boolean masks in index are not handled";
  return false;
}

Values index_kernel(const OpDef& op, const Values& args) {
  const Args a(args, op.schema);
  const Tensor& self = a.tensor("self");
  const IndexPlan plan = make_index_plan(self, a.tensors("indices"));
  Tensor out = Tensor::uninitialized(plan.result, self.dtype());
  if (out.numel() == 0) return {out};
  if (plan.indexed.empty()) return {fresh_copy(self, self.dtype())};
  const std::vector<int64_t> boff = index_offsets(plan, self.shape(), self.strides());
  const std::vector<int64_t> ooff = dims_offsets(plan.before, self.shape(), self.strides());
  const bool rows = after_contiguous(self, plan.after);
  const std::vector<int64_t> ioff =
      rows ? std::vector<int64_t>{} : dims_offsets(plan.after, self.shape(), self.strides());
  int64_t ni = 1;
  for (int64_t d : plan.after) ni *= self.size(d);
  const int64_t nb = static_cast<int64_t>(boff.size());
  const int64_t nrows = static_cast<int64_t>(ooff.size()) * nb;
  const size_t isz = self.itemsize();
  const char* base = static_cast<const char*>(self.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  if (ni == 1) {
    // One element per row: gathers in blocks of offsets.
    parallel_for(0, nrows, 32768, [&](int64_t e0, int64_t e1) {
      int64_t off[512];
      for (int64_t e = e0; e < e1;) {
        const int64_t o = e / nb, b0 = e % nb;
        const int64_t m = std::min({e1 - e, nb - b0, int64_t{512}});
        for (int64_t k = 0; k < m; ++k) off[k] = ooff[o] + boff[b0 + k];
        gather_elements(dst + e * isz, base, off, m, isz);
        e += m;
      }
    });
    return {out};
  }
  const size_t row = static_cast<size_t>(ni) * isz;
  parallel_for(0, nrows, std::max<int64_t>(1, 65536 / static_cast<int64_t>(row)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const char* src = base + (ooff[r / nb] + boff[r % nb]) * isz;
                   if (rows)
                     std::memcpy(dst + r * row, src, row);
                   else
                     gather_elements(dst + r * row, src, ioff.data(), ni, isz);
                 }
               });
  return {out};
}

}  // namespace

void register_index_tensor_kernels(KernelTable& t) {
  t.add("aten.index.Tensor",
        {index_kernel,
         index_supports,
         {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64,
          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}});
}

}  // namespace crucible::cpu
