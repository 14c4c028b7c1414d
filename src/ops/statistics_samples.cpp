// Sample builders shared by the statistics family files (see statistics_samples.h).
#include "ops/statistics_samples.h"

#include <algorithm>

#include "ops/statistics_internal.h"

namespace crucible::stats {

using namespace samples;

namespace {

std::vector<Literal> with_self(Literal self, std::vector<Literal> rest) {
  rest.insert(rest.begin(), std::move(self));
  return rest;
}

bool has(const std::vector<DType>& ts, DType t) {
  return std::find(ts.begin(), ts.end(), t) != ts.end();
}

}  // namespace

std::vector<Sample> dim_reduction_samples(const std::vector<DType>& dtypes, const DimArgsFn& args) {
  std::vector<Sample> out;
  for (DType t : dtypes) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("rows" + d, with_self(T({5, 7}, t), args(1, false))));
    out.push_back(make("3-d middle dim, keepdim" + d, with_self(T({4, 5, 6}, t), args(1, true))));
  }
  std::vector<DType> layout;
  for (DType t :
       {DType::Float32, DType::BFloat16, DType::Float16, DType::Int64, DType::Int32, DType::Bool}) {
    if (has(dtypes, t) && layout.size() < 3) layout.push_back(t);
  }
  for (DType t : layout) {
    const std::string d = " " + dtype_code_str(t);
    out.push_back(make("negative dim" + d, with_self(T({4, 5, 6}, t), args(-1, false))));
    out.push_back(make("columns" + d, with_self(T({6, 9}, t), args(0, false))));
    out.push_back(make("transposed" + d, with_self(T_transposed(9, 7, t), args(0, false))));
    out.push_back(make("sliced with a step" + d, with_self(T({3, 5}, t, {10, 2}), args(1, false))));
    out.push_back(make("expanded (stride 0)" + d, with_self(T({4, 6}, t, {0, 1}), args(0, true))));
    out.push_back(make("expanded reduced dim: all ties" + d,
                       with_self(T({4, 6}, t, {1, 0}), args(1, false))));
  }
  const DType main =
      dtypes.front() == DType::Bool && dtypes.size() > 1 ? dtypes[1] : dtypes.front();
  const DType f = has(dtypes, DType::Float32) ? DType::Float32 : main;
  out.push_back(make("1-d long", with_self(T({517}, f), args(0, false))));
  out.push_back(make("0-d, dim 0", with_self(T({}, f), args(0, false))));
  out.push_back(make("0-d, dim -1, keepdim", with_self(T({}, main), args(-1, true))));
  out.push_back(make("empty, non-empty reduced dim", with_self(T({0, 4}, f), args(1, false))));
  out.push_back(make("empty kept dim, keepdim", with_self(T({3, 0}, f), args(0, true))));
  for (DType t : dtypes) {
    if (!is_floating(t)) continue;
    out.push_back(make("special values " + dtype_code_str(t),
                       with_self(T_fill({6, 8}, t, "special"), args(1, false))));
  }
  for (DType t : {DType::Int64, DType::UInt8}) {
    if (has(dtypes, t))
      out.push_back(make("special values " + dtype_code_str(t),
                         with_self(T_fill({6, 8}, t, "special"), args(0, false))));
  }
  out.push_back(make("error: dim out of range", with_self(T({3, 4}, f), args(2, false))));
  out.push_back(make("error: negative dim out of range", with_self(T({3, 4}, f), args(-3, false))));
  out.push_back(make("error: 0-d dim out of range", with_self(T({}, f), args(1, false))));
  return out;
}

std::vector<Sample> full_reduction_samples(const std::vector<DType>& dtypes, bool with_empty,
                                           const std::vector<Literal>& extra) {
  std::vector<Sample> out;
  auto call = [&](Literal self) { return with_self(std::move(self), extra); };
  for (DType t : dtypes) {
    out.push_back(make("ordinary " + dtype_code_str(t), call(T({7, 13}, t))));
    out.push_back(make("0-d " + dtype_code_str(t), call(T({}, t))));
  }
  const DType f = has(dtypes, DType::Float32) ? DType::Float32 : dtypes.back();
  out.push_back(make("1-d long", call(T({1031}, f))));
  out.push_back(make("3-d", call(T({3, 4, 5}, f))));
  out.push_back(make("transposed", call(T_transposed(9, 7, f))));
  out.push_back(make("expanded (stride 0)", call(T({5, 8}, f, {0, 1}))));
  out.push_back(make("sliced with a step", call(T({6, 5}, dtypes.front(), {10, 2}))));
  if (with_empty) {
    out.push_back(make("empty", call(T({0, 3}, f))));
    out.push_back(
        make("empty 1-d " + dtype_code_str(dtypes.front()), call(T({0}, dtypes.front()))));
  }
  for (DType t : dtypes) {
    if (is_floating(t))
      out.push_back(
          make("special values " + dtype_code_str(t), call(T_fill({6, 8}, t, "special"))));
  }
  for (DType t : {DType::Int64, DType::Int8}) {
    if (has(dtypes, t))
      out.push_back(
          make("special values " + dtype_code_str(t), call(T_fill({6, 8}, t, "special"))));
  }
  return out;
}

std::vector<Sample> reduction_perf_samples(const std::vector<DType>& dtypes,
                                           const DimArgsFn& args) {
  std::vector<Sample> out;
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
    if (!has(dtypes, t)) continue;
    out.push_back(make("rows of [4096, 4096] " + dtype_code_str(t),
                       with_self(T({4096, 4096}, t), args(-1, false))));
    out.push_back(make("columns of [4096, 4096] " + dtype_code_str(t),
                       with_self(T({4096, 4096}, t), args(0, false))));
  }
  if (out.empty()) {
    const DType t = dtypes.back();
    out.push_back(make("rows of [4096, 4096] " + dtype_code_str(t),
                       with_self(T({4096, 4096}, t), args(-1, false))));
  }
  return out;
}

}  // namespace crucible::stats
