// Internal to src/schema: turning a default's text into a Value, and the enum spellings ATen uses
// for ScalarType, Layout and MemoryFormat (shared with argument coercion).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "crucible/core/value.h"
#include "crucible/schema/schema.h"

namespace crucible::schema_detail {

// The default written after '=' as a Value of the argument's kind. Text that has no Value of that
// kind (a complex literal, a Generator default, ...) becomes a String Value of the text.
Value default_value_for(std::string_view text, const SchemaType& type);

// c10::ScalarType's numbering (Byte = 0, ..., Long = 4, ..., Float8_e4m3fn = 24), as TorchScript
// schemas write dtype defaults ("ScalarType? dtype=4"). nullopt for types crucible lacks.
std::optional<DType> dtype_from_aten_index(int64_t index);
// "long", "float32", "Half", "f16", ... (the Python spellings first, then parse_dtype's).
std::optional<DType> dtype_from_name(std::string_view name);
// "strided", "sparse_coo" (also c10::Layout's numbering 0, 1).
std::optional<Layout> layout_from_name(std::string_view name);
std::optional<Layout> layout_from_index(int64_t index);
// "contiguous_format", "preserve_format", "channels_last", "channels_last_3d" (and 0..3).
std::optional<MemoryFormat> memory_format_from_name(std::string_view name);
std::optional<MemoryFormat> memory_format_from_index(int64_t index);

}  // namespace crucible::schema_detail
