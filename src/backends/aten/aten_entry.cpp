// The entry point of libcrucible_aten.so (src/backends/aten_module.h): the one symbol that the
// loading program looks up.
#include "backends/aten/aten_backend.h"
#include "backends/aten_module.h"

extern "C" __attribute__((visibility("default"))) const crucible::AtenModule*
crucible_aten_module() {
  static const crucible::AtenModule m{CRUCIBLE_ATEN_MODULE_BUILD, &crucible::make_aten_backend,
                                      &crucible::aten_version};
  return &m;
}
