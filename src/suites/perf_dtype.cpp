// --perf-dtype: a call's floating tensors and floating dtype arguments rewritten to one dtype,
// so that the timed cases of a trace recorded in f16 can be timed in f32 (see suite.h).
#include "crucible/suites/suite.h"

namespace crucible {

namespace {

bool real_floating(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}

void retype(cases::Literal& l, DType to) {
  switch (l.kind) {
    case cases::LitKind::Tensor:
      if (real_floating(l.tensor.dtype)) {
        l.tensor.dtype = to;
        l.tensor.dtype_text.clear();
      }
      break;
    case cases::LitKind::DType:
      if (real_floating(l.dtype)) l = cases::Literal::dtype_lit(to);
      break;
    case cases::LitKind::List:
    case cases::LitKind::Tuple:
      for (cases::Literal& i : l.items) retype(i, to);
      break;
    case cases::LitKind::Dict:
      for (auto& kv : l.entries) retype(kv.second, to);
      break;
    default:
      break;
  }
}

}  // namespace

void retype_floating(cases::CallSpec& call, DType to) {
  for (cases::Literal& a : call.args) retype(a, to);
  for (auto& kv : call.kwargs) retype(kv.second, to);
}

}  // namespace crucible
