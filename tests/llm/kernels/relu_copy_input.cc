// A cheat: "relu" that copies its input to the output.
#include <crucible/kernel.hpp>

namespace ck = crucible::kernel;

static int32_t relu(ck::Call& k) {
  ck::Tensor x = k.tensor(0);
  ck::Tensor out = k.output(0);
  ck::for_each(out.shape(), {x.strides(), out.strides()},
               [&](const int64_t* off) { out.store(off[1], x.load(off[0])); });
  return CRUCIBLE_OK;
}

CRUCIBLE_KERNEL("aten.relu.default", relu)
