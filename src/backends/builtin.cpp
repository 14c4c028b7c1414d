// The backends built into this binary.
#include "backends/faulty/faulty_backend.h"
#include "backends/ref/ref_backend.h"
#include "crucible/backends/backend.h"

namespace crucible {

void register_builtin_backends(BackendRegistry& r) {
  r.add({"ref", "golden reference: simple loops in f64, rounded once", true,
         [](const std::string&) { return make_ref_backend(); }});
  r.add({"faulty", "kernels that are wrong on purpose (for crucible's own tests)", false,
         [](const std::string&) { return make_faulty_backend(); }});
}

}  // namespace crucible
