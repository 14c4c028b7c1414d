// crucible Values as the C ABI's crucible_value / DLTensor, and back.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "crucible/core/value.h"
#include "crucible/kernel.h"

namespace crucible {

DLDataType to_dl_dtype(DType t);
std::optional<DType> from_dl_dtype(DLDataType t);  // nullopt for a type crucible lacks

// Owns the C views of the Values of one kernel call: DLTensors (data points at the view's first
// element, byte_offset 0, strides in elements), their shape and stride arrays, lists. Pointers
// it hands out stay valid as long as it lives.
class AbiValues {
 public:
  // The DLTensor of `t` (the same DLTensor for the same Tensor object is not guaranteed).
  DLTensor* tensor(const Tensor& t);
  // A DLTensor with room for CRUCIBLE_MAX_NDIM dims and no data (data-dependent outputs).
  DLTensor* empty_slot(DType dtype);
  crucible_value value(const Value& v);
  std::vector<crucible_value> values(const Values& vs);

  // The crucible tensor a DLTensor handed out by tensor() stands for, or nullptr.
  const Tensor* source(const DLTensor* t) const;
  // Points `slot` (from tensor() or empty_slot()) at `t`, keeping its shape/stride arrays.
  void rebind(DLTensor* slot, const Tensor& t);

 private:
  struct Slot {
    DLTensor dl{};
    int64_t shape[CRUCIBLE_MAX_NDIM] = {};
    int64_t strides[CRUCIBLE_MAX_NDIM] = {};
    Tensor tensor;
  };
  std::deque<Slot> slots_;
  std::map<const DLTensor*, Slot*> by_dl_;
  std::deque<std::vector<DLTensor*>> lists_;
  std::deque<std::vector<uint8_t>> bools_;
  std::deque<std::vector<int64_t>> ints_;
  std::deque<std::string> strings_;
};

}  // namespace crucible
