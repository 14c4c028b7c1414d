// The cpu backend's copies to and from complex dtypes: rows of the destination's innermost dim
// spread over the pool; a source of the destination's dtype is moved element by element as
// bytes, any other pair converts through a complex double (each part rounded once to the
// destination's component type).
#include "backends/cpu/copy_complex.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/parallel.h"

namespace crucible::cpu {

void copy_complex(const Tensor& src, const Tensor& dst) {
  if (dst.numel() == 0) return;
  const Shape& shape = dst.shape();
  const auto nd = static_cast<int64_t>(shape.size());
  // src's element strides broadcast to dst's shape.
  std::vector<int64_t> ss(shape.size(), 0);
  const int64_t lead = nd - src.dim();
  for (int64_t d = 0; d < src.dim(); ++d)
    if (src.size(d) != 1) ss[static_cast<size_t>(lead + d)] = src.stride(d);
  const int64_t inner = nd == 0 ? 1 : shape.back();
  const int64_t rows = dst.numel() / inner;
  const int64_t is = nd == 0 ? 0 : ss.back(), id = nd == 0 ? 0 : dst.stride(-1);
  const auto sz = static_cast<int64_t>(src.itemsize()), dz = static_cast<int64_t>(dst.itemsize());
  const char* sbase = static_cast<const char*>(src.data_ptr());
  char* dbase = static_cast<char*>(dst.data_ptr());
  const DType st = src.dtype(), dt = dst.dtype();
  parallel_for(0, rows, std::max<int64_t>(1, 32768 / inner), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t so = 0, dof = 0, rest = r;
      for (int64_t d = nd - 2; d >= 0; --d) {
        const int64_t n = shape[static_cast<size_t>(d)];
        const int64_t i = rest % n;
        rest /= n;
        so += i * ss[static_cast<size_t>(d)];
        dof += i * dst.stride(d);
      }
      const char* s = sbase + so * sz;
      char* o = dbase + dof * dz;
      if (st == dt) {
        for (int64_t j = 0; j < inner; ++j)
          std::memcpy(o + j * id * dz, s + j * is * sz, static_cast<size_t>(dz));
      } else {
        for (int64_t j = 0; j < inner; ++j)
          store_from_complex(o + j * id * dz, dt, load_as_complex(s + j * is * sz, st));
      }
    }
  });
}

}  // namespace crucible::cpu
