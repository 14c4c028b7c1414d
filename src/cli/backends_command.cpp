// `crucible backends`: the backends of this build, each with its state (whether it can run here)
// and what it is.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/backend_state.h"
#include "cli/commands.h"
#include "crucible/backends/backend.h"

namespace crucible {

int command_backends(bool as_json) {
  nlohmann::json j = nlohmann::json::array();
  for (const BackendRegistry::Entry* e : BackendRegistry::instance().entries()) {
    if (!e->listed) continue;
    const std::string name = e->name.back() == ':' ? e->name + "<...>" : e->name;
    std::string state = backend_state(e->name);
    if (state.empty()) state = "built in";
    if (as_json) {
      j.push_back({{"backend", name}, {"state", state}, {"description", e->description}});
      continue;
    }
    fmt::print("{:<12} {}\n{:<12} {}\n", name, e->description, "", state);
  }
  if (as_json) fmt::print("{}\n", j.dump(2));
  return 0;
}

}  // namespace crucible
