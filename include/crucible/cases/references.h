// Value references in the case grammar, for graph files (crucible/graph): node arguments are
// written in this grammar with `%name` (name: [A-Za-z0-9_.]+) where a tensor goes. A reference
// is a Symbol literal whose text is "%name"; only the two parsers below read one (parse_call and
// parse_literal refuse '%', so trace files never hold one).
#pragma once

#include <cstddef>
#include <string_view>

#include "crucible/cases/literal.h"

namespace crucible::cases {

bool is_value_ref(const Literal& lit);

// Parses the value at the start of `text` (references allowed when `refs`); *end is set to the
// byte after it. Errors as parse_call's, at their line:column from `origin`.
Literal parse_literal_prefix(std::string_view text, const SourceOrigin& origin, bool refs,
                             size_t* end);

// Parses the argument list "(v, ..., name=v, ...)" at the start of `text`: positional values,
// then keyword arguments, references allowed; *end is set to the byte after ')'.
CallSpec parse_argument_list(std::string_view text, const SourceOrigin& origin, size_t* end);

}  // namespace crucible::cases
