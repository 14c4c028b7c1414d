// Reading and writing safetensors files.
#include "crucible/graph/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>

#include <nlohmann/json.hpp>

#include "crucible/core/error.h"

namespace crucible::graph {

namespace {

using nlohmann::json;

struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kDTypes[] = {{DType::Float64, "F64"}, {DType::Float32, "F32"},
                                 {DType::Float16, "F16"}, {DType::BFloat16, "BF16"},
                                 {DType::Int64, "I64"},   {DType::Int32, "I32"},
                                 {DType::Int16, "I16"},   {DType::Int8, "I8"},
                                 {DType::UInt8, "U8"},    {DType::Bool, "BOOL"}};

// A header larger than this is refused rather than allocated (the format's own limit is 100 MB).
constexpr uint64_t kMaxHeader = uint64_t{100} << 20;

[[noreturn]] void fail(const std::string& path, const std::string& tensor,
                       const std::string& message) {
  input_error(path + (tensor.empty() ? "" : ": tensor '" + tensor + "'"), message);
}

}  // namespace

std::optional<std::string> safetensors_dtype_name(DType t) {
  for (const DTypeName& d : kDTypes)
    if (d.dtype == t) return d.name;
  return std::nullopt;
}

std::optional<DType> safetensors_dtype(const std::string& name) {
  for (const DTypeName& d : kDTypes)
    if (name == d.name) return d.dtype;
  return std::nullopt;
}

namespace {

// Reads `n` bytes at `offset` into `dst`; false when they are not there.
using ReadAt = std::function<bool(uint64_t offset, uint64_t n, char* dst)>;

Safetensors parse(const std::string& path, uint64_t file_size, const ReadAt& read_at) {
  if (file_size < 8) {
    fail(path, "",
         "truncated: " + std::to_string(file_size) + " bytes, less than the 8-byte header length");
  }
  unsigned char len_bytes[8];
  read_at(0, 8, reinterpret_cast<char*>(len_bytes));
  uint64_t header_len = 0;
  for (int k = 7; k >= 0; --k) header_len = (header_len << 8) | len_bytes[k];
  if (header_len > kMaxHeader) {
    fail(path, "",
         "the header length " + std::to_string(header_len) + " exceeds " +
             std::to_string(kMaxHeader) + " bytes");
  }
  if (header_len > file_size - 8) {
    fail(path, "",
         "truncated: the header needs " + std::to_string(header_len) + " bytes, the file holds " +
             std::to_string(file_size - 8) + " after its length");
  }
  std::string header(header_len, '\0');
  read_at(8, header_len, header.data());
  json j;
  try {
    j = json::parse(header);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    fail(path, "", "the header is not valid JSON: " + what);
  }
  if (!j.is_object()) fail(path, "", "the header is not a JSON object");
  const uint64_t data_size = file_size - 8 - header_len;
  const uint64_t data_start = 8 + header_len;

  Safetensors out;
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  for (const auto& [name, entry] : j.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail(path, "", "__metadata__ is not an object of strings");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) fail(path, "", "__metadata__ '" + k + "' is not a string");
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object()) fail(path, name, "its header entry is not an object");
    const auto dt = entry.find("dtype");
    if (dt == entry.end() || !dt->is_string()) fail(path, name, "no dtype string");
    const std::string dname = dt->get<std::string>();
    const std::optional<DType> found = safetensors_dtype(dname);
    if (!found) {
      fail(path, name,
           "dtype '" + dname + "' is not one of F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL");
    }
    const auto sh = entry.find("shape");
    if (sh == entry.end() || !sh->is_array()) fail(path, name, "no shape array");
    Shape shape;
    uint64_t numel = 1;
    for (const json& s : *sh) {
      if (!s.is_number_unsigned()) fail(path, name, "the shape holds " + s.dump() + ", not a size");
      const uint64_t v = s.get<uint64_t>();
      if (v > (uint64_t{1} << 48) || (v && numel > (uint64_t{1} << 48) / v))
        fail(path, name, "the shape " + sh->dump() + " is too large");
      numel *= v;
      shape.push_back(static_cast<int64_t>(v));
    }
    const auto off = entry.find("data_offsets");
    if (off == entry.end() || !off->is_array() || off->size() != 2 ||
        !(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned()) {
      fail(path, name, "data_offsets is not [begin, end]");
    }
    const uint64_t begin = (*off)[0].get<uint64_t>(), end = (*off)[1].get<uint64_t>();
    if (begin > end || end > data_size) {
      fail(path, name,
           "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
               "] out of range: the data holds " + std::to_string(data_size) + " bytes");
    }
    const uint64_t nbytes = numel * itemsize(*found);
    if (end - begin != nbytes) {
      fail(path, name,
           "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] hold " +
               std::to_string(end - begin) + " bytes; " + dname + " " + shape_str(shape) +
               " needs " + std::to_string(nbytes));
    }
    ranges.push_back({begin, end, name});
    Tensor t = Tensor::empty(shape, *found);
    if (nbytes && !read_at(data_start + begin, nbytes, static_cast<char*>(t.data_ptr())))
      fail(path, name, "could not read its " + std::to_string(nbytes) + " bytes");
    out.tensors.emplace(name, std::move(t));
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t k = 1; k < ranges.size(); ++k) {
    if (ranges[k].begin < ranges[k - 1].end) {
      fail(path, ranges[k].name,
           "its data_offsets overlap those of tensor '" + ranges[k - 1].name + "'");
    }
  }
  return out;
}

}  // namespace

Safetensors read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) fail(path, "", "cannot read the safetensors file");
  const auto file_size = static_cast<uint64_t>(in.tellg());
  return parse(path, file_size, [&](uint64_t offset, uint64_t n, char* dst) {
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(dst, static_cast<std::streamsize>(n));
    return static_cast<bool>(in);
  });
}

Safetensors parse_safetensors(std::string_view bytes, const std::string& name) {
  return parse(name, bytes.size(), [&](uint64_t offset, uint64_t n, char* dst) {
    if (offset > bytes.size() || n > bytes.size() - offset) return false;
    std::memcpy(dst, bytes.data() + offset, n);
    return true;
  });
}

std::string safetensors_bytes(const std::vector<std::pair<std::string, Tensor>>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<Tensor> data;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const auto dname = safetensors_dtype_name(t.dtype());
    if (!dname) {
      usage_error("safetensors: tensor '" + name + "' has dtype " +
                  std::string(dtype_code(t.dtype())) + ", which the format does not hold here");
    }
    if (header.contains(name)) usage_error("safetensors: tensor '" + name + "' given twice");
    const Tensor c = t.contiguous();
    const uint64_t nbytes = static_cast<uint64_t>(c.numel()) * c.itemsize();
    header[name] = {
        {"dtype", *dname}, {"shape", c.shape()}, {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
    data.push_back(c);
  }
  std::string text = header.dump();
  // The data starts 8-byte aligned, as the reference implementation pads the header with spaces.
  while ((8 + text.size()) % 8 != 0) text += ' ';
  std::string out;
  out.reserve(8 + text.size() + offset);
  const uint64_t len = text.size();
  for (int k = 0; k < 8; ++k) out += static_cast<char>(len >> (8 * k));
  out += text;
  for (const Tensor& c : data) {
    if (c.numel()) {
      out.append(static_cast<const char*>(c.data_ptr()),
                 static_cast<uint64_t>(c.numel()) * c.itemsize());
    }
  }
  return out;
}

void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  const std::string bytes = safetensors_bytes(tensors, metadata);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) usage_error("safetensors: cannot write " + path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) usage_error("safetensors: writing " + path + " failed");
}

}  // namespace crucible::graph
