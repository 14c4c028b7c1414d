// Sample builders shared by the statistics family files. Internal to libcrucible.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ops/samples.h"

namespace crucible::stats {

// The arguments after `self` of a call reducing `dim` (with keepdim), e.g. {I(dim), B(keep)}.
using DimArgsFn = std::function<std::vector<cases::Literal>(int64_t dim, bool keepdim)>;

// Correctness cases of a reduction along one dim (or a dim list, through `args`) over `dtypes`:
// every dtype, keepdim both ways, negative dims, transposed / sliced / expanded inputs (an
// expanded reduced dim makes every row a tie), 0-d, a non-empty reduction of an empty tensor,
// special values per floating dtype, and dims out of range ("error: ...").
std::vector<Sample> dim_reduction_samples(const std::vector<DType>& dtypes, const DimArgsFn& args);

// Correctness cases of a full reduction (no dim argument) over `dtypes`; `extra` is appended
// to every call. Adds ordinary, 0-d, transposed, sliced, expanded, special-value cases; an
// empty input only when `with_empty`.
std::vector<Sample> full_reduction_samples(const std::vector<DType>& dtypes, bool with_empty,
                                           const std::vector<cases::Literal>& extra = {});

// Large rows / columns / whole-tensor performance cases in f32, f16 and bf16 (those of
// `dtypes`); `args` gives the arguments after self (dim -1 for rows, 0 for columns).
std::vector<Sample> reduction_perf_samples(const std::vector<DType>& dtypes, const DimArgsFn& args);

}  // namespace crucible::stats
