// Helpers shared by the arithmetic, comparison, where and loss families (see
// arithmetic_internal.h).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "crucible/core/dispatch.h"
#include "crucible/core/error.h"
#include "ops/arithmetic_internal.h"
#include "ops/util.h"

namespace crucible::arith {

double real_bytes(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 0) return 0;
    if (t.stride(d) != 0) n *= t.size(d);
  }
  return static_cast<double>(n) * static_cast<double>(t.itemsize());
}

Tensor operand(const Value& v) {
  if (v.is_tensor()) return v.tensor();
  if (!v.is_scalar())
    op_error(std::string("expected a Tensor or a number, got ") + value_kind_name(v.kind()));
  const Scalar s = v.to_scalar();
  if (s.is_bool()) return Tensor::scalar(s.to_bool() ? 1.0 : 0.0, DType::Bool);
  if (s.is_integral()) {
    Tensor t = Tensor::empty({}, DType::Int64);
    t.set_int(0, s.to_int());
    return t;
  }
  return Tensor::scalar(s.to_double(), DType::Float64);
}

DType operand_dtype(const Value& v) {
  if (v.is_tensor()) return v.tensor().dtype();
  const Scalar s = v.to_scalar();
  return s.is_bool() ? DType::Bool : s.is_integral() ? DType::Int64 : DType::Float64;
}

DType promoted(std::initializer_list<Value> operands) {
  const std::vector<Value> vs(operands);
  return opsutil::result_type(vs);
}

void require_modelled(DType t, const std::string& op) {
  if (!is_floating(t) && !is_integral(t, true))
    unsupported(op + ": the reference does not model dtype " + std::string(dtype_code(t)));
  if (t == DType::Float8E4M3FN || t == DType::Float8E5M2)
    unsupported(op + ": the reference does not model dtype " + std::string(dtype_code(t)));
}

int64_t wrap_to(int64_t v, DType t) {
  alignas(8) unsigned char buf[16] = {};
  store_from_int(buf, t, v);
  return load_as_int(buf, t);
}

double round_to(double v, DType t) {
  if (t == DType::Float64) return v;
  alignas(8) unsigned char buf[16] = {};
  store_from_double(buf, t, v);
  return load_as_double(buf, t);
}

namespace {

const char* c_type_name(DType t) {
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
      return "bool";
  }
}

void int_range(DType t, double& lo, double& hi) {
  switch (t) {
    case DType::UInt8:
      lo = 0, hi = 255;
      return;
    case DType::Int8:
      lo = -128, hi = 127;
      return;
    case DType::Int16:
      lo = -32768, hi = 32767;
      return;
    case DType::Int32:
      lo = -2147483648.0, hi = 2147483647.0;
      return;
    default:
      lo = -9223372036854775808.0, hi = 9223372036854775807.0;
      return;
  }
}

}  // namespace

void check_scalar_fits(const Scalar& s, DType t) {
  if (t == DType::Bool || s.is_bool()) return;
  const std::string msg =
      std::string("value cannot be converted to type ") + c_type_name(t) + " without overflow";
  if (is_floating(t)) {
    const double max = float_info(t).max;
    const double v = s.to_double();
    if (s.is_floating() && (std::isinf(v) || std::isnan(v))) return;
    CRUCIBLE_CHECK(v >= -max && v <= max, msg);
    return;
  }
  double lo = 0, hi = 0;
  int_range(t, lo, hi);
  if (s.is_floating()) {
    const double v = s.to_double();
    CRUCIBLE_CHECK(!std::isnan(v) && v >= lo && v <= hi, msg);
    return;
  }
  const int64_t v = s.to_int();
  if (t == DType::UInt8) {
    // c10 lets negative integers wrap into unsigned types: -255 .. 255 fit uint8.
    CRUCIBLE_CHECK(v <= 255 && v >= -255, msg);
    return;
  }
  if (t == DType::Int64) return;
  CRUCIBLE_CHECK(static_cast<double>(v) >= lo && static_cast<double>(v) <= hi, msg);
}

double scalar_as_double(const Scalar& s, DType t) { return round_to(s.to_double(), t); }

int64_t scalar_as_int(const Scalar& s, DType t) {
  if (t == DType::Bool) return s.to_double() != 0 ? 1 : 0;
  if (s.is_floating()) return wrap_to(static_cast<int64_t>(std::trunc(s.to_double())), t);
  return wrap_to(s.to_int(), t);
}

namespace {

void check_shape(std::span<const Tensor> ins, const Tensor& out) {
  Shape s = out.shape();
  for (const Tensor& t : ins) s = broadcast_shapes(s, t.shape());
  if (s != out.shape())
    internal_error("elementwise loop: inputs broadcast to " + shape_str(s) + ", not to " +
                   shape_str(out.shape()));
}

}  // namespace

void map_float(std::span<const Tensor> ins, const Tensor& out,
               const std::function<double(const double*)>& f, std::optional<DType> round_inputs) {
  check_shape(ins, out);
  opsutil::map_values<double>(
      ins, out,
      [&](double* v, int64_t n) {
        if (round_inputs)
          for (int64_t i = 0; i < n; ++i) v[i] = round_to(v[i], *round_inputs);
      },
      f);
}

void map_int(std::span<const Tensor> ins, DType compute, const Tensor& out,
             const std::function<int64_t(const int64_t*)>& f) {
  check_shape(ins, out);
  opsutil::map_values<int64_t>(
      ins, out,
      [&](int64_t* v, int64_t n) {
        if (compute != DType::Int64)  // (wrapping to int64 changes nothing)
          for (int64_t i = 0; i < n; ++i) v[i] = wrap_to(v[i], compute);
      },
      f);
}

Shape broadcast_all(std::span<const Tensor> ts) {
  Shape s;
  for (const Tensor& t : ts) s = broadcast_shapes(s, t.shape());
  return s;
}

Scalar item_of(const Tensor& t) {
  if (t.dtype() == DType::Bool) return Scalar(t.get_int(0) != 0);
  if (is_floating(t.dtype())) return Scalar(t.get(0));
  return Scalar(t.get_int(0));
}

void check_inplace(const Tensor& self, const Shape& result_shape, DType result_dtype) {
  for (int64_t d = 0; d < self.dim(); ++d)
    CRUCIBLE_CHECK(self.stride(d) != 0 || self.size(d) <= 1,
                   "unsupported operation: more than one element of the written-to tensor refers "
                   "to a single memory location. Please clone() the tensor before performing the "
                   "operation.");
  CRUCIBLE_CHECK(result_shape == self.shape(), "output with shape " + shape_str(self.shape()) +
                                                   " doesn't match the broadcast shape " +
                                                   shape_str(result_shape));
  CRUCIBLE_CHECK(can_cast(result_dtype, self.dtype()),
                 "result type " + scalar_type_name(result_dtype) +
                     " can't be cast to the desired output type " + scalar_type_name(self.dtype()));
}

void check_out(const Tensor& out, const Shape& result_shape, DType result_dtype) {
  CRUCIBLE_CHECK(can_cast(result_dtype, out.dtype()),
                 "result type " + scalar_type_name(result_dtype) +
                     " can't be cast to the desired output type " + scalar_type_name(out.dtype()));
  if (out.shape() != result_shape)
    unsupported("out= of shape " + shape_str(out.shape()) + " for a result of shape " +
                shape_str(result_shape) + ": ATen resizes out; the reference does not model it");
  for (int64_t d = 0; d < out.dim(); ++d)
    if (out.stride(d) == 0 && out.size(d) > 1)
      unsupported("out= with internally overlapping elements is not modelled");
}

RefFn inplace_of(RefFn ref) {
  return [ref = std::move(ref)](const Args& a) -> Values {
    const Tensor& self = a.tensor("self");
    // A self that would broadcast or overlap itself is rejected before computing.
    for (int64_t d = 0; d < self.dim(); ++d)
      CRUCIBLE_CHECK(self.stride(d) != 0 || self.size(d) <= 1,
                     "unsupported operation: more than one element of the written-to tensor "
                     "refers to a single memory location. Please clone() the tensor before "
                     "performing the operation.");
    const Tensor result = ref(a).at(0).tensor();  // computed first: other may alias self
    check_inplace(self, result.shape(), result.dtype());
    self.copy_from(result);
    return {Value(self)};
  };
}

RefFn out_of(RefFn ref) {
  return [ref = std::move(ref)](const Args& a) -> Values {
    const Tensor& out = a.tensor("out");
    const Tensor result = ref(a).at(0).tensor();
    check_out(out, result.shape(), result.dtype());
    out.copy_from(result);  // computed in the common dtype, then cast to out's dtype
    return {Value(out)};
  };
}

CostFn elementwise_cost(double flops, bool reads_output) {
  return [flops, reads_output](const Values& args, const Values& outputs) {
    Cost c;
    const Tensor& out = outputs.at(0).tensor();
    c.flops = flops * static_cast<double>(out.numel());
    c.bytes = real_bytes(out);
    for (const Value& a : args) {
      if (!a.is_tensor() || !a.tensor().defined()) continue;
      if (a.tensor().shares_storage(out) && !reads_output) continue;
      c.bytes += real_bytes(a.tensor());
    }
    return c;
  };
}

std::vector<DType> perf_dtypes() { return {DType::Float32, DType::Float16, DType::BFloat16}; }

}  // namespace crucible::arith
