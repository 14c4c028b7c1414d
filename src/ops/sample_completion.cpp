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
#include "crucible/ops/materialize.h"
#include "crucible/ops/variants.h"

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

bool in(const std::string& family, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return family == n; });
}

}  // namespace

bool is_elementwise_family(const std::string& family) {
  return family.starts_with("pointwise") ||
         in(family, {"activation", "activation.backward", "comparison", "where"});
}

bool is_reduction_family(const std::string& family) {
  return in(family,
            {"reduction", "scan", "cumsum", "softmax", "softmax.backward", "selection", "sort"});
}

std::vector<std::string> value_regimes(const std::string& family) {
  if (is_elementwise_family(family))
    return {"integers", "big_integers", "tiny", "subnormal", "huge", "wide", "exp_edge"};
  // Reductions accumulate in the dtype as ATen's kernels do (f32 sums in f32): large values
  // with cancelling signs leave a rounding error of the partial sums far above the tolerance
  // of the small result, and huge ones overflow where the f64 reference does not; they get the
  // regimes whose sums stay exact or tiny.
  if (is_reduction_family(family)) return {"integers", "tiny", "subnormal"};
  // Normalisations sum products of centred values (and their backward, of three factors):
  // integer-valued data up to +-100 leaves an f32 accumulator (ATen's) a rounding error above
  // the tolerance of the cancelled result, as large values do for reductions.
  if (family == "norm") return {};
  if (family == "random" || family == "creation" || family == "meta") return {};
  return {"integers"};
}

namespace {

constexpr int64_t kLargeElements = 40000;

// Regimes of an op's family that do not apply to the op, with the reason.
struct SkippedRegime {
  const char* op;
  const char* regime;
  const char* why;
};
constexpr SkippedRegime kSkippedRegimes[] = {
    {"aten.lerp.Scalar", "huge",
     "ATen's formula computes end - self in the dtype, which overflows for values near the "
     "dtype's max of opposite signs: ATen's result is inf where the f64 reference is finite"},
    {"aten.lerp.Tensor", "huge", "as lerp.Scalar"},
    {"aten.prod.default", "integers",
     "the running product of integers up to 100 overflows f32 (ATen's accumulator) before it "
     "meets a 0 (inf * 0 = NaN) where the f64 reference's product is 0"},
    {"aten.prod.dim_int", "integers", "as prod.default"},
    {"aten.cumprod.default", "integers", "as prod.default"},
};

}  // namespace

bool regime_skipped(const std::string& op, const std::string& regime) {
  // A derived in-place or out= overload computes what its functional op computes.
  const DerivedVariant* v = derived_variant(op);
  const std::string& name = v ? v->functional->name : op;
  return std::any_of(std::begin(kSkippedRegimes), std::end(kSkippedRegimes),
                     [&](const SkippedRegime& s) { return name == s.op && regime == s.regime; });
}

namespace {
const int64_t kVectorWidths[] = {1, 3, 7, 8, 15, 16, 17, 31, 33, 63, 65};

int64_t largest_tensor(cases::CallSpec call, const Schema& schema) {
  int64_t m = 0;
  for_each_tensor(call, schema,
                  [&](TensorLit& t, const std::string&) { m = std::max(m, numel_of(t.shape)); });
  return m;
}

// The shape of the largest tensor of a call (the first of them).
std::optional<Shape> largest_shape(cases::CallSpec call, const Schema& schema) {
  std::optional<Shape> best;
  int64_t m = 0;
  for_each_tensor(call, schema, [&](TensorLit& t, const std::string&) {
    if (numel_of(t.shape) > m) {
      m = numel_of(t.shape);
      best = t.shape;
    }
  });
  return best;
}

// Resizes dim `d` (counted from the front, or from the back when negative) of every contiguous
// tensor whose rank and size there match the call's largest tensor. False when nothing
// changes or a matching tensor is strided (its strides would no longer fit).
bool resize_dim(cases::CallSpec& call, const Schema& schema, int64_t d, int64_t size) {
  const std::optional<Shape> big = largest_shape(call, schema);
  if (!big || big->empty()) return false;
  const auto rank = static_cast<int64_t>(big->size());
  const int64_t at = d < 0 ? rank + d : d;
  if (at < 0 || at >= rank || (*big)[at] == size) return false;
  const int64_t was = (*big)[at];
  bool ok = true, any = false;
  for_each_tensor(call, schema, [&](TensorLit& t, const std::string&) {
    if (static_cast<int64_t>(t.shape.size()) != rank || t.shape[at] != was) return;
    if (t.strides && *t.strides != contiguous_strides(t.shape)) {
      ok = false;
      return;
    }
    t.shape[at] = size;
    t.strides.reset();
    t.stride_written = false;
    any = true;
  });
  return ok && any;
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

  // The value regimes of the op's family: floating data of a sample whose first tensor is f32
  // (the thresholds differ per dtype: exp overflows past 88.7 in f32, 11.1 in f16), and of one
  // whose first tensor is f16 (kernels that compute in half); any floating sample when the op
  // has neither.
  for (const std::string& regime : value_regimes(op.family)) {
    if (regime_skipped(op.name, regime)) continue;
    bool has = false;
    for (const Sample& s : own) {
      cases::CallSpec call = s.call;
      for_each_tensor(call, schema,
                      [&](TensorLit& t, const std::string&) { has |= t.fill == regime; });
    }
    if (has) continue;
    auto fill = [&](std::optional<DType> want) {
      return [&, want](cases::CallSpec& call) {
        const std::optional<DType> first = first_dtype(call, schema);
        if (!first || (want && *first != *want) || (!want && !is_floating(*first))) return false;
        bool any = false;
        for_each_tensor(call, schema, [&](TensorLit& t, const std::string& name) {
          if (is_floating(t.dtype) && is_data(op, name) && !t.fill && numel_of(t.shape) > 0) {
            t.fill = regime;
            any = true;
          }
        });
        return any;
      };
    };
    bool found = false;
    for (DType want : {DType::Float32, DType::Float16}) {
      auto d =
          derive(op, own, "values: " + regime + " " + std::string(dtype_code(want)), fill(want));
      if (d) {
        out.push_back(std::move(*d));
        found = true;
      }
    }
    if (!found)
      if (auto d = derive(op, own, "values: " + regime, fill(std::nullopt)))
        out.push_back(std::move(*d));
  }

  const bool elementwise = is_elementwise_family(op.family);
  const bool reduction = is_reduction_family(op.family);
  if (!elementwise && !reduction) return out;

  // A large case (past kLargeElements), where kernels switch to blocked or threaded paths.
  bool has_large = false;
  for (const Sample& s : own)
    if (!is_error(s)) has_large |= largest_tensor(s.call, schema) >= kLargeElements;
  if (!has_large) {
    // On an f32 case where the op has one (f16 and bf16 cost more to draw and convert).
    auto grow = [&](bool f32_only) {
      return [&, f32_only](cases::CallSpec& call) {
        if (f32_only && first_dtype(call, schema) != DType::Float32) return false;
        const std::optional<Shape> big = largest_shape(call, schema);
        if (!big || big->empty() || numel_of(*big) == 0) return false;
        const int64_t per_row = numel_of(*big) / (*big)[0];
        if (per_row == 0) return false;
        const int64_t rows = (kLargeElements + 1000 + per_row - 1) / per_row;
        return resize_dim(call, schema, 0, rows);
      };
    };
    auto d = derive(op, own, "large", grow(true));
    if (!d) d = derive(op, own, "large", grow(false));
    if (d) out.push_back(std::move(*d));
  }

  // Reductions: the reduced or scanned rows at every vector width (the elementwise builders
  // write their own).
  if (reduction) {
    for (int64_t w : kVectorWidths) {
      auto d = derive(op, own, "width " + std::to_string(w),
                      [&](cases::CallSpec& call) { return resize_dim(call, schema, -1, w); });
      if (d) out.push_back(std::move(*d));
    }
  }

  // Integers that overflow and must wrap as ATen does (two's complement): the extremes of
  // each integral dtype the op takes (fill 'special').
  if (reduction) {
    for (DType want : {DType::Int8, DType::Int32, DType::Int64}) {
      if (std::find(op.dtypes.begin(), op.dtypes.end(), want) == op.dtypes.end()) continue;
      auto d = derive(op, own, "integer extremes " + std::string(dtype_code(want)),
                      [&](cases::CallSpec& call) {
                        const std::optional<DType> from = first_dtype(call, schema);
                        if (!from || *from == DType::Bool || is_complex(*from)) return false;
                        bool any = false;
                        for_each_tensor(call, schema, [&](TensorLit& t, const std::string& name) {
                          if (t.dtype != *from || !is_data(op, name) || t.fill) return;
                          t.dtype = want;
                          t.dtype_text.clear();
                          t.fill = "special";
                          any = true;
                        });
                        return any;
                      });
      if (d) out.push_back(std::move(*d));
    }
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
