// aten.neg.default(Tensor self) -> Tensor: -x (integers wrap); bool is refused as in ATen.
#include <crucible/kernel.hpp>

namespace ck = crucible::kernel;

static int32_t neg(ck::Call& k) {
  ck::Tensor x = k.tensor(0);
  ck::Tensor out = k.output(0);
  if (x.dtype() == ck::ScalarType::Bool)
    return k.error(
        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
        "invert a mask, use the `~` or `logical_not()` operator instead.");
  const bool floating = ck::is_floating(x.dtype());
  ck::for_each(out.shape(), {x.strides(), out.strides()}, [&](const int64_t* off) {
    if (floating)
      out.store(off[1], -x.load(off[0]));
    else
      out.store_int(off[1], static_cast<int64_t>(0ULL - static_cast<uint64_t>(x.load_int(off[0]))));
  });
  return CRUCIBLE_OK;
}

CRUCIBLE_KERNEL("aten.neg.default", neg)
