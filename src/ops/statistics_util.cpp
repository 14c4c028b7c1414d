// Helpers shared by the statistics, scan, sort and loss families (see statistics_internal.h).
#include <algorithm>
#include <cmath>

#include "crucible/core/error.h"
#include "ops/statistics_internal.h"

namespace crucible::stats {

double round_to(double v, DType t) {
  alignas(8) unsigned char buf[8] = {};
  store_from_double(buf, t, v);
  return load_as_double(buf, t);
}

double element(const Tensor& t, int64_t i) {
  return is_floating(t.dtype()) ? t.get(i) : static_cast<double>(t.get_int(i));
}

std::vector<int64_t> dims_of(const Value& v) {
  if (v.is_none()) return {};
  if (v.kind() == ValueKind::Int) return {v.to_int()};
  return v.to_int_list();
}

ReducePlan plan_reduction(const Tensor& self, const std::vector<int64_t>& dims, bool keepdim,
                          bool allow_empty_dims) {
  const int64_t nd = self.dim();
  ReducePlan p;
  p.reduced.assign(static_cast<size_t>(nd), dims.empty() && !allow_empty_dims);
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(nd, 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, nd);
    if (seen[w])
      op_error("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    seen[w] = true;
    if (nd > 0) p.reduced[w] = true;
  }
  for (int64_t d = 0; d < nd; ++d) {
    if (p.reduced[d]) {
      p.count *= self.size(d);
      if (keepdim) p.out_shape.push_back(1);
    } else {
      p.out_shape.push_back(self.size(d));
    }
  }
  return p;
}

Rows rows_of(const Shape& shape, int64_t dim) {
  Rows r;
  if (shape.empty()) return r;
  r.len = shape[dim];
  for (int64_t d = 0; d < dim; ++d) r.outer *= shape[d];
  for (size_t d = static_cast<size_t>(dim) + 1; d < shape.size(); ++d) r.inner *= shape[d];
  return r;
}

Rows flat_rows(int64_t numel) {
  Rows r;
  r.len = numel;
  return r;
}

double reduction_length(const Tensor& self, const std::vector<int64_t>& dims) {
  if (dims.empty()) return static_cast<double>(std::max<int64_t>(self.numel(), 1));
  double n = 1;
  for (int64_t d : dims) {
    if (self.dim() == 0) continue;
    if (d < -self.dim() || d >= self.dim()) return 1;
    n *= static_cast<double>(self.size(d));
  }
  return std::max(n, 1.0);
}

namespace {

Cost read_write_cost_of(const Tensor& self, const Values& outputs, double flops_per) {
  Cost c;
  c.flops = flops_per * static_cast<double>(self.numel());
  c.bytes = static_cast<double>(self.numel()) * static_cast<double>(self.itemsize());
  for (const Value& v : outputs) {
    if (v.is_tensor() && v.tensor().defined())
      c.bytes +=
          static_cast<double>(v.tensor().numel()) * static_cast<double>(v.tensor().itemsize());
  }
  return c;
}

}  // namespace

Cost read_write_cost(const Values& args, const Values& outputs, double flops_per) {
  // The first argument, whatever its name (callers whose ops name it differently).
  if (args.empty() || !args[0].is_tensor()) return Cost{};
  return read_write_cost_of(args[0].tensor(), outputs, flops_per);
}

Cost read_write_cost(const Args& a, std::string_view input, const Values& outputs,
                     double flops_per) {
  if (a.size() == 0 || !a.value(input).is_tensor()) return Cost{};
  return read_write_cost_of(a.tensor(input), outputs, flops_per);
}

ComparePolicy sqrt_length_compare(Schema schema, const char* dims) {
  ComparePolicy c;
  c.tol_scale = [schema = std::move(schema), dims](const Values& values) {
    const Args a(values, schema);
    if (a.size() == 0 || !a.value("self").is_tensor()) return 1.0;
    return std::sqrt(
        reduction_length(a.tensor("self"), dims ? dims_of(a.value(dims)) : std::vector<int64_t>{}));
  };
  return c;
}

}  // namespace crucible::stats
