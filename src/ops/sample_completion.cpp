// Derived correctness samples: special values, every supported dtype, a non-contiguous input.
#include "ops/sample_completion.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"

namespace crucible {

namespace {

using cases::Literal;
using cases::LitKind;
using cases::TensorLit;

// Calls fn(tensor literal, argument name) for every tensor of a call, lists included.
void for_each_tensor(cases::CallSpec& call, const Schema& schema,
                     const std::function<void(TensorLit&, const std::string&)>& fn) {
  auto visit = [&](Literal& lit, const std::string& name) {
    if (lit.kind == LitKind::Tensor) fn(lit.tensor, name);
    if (lit.kind == LitKind::List || lit.kind == LitKind::Tuple)
      for (Literal& item : lit.items)
        if (item.kind == LitKind::Tensor) fn(item.tensor, name);
  };
  for (size_t i = 0; i < call.args.size(); ++i)
    visit(call.args[i], i < schema.arguments.size() ? schema.arguments[i].name : std::string());
  for (auto& [name, lit] : call.kwargs) visit(lit, name);
}

bool is_error(const Sample& s) { return s.label.starts_with("error"); }

std::optional<DType> first_dtype(cases::CallSpec call, const Schema& schema) {
  std::optional<DType> d;
  for_each_tensor(call, schema, [&](TensorLit& t, const std::string&) {
    if (!d) d = t.dtype;
  });
  return d;
}

// Whether the reference computes the call (materialises and runs without raising).
bool computes(const OpDef& op, const cases::CallSpec& call) {
  try {
    op.run_ref(materialize(op, call, 7), 7);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The first computing sample that `rewrite` changes (it returns false when it cannot apply)
// and the reference still computes, labelled `label` plus its origin.
std::optional<Sample> derive(const OpDef& op, const std::vector<Sample>& own,
                             const std::string& label,
                             const std::function<bool(cases::CallSpec&)>& rewrite) {
  constexpr int kAttempts = 12;
  int attempts = 0;
  for (const Sample& s : own) {
    if (is_error(s)) continue;
    Sample d = s;
    if (!rewrite(d.call)) continue;
    if (++attempts > kAttempts) break;
    if (!computes(op, d.call)) continue;
    d.label = label + " (from '" + s.label + "')";
    return d;
  }
  return std::nullopt;
}

bool is_data(const OpDef& op, const std::string& name) {
  return op.role_of(name).kind == ArgRole::Kind::Data;
}

std::vector<Sample> derived_samples(const OpDef& op, const std::vector<Sample>& own) {
  std::vector<Sample> out;
  const Schema& schema = op.schema;

  // Special values.
  bool has_special = false;
  for (const Sample& s : own) {
    cases::CallSpec call = s.call;
    for_each_tensor(call, schema,
                    [&](TensorLit& t, const std::string&) { has_special |= t.fill == "special"; });
  }
  const bool floating_op = std::any_of(op.dtypes.begin(), op.dtypes.end(),
                                       [](DType t) { return is_floating(t) || is_complex(t); });
  if (!has_special && floating_op) {
    auto d = derive(op, own, "special values", [&](cases::CallSpec& call) {
      bool any = false;
      for_each_tensor(call, schema, [&](TensorLit& t, const std::string& name) {
        if ((is_floating(t.dtype) || is_complex(t.dtype)) && is_data(op, name) && !t.fill &&
            numel_of(t.shape) > 0) {
          t.fill = "special";
          any = true;
        }
      });
      return any;
    });
    if (d) out.push_back(std::move(*d));
  }

  // Every supported dtype.
  std::set<DType> covered;
  for (const Sample& s : own)
    if (!is_error(s))
      if (auto t = first_dtype(s.call, schema)) covered.insert(*t);
  for (DType want : op.dtypes) {
    if (covered.count(want)) continue;
    auto d = derive(op, own, "dtype " + std::string(dtype_code(want)), [&](cases::CallSpec& call) {
      const std::optional<DType> from = first_dtype(call, schema);
      if (!from || *from == want) return false;
      bool any = false;
      for_each_tensor(call, schema, [&](TensorLit& t, const std::string& name) {
        if (t.dtype != *from || !is_data(op, name)) return;
        t.dtype = want;
        t.dtype_text.clear();
        if (t.fill == "special" && !is_floating(want) && !is_complex(want)) t.fill.reset();
        any = true;
      });
      return any;
    });
    if (d) out.push_back(std::move(*d));
  }

  // A non-contiguous input.
  bool has_strided = false;
  for (const Sample& s : own) {
    if (is_error(s)) continue;
    cases::CallSpec call = s.call;
    for_each_tensor(call, schema, [&](TensorLit& t, const std::string&) {
      has_strided |= t.strides.has_value() && *t.strides != contiguous_strides(t.shape);
    });
  }
  if (!has_strided) {
    auto d = derive(op, own, "non-contiguous", [&](cases::CallSpec& call) {
      bool done = false;
      for_each_tensor(call, schema, [&](TensorLit& t, const std::string& name) {
        if (done || !is_data(op, name) || t.strides || t.shape.empty()) return;
        const size_t n = t.shape.size();
        Shape strides = contiguous_strides(t.shape);
        if (n >= 2 && t.shape[n - 1] > 1 && t.shape[n - 2] > 1) {
          // Transposed: the last two dims stored swapped.
          strides[n - 2] = 1;
          strides[n - 1] = t.shape[n - 2];
        } else if (t.shape[n - 1] > 1) {
          // Every other element of a buffer twice as long.
          for (int64_t& s : strides) s *= 2;
        } else {
          return;
        }
        t.strides = strides;
        t.stride_written = true;
        done = true;
      });
      return done;
    });
    if (d) out.push_back(std::move(*d));
  }
  return out;
}

}  // namespace

void complete_samples(OpDef& op) {
  struct Cache {
    std::once_flag once;
    std::vector<Sample> derived;
  };
  auto cache = std::make_shared<Cache>();
  SampleFn own = std::move(op.samples);
  const OpDef* self = &op;  // owned by the registry: its address is stable
  op.samples = [own, cache, self](const SampleContext& ctx) {
    std::vector<Sample> out = own(ctx);
    if (ctx.performance) return out;
    std::call_once(cache->once, [&] { cache->derived = derived_samples(*self, out); });
    out.insert(out.end(), cache->derived.begin(), cache->derived.end());
    return out;
  };
}

}  // namespace crucible
