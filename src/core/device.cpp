// Device names: "cpu", "cuda:0" and the spellings found in operator traces.
#include "crucible/core/device.h"

#include <charconv>

#include "crucible/core/error.h"

namespace crucible {

std::string Device::str() const {
  if (type == DeviceType::CPU) return "cpu";
  if (type == DeviceType::Meta) return "meta";
  return "cuda:" + std::to_string(index);
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Removes one pair of matching quotes ('x' or "x"), if present.
std::string_view unquote(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
    return s.substr(1, s.size() - 2);
  }
  return s;
}

// Parses "cpu", "cpu:0", "cuda", "cuda:N"; nullopt-like failure is signalled by `ok`.
bool parse_plain(std::string_view s, Device& out) {
  std::string_view type = s;
  std::string_view index;
  if (auto colon = s.find(':'); colon != std::string_view::npos) {
    type = s.substr(0, colon);
    index = s.substr(colon + 1);
    if (index.empty()) return false;
  }
  int idx = 0;
  if (!index.empty()) {
    auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), idx);
    if (ec != std::errc() || end != index.data() + index.size() || idx < 0) return false;
  }
  if (type == "cpu") {
    if (idx != 0) return false;
    out = Device::cpu();
    return true;
  }
  if (type == "meta") {
    if (idx != 0) return false;
    out = Device::meta();
    return true;
  }
  if (type == "cuda") {
    out = Device::cuda(idx);
    return true;
  }
  return false;
}

}  // namespace

Device parse_device(std::string_view text) {
  std::string_view s = unquote(trim(text));
  constexpr std::string_view kPrefix = "torch.device(";
  if (s.starts_with(kPrefix) && s.ends_with(")")) {
    s = unquote(trim(s.substr(kPrefix.size(), s.size() - kPrefix.size() - 1)));
  }
  Device d;
  if (!parse_plain(s, d)) {
    input_error("device", "unknown device '" + std::string(text) +
                              "' (expected cpu, cuda, cuda:N, meta or torch.device('...'))");
  }
  return d;
}

}  // namespace crucible
