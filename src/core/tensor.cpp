// Tensor construction, views, copies and element access. Storage allocation lives in
// storage.cpp, the conversions of single elements (load_as_double, ...) in element.cpp.
#include "crucible/core/tensor.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "crucible/core/element_runs.h"
#include "crucible/core/error.h"

namespace crucible {

namespace {

void check_sizes(const Shape& shape) {
  for (int64_t s : shape) {
    if (s < 0) {
      op_error("Trying to create tensor with negative dimension " + std::to_string(s) + ": " +
               shape_str(shape));
    }
  }
}

// Bytes needed by a strided layout (0 for an empty tensor); throws a memory error on overflow.
size_t required_bytes(const Shape& shape, const Shape& strides, DType dtype) {
  if (numel_of(shape) == 0) return 0;
  int64_t last = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t span = 0;
    if (__builtin_mul_overflow(shape[i] - 1, strides[i], &span) ||
        __builtin_add_overflow(last, span, &last)) {
      throw Error(ErrorKind::Memory, "tensor of shape " + shape_str(shape) + " is too large");
    }
  }
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(last) + 1, itemsize(dtype), &bytes)) {
    throw Error(ErrorKind::Memory, "tensor of shape " + shape_str(shape) + " is too large");
  }
  return bytes;
}

std::string int_list_str(const Shape& v, bool tuple) {
  std::string s = tuple ? "(" : "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  if (tuple && v.size() == 1) s += ",";
  s += tuple ? ")" : "]";
  return s;
}

// ATen's infer_size: resolves one -1 against `numel`.
Shape infer_size(const Shape& shape, int64_t numel) {
  Shape out = shape;
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer) op_error("only one dimension can be inferred");
      infer = i;
    } else if (shape[i] >= 0) {
      known *= shape[i];
    } else {
      op_error("invalid shape dimension " + std::to_string(shape[i]));
    }
  }
  if (infer) {
    if (known == 0) {
      op_error("cannot reshape tensor of 0 elements into shape " + shape_str(shape) +
               " because the unspecified dimension size -1 can be any value and is ambiguous");
    }
    if (numel % known == 0) {
      out[*infer] = numel / known;
      return out;
    }
  } else if (known == numel) {
    return out;
  }
  op_error("shape '" + shape_str(shape) + "' is invalid for input of size " +
           std::to_string(numel));
}

// ATen's computeStride: the strides of a view of (old_shape, old_strides) with `shape`, or
// nullopt when the view would need a copy.
std::optional<Shape> view_strides(const Shape& old_shape, const Shape& old_strides,
                                  const Shape& shape) {
  if (old_shape.empty()) return Shape(shape.size(), 1);
  const int64_t numel = numel_of(old_shape);
  if (numel == 0 && old_shape == shape) return old_strides;
  const int64_t nd = static_cast<int64_t>(shape.size());
  Shape strides(shape.size(), 0);
  if (numel == 0) {
    for (int64_t d = nd - 1; d >= 0; --d) {
      strides[d] = d == nd - 1 ? 1 : std::max<int64_t>(shape[d + 1], 1) * strides[d + 1];
    }
    return strides;
  }
  int64_t view_d = nd - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t td = static_cast<int64_t>(old_shape.size()) - 1; td >= 0; --td) {
    tensor_numel *= old_shape[td];
    if (td == 0 ||
        (old_shape[td - 1] != 1 && old_strides[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (td > 0) {
        chunk_base_stride = old_strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

}  // namespace

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

std::string shape_str(const Shape& shape) { return int_list_str(shape, false); }

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  const int64_t n = ndim <= 0 ? 1 : ndim;
  if (dim < -n || dim > n - 1) {
    op_error("Dimension out of range (expected to be in range of [" + std::to_string(-n) + ", " +
             std::to_string(n - 1) + "], but got " + std::to_string(dim) + ")");
  }
  return dim < 0 ? dim + n : dim;
}

// ---- construction ----------------------------------------------------------------------------

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  check_sizes(shape);
  return empty_strided(shape, contiguous_strides(shape), dtype);
}

namespace {
Tensor allocate_strided(const Shape& shape, const Shape& strides, DType dtype, Storage::Init init) {
  check_sizes(shape);
  if (shape.size() != strides.size()) {
    op_error("mismatch in length of strides and shape: " + shape_str(shape) + " vs " +
             shape_str(strides));
  }
  for (int64_t s : strides) {
    if (s < 0)
      op_error("empty_strided: negative strides are not supported, got " + shape_str(strides));
  }
  return Tensor::from_storage(Storage::allocate_cpu(required_bytes(shape, strides, dtype), init), 0,
                              shape, strides, dtype);
}
}  // namespace

Tensor Tensor::empty_strided(const Shape& shape, const Shape& strides, DType dtype) {
  return allocate_strided(shape, strides, dtype, Storage::Init::Zero);
}

Tensor Tensor::uninitialized(const Shape& shape, DType dtype) {
  check_sizes(shape);
  return allocate_strided(shape, contiguous_strides(shape), dtype, Storage::Init::Uninitialized);
}

Tensor Tensor::uninitialized_strided(const Shape& shape, const Shape& strides, DType dtype) {
  return allocate_strided(shape, strides, dtype, Storage::Init::Uninitialized);
}

Tensor Tensor::meta(const Shape& shape, DType dtype) {
  check_sizes(shape);
  return meta_strided(shape, contiguous_strides(shape), dtype);
}

Tensor Tensor::meta_strided(const Shape& shape, const Shape& strides, DType dtype) {
  check_sizes(shape);
  if (shape.size() != strides.size())
    op_error("mismatch in length of strides and shape: " + shape_str(shape) + " vs " +
             shape_str(strides));
  for (int64_t s : strides)
    if (s < 0)
      op_error("empty_strided: negative strides are not supported, got " + shape_str(strides));
  auto storage = std::make_shared<Storage>(nullptr, required_bytes(shape, strides, dtype),
                                           Device::meta(), nullptr);
  return from_storage(std::move(storage), 0, shape, strides, dtype);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) { return empty(shape, dtype); }

Tensor Tensor::full(const Shape& shape, double value, DType dtype) {
  Tensor t = empty(shape, dtype);
  t.fill(value);
  return t;
}

Tensor Tensor::scalar(double value, DType dtype) { return full({}, value, dtype); }

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, int64_t offset, Shape shape,
                            Shape strides, DType dtype) {
  if (shape.size() != strides.size()) internal_error("from_storage: shape/stride rank mismatch");
  Tensor t;
  t.storage_ = std::move(storage);
  t.offset_ = offset;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.dtype_ = dtype;
  t.numel_ = numel_of(t.shape_);
  int64_t expected = 1;
  t.contiguous_ = true;
  if (t.numel_ != 0) {
    for (size_t i = t.shape_.size(); i-- > 0;) {
      if (t.shape_[i] == 1) continue;
      if (t.strides_[i] != expected) {
        t.contiguous_ = false;
        break;
      }
      expected *= t.shape_[i];
    }
  }
  return t;
}

Device Tensor::device() const { return storage_ ? storage_->device() : Device::cpu(); }

int64_t Tensor::size(int64_t d) const {
  if (dim() == 0)
    op_error("dimension specified as " + std::to_string(d) + " but tensor has no dimensions");
  return shape_[wrap_dim(d, dim())];
}

int64_t Tensor::stride(int64_t d) const {
  if (dim() == 0)
    op_error("dimension specified as " + std::to_string(d) + " but tensor has no dimensions");
  return strides_[wrap_dim(d, dim())];
}

void* Tensor::data_ptr() const {
  if (!storage_) return nullptr;
  if (storage_->device().type == DeviceType::Meta)
    internal_error("a meta tensor has no data (" + str() + ")");
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(itemsize());
}

bool Tensor::is_contiguous() const { return contiguous_; }

std::pair<int64_t, int64_t> Tensor::storage_extent() const {
  if (numel() == 0) return {offset_, offset_};
  int64_t lo = offset_;
  int64_t hi = offset_ + 1;
  for (size_t i = 0; i < shape_.size(); ++i) {
    const int64_t span = (shape_[i] - 1) * strides_[i];
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi};
}

bool Tensor::overlaps(const Tensor& other) const {
  if (!shares_storage(other) || numel() == 0 || other.numel() == 0) return false;
  const auto isz = static_cast<int64_t>(itemsize());
  const auto osz = static_cast<int64_t>(other.itemsize());
  auto [alo, ahi] = storage_extent();
  auto [blo, bhi] = other.storage_extent();
  const int64_t lo = std::max(alo * isz, blo * osz);
  const int64_t hi = std::min(ahi * isz, bhi * osz);
  if (lo >= hi) return false;
  // Dense views (no gaps, no self-overlap) touch every byte of their extent.
  auto dense = [](const Tensor& t) {
    auto [l, h] = t.storage_extent();
    return h - l == t.numel();
  };
  if (dense(*this) && dense(other)) return true;
  // General case: mark the bytes of this view inside the common range, then probe the other.
  std::vector<bool> marked(static_cast<size_t>(hi - lo), false);
  for (int64_t i = 0, n = numel(); i < n; ++i) {
    const int64_t b = storage_index(i) * isz;
    for (int64_t k = std::max(b, lo); k < std::min(b + isz, hi); ++k) marked[k - lo] = true;
  }
  for (int64_t i = 0, n = other.numel(); i < n; ++i) {
    const int64_t b = other.storage_index(i) * osz;
    for (int64_t k = std::max(b, lo); k < std::min(b + osz, hi); ++k) {
      if (marked[k - lo]) return true;
    }
  }
  return false;
}

// ---- copies ----------------------------------------------------------------------------------

Tensor Tensor::contiguous() const {
  if (!defined() || is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const { return to(dtype_); }

Tensor Tensor::to(DType dtype) const {
  if (!defined()) internal_error("to() of an undefined tensor");
  Tensor out = uninitialized(shape_, dtype);
  out.copy_from(*this);
  return out;
}

// ---- views -----------------------------------------------------------------------------------

Tensor Tensor::view(const Shape& shape) const {
  Shape inferred = infer_size(shape, numel());
  auto strides = view_strides(shape_, strides_, inferred);
  if (!strides) {
    op_error(
        "view size is not compatible with input tensor's size and stride (at least one dimension "
        "spans across two contiguous subspaces). Use .reshape(...) instead.");
  }
  return from_storage(storage_, offset_, std::move(inferred), std::move(*strides), dtype_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape inferred = infer_size(shape, numel());
  if (auto strides = view_strides(shape_, strides_, inferred)) {
    return from_storage(storage_, offset_, std::move(inferred), std::move(*strides), dtype_);
  }
  return clone().view(inferred);
}

Tensor Tensor::permute(const std::vector<int64_t>& dims) const {
  if (static_cast<int64_t>(dims.size()) != dim()) {
    op_error(
        "permute(sparse_coo): number of dimensions in the tensor input does not match the "
        "length of the desired ordering of dimensions i.e. input.dim() = " +
        std::to_string(dim()) + " is not equal to len(dims) = " + std::to_string(dims.size()));
  }
  Shape shape(dims.size());
  Shape strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], dim());
    if (seen[d]) op_error("permute(): duplicate dims are not allowed.");
    seen[d] = true;
    shape[i] = shape_[d];
    strides[i] = strides_[d];
  }
  return from_storage(storage_, offset_, std::move(shape), std::move(strides), dtype_);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  const int64_t a = wrap_dim(d0, dim());
  const int64_t b = wrap_dim(d1, dim());
  if (dim() == 0 || a == b) return from_storage(storage_, offset_, shape_, strides_, dtype_);
  Shape shape = shape_;
  Shape strides = strides_;
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  return from_storage(storage_, offset_, std::move(shape), std::move(strides), dtype_);
}

Tensor Tensor::expand(const Shape& shape) const {
  const auto nd = static_cast<int64_t>(shape.size());
  if (nd < dim()) {
    op_error("expand(torch." + std::string(dtype_scalar_type_name(dtype_)) + "Tensor{" +
             shape_str(shape_) + "}, size=" + shape_str(shape) +
             "): the number of sizes provided (" + std::to_string(nd) +
             ") must be greater or equal to the number of dimensions in the tensor (" +
             std::to_string(dim()) + ")");
  }
  Shape sizes(shape.size());
  Shape strides(shape.size());
  for (int64_t i = nd - 1; i >= 0; --i) {
    const int64_t offset = nd - 1 - i;
    const int64_t d = dim() - 1 - offset;
    int64_t size = shape[i];
    const int64_t tsize = d >= 0 ? shape_[d] : 1;
    int64_t stride = d >= 0 ? strides_[d] : (i + 1 < nd ? sizes[i + 1] * strides[i + 1] : 1);
    if (size == -1) {
      if (d < 0) {
        op_error(
            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
            "dimension " +
            std::to_string(i));
      }
      size = tsize;
    }
    if (size < 0)
      op_error("Trying to create tensor with negative dimension " + std::to_string(size) + ": " +
               shape_str(shape));
    if (tsize != size) {
      if (tsize != 1) {
        op_error("The expanded size of the tensor (" + std::to_string(size) +
                 ") must match the existing size (" + std::to_string(tsize) +
                 ") at non-singleton dimension " + std::to_string(i) +
                 ".  Target sizes: " + shape_str(shape) + ".  Tensor sizes: " + shape_str(shape_));
      }
      stride = 0;
    }
    sizes[i] = size;
    strides[i] = stride;
  }
  return from_storage(storage_, offset_, std::move(sizes), std::move(strides), dtype_);
}

Tensor Tensor::as_strided(const Shape& shape, const Shape& strides, int64_t offset) const {
  if (shape.size() != strides.size()) {
    op_error("mismatch in length of strides and shape");
  }
  for (int64_t s : strides) {
    if (s < 0) {
      op_error("as_strided: Negative strides are not supported at the moment, got strides: " +
               shape_str(strides));
    }
  }
  check_sizes(shape);
  if (offset < 0) op_error("Tensor: invalid storage offset " + std::to_string(offset));
  const size_t need =
      numel_of(shape) == 0 ? 0 : required_bytes(shape, strides, dtype_) + offset * itemsize();
  const size_t have = storage_ ? storage_->nbytes() : 0;
  if (need > have) {
    op_error("setStorage: sizes " + shape_str(shape) + ", strides " + shape_str(strides) +
             ", storage offset " + std::to_string(offset) + ", and itemsize " +
             std::to_string(itemsize()) + " requiring a storage size of " + std::to_string(need) +
             " are out of bounds for storage of size " + std::to_string(have));
  }
  return from_storage(storage_, offset, shape, strides, dtype_);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  if (dim() == 0) op_error("select() cannot be applied to a 0-dim tensor.");
  const int64_t w = wrap_dim(d, dim());
  const int64_t size = shape_[w];
  if (index < -size || index >= size) {
    op_error("select(): index " + std::to_string(index) + " out of range for tensor of size " +
             shape_str(shape_) + " at dimension " + std::to_string(d));
  }
  if (index < 0) index += size;
  Shape shape = shape_;
  Shape strides = strides_;
  const int64_t offset = offset_ + index * strides_[w];
  shape.erase(shape.begin() + w);
  strides.erase(strides.begin() + w);
  return from_storage(storage_, offset, std::move(shape), std::move(strides), dtype_);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  if (dim() == 0) op_error("slice() cannot be applied to a 0-dim tensor.");
  if (step <= 0) op_error("slice step must be positive");
  const int64_t w = wrap_dim(d, dim());
  const int64_t size = shape_[w];
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape shape = shape_;
  Shape strides = strides_;
  shape[w] = (end - start + step - 1) / step;
  strides[w] = strides_[w] * step;
  return from_storage(storage_, offset_ + start * strides_[w], std::move(shape), std::move(strides),
                      dtype_);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  const int64_t w = wrap_dim(d, dim() + 1);
  Shape shape = shape_;
  Shape strides = strides_;
  const int64_t stride = w >= dim() ? 1 : shape_[w] * strides_[w];
  shape.insert(shape.begin() + w, 1);
  strides.insert(strides.begin() + w, stride);
  return from_storage(storage_, offset_, std::move(shape), std::move(strides), dtype_);
}

// ---- elements --------------------------------------------------------------------------------

int64_t Tensor::storage_index(int64_t logical_index) const {
  const int64_t n = numel();
  if (logical_index < 0 || logical_index >= n) {
    op_error("index " + std::to_string(logical_index) + " is out of bounds for a tensor of " +
             std::to_string(n) + " elements");
  }
  if (contiguous_) return offset_ + logical_index;
  int64_t off = offset_;
  for (size_t i = shape_.size(); i-- > 0;) {
    off += (logical_index % shape_[i]) * strides_[i];
    logical_index /= shape_[i];
  }
  return off;
}

namespace {
char* element_ptr(const Tensor& t, int64_t storage_index) {
  return static_cast<char*>(t.storage()->data()) +
         storage_index * static_cast<int64_t>(t.itemsize());
}
}  // namespace

double Tensor::get(int64_t i) const {
  return load_as_double(element_ptr(*this, storage_index(i)), dtype_);
}
int64_t Tensor::get_int(int64_t i) const {
  return load_as_int(element_ptr(*this, storage_index(i)), dtype_);
}
void Tensor::set(int64_t i, double v) const {
  store_from_double(element_ptr(*this, storage_index(i)), dtype_, v);
}
void Tensor::set_int(int64_t i, int64_t v) const {
  store_from_int(element_ptr(*this, storage_index(i)), dtype_, v);
}
std::complex<double> Tensor::get_complex(int64_t i) const {
  return load_as_complex(element_ptr(*this, storage_index(i)), dtype_);
}
void Tensor::set_complex(int64_t i, std::complex<double> v) const {
  store_from_complex(element_ptr(*this, storage_index(i)), dtype_, v);
}

void Tensor::copy_from(const Tensor& src) const {
  if (!defined() || !src.defined()) internal_error("copy_from with an undefined tensor");
  const Tensor s = src.shape() == shape_ ? src : src.expand(shape_);
  // The same dtype copies bytes (NaN payloads survive); integer sources go through int64 so
  // large values stay exact.
  const bool int_path = is_integral(s.dtype(), true);
  // Copy from a snapshot when the source overlaps the destination.
  const Tensor from = overlaps(s) ? s.clone() : s;
  const int64_t n = numel();
  if (n == 0) return;
  Shape index(shape_.size(), 0);
  int64_t d_off = offset_;
  int64_t s_off = from.offset();
  const auto dsz = static_cast<int64_t>(itemsize());
  const auto ssz = static_cast<int64_t>(from.itemsize());
  char* dbase = static_cast<char*>(storage_->data());
  const char* sbase = static_cast<const char*>(from.storage()->data());
  const bool same = from.dtype() == dtype_;
  // A complex source keeps both parts (into a complex destination) or converts as ATen does
  // (the real part; bool: either part non-zero). Real sources into complex go through the
  // paths below, which write (value, 0).
  const bool complex_path = is_complex(from.dtype());
  // Moves both offsets to the next index over dims [0, dims) (an odometer, last dim fastest).
  auto advance = [&](size_t dims) {
    for (size_t k = dims; k-- > 0;) {
      d_off += strides_[k];
      s_off += from.strides()[k];
      if (++index[k] < shape_[k]) break;
      d_off -= strides_[k] * shape_[k];
      s_off -= from.strides()[k] * shape_[k];
      index[k] = 0;
    }
  };
  if (same) {
    // Bytes, one innermost row at a time (a 0-d tensor is one row of one): a whole row in one
    // memcpy where both sides are contiguous along it, else word by word at the row's strides.
    const size_t rows_dims = shape_.empty() ? 0 : shape_.size() - 1;
    const int64_t len = shape_.empty() ? 1 : shape_[rows_dims];
    const int64_t dst = shape_.empty() ? 1 : strides_[rows_dims];
    const int64_t sst = shape_.empty() ? 1 : from.strides()[rows_dims];
    const bool dense = len == 1 || (dst == 1 && sst == 1);
    for (int64_t i = 0; i < n; i += len) {
      char* d = dbase + d_off * dsz;
      const char* q = sbase + s_off * ssz;
      if (dense) {
        std::memcpy(d, q, static_cast<size_t>(len * dsz));
      } else {
        auto strided = [&](auto word) {
          using W = decltype(word);
          for (int64_t j = 0; j < len; ++j) {
            std::memcpy(&word, q + j * sst * dsz, sizeof(W));
            std::memcpy(d + j * dst * dsz, &word, sizeof(W));
          }
        };
        switch (dsz) {
          case 1:
            strided(uint8_t{});
            break;
          case 2:
            strided(uint16_t{});
            break;
          case 4:
            strided(uint32_t{});
            break;
          case 8:
            strided(uint64_t{});
            break;
          default:
            for (int64_t j = 0; j < len; ++j)
              std::memcpy(d + j * dst * dsz, q + j * sst * dsz, static_cast<size_t>(dsz));
        }
      }
      advance(rows_dims);
    }
    return;
  }
  if (complex_path) {
    for (int64_t i = 0; i < n; ++i) {
      store_from_complex(dbase + d_off * dsz, dtype_,
                         load_as_complex(sbase + s_off * ssz, from.dtype()));
      advance(shape_.size());
    }
    return;
  }
  // Converted a row at a time through int64 or double (element_runs.h: the same conversions).
  const size_t rows_dims = shape_.empty() ? 0 : shape_.size() - 1;
  const int64_t len = shape_.empty() ? 1 : shape_[rows_dims];
  const int64_t dst = shape_.empty() ? 1 : strides_[rows_dims];
  const int64_t sst = shape_.empty() ? 1 : from.strides()[rows_dims];
  std::vector<int64_t> ints(int_path ? static_cast<size_t>(len) : 0);
  std::vector<double> reals(int_path ? 0 : static_cast<size_t>(len));
  for (int64_t i = 0; i < n; i += len) {
    char* d = dbase + d_off * dsz;
    const char* q = sbase + s_off * ssz;
    if (int_path) {
      load_run_as_int(q, sst, len, from.dtype(), ints.data());
      store_run_from_int(d, dst, len, dtype_, ints.data());
    } else {
      load_run_as_double(q, sst, len, from.dtype(), reals.data());
      store_run_from_double(d, dst, len, dtype_, reals.data());
    }
    advance(rows_dims);
  }
}

void Tensor::fill(double value) const {
  const int64_t n = numel();
  if (n == 0) return;
  // Encode once, then replicate the bytes.
  alignas(16) char bytes[16];  // the widest element (c128)
  store_from_double(bytes, dtype_, value);
  const size_t isz = itemsize();
  for (int64_t i = 0; i < n; ++i) std::memcpy(element_ptr(*this, storage_index(i)), bytes, isz);
}

std::string Tensor::str() const {
  if (!defined()) return "None";
  std::string s = "T(" + shape_str(shape_) + ", " + std::string(dtype_code(dtype_));
  if (!is_contiguous()) s += ", stride=" + int_list_str(strides_, true);
  s += ")";
  return s;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      op_error("The size of tensor a (" + std::to_string(da) +
               ") must match the size of tensor b (" + std::to_string(db) +
               ") at non-singleton dimension " + std::to_string(i));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void for_each_index(const Shape& shape, const std::function<void(std::span<const int64_t>)>& fn) {
  if (numel_of(shape) == 0) return;
  Shape index(shape.size(), 0);
  const int64_t n = numel_of(shape);
  for (int64_t i = 0; i < n; ++i) {
    fn(index);
    for (size_t k = shape.size(); k-- > 0;) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
}

}  // namespace crucible
