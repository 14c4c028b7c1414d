// The elementwise engine (see pointwise_engine.h).
#include "backends/cpu/pointwise_engine.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/parallel.h"
#include "crucible/core/error.h"
#include "crucible/core/half.h"

namespace crucible::cpu {

Compute compute_for(DType t) {
  if (t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16) return Compute::F32;
  if (t == DType::Float64) return Compute::F64;
  if (is_integral(t, true)) return Compute::I64;
  unsupported(std::string("the cpu backend does not compute in ") + std::string(dtype_code(t)));
}

namespace {

constexpr int kMaxOperands = 4;  // output + 3 inputs
constexpr int64_t kBlock = 1024;

// Loads n elements of dtype `dt` (stride in elements) into the compute type.
template <typename C>
void load_row(const char* p, int64_t stride, DType dt, C* out, int64_t n, const PwConvert& cv) {
  const size_t is = itemsize(dt);
  auto each = [&](auto load) {
    for (int64_t i = 0; i < n; ++i) out[i] = load(p + i * stride * static_cast<int64_t>(is));
  };
  switch (dt) {
    case DType::Float32:
      each([](const char* q) { return static_cast<C>(*reinterpret_cast<const float*>(q)); });
      return;
    case DType::Float64:
      each([](const char* q) { return static_cast<C>(*reinterpret_cast<const double*>(q)); });
      return;
    case DType::Float16:
      if constexpr (std::is_same_v<C, float>) {
        if (stride == 1) return cv.f16_to_f32(reinterpret_cast<const uint16_t*>(p), out, n);
      }
      each([](const char* q) {
        return static_cast<C>(half_to_float(*reinterpret_cast<const uint16_t*>(q)));
      });
      return;
    case DType::BFloat16:
      if constexpr (std::is_same_v<C, float>) {
        if (stride == 1) return cv.bf16_to_f32(reinterpret_cast<const uint16_t*>(p), out, n);
      }
      each([](const char* q) {
        return static_cast<C>(bf16_to_float(*reinterpret_cast<const uint16_t*>(q)));
      });
      return;
    case DType::Bool:
      each([](const char* q) { return static_cast<C>(*reinterpret_cast<const uint8_t*>(q) != 0); });
      return;
    case DType::UInt8:
      each([](const char* q) { return static_cast<C>(*reinterpret_cast<const uint8_t*>(q)); });
      return;
    case DType::Int8:
      each([](const char* q) { return static_cast<C>(*reinterpret_cast<const int8_t*>(q)); });
      return;
    case DType::Int16:
      each([](const char* q) { return static_cast<C>(*reinterpret_cast<const int16_t*>(q)); });
      return;
    case DType::Int32:
      each([](const char* q) { return static_cast<C>(*reinterpret_cast<const int32_t*>(q)); });
      return;
    case DType::Int64:
      each([](const char* q) { return static_cast<C>(*reinterpret_cast<const int64_t*>(q)); });
      return;
    default:
      internal_error("cpu pointwise: cannot load " + std::string(dtype_code(dt)));
  }
}

// Stores n compute-type values into dtype `dt`, rounding once (crucible's conversion rules).
template <typename C>
void store_row(const C* in, char* p, int64_t stride, DType dt, int64_t n, const PwConvert& cv) {
  const int64_t is = static_cast<int64_t>(itemsize(dt));
  auto each = [&](auto store) {
    for (int64_t i = 0; i < n; ++i) store(p + i * stride * is, in[i]);
  };
  switch (dt) {
    case DType::Float32:
      if constexpr (std::is_same_v<C, int64_t>) {
        each([](char* q, C v) { *reinterpret_cast<float*>(q) = static_cast<float>(v); });
      } else {
        each([](char* q, C v) { *reinterpret_cast<float*>(q) = static_cast<float>(v); });
      }
      return;
    case DType::Float64:
      each([](char* q, C v) { *reinterpret_cast<double*>(q) = static_cast<double>(v); });
      return;
    case DType::Float16:
      if constexpr (std::is_same_v<C, float>) {
        if (stride == 1) return cv.f32_to_f16(in, reinterpret_cast<uint16_t*>(p), n);
        each([](char* q, C v) { *reinterpret_cast<uint16_t*>(q) = half_from_float(v); });
      } else if constexpr (std::is_same_v<C, double>) {
        each([](char* q, C v) { *reinterpret_cast<uint16_t*>(q) = half_from_double(v); });
      } else {
        each([](char* q, C v) { store_from_int(q, DType::Float16, v); });
      }
      return;
    case DType::BFloat16:
      if constexpr (std::is_same_v<C, float>) {
        if (stride == 1) return cv.f32_to_bf16(in, reinterpret_cast<uint16_t*>(p), n);
        each([](char* q, C v) { *reinterpret_cast<uint16_t*>(q) = bf16_from_float(v); });
      } else if constexpr (std::is_same_v<C, double>) {
        each([](char* q, C v) { *reinterpret_cast<uint16_t*>(q) = bf16_from_double(v); });
      } else {
        each([](char* q, C v) { store_from_int(q, DType::BFloat16, v); });
      }
      return;
    case DType::Bool:
      each([](char* q, C v) { *reinterpret_cast<uint8_t*>(q) = v != C(0) ? 1 : 0; });
      return;
    default:
      break;
  }
  if constexpr (std::is_same_v<C, int64_t>) {
    switch (dt) {
      case DType::UInt8:
        each([](char* q, C v) { *reinterpret_cast<uint8_t*>(q) = static_cast<uint8_t>(v); });
        return;
      case DType::Int8:
        each([](char* q, C v) { *reinterpret_cast<int8_t*>(q) = static_cast<int8_t>(v); });
        return;
      case DType::Int16:
        each([](char* q, C v) { *reinterpret_cast<int16_t*>(q) = static_cast<int16_t>(v); });
        return;
      case DType::Int32:
        each([](char* q, C v) { *reinterpret_cast<int32_t*>(q) = static_cast<int32_t>(v); });
        return;
      case DType::Int64:
        each([](char* q, C v) { *reinterpret_cast<int64_t*>(q) = v; });
        return;
      default:
        break;
    }
  } else {
    if (is_integral(dt, false)) {
      each([dt](char* q, C v) { store_from_double(q, dt, static_cast<double>(v)); });
      return;
    }
  }
  internal_error("cpu pointwise: cannot store " + std::string(dtype_code(dt)));
}

struct Operand {
  char* base = nullptr;  // element at logical index 0
  DType dtype = DType::Float32;
  int64_t isize = 4;
  std::vector<int64_t> strides;  // per coalesced dim, in elements
};

template <typename C>
struct Native {
  static bool is(DType t) {
    if constexpr (std::is_same_v<C, float>) return t == DType::Float32;
    if constexpr (std::is_same_v<C, double>) return t == DType::Float64;
    return t == DType::Int64;
  }
};

template <typename C>
void run_typed(PwLoop<C> loop, const PwParams& params, const PwConvert& cv,
               std::vector<Operand>& ops, const std::vector<int64_t>& sizes, int64_t numel) {
  const int nops = static_cast<int>(ops.size());
  const int nd = static_cast<int>(sizes.size());
  const int64_t inner = sizes.back();
  // Ops on fewer than 128K elements run on the calling thread: below that, waking a sleeping
  // worker (tens of microseconds in a VM) costs more than the second core gives back (measured
  // on the traces' small activations: sigmoid_backward on 47K elements took 37 us on one
  // thread and 90 us on two; the previous 32K grain).
  const int64_t grain = 131072;
  parallel_for(0, numel, grain, [&](int64_t lo, int64_t hi) {
    alignas(64) C buf[kMaxOperands][kBlock];
    // Stride-0 inputs: the element whose value the block holds, and for how many elements.
    const char* cached[kMaxOperands] = {};
    int64_t cached_n[kMaxOperands] = {};
    std::vector<int64_t> idx(nd, 0);
    int64_t rem = lo / inner;
    for (int d = nd - 2; d >= 0; --d) {
      idx[d] = rem % sizes[d];
      rem /= sizes[d];
    }
    int64_t pos = lo;
    int64_t j = lo % inner;
    while (pos < hi) {
      char* row[kMaxOperands];
      for (int k = 0; k < nops; ++k) {
        int64_t off = 0;
        for (int d = 0; d < nd - 1; ++d) off += idx[d] * ops[k].strides[d];
        row[k] = ops[k].base + off * ops[k].isize;
      }
      const int64_t row_end = std::min(hi - pos + j, inner);
      while (j < row_end) {
        const int64_t n = std::min(kBlock, row_end - j);
        const C* in[kMaxOperands - 1];
        for (int k = 1; k < nops; ++k) {
          const Operand& o = ops[k];
          const int64_t s = o.strides[nd - 1];
          const char* p = row[k] + j * s * o.isize;
          if (s == 1 && Native<C>::is(o.dtype)) {
            in[k - 1] = reinterpret_cast<const C*>(p);
          } else if (s == 0) {
            // Broadcast along the row: fill only as much of the block as this run needs (rows
            // of a [N, 192] * [N, 1] product are 192 long).
            if (cached[k] != p || cached_n[k] < n) {
              C v;
              load_row<C>(p, 0, o.dtype, &v, 1, cv);
              std::fill(buf[k], buf[k] + n, v);
              cached[k] = p;
              cached_n[k] = n;
            }
            in[k - 1] = buf[k];
          } else {
            load_row<C>(p, s, o.dtype, buf[k], n, cv);
            cached[k] = nullptr;
            cached_n[k] = 0;
            in[k - 1] = buf[k];
          }
        }
        const Operand& o = ops[0];
        const int64_t so = o.strides[nd - 1];
        char* po = row[0] + j * so * o.isize;
        if (so == 1 && Native<C>::is(o.dtype)) {
          loop(in, reinterpret_cast<C*>(po), n, params);
        } else {
          loop(in, buf[0], n, params);
          store_row<C>(buf[0], po, so, o.dtype, n, cv);
        }
        j += n;
        pos += n;
      }
      j = 0;
      for (int d = nd - 2; d >= 0; --d) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
  });
}

}  // namespace

void pw_run(PwOp op, std::span<const Tensor> inputs, const Tensor& out, Compute compute,
            const PwParams& params) {
  const int64_t numel = out.numel();
  if (numel == 0) return;
  if (static_cast<int>(inputs.size()) != pw_arity(op))
    internal_error("cpu pointwise: wrong number of inputs");
  const Shape& shape = out.shape();
  const int nd0 = static_cast<int>(shape.size());
  // Strides of every operand over out's shape (broadcast dims get stride 0).
  std::vector<Operand> ops(inputs.size() + 1);
  std::vector<std::vector<int64_t>> st(ops.size(), std::vector<int64_t>(nd0, 0));
  auto fill = [&](size_t k, const Tensor& t) {
    ops[k].base = static_cast<char*>(t.data_ptr());
    ops[k].dtype = t.dtype();
    ops[k].isize = static_cast<int64_t>(t.itemsize());
    const int off = nd0 - static_cast<int>(t.dim());
    if (off < 0) internal_error("cpu pointwise: input has more dims than the output");
    for (int d = 0; d < t.dim(); ++d) {
      if (t.size(d) == shape[d + off]) {
        st[k][d + off] = t.size(d) == 1 ? 0 : t.stride(d);
      } else if (t.size(d) != 1) {
        internal_error("cpu pointwise: input does not broadcast to the output");
      }
    }
  };
  fill(0, out);
  for (size_t i = 0; i < inputs.size(); ++i) fill(i + 1, inputs[i]);
  // Coalesce: drop size-1 dims, merge dims that are contiguous for every operand.
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> cst(ops.size());
  for (int d = 0; d < nd0; ++d) {
    if (shape[d] == 1) continue;
    bool merge = !sizes.empty();
    for (size_t k = 0; merge && k < ops.size(); ++k) merge = cst[k].back() == st[k][d] * shape[d];
    if (merge) {
      sizes.back() *= shape[d];
      for (size_t k = 0; k < ops.size(); ++k) cst[k].back() = st[k][d];
    } else {
      sizes.push_back(shape[d]);
      for (size_t k = 0; k < ops.size(); ++k) cst[k].push_back(st[k][d]);
    }
  }
  if (sizes.empty()) {
    sizes.push_back(1);
    for (size_t k = 0; k < ops.size(); ++k) cst[k].push_back(0);
  }
  for (size_t k = 0; k < ops.size(); ++k) ops[k].strides = std::move(cst[k]);

  const PwKernels& kt = pw_kernels();
  const int i = static_cast<int>(op);
  switch (compute) {
    case Compute::F32:
      run_typed<float>(kt.f32[i], params, kt.convert, ops, sizes, numel);
      break;
    case Compute::F64:
      run_typed<double>(kt.f64[i], params, kt.convert, ops, sizes, numel);
      break;
    case Compute::I64:
      if (!kt.i64[i]) internal_error("cpu pointwise: no integer loop for this op");
      run_typed<int64_t>(kt.i64[i], params, kt.convert, ops, sizes, numel);
      break;
  }
}

}  // namespace crucible::cpu
