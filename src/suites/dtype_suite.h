// The opinfo suite in one dtype (`opinfo:bf16`, `opinfo:f16`, ...): every op's opinfo samples
// with their floating tensors and floating dtype arguments in that dtype, as BackendBench's
// default suite (PyTorch's OpInfo samples at torch.bfloat16) runs them. Internal to the suites.
#pragma once

#include <string>
#include <vector>

#include "crucible/suites/suite.h"

namespace crucible {

// The dtype an `opinfo:<argument>` suite runs in: f16, bf16, f32 or f64, written as crucible's
// code (bf16), ATen's ScalarType name (BFloat16) or PyTorch's (torch.bfloat16, bfloat16). Any
// other argument is a Usage error naming the valid ones.
DType suite_dtype(const std::string& suite, const std::string& argument);

// The dtypes an `opinfo:<dtype>` suite may name (crucible's codes, comma-separated).
std::string suite_dtype_names();

// `call` as a case of dtype `to`: every floating tensor (f16, bf16, f32, f64) and floating
// dtype argument rewritten to `to`. Empty when the sample has no form in `to`: it takes no
// floating tensor or dtype argument (integers and booleans only), it holds a complex or fp8
// tensor or dtype argument, or its tensors mix floating dtypes (a type-promotion or
// dtype-mismatch sample, whose point does not survive the rewrite).
std::optional<cases::CallSpec> call_in_dtype(const cases::CallSpec& call, DType to);

// Replaces `samples` (op's opinfo samples) by their forms in `to` (call_in_dtype), each call
// once, the floating dtype codes of their labels in `to`; the type-promotion samples of
// elementwise and reduction ops (integer data beside floating data: add(i64, f32)) are left out
// too. Returns why the op has no case in `to` (it is then reported unsupported, `samples` left as
// they were): ATen has no kernel of the op for `to` on its input (OpDef::dtypes), or none of its
// samples has a form in `to`; empty otherwise.
std::string samples_in_dtype(const OpDef& op, std::vector<Sample>& samples, DType to);

}  // namespace crucible
