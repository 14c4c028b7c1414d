// The Python source of the module `_crucible_bridge`, run in the embedded interpreter of a
// candidate process before a Python kernel is loaded (src/backends/python/bridge_source.cpp).
#pragma once

namespace crucible::python {

extern const char* const kBridgeSource;

}  // namespace crucible::python
