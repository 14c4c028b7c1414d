// Private to the matmul family: the dtypes and sample generators (matmul_samples.cpp) used by
// the registrations in matmul.cpp.
#pragma once

#include <vector>

#include "crucible/ops/op.h"

namespace crucible::matmul {

std::vector<DType> matmul_dtypes();
std::vector<Sample> mm_samples(const SampleContext& ctx);
std::vector<Sample> addmm_samples(const SampleContext& ctx);
std::vector<Sample> bmm_samples(const SampleContext& ctx);
std::vector<Sample> baddbmm_samples(const SampleContext& ctx);

}  // namespace crucible::matmul
