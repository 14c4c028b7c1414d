// The recipe grammar: exact names, integer fields checked, errors with the closest form.
#include "crucible/quant/recipe.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "crucible/core/error.h"

namespace crucible::quant {
namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The names to compare a wrong one with: the fixed names and the forms with typical fields.
const std::vector<std::string>& examples() {
  static const std::vector<std::string> e = {
      "none",       "int8wo",     "int8dq",      "int4wo-32",       "int4wo-64",
      "int4wo-128", "int4wo-256", "float8wo",    "float8dq-tensor", "float8dq-row",
      "uintx-4-64", "uintx-2-32", "uintx-8-128",
  };
  return e;
}

[[noreturn]] void fail(std::string_view name, const std::string& where, const std::string& why) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const std::string& e : examples()) {
    const size_t d = edit_distance(name, e);
    if (d < best_d) best_d = d, best = e;
  }
  std::string forms;
  for (const std::string& f : recipe_forms()) forms += (forms.empty() ? "" : ", ") + f;
  usage_error(where + ": " + why + " '" + std::string(name) + "'; valid recipes: " + forms +
              "; the closest is '" + best + "'");
}

// A decimal field (digits only, no sign, no leading zero).
bool parse_int(std::string_view s, int* out) {
  if (s.empty() || s.size() > 6 || (s.size() > 1 && s[0] == '0')) return false;
  if (!std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  std::from_chars(s.data(), s.data() + s.size(), *out);
  return true;
}

bool is_group(int g) { return g == 32 || g == 64 || g == 128 || g == 256; }

}  // namespace

bool Recipe::quantizes_activations() const {
  return kind == RecipeKind::Int8Dynamic || kind == RecipeKind::Float8DynamicTensor ||
         kind == RecipeKind::Float8DynamicRow;
}

const std::vector<std::string>& recipe_forms() {
  static const std::vector<std::string> f = {
      "none",     "int8wo",          "int8dq",       "int4wo-<group>",
      "float8wo", "float8dq-tensor", "float8dq-row", "uintx-<bits>-<group>",
  };
  return f;
}

Recipe parse_recipe(std::string_view name, const std::string& where) {
  Recipe r;
  r.name = std::string(name);
  if (name == "none") return r;
  if (name == "int8wo") return r.kind = RecipeKind::Int8WeightOnly, r;
  if (name == "int8dq") return r.kind = RecipeKind::Int8Dynamic, r;
  if (name == "float8wo") return r.kind = RecipeKind::Float8WeightOnly, r;
  if (name == "float8dq-tensor") return r.kind = RecipeKind::Float8DynamicTensor, r;
  if (name == "float8dq-row") return r.kind = RecipeKind::Float8DynamicRow, r;
  if (name.starts_with("int4wo-")) {
    int g = 0;
    if (!parse_int(name.substr(7), &g))
      fail(name, where, "int4wo-<group> needs a group size (32, 64, 128 or 256), got");
    if (!is_group(g))
      fail(name, where, "int4wo's group size must be 32, 64, 128 or 256 (ATen's int4 kernel), got");
    r.kind = RecipeKind::Int4WeightOnly;
    r.bits = 4;
    r.group = g;
    return r;
  }
  if (name.starts_with("uintx-")) {
    const std::string_view rest = name.substr(6);
    const size_t dash = rest.find('-');
    int bits = 0, g = 0;
    if (dash == std::string_view::npos || !parse_int(rest.substr(0, dash), &bits) ||
        !parse_int(rest.substr(dash + 1), &g))
      fail(name, where, "uintx-<bits>-<group> needs two numbers, got");
    if (bits < 1 || bits > 8) fail(name, where, "uintx's bits must be 1 to 8, got");
    if (!is_group(g)) fail(name, where, "uintx's group size must be 32, 64, 128 or 256, got");
    r.kind = RecipeKind::UIntX;
    r.bits = bits;
    r.group = g;
    return r;
  }
  fail(name, where, "unknown quantization recipe");
}

}  // namespace crucible::quant
