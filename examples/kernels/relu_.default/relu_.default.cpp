// aten.relu_.default(Tensor(a!) self) -> Tensor(a!): relu in place. The output is self itself,
// so the kernel writes into its argument and crucible returns it.
#include <crucible/kernel.hpp>

namespace ck = crucible::kernel;

static int32_t relu_inplace(ck::Call& k) {
  ck::Tensor x = k.tensor(0);
  if (x.dtype() == ck::ScalarType::Bool) return k.error("Boolean inputs not supported for relu");
  if (x.has_internal_overlap())  // an expanded tensor: several elements share one location
    return k.error(
        "unsupported operation: more than one element of the written-to tensor "
        "refers to a single memory location");
  const bool floating = ck::is_floating(x.dtype());
  ck::for_each(x.shape(), {x.strides()}, [&](const int64_t* off) {
    if (floating) {
      if (x.load(off[0]) < 0) x.store(off[0], 0.0);
    } else if (x.load_int(off[0]) < 0) {
      x.store_int(off[0], 0);
    }
  });
  return CRUCIBLE_OK;
}

CRUCIBLE_KERNEL("aten.relu_.default", relu_inplace)
