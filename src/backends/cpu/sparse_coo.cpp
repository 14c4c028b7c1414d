// The cpu backend's sparse COO constructor, _sparse_coo_tensor_with_dims_and_tensors. crucible
// has no sparse layout: the result is the dense equivalent the catalog defines (what ATen's
// `.to_dense()` of the sparse tensor holds), out[indices[:, k]] += values[k] over the nonzeros,
// duplicates summed. Floating values accumulate in f64 and are rounded once (f16 and bf16 from
// the f64 sum directly), integers in wrapping 64-bit sums stored in the output width, bool as a
// logical or. Every argument check is the catalog's meta function; an index outside `size`
// (which has no dense equivalent) raises the reference's message.
//
// The nonzeros are summed in index order into an accumulator of the dense shape; when a
// nonzero carries a dense block of 64+ elements, the block's columns are spread over the pool
// (each thread sums every nonzero into its own columns, so the order per element is the same
// on any thread count).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/shape_copy.h"
#include "crucible/core/error.h"
#include "crucible/ops/args.h"

namespace crucible::cpu {
namespace {

// Accumulation per element type: f64 for floating values, wrapping u64 for integers, u64 0/1
// (or) for bool.
template <typename T>
struct SparseAcc {
  using type = uint64_t;
  static uint64_t in(T v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }
  static void add(uint64_t& a, uint64_t v) { a += v; }
  static T out(uint64_t a) { return static_cast<T>(a); }
};
struct Bool8 {
  uint8_t v;
};
template <>
struct SparseAcc<Bool8> {
  using type = uint64_t;
  static uint64_t in(Bool8 b) { return b.v != 0 ? 1 : 0; }
  static void add(uint64_t& a, uint64_t v) { a |= v; }
  static Bool8 out(uint64_t a) { return Bool8{static_cast<uint8_t>(a != 0 ? 1 : 0)}; }
};
template <typename T>
struct SparseAccF {
  using type = double;
  static double in(T v) { return static_cast<double>(static_cast<float>(v)); }
  static void add(double& a, double v) { a += v; }
  static T out(double a) { return T(a); }
};
template <>
struct SparseAcc<Half> : SparseAccF<Half> {};
template <>
struct SparseAcc<BFloat16> : SparseAccF<BFloat16> {};
template <>
struct SparseAcc<float> {
  using type = double;
  static double in(float v) { return v; }
  static void add(double& a, double v) { a += v; }
  static float out(double a) { return static_cast<float>(a); }
};
template <>
struct SparseAcc<double> {
  using type = double;
  static double in(double v) { return v; }
  static void add(double& a, double v) { a += v; }
  static double out(double a) { return a; }
};

// The dense position (row of `dense` elements) of each nonzero; raises for an index outside
// `size`, as the reference does.
std::vector<int64_t> positions(const Tensor& indices, const Shape& size, int64_t sparse_dim) {
  const int64_t nnz = indices.size(1);
  std::vector<int64_t> pos(static_cast<size_t>(nnz), 0);
  const int64_t s0 = indices.stride(0), s1 = indices.stride(1);
  const auto* ip = indices.data<int64_t>();
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t p = 0;
    for (int64_t d = 0; d < sparse_dim; ++d) {
      const int64_t i = ip[d * s0 + k * s1];
      const int64_t n = size[static_cast<size_t>(d)];
      if (i < 0 || i >= n) {
        Shape idx;
        for (int64_t e = 0; e < sparse_dim; ++e) idx.push_back(ip[e * s0 + k * s1]);
        op_error(
            fmt::format("index {} of nonzero {} is out of bounds for size {}: the sparse "
                        "tensor has no dense equivalent",
                        shape_str(idx), k, shape_str(size)));
      }
      p = p * n + i;
    }
    pos[static_cast<size_t>(k)] = p;
  }
  return pos;
}

// out (contiguous, `rows` x `dense`) = the sums of the contiguous values' rows at `pos`.
template <typename T>
void accumulate(const T* values, const std::vector<int64_t>& pos, int64_t rows, int64_t dense,
                T* out) {
  using A = SparseAcc<T>;
  using Acc = typename A::type;
  const int64_t nnz = static_cast<int64_t>(pos.size());
  auto columns = [&](int64_t j0, int64_t j1) {
    const int64_t w = j1 - j0;
    std::vector<Acc> acc(static_cast<size_t>(rows * w), Acc(0));
    for (int64_t k = 0; k < nnz; ++k) {
      Acc* a = acc.data() + pos[static_cast<size_t>(k)] * w;
      const T* v = values + k * dense + j0;
      for (int64_t j = 0; j < w; ++j) A::add(a[j], A::in(v[j]));
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < w; ++j) out[r * dense + j0 + j] = A::out(acc[r * w + j]);
  };
  const int64_t work = nnz * dense + rows * dense;
  if (dense >= 64 && work >= (int64_t{1} << 16) && num_threads() > 1) {
    // Column blocks of at least 16 elements: each thread owns whole blocks.
    const int64_t block = std::max<int64_t>(16, dense / (4 * num_threads()));
    const int64_t nblocks = (dense + block - 1) / block;
    parallel_for(0, nblocks, 1,
                 [&](int64_t b0, int64_t b1) { columns(b0 * block, std::min(dense, b1 * block)); });
  } else {
    columns(0, dense);
  }
}

// Into the meta function's output (which checked the arguments), through a contiguous buffer
// when that output is not contiguous.
void sparse_coo(const OpDef&, const Args& a, const Values& outputs) {
  const Tensor& meta = outputs[0].tensor();
  if (meta.numel() == 0) return;
  const int64_t sparse_dim = a.integer("sparse_dim");
  const Shape size = a.ints("size");
  const Tensor indices = a.tensor("indices");
  const Tensor values = a.tensor("values").contiguous();
  const std::vector<int64_t> pos = positions(indices, size, sparse_dim);
  int64_t rows = 1, dense = 1;
  for (size_t d = 0; d < size.size(); ++d)
    (static_cast<int64_t>(d) < sparse_dim ? rows : dense) *= size[d];
  const Tensor out = output_buffer(outputs[0], meta.shape(), meta.dtype());
  auto run = [&]<typename T>(T*) {
    accumulate<T>(static_cast<const T*>(values.data_ptr()), pos, rows, dense,
                  static_cast<T*>(out.data_ptr()));
  };
  switch (out.dtype()) {
    case DType::Bool:
      run(static_cast<Bool8*>(nullptr));
      break;
    case DType::UInt8:
      run(static_cast<uint8_t*>(nullptr));
      break;
    case DType::Int8:
      run(static_cast<int8_t*>(nullptr));
      break;
    case DType::Int16:
      run(static_cast<int16_t*>(nullptr));
      break;
    case DType::Int32:
      run(static_cast<int32_t*>(nullptr));
      break;
    case DType::Int64:
      run(static_cast<int64_t*>(nullptr));
      break;
    case DType::Float16:
      run(static_cast<Half*>(nullptr));
      break;
    case DType::BFloat16:
      run(static_cast<BFloat16*>(nullptr));
      break;
    case DType::Float32:
      run(static_cast<float*>(nullptr));
      break;
    case DType::Float64:
      run(static_cast<double*>(nullptr));
      break;
    default:
      unsupported("backend 'cpu' builds sparse tensors of real dtypes only, not " +
                  std::string(dtype_code(out.dtype())));
  }
  store_output(out, outputs[0]);
}

}  // namespace

void register_sparse_kernels(KernelTable& t) {
  t.add("aten._sparse_coo_tensor_with_dims_and_tensors.default",
        {.dtypes = {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32,
                    DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64},
         .run_into = &sparse_coo});
}

}  // namespace crucible::cpu
