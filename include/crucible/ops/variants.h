// In-place and out= overloads derived from their functional op, as native_functions.yaml's
// structured_delegate derives them: `abs_` and `abs.out` are `abs` written into a destination.
// A derived overload has no code of its own: its meta function is the functional op's plus the
// destination rule, its reference runs the functional reference and writes the results into the
// destinations, its samples are the functional op's with destinations added. Backends run them
// the same way from their functional kernel (the cpu backend does).
//
// The overloads that exist are ATen's facts (src/ops/variant_schemas.inc, generated from
// data/spec/all_aten_ops.json by scripts/gen_variant_schemas.py); ops written by hand keep their
// own definition (add_.Tensor, abs.out, ...). docs/adding-an-op.md says when to write one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "crucible/ops/op.h"

namespace crucible {

// How results reach a destination of another dtype, per ATen's kernel kind.
enum class WriteRule : uint8_t {
  // TensorIterator ops (ATen tags them pointwise): the result's dtype must be castable to the
  // destination's (can_cast); in place, self must already have the broadcast shape.
  Cast,
  // TensorIterator's unary_op (abs, neg, ceil, floor, trunc, round, sign, sgn, bitwise_not):
  // every operand has one dtype, so an out= of another dtype raises "Found dtype Double but
  // expected Float".
  Same,
  // The others: the result is written as copy_ writes it (any dtype, converted); crucible's
  // samples give these destinations the result's dtype, where every ATen kernel kind agrees.
  Copy,
  // Factories' out= (zeros.out, arange.out, rand.out, ...): the functional op's TensorOptions
  // arguments are gone; the destination's dtype is the dtype the functional op computes in.
  Factory,
};

struct DerivedVariant {
  const OpDef* functional = nullptr;
  bool inplace = false;
  WriteRule rule = WriteRule::Copy;
  // Per argument of the functional op: the variant's argument passed to it, or -1 for a
  // TensorOptions argument the variant does not have (Factory: dtype from the destination).
  std::vector<int> functional_arg;
  // The variant's arguments written: self in place, the out= arguments (in the order of the
  // functional op's returns) otherwise.
  std::vector<size_t> destinations;
};

// The derivation of a catalog op, or nullptr for an op written by hand.
const DerivedVariant* derived_variant(std::string_view op_name);

// The functional op's arguments for a call of the variant (Factory: dtype is the first
// destination's dtype).
Values functional_arguments(const DerivedVariant& v, const Values& variant_args);

// Checks the functional op's results (meta tensors allowed) against the destinations by the
// rule, raising ATen's errors, and returns the variant's outputs (its destinations, per return).
Values check_destinations(const OpDef& variant, const DerivedVariant& v, const Values& args,
                          const Values& results);
// check_destinations, then writes the results into the destinations.
Values write_destinations(const OpDef& variant, const DerivedVariant& v, const Values& args,
                          const Values& results);

// The functional catalog op an ATen in-place or out= overload writes, when the catalog has one
// whose arguments it takes (out= without its destinations; factories without their
// TensorOptions): its name and the rule, or nothing. Used to derive and to check completeness.
struct FunctionalMatch {
  std::string functional;
  bool factory = false;
};
std::optional<FunctionalMatch> functional_counterpart(const Schema& variant,
                                                      const OpRegistry& registry);

// A factory's TensorOptions argument (dtype, layout, device, pin_memory), which its out=
// overload does not have.
bool is_tensor_option(std::string_view name);

// ATen overloads that are not derived although their functional op is in the catalog, with why.
const std::vector<std::pair<std::string, std::string>>& variants_not_derived();

}  // namespace crucible
