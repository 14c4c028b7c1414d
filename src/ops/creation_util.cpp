// The creation family's shared rules (declared in creation_internal.h): ATen's factory
// keyword arguments (dtype, layout, sizes, memory_format), the strides of *_like results, and
// c10's checked conversion of a Scalar into a tensor's dtype.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "ops/creation_internal.h"

namespace crucible {

namespace creation {

DType dtype_arg(const Values& args, size_t i, DType dflt) {
  return args.size() > i && !args[i].is_none() ? args[i].to_dtype() : dflt;
}

void check_layout(const Values& args, size_t i) {
  if (args.size() > i && !args[i].is_none() && args[i].to_layout() != Layout::Strided)
    unsupported("sparse layouts: crucible has no sparse tensors (layout=torch.sparse_coo)");
}

void check_sizes(const Shape& size) {
  for (int64_t s : size)
    CRUCIBLE_CHECK(s >= 0, fmt::format("Trying to create tensor with negative dimension {}: {}", s,
                                       shape_str(size)));
}

Shape contiguous_strides_aten(const Shape& sizes) {
  Shape s(sizes.size());
  int64_t cur = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    s[i] = cur;
    cur *= std::max<int64_t>(sizes[i], 1);
  }
  return s;
}

namespace {

// c10's is_non_overlapping_and_dense.
bool non_overlapping_and_dense(const Shape& sizes, const Shape& strides) {
  const size_t n = sizes.size();
  if (n == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t expected = 1;
  for (size_t i = 0; i < n; ++i) {
    if (sizes[perm[i]] < 2) return true;
    if (strides[perm[i]] != expected) return false;
    expected *= sizes[perm[i]];
  }
  return true;
}

// ATen's infer_dense_strides: dense strides following the input's stride order (an insertion
// sort from the innermost dim; stride-0 dims compare equal to everything and stay in place).
Shape dense_strides_in_order(const Shape& sizes, const Shape& strides) {
  const size_t n = sizes.size();
  std::vector<size_t> order(n);  // order[0] is the innermost dim
  for (size_t i = 0; i < n; ++i) order[i] = n - 1 - i;
  auto compare = [&](size_t a, size_t b) {
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] != strides[b]) return strides[a] < strides[b] ? -1 : 1;
    return sizes[a] > sizes[b] ? 1 : 0;
  };
  for (size_t i = 1; i < n; ++i) {
    size_t cur = i;
    for (size_t j = i; j-- > 0;) {
      const int c = compare(order[j], order[cur]);
      if (c > 0) {
        std::swap(order[j], order[cur]);
        cur = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  Shape out(n);
  int64_t step = 1;
  for (size_t i = 0; i < n; ++i) {
    out[order[i]] = step;
    step *= std::max<int64_t>(sizes[order[i]], 1);
  }
  return out;
}

}  // namespace

Shape format_strides(const Shape& sizes, MemoryFormat mf) {
  switch (mf) {
    case MemoryFormat::Contiguous:
      return contiguous_strides_aten(sizes);
    case MemoryFormat::Preserve:
      op_error("unsupported memory format Preserve");
    case MemoryFormat::ChannelsLast: {
      CRUCIBLE_CHECK(sizes.size() == 4, "required rank 4 tensor to use channels_last format");
      // A size-0 dim counts as 1, as in contiguous strides.
      Shape s(4);
      const auto m = [&](size_t d) { return std::max<int64_t>(sizes[d], 1); };
      s[1] = 1;
      s[3] = m(1);
      s[2] = s[3] * m(3);
      s[0] = s[2] * m(2);
      return s;
    }
    case MemoryFormat::ChannelsLast3d: {
      CRUCIBLE_CHECK(sizes.size() == 5, "required rank 5 tensor to use channels_last_3d format");
      Shape s(5);
      const auto m = [&](size_t d) { return std::max<int64_t>(sizes[d], 1); };
      s[1] = 1;
      s[4] = m(1);
      s[3] = s[4] * m(4);
      s[2] = s[3] * m(3);
      s[0] = s[2] * m(2);
      return s;
    }
  }
  internal_error("creation: unknown memory format");
}

Shape like_strides(const Tensor& t, MemoryFormat mf) {
  if (mf != MemoryFormat::Preserve) return format_strides(t.shape(), mf);
  if (non_overlapping_and_dense(t.shape(), t.strides())) return t.strides();
  return dense_strides_in_order(t.shape(), t.strides());
}

MemoryFormat memory_format_arg(const Values& args, size_t i, MemoryFormat dflt) {
  return args.size() > i && !args[i].is_none() ? args[i].to_memory_format() : dflt;
}

namespace {

std::string c10_type_name(DType t) {
  switch (t) {
    case DType::UInt8:
      return "uint8_t";
    case DType::Int8:
      return "int8_t";
    case DType::Int16:
      return "int16_t";
    case DType::Int32:
      return "int";
    case DType::Int64:
      return "int64_t";
    case DType::Float16:
      return "at::Half";
    case DType::BFloat16:
      return "at::BFloat16";
    case DType::Float32:
      return "float";
    case DType::Float64:
      return "double";
    default:
      return std::string(dtype_scalar_type_name(t));
  }
}

double int_lowest(DType t) {
  switch (t) {
    case DType::UInt8:
      return 0;
    case DType::Int8:
      return -128;
    case DType::Int16:
      return -32768;
    case DType::Int32:
      return -2147483648.0;
    default:
      return -9223372036854775808.0;
  }
}
double int_highest(DType t) {
  switch (t) {
    case DType::UInt8:
      return 255;
    case DType::Int8:
      return 127;
    case DType::Int16:
      return 32767;
    case DType::Int32:
      return 2147483647.0;
    default:
      return 9223372036854775807.0;
  }
}

}  // namespace

void check_convertible(const Scalar& s, DType to) {
  if (to == DType::Bool || s.is_bool()) return;
  bool overflows = false;
  if (s.is_integral()) {
    const int64_t v = s.to_int();
    if (is_floating(to)) {
      overflows = std::fabs(static_cast<double>(v)) > float_info(to).max;
    } else if (to == DType::UInt8) {
      // c10 lets negative integers wrap into unsigned types (a - b as a + 255 * b).
      overflows = v > 255 || v < -255;
    } else if (to != DType::Int64) {
      overflows =
          static_cast<double>(v) < int_lowest(to) || static_cast<double>(v) > int_highest(to);
    }
  } else {
    const double v = s.to_double();
    if (is_floating(to)) {
      overflows = std::isfinite(v) && std::fabs(v) > float_info(to).max;
    } else {
      overflows = !std::isfinite(v) || v < int_lowest(to) || v > int_highest(to);
    }
  }
  CRUCIBLE_CHECK(!overflows,
                 "value cannot be converted to type " + c10_type_name(to) + " without overflow");
}

void fill_with(const Tensor& t, const Scalar& s) {
  check_convertible(s, t.dtype());
  const DType dt = t.dtype();
  const int64_t n = t.numel();
  if (is_floating(dt)) {
    const double v = s.is_floating() ? s.to_double()
                     : s.is_bool()   ? (s.to_bool() ? 1.0 : 0.0)
                                     : static_cast<double>(s.to_int());
    for (int64_t i = 0; i < n; ++i) t.set(i, v);
  } else if (dt == DType::Bool) {
    const bool v = s.is_floating() ? s.to_double() != 0.0 : s.is_bool() ? s.to_bool() : s.to_int();
    for (int64_t i = 0; i < n; ++i) t.set_int(i, v ? 1 : 0);
  } else {
    // Checked above: a floating value is finite and within range, so truncation is exact C++.
    const int64_t v = s.is_floating() ? static_cast<int64_t>(s.to_double())
                      : s.is_bool()   ? int64_t{s.to_bool()}
                                      : s.to_int();
    for (int64_t i = 0; i < n; ++i) t.set_int(i, v);  // wraps (uint8 from a negative int)
  }
}

Scalar item_of(const Tensor& t) {
  if (t.dtype() == DType::Bool) return Scalar(t.get_int(0) != 0);
  if (is_floating(t.dtype())) return Scalar(t.get(0));
  return Scalar(t.get_int(0));
}

double real_bytes(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 0) return 0;
    if (t.stride(d) != 0) n *= t.size(d);
  }
  return static_cast<double>(n) * static_cast<double>(t.itemsize());
}

double tensor_bytes(const Tensor& t) {
  return static_cast<double>(t.numel()) * static_cast<double>(t.itemsize());
}

}  // namespace creation

}  // namespace crucible
