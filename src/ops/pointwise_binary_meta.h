// Meta functions of the pointwise.binary family (private to arithmetic*.cpp and
// pointwise_binary.cpp): each op's argument checks live in a spec function returning the
// output's shape and dtype, which both the reference (before computing) and the meta function
// call; the in-place and out= overloads add arith::inplace_of's and arith::out_of's rules.
#pragma once

#include <functional>
#include <utility>

#include "crucible/core/tensor.h"
#include "crucible/ops/op.h"
#include "ops/arithmetic_internal.h"
#include "ops/meta_fn.h"

namespace crucible::binmeta {

// A fresh elementwise result: its (broadcast) shape and (promoted) dtype, contiguous.
struct Spec {
  Shape shape;
  DType dtype;
};

// An op's checks on its bound arguments, returning the spec of its result. The meta builders
// below take any function callable with the call's `Args`: a SpecFn, or a function reading its
// arguments by name (`Spec f(const Args&)`).
using SpecFn = std::function<Spec(const Values& args)>;

// A fresh, contiguous tensor of the spec (what Tensor::empty(s.shape, s.dtype) gives).
inline Tensor empty_of(const Spec& s) { return Tensor::empty(s.shape, s.dtype); }

// The meta function of an out-of-place op: its spec as a meta tensor.
template <class F>
MetaFn fresh_meta(F spec) {
  return [spec = std::move(spec)](const Args& args) {
    const Spec s = spec(args);
    return Values{meta::fresh(s.shape, s.dtype)};
  };
}

// The meta function of the in-place overload arith::inplace_of(ref) makes of an out-of-place
// op with spec `spec`: self must not overlap itself (checked first), then the op's own checks,
// then the result must fit self (shape and castable dtype); self is returned.
template <class F>
MetaFn inplace_meta(F spec) {
  return [spec = std::move(spec)](const Args& args) {
    const Tensor& self = args.tensor("self");
    // With self's own shape and dtype, check_inplace checks the overlap only.
    arith::check_inplace(self, self.shape(), self.dtype());
    const Spec s = spec(args);
    arith::check_inplace(self, s.shape, s.dtype);
    return Values{args.value("self")};
  };
}

// The meta function of the out= overload arith::out_of(ref) makes: the op's checks, then
// those of the argument `out` (arith::check_out); out is returned.
template <class F>
MetaFn out_meta(F spec) {
  return [spec = std::move(spec)](const Args& args) {
    const Spec s = spec(args);
    arith::check_out(args.tensor("out"), s.shape, s.dtype);
    return Values{args.value("out")};
  };
}

}  // namespace crucible::binmeta
