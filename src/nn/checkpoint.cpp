// Lazy safetensors checkpoints matched to a module's state (see checkpoint.h).
#include "crucible/nn/checkpoint.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/graph/safetensors.h"

namespace crucible::nn {

namespace {

using Json = nlohmann::json;

}  // namespace

Checkpoint::Checkpoint(const std::string& path, const std::vector<StateEntry>& state,
                       const CheckpointLayout& layout)
    : path_(path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error(path, "cannot be read");
  std::error_code ec;
  const auto file_size = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  uint8_t len_bytes[8];
  if (!in.read(reinterpret_cast<char*>(len_bytes), 8))
    input_error(path, "truncated: shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (static_cast<int64_t>(n) > file_size - 8)
    input_error(path, "truncated: the header says " + std::to_string(n) + " bytes");
  std::string header(n, '\0');
  in.read(header.data(), static_cast<std::streamsize>(n));
  Json j;
  try {
    j = Json::parse(header);
  } catch (const Json::exception& e) {
    input_error(path, std::string("the header is not JSON: ") + e.what());
  }
  const int64_t data_start = 8 + static_cast<int64_t>(n);
  std::map<std::string, const StateEntry*> by_name;
  for (const StateEntry& e : state) by_name[e.name] = &e;
  std::set<std::string> tied_present;
  for (const auto& [fname, info] : j.items()) {
    if (fname == "__metadata__") continue;
    if (std::any_of(layout.ignored.begin(), layout.ignored.end(),
                    [&](const std::string& s) { return fname.ends_with(s); }))
      continue;
    std::string name = fname;
    if (!by_name.contains(name) && !layout.prefix.empty() && by_name.contains(layout.prefix + name))
      name = layout.prefix + name;
    bool tied = false;
    if (auto it = layout.tied.find(name); it != layout.tied.end()) {
      tied = true;
      name = it->second;
    }
    if (!by_name.contains(name))
      input_error(path, "tensor '" + fname +
                            "' is not a parameter or buffer of the model (an extra tensor)");
    const StateEntry& e = *by_name[name];
    Slot s;
    s.file_name = fname;
    const std::string dt = info.value("dtype", "");
    const auto dtype = graph::safetensors_dtype(dt);
    if (!dtype) input_error(path, "tensor '" + fname + "': unknown dtype '" + dt + "'");
    s.dtype = *dtype;
    for (const Json& d : info.at("shape")) s.file_shape.push_back(d.get<int64_t>());
    const Json& off = info.at("data_offsets");
    s.begin = data_start + off.at(0).get<int64_t>();
    s.end = data_start + off.at(1).get<int64_t>();
    s.transposed = e.shape.size() == 2 &&
                   std::any_of(layout.transposed.begin(), layout.transposed.end(),
                               [&](const std::string& suf) { return name.ends_with(suf); });
    Shape expect = e.shape;
    if (s.transposed) std::swap(expect[0], expect[1]);
    if (s.file_shape != expect)
      input_error(path, "tensor '" + fname + "' has shape " + shape_str(s.file_shape) +
                            "; the model's " + name + " is " + shape_str(expect) +
                            (s.transposed ? " (stored transposed)" : ""));
    if (s.dtype != e.dtype)
      input_error(path, "tensor '" + fname + "' is " + dt + "; the model's " + name + " is " +
                            *graph::safetensors_dtype_name(e.dtype));
    const int64_t bytes = numel_of(s.file_shape) * static_cast<int64_t>(itemsize(s.dtype));
    if (s.end - s.begin != bytes || s.begin < data_start)
      input_error(path, "tensor '" + fname + "': its byte range does not match its shape");
    if (s.end > file_size)
      input_error(path, "tensor '" + fname + "' is truncated: it ends at byte " +
                            std::to_string(s.end) + " of a " + std::to_string(file_size) +
                            "-byte file");
    if (tied) {
      tied_present.insert(name);
      if (slots_.contains(name)) continue;  // the tensor itself is there too
    }
    slots_[name] = s;
  }
  for (const StateEntry& e : state) {
    if (!slots_.contains(e.name))
      input_error(path, "tensor '" + e.name + "' is missing (the model's " + shape_str(e.shape) +
                            " " + (e.buffer ? "buffer" : "parameter") + ")");
    order_.push_back(e.name);
  }
}

Tensor Checkpoint::get(const std::string& name) const {
  const auto it = slots_.find(name);
  if (it == slots_.end()) usage_error("checkpoint " + path_ + ": no state entry '" + name + "'");
  const Slot& s = it->second;
  std::ifstream in(path_, std::ios::binary);
  in.seekg(s.begin);
  std::string bytes(static_cast<size_t>(s.end - s.begin), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    input_error(path_, "tensor '" + s.file_name + "' is truncated");
  ++reads_;
  Tensor t = Tensor::empty(s.file_shape, s.dtype);
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return s.transposed ? t.transpose(0, 1).contiguous() : t;
}

graph::TensorMap Checkpoint::load_all() const {
  graph::TensorMap out;
  for (const std::string& name : order_) out.emplace(name, get(name));
  return out;
}

void save_checkpoint(const std::string& path, const std::vector<StateEntry>& state,
                     const graph::TensorMap& values) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const StateEntry& e : state) {
    const auto it = values.find(e.name);
    if (it == values.end()) usage_error("save_checkpoint: no value for '" + e.name + "'");
    tensors.emplace_back(e.name, it->second);
  }
  graph::write_safetensors(path, tensors, {{"format", "pt"}});
}

}  // namespace crucible::nn
