// aten.add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
// self + alpha * other with broadcasting and ATen's type promotion. `other` may be a Python
// number (a wrapped number). crucible allocates the output with the promoted dtype and the
// broadcast shape; the kernel computes in that dtype, as ATen does.
#include <crucible/kernel.hpp>

#include <complex>
#include <string>
#include <vector>

namespace ck = crucible::kernel;

namespace {

// Checks alpha against the computation dtype `common` as ATen's alpha_check does.
int32_t check_alpha(ck::Call& k, const ck::Number& alpha, ck::ScalarType common) {
  if (alpha.is_bool() && common != ck::ScalarType::Bool)
    return k.error("Boolean alpha only supported for Boolean results.");
  if (alpha.is_floating() && !ck::is_floating(common) && !ck::is_complex(common))
    return k.error(
        "For integral input tensors, argument alpha must not be a floating point number.");
  return CRUCIBLE_OK;
}

// out = self + alpha * other, computed in `common` (rounded to it once), converted to out's dtype.
int32_t add_into(ck::Call& k, const ck::Tensor& out, ck::ScalarType common) {
  if (common == ck::ScalarType::Undefined)
    return k.error("add: the operands' dtypes do not promote to a common dtype");
  const ck::Number alpha = k.number(2);
  if (int32_t st = check_alpha(k, alpha, common)) return st;

  const ck::Tensor a = k.tensor(0);
  const bool b_is_tensor = k.is_tensor(1);
  const ck::Tensor b = k.tensor(1);
  const ck::Number bn = b_is_tensor ? ck::Number{} : k.number(1);

  std::vector<int64_t> shape = a.shape();
  if (b_is_tensor && !ck::broadcast_shapes(a.shape(), b.shape(), &shape)) {
    // ATen's message names the first mismatching dim from the right.
    const auto sa = a.shape(), sb = b.shape();
    for (size_t i = 0; i < sa.size() && i < sb.size(); ++i) {
      int64_t x = sa[sa.size() - 1 - i], y = sb[sb.size() - 1 - i];
      if (x != y && x != 1 && y != 1)
        return k.error("The size of tensor a (" + std::to_string(x) +
                       ") must match the size of tensor b (" + std::to_string(y) +
                       ") at non-singleton dimension " +
                       std::to_string(static_cast<int64_t>(shape.size() - 1 - i)));
    }
    return k.error("shapes do not broadcast");
  }
  if (shape != out.shape()) return k.unsupported("add: an out= tensor of another shape (resize)");

  const std::vector<int64_t> sa = ck::broadcast_strides(a, shape);
  const std::vector<int64_t> sb =
      b_is_tensor ? ck::broadcast_strides(b, shape) : std::vector<int64_t>(shape.size(), 0);
  const std::vector<int64_t> so = out.strides();
  unsigned char tmp[16];  // one element of `common`
  if (ck::is_complex(common)) {
    const double al = alpha.f;
    ck::for_each(shape, {sa, sb, so}, [&](const int64_t* off) {
      const std::complex<double> x = a.load_complex(off[0]);
      const std::complex<double> y = b_is_tensor ? b.load_complex(off[1]) : bn.f;
      ck::store_complex(tmp, common, {x.real() + al * y.real(), x.imag() + al * y.imag()});
      out.store_complex(off[2], ck::load_complex(tmp, common));
    });
  } else if (ck::is_floating(common)) {
    const double al = alpha.f;
    ck::for_each(shape, {sa, sb, so}, [&](const int64_t* off) {
      const double y = b_is_tensor ? b.load(off[1]) : bn.f;
      out.store(off[2], ck::round_to(common, a.load(off[0]) + al * y));
    });
  } else if (common == ck::ScalarType::Bool) {
    // In bool, + is "or": self || (alpha && other).
    const bool al = alpha.i != 0;
    ck::for_each(shape, {sa, sb, so}, [&](const int64_t* off) {
      const bool y = b_is_tensor ? b.load_int(off[1]) != 0 : bn.i != 0;
      out.store_int(off[2], a.load_int(off[0]) != 0 || (al && y));
    });
  } else {
    // Integers wrap at the width of `common`: compute in uint64, then wrap.
    const uint64_t al = static_cast<uint64_t>(alpha.i);
    ck::for_each(shape, {sa, sb, so}, [&](const int64_t* off) {
      const uint64_t x = static_cast<uint64_t>(a.load_int(off[0]));
      const uint64_t y = static_cast<uint64_t>(b_is_tensor ? b.load_int(off[1]) : bn.i);
      ck::store_int(tmp, common, static_cast<int64_t>(x + al * y));
      out.store_int(off[2], ck::load_int(tmp, common));
    });
  }
  return CRUCIBLE_OK;
}

int32_t add_tensor(ck::Call& k) {
  const ck::Tensor out = k.output(0);
  return add_into(k, out, ck::result_type(k, {0, 1}));
}

}  // namespace

CRUCIBLE_KERNEL("aten.add.Tensor", add_tensor)
