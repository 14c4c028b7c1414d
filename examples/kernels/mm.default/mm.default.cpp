// aten.mm.default(Tensor self, Tensor mat2) -> Tensor: [n, k] @ [k, m] -> [n, m]. Floating types
// accumulate in double and round once; integer types wrap as ATen's do. Strided inputs (and
// stride-0 rows) are read through their strides.
#include <crucible/kernel.hpp>

#include <string>

namespace ck = crucible::kernel;

static int32_t mm(ck::Call& k) {
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
  const int64_t n = a.size(0), inner = a.size(1), m = b.size(1);
  const bool floating = ck::is_floating(a.dtype());
  if (inner > 0 && !floating && !ck::is_integral(a.dtype(), false))
    return k.error(std::string("\"addmm_impl_cpu_\" not implemented for '") +
                   ck::type_name(a.dtype()) + "'");
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      const int64_t o = i * out.stride(0) + j * out.stride(1);
      if (floating) {
        double acc = 0;
        for (int64_t p = 0; p < inner; ++p)
          acc +=
              a.load(i * a.stride(0) + p * a.stride(1)) * b.load(p * b.stride(0) + j * b.stride(1));
        out.store(o, acc);
      } else {
        uint64_t acc = 0;  // wraps like the dtype (the final store truncates to its width)
        for (int64_t p = 0; p < inner; ++p)
          acc += static_cast<uint64_t>(a.load_int(i * a.stride(0) + p * a.stride(1))) *
                 static_cast<uint64_t>(b.load_int(p * b.stride(0) + j * b.stride(1)));
        out.store_int(o, static_cast<int64_t>(acc));
      }
    }
  return CRUCIBLE_OK;
}

CRUCIBLE_KERNEL("aten.mm.default", mm)
