// The price table: built-in prices of common models, overridable from a JSON file.
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/llm/provider.h"

namespace crucible::llm {

// Dollars per million input and output tokens, as the providers list them (2025).
PriceTable::PriceTable()
    : prices_{
          {"claude-opus-4", {15.0, 75.0}},
          {"claude-sonnet-4", {3.0, 15.0}},
          {"claude-3-7-sonnet", {3.0, 15.0}},
          {"claude-3-5-sonnet", {3.0, 15.0}},
          {"claude-haiku-4-5", {1.0, 5.0}},
          {"claude-3-5-haiku", {0.8, 4.0}},
          {"gpt-4o", {2.5, 10.0}},
          {"gpt-4o-mini", {0.15, 0.6}},
          {"gpt-4.1", {2.0, 8.0}},
          {"gpt-4.1-mini", {0.4, 1.6}},
          {"o3", {2.0, 8.0}},
          {"o4-mini", {1.1, 4.4}},
      } {}

void PriceTable::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) input_error(path, "cannot read the price table");
  nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    input_error(path, R"(not a JSON object; write {"model": {"input": 3.0, "output": 15.0}})");
  for (const auto& [model, v] : j.items()) {
    if (!v.is_object() || !v.contains("input") || !v.contains("output") ||
        !v["input"].is_number() || !v["output"].is_number() || v["input"].get<double>() < 0 ||
        v["output"].get<double>() < 0)
      input_error(path, fmt::format("entry \"{}\": expected {{\"input\": <dollars per million "
                                    "tokens>, \"output\": <dollars per million tokens>}}",
                                    model));
    prices_[model] = {v["input"].get<double>(), v["output"].get<double>()};
  }
}

const Price* PriceTable::find(const std::string& model) const {
  if (auto it = prices_.find(model); it != prices_.end()) return &it->second;
  const Price* best = nullptr;
  size_t best_len = 0;
  for (const auto& [name, p] : prices_)
    if (model.starts_with(name) && name.size() > best_len) {
      best = &p;
      best_len = name.size();
    }
  return best;
}

}  // namespace crucible::llm
