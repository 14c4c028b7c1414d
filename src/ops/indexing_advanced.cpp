// Advanced indexing: index.Tensor, index_put, index_put_.
//
// Reference semantics (PyTorch 2.x, CPU; TensorAdvancedIndexing.cpp, IndexingUtils.h):
//  - indices: a Tensor?[] with at most self.dim() entries (a bool/u8 mask counts for as many
//    dims as it has): "too many indices for tensor of dimension 2 (got 3)". None entries (and
//    missing trailing entries) take the whole dim. Index tensors are i64 or i32 (2.x; 1.13 had
//    no i32) or bool/u8 masks ("tensors used as indices must be long, int, byte or bool
//    tensors"). A mask is replaced by the nonzero() coordinates of its dims and must match
//    self's sizes there ("The shape of the mask [2] at index 0 does not match the shape of the
//    indexed tensor [3, 4] at index 0").
//  - The index tensors broadcast together ("shape mismatch: indexing tensors could not be
//    broadcast together with shapes [2], [3]") to B. Indices wrap once when negative and must
//    be in [-size, size): "index 5 is out of bounds for dimension 0 with size 3".
//  - Result shape: when the indexed dims are adjacent, self's dims before them + B + self's
//    dims after them; when a None separates them, B first, then every non-indexed dim in order.
//  - index_put: a clone of self with values (broadcast to the indexing result's shape: "shape
//    mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape
//    [1, 4]") written at the indexed positions, or added (accumulate=True; duplicates add up).
//    values must have self's dtype ("Index put requires the source and destination dtypes
//    match, got Float for the destination and Double for the source."). Without accumulate,
//    duplicate positions are written in an unspecified order in ATen: the samples use unique
//    positions (one index element, masks) or values that are equal along the indexed dims
//    (values broadcast over B), so every order gives the same result. index_put_ writes self.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/error.h"
#include "crucible/ops/destination.h"
#include "crucible/ops/rules/indexing.h"
#include "ops/families.h"
#include "ops/indexing_internal.h"
#include "ops/meta_fn.h"
#include "ops/samples.h"

namespace crucible::indexing {

// ---- rules shared with the backends (crucible/ops/rules/indexing.h) ------------------------

bool check_index_entry(const Tensor& self, const Tensor& index, int64_t consumed) {
  const DType t = index.dtype();
  if (t != DType::Bool && t != DType::UInt8) {
    if (t != DType::Int64 && t != DType::Int32)
      op_error("tensors used as indices must be long, int, byte or bool tensors");
    return false;
  }
  check_index_count(self.dim(), consumed + index.dim());
  for (int64_t k = 0; k < index.dim(); ++k)
    if (index.size(k) != self.size(consumed + k))
      op_error("The shape of the mask " + shape_str(index.shape()) + " at index " +
               std::to_string(k) + " does not match the shape of the indexed tensor " +
               shape_str(self.shape()) + " at index " + std::to_string(consumed + k));
  // A 0-d mask adds a dim of size 1 (true) or 0 (false) in front; not modelled.
  if (index.dim() == 0) unsupported("0-d boolean masks in index");
  return true;
}

void check_index_count(int64_t ndim, int64_t count) {
  if (count > ndim)
    op_error("too many indices for tensor of dimension " + std::to_string(ndim) + " (got " +
             std::to_string(count) + ")");
}

void check_index_put_dtype(const Tensor& self, const Tensor& values) {
  if (values.dtype() != self.dtype())
    op_error("Index put requires the source and destination dtypes match, got " +
             std::string(dtype_scalar_type_name(self.dtype())) + " for the destination and " +
             std::string(dtype_scalar_type_name(values.dtype())) + " for the source.");
}

void check_index_put_values(const Tensor& values, const Shape& result) {
  bool fits = true;
  try {
    fits = broadcast_shapes(values.shape(), result) == result;
  } catch (const Error&) {
    fits = false;
  }
  if (!fits)
    op_error("shape mismatch: value tensor of shape " + shape_str(values.shape()) +
             " cannot be broadcast to indexing result of shape " + shape_str(result));
}

namespace {

using namespace samples;  // NOLINT(google-build-using-namespace)

constexpr DType f32 = DType::Float32;
constexpr DType f16 = DType::Float16;
constexpr DType i64 = DType::Int64;
constexpr DType i32 = DType::Int32;
constexpr DType f64 = DType::Float64;
constexpr DType b8 = DType::Bool;
constexpr DType u8 = DType::UInt8;

// The indexing plan: one optional index tensor per dim of self (masks expanded), the
// broadcast shape B, and the result shape.
struct Plan {
  std::vector<std::optional<Tensor>> per_dim;  // size self.dim()
  Shape bshape;                                // B
  Shape result;
  bool adjacent = true;
  int64_t first = -1;     // first indexed dim (adjacent case: where B goes)
  bool masked = false;    // a mask was given
  bool estimate = false;  // without reading masks: B and the result are upper bounds
};

// The larger of two sizes per dim (aligned at the end): an upper bound of the broadcast of
// shapes whose sizes are upper bounds.
Shape upper_broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[out.size() - 1 - i] = std::max(x, y);
  }
  return out;
}

// With `estimate`, masks are not read (the meta function: arguments may be meta tensors): a
// mask's coordinates get its element count as an upper bound, and so do B and the result.
Plan make_plan(const Tensor& self, const std::vector<Tensor>& indices, bool estimate = false) {
  const int64_t nd = self.dim();
  Plan plan;
  plan.estimate = estimate;
  int64_t consumed = 0;
  for (const Tensor& ix : indices) {
    if (!ix.defined()) {
      plan.per_dim.emplace_back();
      ++consumed;
      continue;
    }
    if (check_index_entry(self, ix, consumed)) {
      plan.masked = true;
      if (estimate) {
        for (int64_t k = 0; k < ix.dim(); ++k)
          plan.per_dim.emplace_back(Tensor::meta({ix.numel()}, i64));
        consumed += ix.dim();
        continue;
      }
      // nonzero(): one i64 coordinate tensor per mask dim.
      std::vector<std::vector<int64_t>> coords(static_cast<size_t>(ix.dim()));
      int64_t li = 0;
      for_each_index(ix.shape(), [&](std::span<const int64_t> p) {
        if (ix.get_int(li++) != 0)
          for (size_t k = 0; k < coords.size(); ++k) coords[k].push_back(p[k]);
      });
      for (auto& c : coords) {
        Tensor ct = Tensor::empty({static_cast<int64_t>(c.size())}, i64);
        for (size_t j = 0; j < c.size(); ++j) ct.set_int(static_cast<int64_t>(j), c[j]);
        plan.per_dim.emplace_back(ct);
      }
      consumed += ix.dim();
      continue;
    }
    plan.per_dim.emplace_back(ix);
    ++consumed;
  }
  check_index_count(nd, consumed);
  plan.per_dim.resize(static_cast<size_t>(nd));
  bool any = false;
  int64_t last = -1;
  for (int64_t d = 0; d < nd; ++d) {
    const auto& ix = plan.per_dim[d];
    if (!ix) continue;
    if (!any) {
      plan.bshape = ix->shape();
      plan.first = d;
    } else {
      try {
        plan.bshape = broadcast_shapes(plan.bshape, ix->shape());
      } catch (const Error&) {
        // Sizes that are upper bounds may not broadcast where the true ones do.
        if (plan.estimate && plan.masked) {
          plan.bshape = upper_broadcast(plan.bshape, ix->shape());
          if (any && d != last + 1) plan.adjacent = false;
          any = true;
          last = d;
          continue;
        }
        std::string shapes;
        for (const auto& o : plan.per_dim)
          if (o) shapes += (shapes.empty() ? "" : ", ") + shape_str(o->shape());
        op_error("shape mismatch: indexing tensors could not be broadcast together with shapes " +
                 shapes);
      }
    }
    if (any && d != last + 1) plan.adjacent = false;
    any = true;
    last = d;
  }
  if (!any) {
    plan.result = self.shape();
    return plan;
  }
  if (plan.adjacent) {
    for (int64_t d = 0; d < plan.first; ++d) plan.result.push_back(self.size(d));
    plan.result.insert(plan.result.end(), plan.bshape.begin(), plan.bshape.end());
    for (int64_t d = last + 1; d < nd; ++d) plan.result.push_back(self.size(d));
  } else {
    plan.result = plan.bshape;
    for (int64_t d = 0; d < nd; ++d)
      if (!plan.per_dim[d]) plan.result.push_back(self.size(d));
  }
  return plan;
}

// Calls fn(result logical index, self logical index) for every element of the result.
template <typename Fn>
void for_each_indexed(const Tensor& self, const Plan& plan, Fn fn) {
  const int64_t nd = self.dim();
  const auto nb = static_cast<int64_t>(plan.bshape.size());
  // Expanded views of the index tensors over B, read by B's logical index.
  std::vector<std::optional<Tensor>> ex(static_cast<size_t>(nd));
  for (int64_t d = 0; d < nd; ++d)
    if (plan.per_dim[d]) ex[d] = plan.per_dim[d]->expand(plan.bshape);
  Tensor bidx = Tensor::empty(plan.bshape, i64);  // for logical indexing of B
  std::vector<int64_t> src(static_cast<size_t>(nd));
  int64_t k = 0;
  for_each_index(plan.result, [&](std::span<const int64_t> p) {
    // Split the result index into B's part and the plain dims.
    std::span<const int64_t> bpart;
    size_t plain = 0;  // next position in p for non-indexed dims
    if (plan.first < 0) {
      for (int64_t d = 0; d < nd; ++d) src[d] = p[d];
      fn(k++, logical_index(self, src));
      return;
    }
    if (plan.adjacent) {
      bpart = p.subspan(static_cast<size_t>(plan.first), static_cast<size_t>(nb));
    } else {
      bpart = p.subspan(0, static_cast<size_t>(nb));
      plain = static_cast<size_t>(nb);
    }
    const int64_t bl = logical_index(bidx, bpart);
    bool in_b = false;
    for (int64_t d = 0; d < nd; ++d) {
      if (ex[d]) {
        int64_t v = ex[d]->get_int(bl);
        const int64_t size = self.size(d);
        if (v < -size || v >= size)
          op_error("index " + std::to_string(v) + " is out of bounds for dimension " +
                   std::to_string(d) + " with size " + std::to_string(size));
        if (v < 0) v += size;
        src[d] = v;
        if (plan.adjacent && !in_b) {
          in_b = true;
          plain += static_cast<size_t>(nb);
        }
      } else {
        src[d] = p[plain++];
      }
    }
    fn(k++, logical_index(self, src));
  });
}

Values index_meta(const Args& a) {
  const Tensor& self = a.tensor("self");
  const Plan plan = make_plan(self, a.tensors("indices"), /*estimate=*/true);
  return {meta::fresh(plan.result, self.dtype())};
}

Values index_ref(const Args& a) {
  const Tensor& self = a.tensor("self");
  const Plan plan = make_plan(self, a.tensors("indices"));
  Tensor out = Tensor::empty(plan.result, self.dtype());
  for_each_indexed(self, plan, [&](int64_t k, int64_t s) { copy_element(self, s, out, k); });
  return {out};
}

// index_put's argument checks (its meta function's): masks are not read, so values are
// checked against the result's shape only where no mask makes that shape an estimate.
void check_index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values) {
  check_index_put_dtype(self, values);
  const Plan plan = make_plan(self, indices, /*estimate=*/true);
  if (!plan.masked) check_index_put_values(values, plan.result);
}

// Writes (or accumulates) values at the indexed positions into `dst`: a fresh output of self's
// shape (every element written) or self itself (the indexed positions only). What is checked
// here depends on the values: how many positions a mask selects (whether the index tensors
// broadcast together, and values to the result) and whether an index is in range.
void index_put_into(const Tensor& dst, const Args& a) {
  const Tensor& self = a.tensor("self");
  const bool accumulate = a.flag("accumulate");
  const Plan plan = make_plan(self, a.tensors("indices"));
  if (plan.masked) check_index_put_values(a.tensor("values"), plan.result);
  const Tensor v = a.tensor("values").expand(plan.result);
  const bool exact = !is_floating(self.dtype());
  const int64_t n = self.numel();
  std::vector<double> acc(static_cast<size_t>(n));
  std::vector<int64_t> iacc(static_cast<size_t>(n));
  std::vector<bool> touched(static_cast<size_t>(n), false);
  for (int64_t i = 0; i < n; ++i)
    exact ? void(iacc[i] = self.get_int(i)) : void(acc[i] = self.get(i));
  for_each_indexed(self, plan, [&](int64_t k, int64_t s) {
    touched[s] = true;
    if (exact) {
      const int64_t x = v.get_int(k);
      iacc[s] =
          accumulate
              ? static_cast<int64_t>(static_cast<uint64_t>(iacc[s]) + static_cast<uint64_t>(x))
              : x;
    } else {
      acc[s] = accumulate ? acc[s] + v.get(k) : v.get(k);
    }
  });
  for (int64_t i = 0; i < n; ++i) {
    if (!touched[i] && dst.shares_storage(self)) continue;
    exact ? dst.set_int(i, iacc[i]) : dst.set(i, acc[i]);
  }
}

// index_put: a fresh output of self's shape and dtype; index_put_: self.
Values index_put_meta(const Args& a) {
  const Tensor& self = a.tensor("self");
  check_index_put(self, a.tensors("indices"), a.tensor("values"));
  return {meta::fresh_like(self)};
}

Values index_put_inplace_meta(const Args& a) {
  check_index_put(a.tensor("self"), a.tensors("indices"), a.tensor("values"));
  return {a.value("self")};
}

// Both overloads compute into their one output (self itself for index_put_).
void index_put_impl(const Args& a, const Values& outputs) {
  index_put_into(outputs.at(0).tensor(), a);
}

double nbytes(const Tensor& t) { return static_cast<double>(t.numel() * t.itemsize()); }
double list_bytes(const Value& v) {
  double b = 0;
  for (const Tensor& t : v.tensors())
    if (t.defined()) b += nbytes(t);
  return b;
}

Cost index_cost(const Args& a, const Values& out) {
  Cost c;
  if (out.empty() || !out[0].is_tensor()) return c;
  c.bytes = list_bytes(a.value("indices")) + 2 * nbytes(out[0].tensor());
  return c;
}
Cost index_put_cost(const Args& a, const Values& out) {
  Cost c;
  if (out.empty() || !out[0].is_tensor()) return c;
  c.bytes = list_bytes(a.value("indices")) + 2 * nbytes(a.tensor("values"));
  if (!a.tensor("self").shares_storage(out[0].tensor())) c.bytes += 2 * nbytes(out[0].tensor());
  return c;
}

Literal TL(std::vector<Literal> ts) { return Literal::list(std::move(ts)); }

// Index tensors draw in [-self.size(0), self.size(0)): the indexed dims are at least as large as
// dim 0; out-of-range cases put their index first.
std::vector<Sample> index_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16})
      out.push_back(make("rows of [32000, 1024] " + dtype_code_str(t),
                         {T({32000, 1024}, t), TL({T({8192}, i64)})}));
    return out;
  }
  for (DType t : all_numeric_dtypes())
    out.push_back(make("rows " + dtype_code_str(t), {T({4, 3}, t), TL({T({6}, i64)})}));
  out.push_back(make("2-d index", {T({4, 5}, f32), TL({T({2, 3}, i64)})}));
  out.push_back(make("i32 index", {T({4, 5}, f32), TL({T({3}, i32)})}));
  out.push_back(make("0-d index", {T({4, 5}, f32), TL({T({}, i64)})}));
  out.push_back(make("two adjacent indices, broadcast",
                     {T({4, 4, 3}, f32), TL({T({2, 1}, i64), T({3}, i64)})}));
  out.push_back(make("None first, adjacent after",
                     {T({3, 4, 4, 2}, f32), TL({None(), T({2}, i64), T({2}, i64)})}));
  out.push_back(make("None between (B first)",
                     {T({4, 2, 4, 3}, f32), TL({T({2, 1}, i64), None(), T({1, 3}, i64)})}));
  out.push_back(make("None between, trailing dims",
                     {T({4, 3, 5}, f32), TL({T({2}, i64), None(), T({2}, i64)})}));
  out.push_back(make("every dim", {T({3, 3}, f64), TL({T({4}, i64), T({4}, i64)})}));
  out.push_back(make("bool mask", {T({3, 4}, f32), TL({T({3}, b8)})}));
  out.push_back(make("2-d bool mask", {T({3, 4}, f32), TL({T({3, 4}, b8)})}));
  out.push_back(make("u8 mask", {T({3, 4}, f32), TL({T({3}, u8)})}));
  out.push_back(make("mask after None", {T({2, 3, 4}, f32), TL({None(), T({3}, b8)})}));
  out.push_back(make("mask with an index", {T({3, 4}, f32), TL({T({3}, b8), T({1}, i64)})}));
  out.push_back(make("empty index", {T({4, 5}, f32), TL({T({0}, i64)})}));
  out.push_back(make("empty self dim", {T({4, 0}, f32), TL({T({2}, i64)})}));
  out.push_back(make("transposed self", {T_transposed(4, 6, f16), TL({None(), T({3}, i64)})}));
  out.push_back(make("expanded index", {T({4, 5}, f32), TL({T({2, 3}, i64, {0, 1})})}));
  out.push_back(make("special values", {T_fill({5, 4}, f32, "special"), TL({T({7}, i64)})}));
  out.push_back(make("error: index out of range", {T({4, 3}, f32), TL({T_fill({5}, i64, "oob")})}));
  out.push_back(make("error: index out of range, second of two",
                     {T({4, 4}, f32), TL({T({3}, i64), T_fill({3}, i64, "oob")})}));
  out.push_back(
      make("error: indices do not broadcast", {T({4, 4}, f32), TL({T({2}, i64), T({3}, i64)})}));
  out.push_back(make("error: too many indices", {T({4}, f32), TL({T({1}, i64), T({1}, i64)})}));
  out.push_back(make("error: mask shape differs", {T({3, 4}, f32), TL({T({2}, b8)})}));
  out.push_back(make("error: float index", {T({3, 4}, f32), TL({T({2}, f32)})}));
  return out;
}

// Without accumulate every sample writes each position once or writes equal values.
std::vector<Sample> index_put_samples(const SampleContext& ctx) {
  std::vector<Sample> out;
  if (ctx.performance) {
    for (DType t : {f32, f16}) {
      out.push_back(make("accumulate rows of [32000, 1024] " + dtype_code_str(t),
                         {T({32000, 1024}, t), TL({T({8192}, i64)}), T({8192, 1024}, t), B(true)}));
      out.push_back(make("mask fill [2048, 2048] " + dtype_code_str(t),
                         {T({2048, 2048}, t), TL({T({2048, 2048}, b8)}), T({}, t)}));
    }
    return out;
  }
  for (DType t : all_numeric_dtypes()) {
    out.push_back(make("accumulate rows " + dtype_code_str(t),
                       {T({4, 3}, t), TL({T({6}, i64)}), T({6, 3}, t), B(true)}));
    out.push_back(make("row broadcast value " + dtype_code_str(t),
                       {T({4, 3}, t), TL({T({5}, i64)}), T({3}, t)}));
  }
  out.push_back(
      make("single element", {T({4, 5}, f32), TL({T({1}, i64), T({1}, i64)}), T({1}, f32)}));
  out.push_back(make("0-d value", {T({4, 5}, f32), TL({T({3}, i64)}), T({}, f32)}));
  out.push_back(make("bool mask", {T({3, 4}, f32), TL({T({3, 4}, b8)}), T({}, f32)}));
  out.push_back(
      make("bool mask rows, row value", {T({3, 4}, f32), TL({T({3}, b8)}), T({1, 4}, f32)}));
  out.push_back(
      make("accumulate, None between",
           {T({4, 2, 4}, f32), TL({T({3}, i64), None(), T({3}, i64)}), T({3, 2}, f32), B(true)}));
  out.push_back(make(
      "accumulate, adjacent after None",
      {T({2, 4, 4}, f64), TL({None(), T({2, 3}, i64), T({3}, i64)}), T({2, 2, 3}, f64), B(true)}));
  out.push_back(make("accumulate keyword, i32 index",
                     {T({4, 3}, i64), TL({T({7}, i32)}), T({7, 3}, i64)},
                     {{"accumulate", B(true)}}));
  out.push_back(make("accumulate, broadcast value",
                     {T({4, 3}, f32), TL({T({6}, i64)}), T({3}, f32), B(true)}));
  out.push_back(make("empty index", {T({4, 5}, f32), TL({T({0}, i64)}), T({}, f32)}));
  out.push_back(
      make("transposed self", {T_transposed(4, 6, f16), TL({T({2}, i64)}), T({6}, f16), B(true)}));
  out.push_back(make("special values", {T_fill({5, 4}, f32, "special"), TL({T({7}, i64)}),
                                        T_fill({7, 4}, f32, "special"), B(true)}));
  out.push_back(make("error: index out of range",
                     {T({4, 3}, f32), TL({T_fill({2}, i64, "oob")}), T({3}, f32)}));
  out.push_back(
      make("error: values dtype differs", {T({4, 3}, f32), TL({T({2}, i64)}), T({3}, f64)}));
  out.push_back(
      make("error: values do not broadcast", {T({4, 3}, f32), TL({T({2}, i64)}), T({2}, f32)}));
  out.push_back(
      make("error: too many indices", {T({4}, f32), TL({T({1}, i64), T({1}, i64)}), T({}, f32)}));
  return out;
}

OpDef make_index_op(const char* schema, MetaFn meta, RefFn ref, SampleFn samples, CostFn cost) {
  OpDef op = OpDef::from_schema(schema, "indexing");
  op.dtypes = all_numeric_dtypes();
  op.meta = std::move(meta);
  // Indices out of range; with masks, the number of true values decides whether the index
  // tensors broadcast together and values to the result.
  op.value_checks = true;
  op.ref = std::move(ref);
  op.samples = std::move(samples);
  ArgRole role = ArgRole::index_into("self", 0);
  role.allow_negative = true;
  op.roles["indices"] = role;
  op.cost = std::move(cost);
  return op;
}

double put_tol(const Args& a) {
  double n = 0;
  for (const Tensor& t : a.tensors("indices"))
    if (t.defined()) n = std::max(n, static_cast<double>(t.numel()));
  return std::max(1.0, n);
}

}  // namespace

void register_index_ops(OpRegistry& r) {
  {
    OpDef op = make_index_op("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
                             index_meta, index_ref, index_samples, index_cost);
    op.data_dependent = true;  // a mask selects as many elements as it has true values
    r.add(std::move(op));
  }
  {
    OpDef op = make_index_op(
        "aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) "
        "-> Tensor",
        index_put_meta, structured_ref(index_put_meta, index_put_impl), index_put_samples,
        index_put_cost);
    op.compare.tol_scale = [schema = op.schema](const Values& a) {
      return put_tol(Args(a, schema));
    };
    r.add(std::move(op));
  }
  {
    OpDef op = make_index_op(
        "aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool "
        "accumulate=False) -> Tensor(a!)",
        index_put_inplace_meta, structured_ref(index_put_inplace_meta, index_put_impl),
        index_put_samples, index_put_cost);
    op.compare.tol_scale = [schema = op.schema](const Values& a) {
      return put_tol(Args(a, schema));
    };
    r.add(std::move(op));
  }
}

}  // namespace crucible::indexing
