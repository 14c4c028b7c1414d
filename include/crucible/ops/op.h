// The op catalog: one entry per ATen overload, holding its schema, reference implementation,
// sample generator, argument roles, cost model and comparison policy side by side.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "crucible/cases/literal.h"
#include "crucible/compare/compare.h"
#include "crucible/core/value.h"
#include "crucible/ops/args.h"
#include "crucible/schema/schema.h"

namespace crucible {

// How values of a tensor argument are drawn when a case is materialised.
struct ArgRole {
  enum class Kind : uint8_t {
    Data,         // signed, zero-mean values (the default)
    IndexInto,    // integers in [0, size) where size = dim `dim` of argument `of` (or `bound`)
    Positive,     // strictly positive values (variances, ...)
    Unit,         // values in [0, 1] (probabilities)
    NonPositive,  // values <= 0 (log-probabilities: a log_softmax output)
  };
  Kind kind = Kind::Data;
  std::string of;               // IndexInto: the argument whose size bounds the index
  int64_t dim = 0;              // IndexInto: which dim of `of`
  int64_t bound = 0;            // IndexInto without `of`: a fixed bound
  bool allow_negative = false;  // IndexInto: also draw in [-size, 0) (Python-style indices)

  static ArgRole index_into(std::string of, int64_t dim) {
    ArgRole r;
    r.kind = Kind::IndexInto;
    r.of = std::move(of);
    r.dim = dim;
    return r;
  }
  static ArgRole positive() {
    ArgRole r;
    r.kind = Kind::Positive;
    return r;
  }
  static ArgRole unit() {
    ArgRole r;
    r.kind = Kind::Unit;
    return r;
  }
  static ArgRole non_positive() {
    ArgRole r;
    r.kind = Kind::NonPositive;
    return r;
  }
};

// FLOPs and bytes moved by one call, for GFLOP/s and GB/s.
struct Cost {
  double flops = 0;
  double bytes = 0;
};

// How a candidate's outputs are judged against the reference's.
struct ComparePolicy {
  enum class Kind : uint8_t {
    Values,     // elementwise with tolerances (exact for integers and bool)
    ShapeOnly,  // shape, dtype and strides only (empty*)
    Custom,     // the op's own judge (`custom` below)
  };
  Kind kind = Kind::Values;
  // Extra tolerance: the per-dtype atol/rtol are multiplied by
  // max(1, tol_scale(args) ) -- e.g. sqrt of the reduction length for sums and matmuls.
  std::function<double(const Values& args)> tol_scale;
  // Whether the op's tensor outputs must be views of (share storage with) an input.
  bool output_is_view = false;
  // Whether an output without an alias annotation may still share storage with an input
  // (_unsafe_view: ATen returns a view that autograd does not track; a copy is right too).
  bool output_may_alias = false;
  // Kind::Custom: judges the candidate's outputs (host tensors) against the reference's, given
  // the inputs, and returns one check per compared thing (failed checks carry the reason).
  // Used where outputs may legitimately differ: indices of tied values (sort, topk, max.dim),
  // random values (judged by distribution), ... Mutated arguments are still compared by value.
  std::function<std::vector<TensorCheck>(const Values& inputs, const Values& ref_outputs,
                                         const Values& cand_outputs)>
      custom;
  // Random ops: the candidate is seeded (Backend::manual_seed) and run twice on the same seed;
  // both runs must give the same bytes (determinism for a fixed seed).
  bool random = false;
  // Random ops: the probability that two different seeds give the same bytes for these inputs
  // and (reference) outputs, as log10 (e.g. -300 for 1000 uniform floats, 0 when the op draws
  // nothing: p = 0, eval-mode dropout, empty outputs). The evaluator runs the candidate once
  // more under another seed; when this is below kSeedCollisionLog10 and every output is
  // byte-identical to the first run's, the candidate ignores the seed and fails
  // (seed_dependence_failure in ops/random_checks.h says so). Unset: not checked.
  std::function<double(const Values& inputs, const Values& ref_outputs)> seed_collision_log10;
  // The op's output values are unspecified (empty, empty_like, new_empty, empty_strided...: ATen
  // returns uninitialised memory): only shape, dtype and strides are judged (Kind::ShapeOnly),
  // and a kernel that writes nothing is right. The kernel-ABI guards must not fail such an
  // output as "unwritten" (their poison check skips it).
  bool values_unspecified = false;
  // The outputs (by index in the schema's returns) whose values are unspecified while the op's
  // other outputs are data: RNG state returned beside a result (the attention ops' rng_state,
  // philox_seed and philox_offset), unused or empty buffers. Each is judged by shape, dtype and
  // strides only (as Kind::ShapeOnly judges every output); the kernel-ABI guards skip their
  // "unwritten elements" and "same result on a second call" checks, and the model and op-by-op
  // flows do not compare them. A wrong shape or dtype there still fails.
  std::vector<size_t> unspecified_outputs;
  // Outputs whose values are unspecified in some calls only, by the call's arguments (positional,
  // as the op's schema has them): nll_loss2d_forward's total_weight with reduction 'none', which
  // ATen's CUDA kernel never writes. Judged as unspecified_outputs are where it says so.
  std::function<bool(const Values& args, size_t index)> unspecified_where;
  bool output_unspecified(size_t index) const {
    return values_unspecified || kind == Kind::ShapeOnly ||
           std::find(unspecified_outputs.begin(), unspecified_outputs.end(), index) !=
               unspecified_outputs.end();
  }
  // The same for a call with these arguments.
  bool output_unspecified(size_t index, const Values& args) const {
    return output_unspecified(index) || (unspecified_where && unspecified_where(args, index));
  }
};

// Below this (log10 of the probability that two seeds give the same bytes), a random op whose
// outputs do not change with the seed has ignored it: a false alarm once in 10^6 cases at most.
constexpr double kSeedCollisionLog10 = -6;

// One generated case: the call in the case grammar, plus a label saying what it exercises.
struct Sample {
  cases::CallSpec call;
  std::string label;  // "broadcast", "non-contiguous", "special values", "0-d", ...
  // An "error:" sample whose error is ATen's CPU rule only (ATen's CUDA kernels compute the
  // call, e.g. an f16 FFT). It is no must-raise case -- a backend computing it as CUDA does
  // is right -- so the suites leave it out; the catalog keeps it to document the CPU rule.
  bool cpu_only_error = false;
};

struct SampleContext {
  bool performance = false;  // large cases for timing instead of correctness cases
};

// The reference, meta and cost functions take the call's arguments by name (args.h); a function
// written for plain `const Values&` is accepted too (Args converts). Call them through
// OpDef::run_ref, run_meta and run_cost, which pair the values with the op's schema.
using RefFn = std::function<Values(const Args& args)>;
// The reference of a random op: draws from crucible's counter-based RNG under `seed`.
using SeededRefFn = std::function<Values(const Args& args, uint64_t seed)>;
using SampleFn = std::function<std::vector<Sample>(const SampleContext&)>;
using CostFn = std::function<Cost(const Args& args, const Values& outputs)>;
// The meta function of an op (PyTorch's TORCH_META_FUNC, MLX's shape inference): see OpDef::meta.
using MetaFn = std::function<Values(const Args& args)>;

struct OpDef {
  std::string name;    // "aten.add.Tensor"
  std::string family;  // "pointwise.binary", "reduction", "matmul", "view", ...
  Schema schema;
  // The dtypes ATen supports for the op's primary input (on the CPU, PyTorch 2.x).
  std::vector<DType> dtypes;
  RefFn ref;               // deterministic ops
  SeededRefFn ref_seeded;  // random ops (set instead of `ref`)
  SampleFn samples;
  std::map<std::string, ArgRole> roles;  // by argument name; others are Data
  CostFn cost;
  ComparePolicy compare;
  // What a call returns, known from its arguments without computing anything: per return of the
  // schema, a fresh tensor output as a meta tensor (its shape, strides and dtype exactly as the
  // reference returns them), a view output as that view of the argument it aliases, a mutated
  // argument (in-place, out=) as the argument itself, a number as its value where the shapes
  // decide it, a list as a list of these. Raises ATen's errors for calls that are invalid
  // whatever the values (the same kinds and messages as the reference); the argument checks
  // live here and nowhere else. Works on meta tensor arguments too (the `meta` backend).
  MetaFn meta;
  // The shapes of some outputs depend on the input values (nonzero, masked_select, unique,
  // item): meta gives those outputs' dtype and rank, their sizes are upper bounds and numbers
  // hold 0.
  bool data_dependent = false;
  // The reference also raises on some values (an index out of range, a negative count): errors
  // no meta function can see, raised by the computation.
  bool value_checks = false;

  // Runs the reference: `ref`, or `ref_seeded` with `seed`.
  Values run_ref(const Values& args, uint64_t seed = 0) const;

  // Runs the meta function (an Internal error when the op has none).
  Values run_meta(const Values& args) const;

  // The cost model's FLOPs and bytes for a call and its outputs (zero when the op has none).
  Cost run_cost(const Values& args, const Values& outputs) const;

  // The role of argument `name` (Data when none was declared).
  ArgRole role_of(const std::string& name) const;

  // An entry with its schema parsed from ATen's text form ("aten::" prefix optional); the name
  // is derived from the schema ("aten.add.Tensor").
  static OpDef from_schema(std::string_view schema_text, std::string family);
};

class OpRegistry {
 public:
  // The catalog, filled once on first use from every op family's registration function.
  static const OpRegistry& catalog();

  void add(OpDef op);  // throws Internal error on a duplicate name or a bad schema
  const OpDef* find(std::string_view name) const;  // exact overload name, or nullptr
  const OpDef& get(std::string_view name) const;   // throws a Usage error with a suggestion
  const std::vector<const OpDef*>& all() const { return ordered_; }
  // Resolves a comma-separated filter of overload names ("aten.add.Tensor", "add.Tensor") or
  // base names ("add" matches every add overload). A term matching nothing is a Usage error.
  std::vector<const OpDef*> match(const std::vector<std::string>& terms) const;

 private:
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops_;
  std::vector<const OpDef*> ordered_;
};

// The base name of an overload: "aten.add.Tensor" -> "add".
std::string op_base_name(std::string_view op_name);

}  // namespace crucible
