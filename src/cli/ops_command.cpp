// `crucible ops`: the catalog, and what a backend supports.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "crucible/backends/backend.h"
#include "crucible/ops/variants.h"

namespace crucible {

namespace {
std::string dtype_list(const std::vector<DType>& ds) {
  std::string s;
  for (DType d : ds) s += (s.empty() ? "" : ",") + std::string(dtype_code(d));
  return s;
}
}  // namespace

int command_ops(const std::string& backend_spec, bool as_json) {
  const OpRegistry& cat = OpRegistry::catalog();
  std::unique_ptr<Backend> backend;
  if (!backend_spec.empty()) backend = BackendRegistry::instance().create(backend_spec);
  int supported = 0;
  nlohmann::json j = nlohmann::json::array();
  if (!as_json)
    fmt::print("{:<36} {:<18} {:<40}{}\n", "op", "family", "dtypes",
               backend ? " " + backend->name() : "");
  for (const OpDef* op : cat.all()) {
    std::vector<DType> bd;
    if (backend) {
      bd = backend->supported_dtypes(*op);
      if (!bd.empty()) ++supported;
    }
    if (as_json) {
      nlohmann::json e = {{"op", op->name},
                          {"family", op->family},
                          {"schema", op->schema.str()},
                          {"dtypes", dtype_list(op->dtypes)}};
      if (backend) e["backend_dtypes"] = dtype_list(bd);
      if (const DerivedVariant* v = derived_variant(op->name))
        e["derived_from"] = v->functional->name;
      j.push_back(e);
    } else {
      fmt::print("{:<36} {:<18} {:<40}{}\n", op->name, op->family, dtype_list(op->dtypes),
                 backend ? " " + (bd.empty() ? std::string("unsupported") : dtype_list(bd)) : "");
    }
  }
  if (as_json) {
    fmt::print("{}\n", j.dump(2));
  } else {
    size_t derived = 0;
    for (const OpDef* op : cat.all()) derived += derived_variant(op->name) != nullptr;
    fmt::print(
        "\n{} overloads in the catalog ({} in-place and out= overloads derived from their "
        "functional op)",
        cat.all().size(), derived);
    if (backend) fmt::print("; {} supported by {}", supported, backend->name());
    fmt::print("\n");
  }
  return 0;
}

}  // namespace crucible
