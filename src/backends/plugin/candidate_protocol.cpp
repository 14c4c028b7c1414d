// Tensor references of the candidate protocol.
#include "backends/plugin/candidate_protocol.h"

#include "crucible/core/dtype.h"

namespace crucible {

void put_tensor_ref(WireWriter& w, const TensorRef& t) {
  w.put<uint64_t>(t.offset);
  w.put<uint8_t>(t.dtype);
  w.array(t.shape);
  w.array(t.strides);
}

TensorRef get_tensor_ref(WireReader& r) {
  TensorRef t;
  t.offset = r.get<uint64_t>();
  t.dtype = r.get<uint8_t>();
  bool known = false;
  for (DType d : all_dtypes())
    if (static_cast<uint8_t>(d) == t.dtype) known = true;
  if (!known) throw WireError("a tensor of an unknown dtype");
  t.shape = r.array<int64_t>(16, "shape");
  t.strides = r.array<int64_t>(16, "strides");
  if (t.shape.size() != t.strides.size()) throw WireError("shape and strides differ in rank");
  return t;
}

}  // namespace crucible
