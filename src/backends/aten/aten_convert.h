// Zero-copy conversion between crucible tensors and at::Tensor, and between crucible Values and
// the c10 IValues a boxed dispatcher call takes. Internal to the aten backend (libtorch headers).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <torch/version.h>

#include "crucible/core/value.h"

// Whether this libtorch has the float8 dtypes (PyTorch 2.1 and later).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define CRUCIBLE_ATEN_HAS_FLOAT8 1
#else
#define CRUCIBLE_ATEN_HAS_FLOAT8 0
#endif

namespace crucible::aten {

// The c10 ScalarType of a crucible dtype; nullopt where this libtorch lacks it (fp8 before 2.1).
std::optional<c10::ScalarType> to_scalar_type(DType t);
// The crucible dtype of a c10 ScalarType; nullopt for types crucible does not have.
std::optional<DType> from_scalar_type(c10::ScalarType t);

// The c10 device of a crucible device.
c10::Device c10_device(Device d);

// One dispatcher call's conversions. Every crucible Storage becomes one at::Storage over the same
// memory (a view of it becomes an at::Tensor with the same offset and strides), so arguments that
// share storage in crucible share it in ATen, and a result that lives in an argument's storage
// (in-place ops, out=, views) comes back as a view of that argument's crucible storage. Fresh
// results are wrapped without a copy: the crucible Storage keeps the at::Storage alive.
//
// A CUDA context also takes host tensors: each host storage is uploaded once, the call runs on
// the device, and afterwards every uploaded storage is copied back (so in-place results land in
// the host arguments) and every result comes back on the host.
class CallContext {
 public:
  explicit CallContext(c10::Device device) : device_(device) {}

  // The at::Tensor over `t`'s memory (uploaded first when `t` is on the host and the context's
  // device is not).
  at::Tensor to_aten(const Tensor& t);
  // The crucible tensor of an ATen result (undefined stays undefined).
  Tensor from_aten(const at::Tensor& t);
  // Copies uploaded storages back to the host (CUDA contexts called with host tensors).
  void finish();

  c10::Device device() const { return device_; }

 private:
  c10::Storage storage_for(const std::shared_ptr<Storage>& s);

  c10::Device device_;
  std::map<const Storage*, c10::Storage> to_aten_;
  // Keyed by the ATen storage's address, so each entry also holds that storage: a storage freed
  // during the call (a composition's intermediate copied to the host) would otherwise leave its
  // address to the next allocation, and a later result would be read from the wrong memory.
  struct Converted {
    std::shared_ptr<Storage> storage;
    c10::Storage held;
  };
  std::unordered_map<const c10::StorageImpl*, Converted> from_aten_;
  struct Upload {
    std::shared_ptr<Storage> host;
    c10::Storage device;
  };
  std::vector<Upload> uploads_;
};

// The whole storage of a crucible tensor as an at::Tensor of bytes on `device` (no copy); used to
// move storages between host and device.
at::Tensor storage_bytes(const std::shared_ptr<Storage>& s);
// A crucible Storage that keeps `s` alive and points at its memory (no copy).
std::shared_ptr<Storage> wrap_storage(const c10::Storage& s);

// A crucible Value as the IValue for an argument of c10 type `type` (`name` is for messages).
// Device arguments are replaced by the context's device when it is not the CPU (creation ops run
// where the backend runs). Throws Unsupported where the value cannot be such an argument in this
// libtorch (the catalog's schema and libtorch's disagree).
c10::IValue to_ivalue(const Value& v, const c10::TypePtr& type, const std::string& name,
                      CallContext& ctx);
// An IValue result as a crucible Value.
Value from_ivalue(const c10::IValue& iv, CallContext& ctx);

}  // namespace crucible::aten
