// crucible dtypes as DLPack's, and back.
#pragma once

#include <optional>

#include "crucible/core/dtype.h"

#include "crucible/kernel.h"

namespace crucible {

DLDataType to_dl_dtype(DType t);
std::optional<DType> from_dl_dtype(DLDataType t);  // nullopt for a type crucible lacks

}  // namespace crucible
