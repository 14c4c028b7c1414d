// Tensor: shared storage + element offset + shape + strides + dtype. Views share storage.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "crucible/core/device.h"
#include "crucible/core/dtype.h"
#include "crucible/core/half.h"

namespace crucible {

using Shape = std::vector<int64_t>;

// A block of bytes on a device. CPU storage is allocated by crucible (64-byte aligned) or
// wraps memory owned by someone else (a deleter says how to free it).
class Storage {
 public:
  Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  enum class Init : uint8_t {
    Zero,           // zero-filled
    Uninitialized,  // whatever the block held: for outputs a kernel writes in full
  };
  // Allocates `nbytes` (64-byte aligned; 0 is valid) on the CPU, counted against the process's
  // allocation limit. Large blocks are cached when freed and reused (storage.cpp).
  static std::shared_ptr<Storage> allocate_cpu(size_t nbytes, Init init = Init::Zero);

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  std::function<void(void*)> deleter_;
};

// The process-wide limit on bytes held by crucible-allocated storage (0 = none). Workers set it
// from --memory-limit; an allocation beyond it throws Error(ErrorKind::Memory).
void set_allocation_limit(size_t bytes);
size_t allocation_limit();
size_t bytes_allocated();
// Bytes of freed blocks the allocation cache keeps for reuse, and emptying it.
size_t bytes_cached();
void release_cached_blocks();

int64_t numel_of(const Shape& shape);
Shape contiguous_strides(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2, 3]"

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor

  static Tensor empty(const Shape& shape, DType dtype);
  static Tensor empty_strided(const Shape& shape, const Shape& strides, DType dtype);
  // Like empty / empty_strided without the zero fill (ATen's at::empty): for outputs a kernel
  // writes in full. Reading an element before writing it gives whatever the memory held.
  static Tensor uninitialized(const Shape& shape, DType dtype);
  static Tensor uninitialized_strided(const Shape& shape, const Shape& strides, DType dtype);
  // A tensor on the meta device: shape, strides and dtype without data (data_ptr() is an internal
  // error). The meta layer describes outputs with these; views of one are meta tensors too.
  static Tensor meta(const Shape& shape, DType dtype);
  static Tensor meta_strided(const Shape& shape, const Shape& strides, DType dtype);
  bool is_meta() const { return storage_ && device().type == DeviceType::Meta; }
  static Tensor zeros(const Shape& shape, DType dtype);
  static Tensor full(const Shape& shape, double value, DType dtype);
  static Tensor scalar(double value, DType dtype);  // 0-d
  // A view of existing storage; the caller guarantees the storage covers every element.
  static Tensor from_storage(std::shared_ptr<Storage> storage, int64_t offset, Shape shape,
                             Shape strides, DType dtype);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const;
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size(int64_t d) const;    // d may be negative
  int64_t stride(int64_t d) const;  // d may be negative
  int64_t numel() const { return numel_; }
  int64_t offset() const { return offset_; }
  size_t itemsize() const { return crucible::itemsize(dtype_); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Pointer to the element at the view's offset.
  void* data_ptr() const;
  template <typename T>
  T* data() const {
    return static_cast<T*>(data_ptr());
  }

  bool is_contiguous() const;
  // The range of storage elements the view can touch: [lo, hi) relative to storage start.
  std::pair<int64_t, int64_t> storage_extent() const;
  bool shares_storage(const Tensor& other) const { return storage_ && storage_ == other.storage_; }
  // True when some element of this view and of `other` occupy the same bytes.
  bool overlaps(const Tensor& other) const;

  // Copies (always new storage, contiguous).
  Tensor contiguous() const;  // returns *this when already contiguous
  Tensor clone() const;
  Tensor to(DType dtype) const;  // a copy converted elementwise (see store_from_double)

  // Views (share storage).
  Tensor view(const Shape& shape) const;     // requires compatible strides; -1 allowed once
  Tensor reshape(const Shape& shape) const;  // view when possible, else a copy
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor expand(const Shape& shape) const;
  Tensor as_strided(const Shape& shape, const Shape& strides, int64_t offset) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor unsqueeze(int64_t dim) const;

  // Element access by logical (row-major) index over the view, any dtype. Integers beyond
  // 2^53 lose precision through `get`; use `get_int` for them. Of a complex tensor, `get` and
  // `get_int` read the real part (ATen's complex -> real conversion drops the imaginary part)
  // and `set`/`set_int` write (value, 0); use get_complex/set_complex for both parts.
  double get(int64_t logical_index) const;
  int64_t get_int(int64_t logical_index) const;
  void set(int64_t logical_index, double value) const;  // rounds once to the dtype
  void set_int(int64_t logical_index, int64_t value) const;
  // Both parts of a complex element (any dtype: a real element reads as (value, 0); writing a
  // complex value to a real tensor keeps the real part, or `re != 0 || im != 0` for bool).
  std::complex<double> get_complex(int64_t logical_index) const;
  void set_complex(int64_t logical_index, std::complex<double> value) const;
  // Storage element offset (relative to the storage start) of a logical index.
  int64_t storage_index(int64_t logical_index) const;
  // Copies elementwise from `src` (same shape or broadcastable to it, any dtype, converting)
  // into this view; an overlapping source is read before anything is written.
  void copy_from(const Tensor& src) const;
  void fill(double value) const;

  std::string str() const;  // "T([2, 3], f32)" plus stride when non-contiguous

 private:
  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;
  Shape shape_;
  Shape strides_;
  DType dtype_ = DType::Float32;
  // Cached at construction (every tensor is made by from_storage): the element count, and
  // whether logical index i is storage element offset_ + i (row-major contiguous).
  int64_t numel_ = 0;
  bool contiguous_ = true;
};

// Normalises a possibly negative dim against `ndim` (a 0-d tensor accepts -1 and 0, as ATen's
// maybe_wrap_dim does). Throws an op error naming the valid range otherwise.
int64_t wrap_dim(int64_t dim, int64_t ndim);

// Broadcast two or more shapes as ATen does; throws an op error when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

// Calls fn(index) for each multi-index of `shape` in row-major order.
void for_each_index(const Shape& shape, const std::function<void(std::span<const int64_t>)>& fn);

// Reads/writes one element of raw memory of the given dtype. The conversions (also used by
// Tensor::to, copy_from, set and fill):
//  - to a floating dtype: rounded to nearest, ties to even, once (int64 sources included);
//  - floating to integral: truncation toward zero, as ATen's CPU kernels do on x86-64: i8, i16
//    and i32 go through a 32-bit conversion (NaN, +-inf and out-of-range give INT32_MIN, which
//    wraps to 0 for i8/i16), u8 and i64 through a 64-bit one (INT64_MIN, 0 for u8);
//  - integral to integral: two's complement wrap to the destination width;
//  - to bool: value != 0 (NaN is true). A same-dtype copy copies bits (NaN payloads survive).
//  - complex dtypes: load_as_double/load_as_int read the real part; store_from_double/int
//    write (value, 0); each component rounds once to the component type.
double load_as_double(const void* p, DType t);
int64_t load_as_int(const void* p, DType t);
void store_from_double(void* p, DType t, double v);
void store_from_int(void* p, DType t, int64_t v);
// Complex loads and stores (ATen's conversions): a real source reads as (value, 0); a complex
// value stored to a real dtype keeps its real part (converted as store_from_double does),
// except to bool, which is `re != 0 || im != 0` (PyTorch 2.x; 1.13 looked at the real part
// only).
std::complex<double> load_as_complex(const void* p, DType t);
void store_from_complex(void* p, DType t, std::complex<double> v);

}  // namespace crucible
