// aten._softmax.default(Tensor self, int dim, bool half_to_float) -> Tensor
// exp(x - max) / sum(exp(x - max)) along `dim`, computed in double and rounded once. The checks
// come in ATen's order: half_to_float, the dim, empty inputs, then the dtype. half_to_float
// follows CUDA (the real-model calls that use it were recorded there): an f16 input gives an
// f32 result (the output crucible hands over), any other dtype raises.
#include <crucible/kernel.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace ck = crucible::kernel;

static int32_t softmax(ck::Call& k) {
  const ck::Tensor x = k.tensor(0);
  const ck::Tensor out = k.output(0);
  if (k.bool_arg(2) && x.dtype() != ck::ScalarType::Float16)
    return k.error("conversion is supported for Half type only");
  int64_t dim = 0;
  if (!ck::wrap_dim(k.int_arg(1), x.dim(), &dim))
    return k.error("Dimension out of range (got " + std::to_string(k.int_arg(1)) + ")");
  if (x.numel() == 0) return CRUCIBLE_OK;
  if (!ck::is_floating(x.dtype()))
    return k.error(std::string("\"softmax_kernel_impl\" not implemented for '") +
                   ck::type_name(x.dtype()) + "'");

  // A 0-d tensor is one row of one element.
  std::vector<int64_t> shape = x.shape(), sx = x.strides(), so = out.strides();
  if (shape.empty()) {
    shape = {1};
    sx = {0};
    so = {0};
  }
  const int64_t n = shape[dim], step_x = sx[dim], step_o = so[dim];
  std::vector<int64_t> outer = shape;
  outer[dim] = 1;  // iterate over every row, then along dim inside it
  std::vector<double> e(static_cast<size_t>(n));
  ck::for_each(outer, {sx, so}, [&](const int64_t* off) {
    double m = -INFINITY;
    for (int64_t j = 0; j < n; ++j) {
      const double v = x.load(off[0] + j * step_x);
      if (v > m || std::isnan(v)) m = std::isnan(m) ? m : v;
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += e[j] = std::exp(x.load(off[0] + j * step_x) - m);
    for (int64_t j = 0; j < n; ++j) out.store(off[1] + j * step_o, e[j] / sum);
  });
  return CRUCIBLE_OK;
}

CRUCIBLE_KERNEL("aten._softmax.default", softmax)
