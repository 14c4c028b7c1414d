// The safetensors format (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON header ({"name": {"dtype": "F32", "shape": [2, 3],
// "data_offsets": [begin, end]}, ..., optional "__metadata__": {"key": "value"}}), then the
// data; offsets are relative to the byte after the header. Dtypes: F64 F32 F16 BF16 I64 I32 I16
// I8 U8 BOOL. Every malformation (a truncated file, bad JSON, an unknown dtype, offsets out of
// range, overlapping or disagreeing with the shape) is a one-line Input error naming the file
// and the tensor.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "crucible/core/tensor.h"

namespace crucible::graph {

struct Safetensors {
  std::map<std::string, Tensor, std::less<>> tensors;  // host, contiguous
  std::map<std::string, std::string> metadata;         // "__metadata__"
};

// The safetensors dtype name of `t` ("F32"), or nullopt for a dtype the format lacks here.
std::optional<std::string> safetensors_dtype_name(DType t);
// The dtype a safetensors dtype name ("F32") stands for, or nullopt for a name crucible lacks.
std::optional<DType> safetensors_dtype(const std::string& name);

Safetensors read_safetensors(const std::string& path);
// The same from bytes in memory; `name` names them in errors.
Safetensors parse_safetensors(std::string_view bytes, const std::string& name);

// Writes the tensors (any strides; stored contiguous, in the given order) and the metadata.
// A dtype the format lacks is a Usage error naming the tensor.
void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});
// The bytes write_safetensors writes.
std::string safetensors_bytes(const std::vector<std::pair<std::string, Tensor>>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

}  // namespace crucible::graph
