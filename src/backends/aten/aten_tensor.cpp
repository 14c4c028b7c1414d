// Zero-copy tensor conversion between crucible and ATen, and dtype mapping.
#include <ATen/ops/empty.h>
#include <c10/core/TensorImpl.h>

#include "backends/aten/aten_convert.h"
#include "crucible/core/error.h"

namespace crucible::aten {

std::optional<c10::ScalarType> to_scalar_type(DType t) {
  switch (t) {
    case DType::Bool:
      return c10::ScalarType::Bool;
    case DType::UInt8:
      return c10::ScalarType::Byte;
    case DType::Int8:
      return c10::ScalarType::Char;
    case DType::Int16:
      return c10::ScalarType::Short;
    case DType::Int32:
      return c10::ScalarType::Int;
    case DType::Int64:
      return c10::ScalarType::Long;
    case DType::Float16:
      return c10::ScalarType::Half;
    case DType::BFloat16:
      return c10::ScalarType::BFloat16;
    case DType::Float32:
      return c10::ScalarType::Float;
    case DType::Float64:
      return c10::ScalarType::Double;
#if CRUCIBLE_ATEN_HAS_FLOAT8
    case DType::Float8E4M3FN:
      return c10::ScalarType::Float8_e4m3fn;
    case DType::Float8E5M2:
      return c10::ScalarType::Float8_e5m2;
#else
    case DType::Float8E4M3FN:
    case DType::Float8E5M2:
      return std::nullopt;
#endif
    case DType::Complex32:
      return c10::ScalarType::ComplexHalf;
    case DType::Complex64:
      return c10::ScalarType::ComplexFloat;
    case DType::Complex128:
      return c10::ScalarType::ComplexDouble;
  }
  return std::nullopt;
}

c10::Device c10_device(Device d) {
  if (d.is_cpu()) return c10::Device(c10::DeviceType::CPU);
  return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(d.index));
}

std::optional<DType> from_scalar_type(c10::ScalarType t) {
  for (DType d : all_dtypes())
    if (to_scalar_type(d) == t) return d;
  return std::nullopt;
}

namespace {

c10::DeviceType device_type_of(Device d) {
  return d.is_cpu() ? c10::DeviceType::CPU : c10::DeviceType::CUDA;
}

Device crucible_device(c10::Device d) {
  if (d.is_cpu()) return Device::cpu();
  if (d.is_cuda()) return Device::cuda(d.has_index() ? d.index() : 0);
  unsupported("ATen returned a tensor on device '" + d.str() + "', which crucible does not have");
}

c10::ScalarType scalar_type_or_throw(DType t) {
  auto st = to_scalar_type(t);
  if (!st)
    unsupported("libtorch " TORCH_VERSION " has no dtype " + std::string(dtype_code(t)) +
                " (float8 needs PyTorch 2.1 or later)");
  return *st;
}

// An at::Tensor of dtype `st` over `storage` with crucible's offset, sizes and strides.
at::Tensor make_view(const c10::Storage& storage, c10::ScalarType st, int64_t offset,
                     const Shape& shape, const Shape& strides) {
  const c10::DeviceType dt = storage.device().type();
  const c10::DispatchKey key =
      dt == c10::DeviceType::CPU ? c10::DispatchKey::CPU : c10::DispatchKey::CUDA;
  at::Tensor t = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(storage), c10::DispatchKeySet(key), c10::scalarTypeToTypeMeta(st));
  t.unsafeGetTensorImpl()->set_sizes_and_strides(c10::IntArrayRef(shape),
                                                 c10::IntArrayRef(strides));
  t.unsafeGetTensorImpl()->set_storage_offset(offset);
  return t;
}

}  // namespace

at::Tensor storage_bytes(const std::shared_ptr<Storage>& s) {
  // The DataPtr's context owns a reference to the crucible Storage: ATen may keep the tensor
  // (and so the memory) alive for as long as it likes.
  auto* keep = new std::shared_ptr<Storage>(s);
  c10::DataPtr ptr(
      s->data(), keep, [](void* ctx) { delete static_cast<std::shared_ptr<Storage>*>(ctx); },
      c10_device(s->device()));
  c10::Storage storage(c10::Storage::use_byte_size_t(), static_cast<int64_t>(s->nbytes()),
                       std::move(ptr), /*allocator=*/nullptr, /*resizable=*/false);
  return make_view(storage, c10::ScalarType::Byte, 0, {static_cast<int64_t>(s->nbytes())}, {1});
}

std::shared_ptr<Storage> wrap_storage(const c10::Storage& s) {
  c10::Storage keep = s;
  return std::make_shared<Storage>(s.data_ptr().get(), s.nbytes(), crucible_device(s.device()),
                                   [keep](void*) mutable { keep = c10::Storage(); });
}

c10::Storage CallContext::storage_for(const std::shared_ptr<Storage>& s) {
  auto it = to_aten_.find(s.get());
  if (it != to_aten_.end()) return it->second;
  at::Tensor bytes = storage_bytes(s);
  c10::Storage storage = bytes.storage();
  if (device_type_of(s->device()) != device_.type()) {
    if (!s->device().is_cpu())
      internal_error("the aten backend on " + device_.str() + " was given a tensor on " +
                     s->device().str());
    // A host storage given to a device backend: upload it whole, copy it back after the call.
    at::Tensor on_device = at::empty({static_cast<int64_t>(s->nbytes())},
                                     at::TensorOptions(c10::ScalarType::Byte).device(device_));
    on_device.copy_(bytes);
    storage = on_device.storage();
    uploads_.push_back({s, storage});
  }
  to_aten_.emplace(s.get(), storage);
  from_aten_.emplace(storage.unsafeGetStorageImpl(), Converted{s, storage});
  return storage;
}

at::Tensor CallContext::to_aten(const Tensor& t) {
  if (!t.defined()) return at::Tensor();
  return make_view(storage_for(t.storage()), scalar_type_or_throw(t.dtype()), t.offset(), t.shape(),
                   t.strides());
}

Tensor CallContext::from_aten(const at::Tensor& t) {
  if (!t.defined()) return Tensor();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  // ATen 2.x returns the philox RNG state of its CUDA attention kernels as uint64, which the
  // catalog types int64 (crucible has no uint64): the same 64 bits, read as int64.
  if (t.scalar_type() == c10::ScalarType::UInt64) return from_aten(t.view(c10::ScalarType::Long));
#endif
  auto dtype = from_scalar_type(t.scalar_type());
  if (!dtype)
    unsupported(std::string("ATen returned a tensor of dtype ") + c10::toString(t.scalar_type()) +
                ", which crucible does not have");
  if (t.layout() != c10::Layout::Strided)
    unsupported(
        "ATen returned a tensor with a non-strided layout (sparse results are not "
        "supported)");
  const c10::Storage& storage = t.storage();
  std::shared_ptr<Storage> s;
  auto it = from_aten_.find(storage.unsafeGetStorageImpl());
  if (it != from_aten_.end()) {
    s = it->second.storage;
  } else if (!uploads_.empty() && !storage.device().is_cpu()) {
    // Called with host tensors: a fresh device result comes back to the host.
    s = Storage::allocate_cpu(storage.nbytes());
    at::Tensor device_bytes =
        make_view(storage, c10::ScalarType::Byte, 0, {static_cast<int64_t>(storage.nbytes())}, {1});
    storage_bytes(s).copy_(device_bytes);
    from_aten_.emplace(storage.unsafeGetStorageImpl(), Converted{s, storage});
  } else {
    s = wrap_storage(storage);
    from_aten_.emplace(storage.unsafeGetStorageImpl(), Converted{s, storage});
  }
  return Tensor::from_storage(s, t.storage_offset(), Shape(t.sizes().begin(), t.sizes().end()),
                              Shape(t.strides().begin(), t.strides().end()), *dtype);
}

void CallContext::finish() {
  for (const Upload& u : uploads_) {
    at::Tensor device_bytes = make_view(u.device, c10::ScalarType::Byte, 0,
                                        {static_cast<int64_t>(u.host->nbytes())}, {1});
    storage_bytes(u.host).copy_(device_bytes);
  }
}

}  // namespace crucible::aten
