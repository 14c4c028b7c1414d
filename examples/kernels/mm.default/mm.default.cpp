// aten.mm.default(Tensor self, Tensor mat2) -> Tensor: [n, k] @ [k, m] -> [n, m]. The operands
// are read once through their strides (transposed, sliced and stride-0 inputs included) into
// row-major buffers; floating types accumulate in double and round once, integer types wrap as
// ATen's do.
#include <crucible/kernel.hpp>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

namespace ck = crucible::kernel;

namespace {

// a [n, k] @ b [k, m] into out, row by row (the inner loop runs along b's and out's rows).
template <typename T>
void matmul(const ck::Tensor& a, const ck::Tensor& b, const ck::Tensor& out) {
  const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  auto load = [](const ck::Tensor& t, int64_t off) {
    if constexpr (std::is_same_v<T, double>)
      return t.load(off);
    else
      return static_cast<uint64_t>(t.load_int(off));  // wrapping arithmetic
  };
  std::vector<T> bb(static_cast<size_t>(k * m)), row(static_cast<size_t>(m));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < m; ++j) bb[p * m + j] = load(b, p * b.stride(0) + j * b.stride(1));
  for (int64_t i = 0; i < n; ++i) {
    std::fill(row.begin(), row.end(), T(0));
    for (int64_t p = 0; p < k; ++p) {
      const T x = load(a, i * a.stride(0) + p * a.stride(1));
      const T* brow = &bb[p * m];
      for (int64_t j = 0; j < m; ++j) row[j] += x * brow[j];
    }
    for (int64_t j = 0; j < m; ++j) {
      const int64_t o = i * out.stride(0) + j * out.stride(1);
      if constexpr (std::is_same_v<T, double>)
        out.store(o, row[j]);
      else
        out.store_int(o, static_cast<int64_t>(row[j]));
    }
  }
}

int32_t mm(ck::Call& k) {
  const ck::Tensor a = k.tensor(0), b = k.tensor(1);
  const ck::Tensor out = k.output(0);
  if (a.dim() != 2) return k.error("self must be a matrix");
  if (b.dim() != 2) return k.error("mat2 must be a matrix");
  if (a.size(1) != b.size(0))
    return k.error("mat1 and mat2 shapes cannot be multiplied (" + std::to_string(a.size(0)) + "x" +
                   std::to_string(a.size(1)) + " and " + std::to_string(b.size(0)) + "x" +
                   std::to_string(b.size(1)) + ")");
  if (a.dtype() != b.dtype())
    return k.error(std::string("expected m1 and m2 to have the same dtype, but got: ") +
                   ck::type_name(a.dtype()) + " != " + ck::type_name(b.dtype()));
  const bool floating = ck::is_floating(a.dtype());
  // An empty inner dim gives zeros before ATen dispatches on the dtype (bool included).
  if (a.size(1) > 0 && !floating && !ck::is_integral(a.dtype(), false))
    return k.error(std::string("\"addmm_impl_cpu_\" not implemented for '") +
                   ck::type_name(a.dtype()) + "'");
  if (floating)
    matmul<double>(a, b, out);
  else
    matmul<uint64_t>(a, b, out);
  return CRUCIBLE_OK;
}

}  // namespace

CRUCIBLE_KERNEL("aten.mm.default", mm)
