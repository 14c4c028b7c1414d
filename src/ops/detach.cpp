// aten.detach.default: a view of self with the same sizes, strides and storage offset (autograd
// stops there; crucible has no autograd, so it is judged as alias is: the output must share the
// input's storage). Every dtype.
#include "ops/families.h"
#include "ops/samples.h"
#include "ops/shape_internal.h"

namespace crucible {

void register_detach_ops(OpRegistry& r) {
  OpDef op = OpDef::from_schema("aten::detach(Tensor(a) self) -> Tensor(a)", "view");
  op.dtypes = samples::all_numeric_dtypes();
  const auto view = [](const Args& a) {
    const Tensor& self = a.tensor("self");
    return Values{self.as_strided(self.shape(), self.strides(), self.offset())};
  };
  op.meta = view;
  op.ref = view;
  op.samples = shape_ops::alias_samples;
  op.cost = [](const Values&, const Values&) { return Cost{}; };  // a view moves no data
  op.compare.output_is_view = true;
  r.add(std::move(op));
}

}  // namespace crucible
