// aten.relu.default(Tensor self) -> Tensor: max(x, 0), NaN stays NaN; bool is refused as in ATen.
#include <crucible/kernel.hpp>

namespace ck = crucible::kernel;

static int32_t relu(ck::Call& k) {
  ck::Tensor x = k.tensor(0);
  ck::Tensor out = k.output(0);  // allocated by crucible: x's shape and dtype
  if (x.dtype() == ck::ScalarType::Bool) return k.error("Boolean inputs not supported for relu");
  const bool floating = ck::is_floating(x.dtype());
  ck::for_each(out.shape(), {x.strides(), out.strides()}, [&](const int64_t* off) {
    if (floating) {
      const double v = x.load(off[0]);
      out.store(off[1], v < 0 ? 0.0 : v);  // NaN < 0 is false: NaN passes through
    } else {
      const int64_t v = x.load_int(off[0]);
      out.store_int(off[1], v < 0 ? 0 : v);
    }
  });
  return CRUCIBLE_OK;
}

CRUCIBLE_KERNEL("aten.relu.default", relu)
