// Adversaries: backends that run the reference and break it in one classic way, for any op.
// They exist to prove that the opinfo suite catches each kind of wrong kernel on every op where
// the fault changes the result.
#pragma once

#include <memory>
#include <vector>

#include "crucible/backends/backend.h"

namespace crucible {

enum class Fault {
  Identity,       // returns (a copy of) its first tensor argument
  Constant,       // every output element is 0.5 (0 for integers, 1 for bool)
  SignBlind,      // computes on |x| for every floating tensor argument
  OddSizes,       // corrupts its result when a tensor argument or output has an odd size
  NonContiguous,  // corrupts its result when a tensor argument is not contiguous
  OneDType,       // corrupts its result when a tensor argument has the victim dtype
  NaNOnly,        // reads NaN inputs as 0 and writes NaN results as 0
};

const std::vector<Fault>& all_faults();
const char* fault_name(Fault f);

// `victim` is the dtype that Fault::OneDType gets wrong (ignored by the others).
std::unique_ptr<Backend> make_adversary(Fault f, DType victim = DType::Float32);

}  // namespace crucible
