// Checkpoints: a module's state dict in safetensors files under PyTorch's state-dict names.
// Reading is lazy: opening a file reads and checks its header only (every tensor's dtype, shape
// and byte range against the module and the file's size); a tensor's bytes are read when it is
// asked for by name. A missing, extra, mis-shaped, mistyped or truncated tensor is an Input error
// naming the file and the tensor.
//
// Hugging Face's layouts differ from the module's in known ways, which a CheckpointLayout states:
// GPT-2's Conv1D stores Linear weights transposed ([in, out]), an LM head tied to the embedding
// may be absent or present, names may lack the outer prefix ("h.0.attn..." for
// "transformer.h.0.attn..."), and some tensors are not state (GPT-2's causal-mask buffers
// `attn.bias`, `attn.masked_bias`; an exporter's `lifted_tensor_N`).
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "crucible/graph/values.h"
#include "crucible/nn/module.h"

namespace crucible::nn {

struct CheckpointLayout {
  std::vector<std::string> transposed;      // name suffixes stored as [in, out]
  std::map<std::string, std::string> tied;  // a name in the file -> the parameter it is tied to
  std::string prefix;                       // names in the file may lack it
  std::vector<std::string> ignored;         // name suffixes that are not state
};

class Checkpoint {
 public:
  // Reads the header of `path` and matches it to `state` (a module's state()).
  Checkpoint(const std::string& path, const std::vector<StateEntry>& state,
             const CheckpointLayout& layout = {});
  // The tensor of state entry `name`, in the module's layout, read now from the file.
  Tensor get(const std::string& name) const;
  // Every entry (read one by one).
  graph::TensorMap load_all() const;
  // How many tensors have been read so far (laziness is observable).
  int64_t reads() const { return reads_; }

 private:
  struct Slot {
    std::string file_name;
    DType dtype;
    Shape file_shape;
    int64_t begin = 0, end = 0;  // absolute byte range in the file
    bool transposed = false;
  };
  std::string path_;
  std::map<std::string, Slot> slots_;  // module name -> where it lies
  std::vector<std::string> order_;
  mutable int64_t reads_ = 0;
};

// Writes the state (names and order of `state`, each tensor required) as safetensors.
void save_checkpoint(const std::string& path, const std::vector<StateEntry>& state,
                     const graph::TensorMap& values);

}  // namespace crucible::nn
