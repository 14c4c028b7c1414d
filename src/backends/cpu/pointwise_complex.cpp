// The cpu backend's complex arithmetic: add (Tensor, Scalar, in place), sub, mul (Tensor,
// Scalar) and div whose result dtype is complex (c64, c128). Each element is computed on
// complex doubles with c10::complex's formulas (the textbook product; numpy's scaled division,
// which keeps |c| + |d| from overflowing) and each part is rounded once to the result dtype,
// then converted to the destination's dtype. A real operand reads as (x, 0) and a complex 0-d
// operand of a wider dtype at its own precision. Argument checks (alpha, promotion, shapes,
// in-place castability) are the catalog's meta function.
#include <algorithm>
#include <complex>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "backends/cpu/parallel.h"
#include "backends/cpu/pointwise_complex.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"
#include "crucible/ops/rules/arithmetic.h"

namespace crucible::cpu {
namespace {

using C = std::complex<double>;

// One operand of the loop: its first element, dtype and element strides broadcast to the
// result's shape.
struct CplxOperand {
  const char* base = nullptr;
  DType dtype = DType::Complex64;
  int64_t itemsize = 0;
  std::vector<int64_t> strides;
};

CplxOperand operand_of(const Tensor& t, const Shape& shape) {
  CplxOperand o;
  o.base = static_cast<const char*>(t.data_ptr());
  o.dtype = t.dtype();
  o.itemsize = static_cast<int64_t>(t.itemsize());
  o.strides.assign(shape.size(), 0);
  const int64_t lead = static_cast<int64_t>(shape.size()) - t.dim();
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1) o.strides[static_cast<size_t>(lead + d)] = t.stride(d);
  return o;
}

C load(const CplxOperand& o, int64_t off) {
  const char* p = o.base + off * o.itemsize;
  if (o.dtype == DType::Complex64) {
    float v[2];
    std::memcpy(v, p, sizeof v);
    return {v[0], v[1]};
  }
  if (o.dtype == DType::Complex128) {
    double v[2];
    std::memcpy(v, p, sizeof v);
    return {v[0], v[1]};
  }
  return load_as_complex(p, o.dtype);
}

// `v` rounded to the result dtype `rt` (each part once), stored in the destination's dtype.
void store(char* p, DType dst, DType rt, C v) {
  if (rt == DType::Complex64) {
    const float f[2] = {static_cast<float>(v.real()), static_cast<float>(v.imag())};
    if (dst == DType::Complex64) {
      std::memcpy(p, f, sizeof f);
      return;
    }
    v = {f[0], f[1]};
  }
  if (dst == DType::Complex128) {
    const double d[2] = {v.real(), v.imag()};
    std::memcpy(p, d, sizeof d);
    return;
  }
  store_from_complex(p, dst, v);
}

// out[i] = f(x[i], y[i]) over the broadcast shape of out, rows of the innermost dim spread over
// the pool.
template <typename F>
void run_binary(const Tensor& x, const Tensor& y, const Tensor& out, DType rt, F f) {
  const Shape& shape = out.shape();
  if (out.numel() == 0) return;
  const CplxOperand a = operand_of(x, shape), b = operand_of(y, shape);
  const CplxOperand o = operand_of(out, shape);
  const auto nd = static_cast<int64_t>(shape.size());
  const int64_t inner = nd == 0 ? 1 : shape.back();
  const int64_t rows = out.numel() / inner;
  const int64_t ia = nd == 0 ? 0 : a.strides.back(), ib = nd == 0 ? 0 : b.strides.back();
  const int64_t io = nd == 0 ? 0 : o.strides.back();
  char* obase = static_cast<char*>(out.data_ptr());
  parallel_for(0, rows, std::max<int64_t>(1, 16384 / inner), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t oa = 0, ob = 0, oo = 0, rest = r;
      for (int64_t d = nd - 2; d >= 0; --d) {
        const int64_t n = shape[static_cast<size_t>(d)];
        const int64_t i = rest % n;
        rest /= n;
        oa += i * a.strides[static_cast<size_t>(d)];
        ob += i * b.strides[static_cast<size_t>(d)];
        oo += i * o.strides[static_cast<size_t>(d)];
      }
      for (int64_t j = 0; j < inner; ++j)
        store(obase + (oo + j * io) * o.itemsize, o.dtype, rt,
              f(load(a, oa + j * ia), load(b, ob + j * ib)));
    }
  });
}

// The overloads whose catalog entry models complex results (the others raise unsupported in
// their meta function, as in the reference).
const std::set<std::string>& complex_ops() {
  static const std::set<std::string> names = {
      "aten.add.Tensor", "aten.add.Scalar", "aten.add_.Tensor", "aten.sub.Tensor",
      "aten.mul.Tensor", "aten.mul.Scalar", "aten.div.Tensor"};
  return names;
}

}  // namespace

bool pw_has_complex(const std::string& op_name) { return complex_ops().contains(op_name); }

void pw_execute_complex_into(const OpDef& op, const Args& a, const Tensor& out, const PwSpec& s,
                             DType rt) {
  if (!pw_has_complex(op.name)) arith::require_modelled(rt, op.name);  // raises
  std::vector<Tensor> ins;
  for (int i : s.operands) ins.push_back(arith::operand(a.values().at(static_cast<size_t>(i))));
  // An operand that shares memory with the destination in another layout is read first.
  for (Tensor& in : ins)
    if (in.overlaps(out) && !(in.data_ptr() == out.data_ptr() && in.strides() == out.strides() &&
                              in.shape() == out.shape()))
      in = in.clone();
  const Tensor &x = ins.at(0), &y = ins.at(1);
  if (s.op == PwOp::Add) {
    const bool negate = op.name.starts_with("aten.sub");
    const double al0 =
        a.has("alpha") && a.value("alpha").is_scalar() ? a.value("alpha").to_double() : 1.0;
    const double al = negate ? -al0 : al0;
    run_binary(x, y, out, rt, [al](C p, C q) {
      return C{p.real() + al * q.real(), p.imag() + al * q.imag()};
    });
  } else if (s.op == PwOp::Mul) {
    run_binary(x, y, out, rt, arith::complex_mul);
  } else {
    run_binary(x, y, out, rt, arith::complex_div);
  }
}

}  // namespace crucible::cpu
