// Cases: their ids, reproducers and sizes.
#include <fmt/format.h>

#include "crucible/cases/case.h"
#include "crucible/core/rng.h"

namespace crucible {

using cases::Literal;
using cases::LitKind;

std::string Case::id() const {
  std::string key = op + "|" + cases::print_call(call) + "|" + std::to_string(seed);
  return fmt::format("{:016x}", hash64(key.data(), key.size()));
}

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

void count_elements(const Literal& lit, int64_t& total) {
  if (lit.kind == LitKind::Tensor) total += numel_of(lit.tensor.shape);
  for (const Literal& item : lit.items) count_elements(item, total);
  for (const auto& [k, v] : lit.entries) count_elements(v, total);
}

}  // namespace

std::string Case::reproducer(const std::string& backend) const {
  return fmt::format("crucible run --backend {} --op {} --case {} --seed {}", shell_quote(backend),
                     op, shell_quote(cases::print_call(call)), seed);
}

int64_t Case::total_elements() const {
  int64_t total = 0;
  for (const Literal& a : call.args) count_elements(a, total);
  for (const auto& [k, v] : call.kwargs) count_elements(v, total);
  return total;
}

}  // namespace crucible
