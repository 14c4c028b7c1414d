// The `cpu` backend's index_put and index_put_ (any dtype). Values (broadcast to the indexing
// result [before, B, after], index_util.h) are written or, with accumulate, added at the
// indexed positions. Positions of different `before`/`after` coordinates never meet, so those
// are split over the pool; B may repeat a position and is visited in order by one thread.
// Accumulation works in int64 for integral and bool dtypes (wrapping, converted back as ATen
// converts), f64 for f64 and for calls with extreme values (see nn_util.h), else f32.
// Destination-passing: the meta function checked the arguments that do not depend on values
// (masks are not read there); the values' shape against the indexed positions is checked here.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/index_util.h"
#include "backends/cpu/nn.h"
#include "backends/cpu/nn_util.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/indexing.h"

namespace crucible::cpu {
namespace {

// Where every element of the result lives in the destination (d*) and in the values (v*):
// element (o, b, i) is dst[dob[o] + dbb[b] + dib[i]] and values[vo[o] + vb[b] + vi[i]].
struct Targets {
  std::vector<int64_t> dob, dbb, dib, vo, vb, vi;
};

Targets targets(const IndexPlan& plan, const Tensor& dst, const Tensor& values_expanded) {
  Targets t;
  t.dbb = index_offsets(plan, dst.shape(), dst.strides());
  t.dob = dims_offsets(plan.before, dst.shape(), dst.strides());
  t.dib = dims_offsets(plan.after, dst.shape(), dst.strides());
  std::vector<int64_t> o, b, i;
  const int64_t nb = static_cast<int64_t>(plan.bshape.size());
  const int64_t n0 = static_cast<int64_t>(plan.before.size());
  for (int64_t d = 0; d < static_cast<int64_t>(plan.result.size()); ++d)
    (d < n0 ? o : d < n0 + nb ? b : i).push_back(d);
  t.vo = dims_offsets(o, plan.result, values_expanded.strides());
  t.vb = dims_offsets(b, plan.result, values_expanded.strides());
  t.vi = dims_offsets(i, plan.result, values_expanded.strides());
  return t;
}

// Runs fn(o, i0, i1) over the (before, after-block) tasks, spread over the pool.
template <typename Fn>
void for_tasks(const Targets& t, Fn fn) {
  const int64_t no = static_cast<int64_t>(t.dob.size()), ni = static_cast<int64_t>(t.dib.size());
  const int64_t nb = static_cast<int64_t>(t.dbb.size());
  const int64_t threads = num_threads();
  // Split `after` when `before` alone does not feed every thread.
  const int64_t parts = no >= threads ? 1 : std::min<int64_t>(ni, (threads + no - 1) / no);
  const int64_t step = (ni + parts - 1) / parts;
  const int64_t per_task = nb * step;
  parallel_for(0, no * parts, std::max<int64_t>(1, 16384 / std::max<int64_t>(per_task, 1)),
               [&](int64_t k0, int64_t k1) {
                 for (int64_t k = k0; k < k1; ++k) {
                   const int64_t o = k / parts, i0 = (k % parts) * step;
                   fn(o, i0, std::min(ni, i0 + step));
                 }
               });
}

template <typename W>
void accumulate_t(const Tensor& dst, const Tensor& values, const Targets& t) {
  W* d = static_cast<W*>(dst.data_ptr());
  const W* v = static_cast<const W*>(values.data_ptr());
  const int64_t nb = static_cast<int64_t>(t.dbb.size());
  for_tasks(t, [&](int64_t o, int64_t i0, int64_t i1) {
    W* dob = d + t.dob[o];
    const W* vo = v + t.vo[o];
    for (int64_t i = i0; i < i1; ++i) {
      W* di = dob + t.dib[i];
      const W* vi = vo + t.vi[i];
      for (int64_t b = 0; b < nb; ++b) {
        W& x = di[t.dbb[b]];
        if constexpr (std::is_integral_v<W>)
          x = static_cast<W>(static_cast<uint64_t>(x) + static_cast<uint64_t>(vi[t.vb[b]]));
        else
          x += vi[t.vb[b]];
      }
    }
  });
}

template <typename T>
void write_t(const Tensor& dst, const Tensor& values, const Targets& t) {
  T* d = static_cast<T*>(dst.data_ptr());
  const T* v = static_cast<const T*>(values.data_ptr());
  const int64_t nb = static_cast<int64_t>(t.dbb.size());
  for_tasks(t, [&](int64_t o, int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      T* di = d + t.dob[o] + t.dib[i];
      const T* vi = v + t.vo[o] + t.vi[i];
      for (int64_t b = 0; b < nb; ++b) di[t.dbb[b]] = vi[t.vb[b]];
    }
  });
}

void write(const Tensor& dst, const Tensor& values, const Targets& t) {
  switch (dst.itemsize()) {
    case 1:
      return write_t<uint8_t>(dst, values, t);
    case 2:
      return write_t<uint16_t>(dst, values, t);
    case 4:
      return write_t<uint32_t>(dst, values, t);
    default:
      return write_t<uint64_t>(dst, values, t);
  }
}

// Writes (or adds) `values` into `dst` (self itself for index_put_, else a copy of self).
void index_put_into(const Tensor& dst, const Tensor& self, const std::vector<Tensor>& indices,
                    const Tensor& values, bool accumulate) {
  const IndexPlan plan = make_index_plan(self, indices);
  indexing::check_index_put_values(values, plan.result);
  if (numel_of(plan.result) == 0) return;
  if (!accumulate) {
    write(dst, values.expand(plan.result), targets(plan, dst, values.expand(plan.result)));
    return;
  }
  DType work = accumulate_work(self.dtype());
  if (work == DType::Float32 && any_extreme({&self, &values})) work = DType::Float64;
  // The sums run in a contiguous work copy unless dst already is one of the work dtype.
  const Tensor acc = dst.dtype() == work ? dst : fresh_copy(dst, work);
  const Tensor v = contiguous_as(values, work).expand(plan.result);
  const Targets t = targets(plan, acc, v);
  if (work == DType::Float32)
    accumulate_t<float>(acc, v, t);
  else if (work == DType::Float64)
    accumulate_t<double>(acc, v, t);
  else
    accumulate_t<int64_t>(acc, v, t);
  if (!acc.shares_storage(dst)) copy_into(acc, dst);
}

// index_put: into a copy of self (the fresh output); index_put_: into self (the output).
void index_put_kernel(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& self = a.tensor("self");
  const Tensor& out = outputs[0].tensor();
  if (!out.shares_storage(self)) copy_into(self, out);
  index_put_into(out, self, a.tensors("indices"), a.tensor("values"), a.flag("accumulate"));
}

bool put_supports(const OpDef& op, const Values& args, std::string* why) {
  const Args a(args, op.schema);
  if (!has_scalar_mask(a.tensors("indices"))) return true;
  if (why) *why = "0-d boolean masks in index are not handled";
  return false;
}

}  // namespace

void register_index_put_kernels(KernelTable& t) {
  const std::vector<DType> all = {DType::Bool,    DType::UInt8,  DType::Int8,    DType::Int16,
                                  DType::Int32,   DType::Int64,  DType::Float16, DType::BFloat16,
                                  DType::Float32, DType::Float64};
  for (const char* n : {"aten.index_put.default", "aten.index_put_.default"})
    t.add(n, {.supports = put_supports, .dtypes = all, .run_into = &index_put_kernel});
}

}  // namespace crucible::cpu
