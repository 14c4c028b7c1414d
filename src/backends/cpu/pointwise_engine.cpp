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
  if (t == DType::Bool || t == DType::UInt8) return Compute::U8;
  if (t == DType::Int8) return Compute::I8;
  if (is_integral(t, true)) return Compute::I64;
  unsupported(std::string("the cpu backend does not compute in ") + std::string(dtype_code(t)));
}

namespace {

constexpr int kMaxOperands = 4;  // output + 3 inputs
constexpr int64_t kBlock = 1024;

// A typed run: out[i] = conv(q[i * stride]), with a unit-stride loop the compiler vectorizes.
template <typename T, typename C, typename F>
inline void load_as(const char* p, int64_t stride, C* out, int64_t n, F conv) {
  const T* q = reinterpret_cast<const T*>(p);
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = conv(q[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = conv(q[i * stride]);
  }
}

// q[i * stride] = conv(in[i]), likewise.
template <typename T, typename C, typename F>
inline void store_as(const C* in, char* p, int64_t stride, int64_t n, F conv) {
  T* q = reinterpret_cast<T*>(p);
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) q[i] = conv(in[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) q[i * stride] = conv(in[i]);
  }
}

// Loads n elements of dtype `dt` (stride in elements) into the compute type.
template <typename C>
void load_row(const char* p, int64_t stride, DType dt, C* out, int64_t n, const PwConvert& cv) {
  switch (dt) {
    case DType::Float32:
      return load_as<float>(p, stride, out, n, [](float v) { return static_cast<C>(v); });
    case DType::Float64:
      return load_as<double>(p, stride, out, n, [](double v) { return static_cast<C>(v); });
    case DType::Float16:
      if constexpr (std::is_same_v<C, float>) {
        if (stride == 1) return cv.f16_to_f32(reinterpret_cast<const uint16_t*>(p), out, n);
      }
      return load_as<uint16_t>(p, stride, out, n,
                               [](uint16_t v) { return static_cast<C>(half_to_float(v)); });
    case DType::BFloat16:
      if constexpr (std::is_same_v<C, float>) {
        if (stride == 1) return cv.bf16_to_f32(reinterpret_cast<const uint16_t*>(p), out, n);
      }
      return load_as<uint16_t>(p, stride, out, n,
                               [](uint16_t v) { return static_cast<C>(bf16_to_float(v)); });
    case DType::Bool:
      return load_as<uint8_t>(p, stride, out, n, [](uint8_t v) { return static_cast<C>(v != 0); });
    case DType::UInt8:
      return load_as<uint8_t>(p, stride, out, n, [](uint8_t v) { return static_cast<C>(v); });
    case DType::Int8:
      return load_as<int8_t>(p, stride, out, n, [](int8_t v) { return static_cast<C>(v); });
    case DType::Int16:
      return load_as<int16_t>(p, stride, out, n, [](int16_t v) { return static_cast<C>(v); });
    case DType::Int32:
      return load_as<int32_t>(p, stride, out, n, [](int32_t v) { return static_cast<C>(v); });
    case DType::Int64:
      return load_as<int64_t>(p, stride, out, n, [](int64_t v) { return static_cast<C>(v); });
    default:
      internal_error("cpu pointwise: cannot load " + std::string(dtype_code(dt)));
  }
}

// Stores n compute-type values into dtype `dt`, rounding once (crucible's conversion rules).
template <typename C>
void store_row(const C* in, char* p, int64_t stride, DType dt, int64_t n, const PwConvert& cv) {
  switch (dt) {
    case DType::Float32:
      return store_as<float>(in, p, stride, n, [](C v) { return static_cast<float>(v); });
    case DType::Float64:
      return store_as<double>(in, p, stride, n, [](C v) { return static_cast<double>(v); });
    case DType::Float16:
      if constexpr (std::is_same_v<C, float>) {
        if (stride == 1) return cv.f32_to_f16(in, reinterpret_cast<uint16_t*>(p), n);
        return store_as<uint16_t>(in, p, stride, n, [](C v) { return half_from_float(v); });
      } else if constexpr (std::is_same_v<C, double>) {
        return store_as<uint16_t>(in, p, stride, n, [](C v) { return half_from_double(v); });
      } else {
        const int64_t is = 2;
        for (int64_t i = 0; i < n; ++i) store_from_int(p + i * stride * is, DType::Float16, in[i]);
        return;
      }
    case DType::BFloat16:
      if constexpr (std::is_same_v<C, float>) {
        if (stride == 1) return cv.f32_to_bf16(in, reinterpret_cast<uint16_t*>(p), n);
        return store_as<uint16_t>(in, p, stride, n, [](C v) { return bf16_from_float(v); });
      } else if constexpr (std::is_same_v<C, double>) {
        return store_as<uint16_t>(in, p, stride, n, [](C v) { return bf16_from_double(v); });
      } else {
        const int64_t is = 2;
        for (int64_t i = 0; i < n; ++i) store_from_int(p + i * stride * is, DType::BFloat16, in[i]);
        return;
      }
    case DType::Bool:
      // Contiguous runs through the unit's vector converters (this file is built for the
      // x86-64 baseline, where a 64-bit compare and narrowing stay scalar).
      if constexpr (std::is_same_v<C, float>) {
        if (stride == 1) return cv.f32_to_bool(in, reinterpret_cast<uint8_t*>(p), n);
      } else if constexpr (std::is_same_v<C, int64_t>) {
        if (stride == 1) return cv.i64_to_bool(in, reinterpret_cast<uint8_t*>(p), n);
      }
      return store_as<uint8_t>(in, p, stride, n,
                               [](C v) { return static_cast<uint8_t>(v != C(0) ? 1 : 0); });
    default:
      break;
  }
  if constexpr (std::is_integral_v<C>) {
    switch (dt) {
      case DType::UInt8:
        return store_as<uint8_t>(in, p, stride, n, [](C v) { return static_cast<uint8_t>(v); });
      case DType::Int8:
        return store_as<int8_t>(in, p, stride, n, [](C v) { return static_cast<int8_t>(v); });
      case DType::Int16:
        return store_as<int16_t>(in, p, stride, n, [](C v) { return static_cast<int16_t>(v); });
      case DType::Int32:
        return store_as<int32_t>(in, p, stride, n, [](C v) { return static_cast<int32_t>(v); });
      case DType::Int64:
        return store_as<int64_t>(in, p, stride, n, [](C v) { return static_cast<int64_t>(v); });
      default:
        break;
    }
  } else {
    if (is_integral(dt, false)) {
      const auto is = static_cast<int64_t>(itemsize(dt));
      for (int64_t i = 0; i < n; ++i)
        store_from_double(p + i * stride * is, dt, static_cast<double>(in[i]));
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

// Operands of these dtypes are read (and, `out`: written) in place. A bool input is 0 or 1 in
// u8; a bool output goes through the conversion (a u8 loop may compute 2 for true + true).
template <typename C>
struct Native {
  static bool is(DType t, bool out = false) {
    if constexpr (std::is_same_v<C, float>) return t == DType::Float32;
    if constexpr (std::is_same_v<C, double>) return t == DType::Float64;
    if constexpr (std::is_same_v<C, uint8_t>)
      return t == DType::UInt8 || (!out && t == DType::Bool);
    if constexpr (std::is_same_v<C, int8_t>) return t == DType::Int8;
    return t == DType::Int64;
  }
};

// Whether an f32 element of `op` costs a transcendental function or a division chain (tens
// of instructions) rather than a few: such ops are worth a second thread on fewer elements.
bool costly(PwOp op) {
  switch (op) {
    case PwOp::Exp:
    case PwOp::Log:
    case PwOp::Sigmoid:
    case PwOp::Tanh:
    case PwOp::Erf:
    case PwOp::Gelu:
    case PwOp::GeluTanh:
    case PwOp::Silu:
    case PwOp::Mish:
    case PwOp::Elu:
    case PwOp::Softplus:
    case PwOp::PowScalar:
    case PwOp::Sin:
    case PwOp::Cos:
    case PwOp::Tan:
    case PwOp::Asin:
    case PwOp::Acos:
    case PwOp::Atan:
    case PwOp::Sinh:
    case PwOp::Cosh:
    case PwOp::Asinh:
    case PwOp::Acosh:
    case PwOp::Atanh:
    case PwOp::Expm1:
    case PwOp::Log2:
    case PwOp::Log10:
    case PwOp::Log1p:
    case PwOp::Atan2:
    case PwOp::Pow:
    case PwOp::Fmod:
    case PwOp::Remainder:
    case PwOp::DivFloor:
    case PwOp::GeluBackward:
    case PwOp::GeluTanhBackward:
    case PwOp::SiluBackward:
    case PwOp::MishBackward:
    case PwOp::EluBackward:
    case PwOp::SoftplusBackward:
      return true;
    default:
      return false;
  }
}

// `loop_b1` (may be null): the binary loop that takes its second input as one value; used where
// that input is constant along the row (stride 0), instead of a block filled with copies.
template <typename C>
void run_typed(PwLoop<C> loop, PwLoop<C> loop_b1, const PwParams& params, const PwConvert& cv,
               std::vector<Operand>& ops, const std::vector<int64_t>& sizes, int64_t numel,
               int64_t grain) {
  const int nops = static_cast<int>(ops.size());
  const int nd = static_cast<int>(sizes.size());
  const int64_t inner = sizes.back();
  // The second input is one value along the row: its loop reads that value once.
  const bool b1 = nops == 3 && loop_b1 && ops[2].strides[nd - 1] == 0;
  const PwLoop<C> run = b1 ? loop_b1 : loop;
  // Every operand read and written where it lies along the row (its own dtype, unit stride; or
  // the `_b1` loop's one value): a chunk's part of a row is one loop call, not one per block (a
  // call per 1,024 elements cost a large in-place relu_ a sixth of its time).
  bool direct = ops[0].strides[nd - 1] == 1 && Native<C>::is(ops[0].dtype, true);
  for (int k = 1; k < nops; ++k)
    direct =
        direct && ((k == 2 && b1) || (ops[k].strides[nd - 1] == 1 && Native<C>::is(ops[k].dtype)));
  parallel_for(0, numel, grain, [&](int64_t lo, int64_t hi) {
    alignas(64) C buf[kMaxOperands][kBlock];
    // Stride-0 inputs: the element whose value the block holds, and for how many elements.
    const char* cached[kMaxOperands] = {};
    int64_t cached_n[kMaxOperands] = {};
    // Input k's one value at `p` repeated over the first n elements of its block (filled only
    // when the block does not hold that value that far already).
    auto broadcast = [&](int k, const char* p, int64_t n) -> const C* {
      if (cached[k] != p || cached_n[k] < n) {
        C v;
        load_row<C>(p, 0, ops[k].dtype, &v, 1, cv);
        std::fill(buf[k], buf[k] + n, v);
        cached[k] = p;
        cached_n[k] = n;
      }
      return buf[k];
    };
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
      // Short rows (a [.., 33] * [.., 1, 33] product, a mask broadcast over heads): whole rows
      // along the next dim in one block, so that the loop runs on up to kBlock elements instead
      // of paying its entry and tail per row. Rows of up to 128 only: the block copies inputs a
      // row reads in place (a [512] < [512, 1] compare lost a third to that). Not where the
      // second input is one value per row (a [N, 96] * [N, 1] product): its `_b1` loop reads
      // that value once per row, which a block would have to fill in.
      if (j == 0 && nd >= 2 && inner * 8 <= kBlock && !b1) {
        const int64_t rows =
            std::min({kBlock / inner, sizes[nd - 2] - idx[nd - 2], (hi - pos) / inner});
        if (rows >= 2) {
          const int64_t n = rows * inner;
          const C* in[kMaxOperands - 1];
          for (int k = 1; k < nops; ++k) {
            const Operand& o = ops[k];
            const int64_t s0 = o.strides[nd - 1], s1 = o.strides[nd - 2];
            if (s0 == 1 && s1 == inner && Native<C>::is(o.dtype)) {
              in[k - 1] = reinterpret_cast<const C*>(row[k]);
            } else if (s0 == 0 && s1 == 0) {
              in[k - 1] = broadcast(k, row[k], n);
            } else {
              for (int64_t r = 0; r < rows; ++r)
                load_row<C>(row[k] + r * s1 * o.isize, s0, o.dtype, buf[k] + r * inner, inner, cv);
              cached[k] = nullptr;
              cached_n[k] = 0;
              in[k - 1] = buf[k];
            }
          }
          const Operand& o = ops[0];
          const int64_t s0 = o.strides[nd - 1], s1 = o.strides[nd - 2];
          if (s0 == 1 && s1 == inner && Native<C>::is(o.dtype, true)) {
            loop(in, reinterpret_cast<C*>(row[0]), n, params);
          } else {
            loop(in, buf[0], n, params);
            for (int64_t r = 0; r < rows; ++r)
              store_row<C>(buf[0] + r * inner, row[0] + r * s1 * o.isize, s0, o.dtype, inner, cv);
          }
          pos += n;
          idx[nd - 2] += rows;
          for (int d = nd - 2; d > 0 && idx[d] == sizes[d]; --d) {
            idx[d] = 0;
            ++idx[d - 1];
          }
          continue;
        }
      }
      const int64_t row_end = std::min(hi - pos + j, inner);
      while (j < row_end) {
        const int64_t n = direct ? row_end - j : std::min(kBlock, row_end - j);
        const C* in[kMaxOperands - 1];
        for (int k = 1; k < nops; ++k) {
          const Operand& o = ops[k];
          const int64_t s = o.strides[nd - 1];
          const char* p = row[k] + j * s * o.isize;
          if (s == 1 && Native<C>::is(o.dtype)) {
            in[k - 1] = reinterpret_cast<const C*>(p);
          } else if (k == 2 && b1) {
            if (cached[k] != p) {
              load_row<C>(p, 0, o.dtype, buf[k], 1, cv);
              cached[k] = p;
              cached_n[k] = 0;  // one value, not a filled block
            }
            in[k - 1] = buf[k];
          } else if (s == 0) {
            // Broadcast along the row: fill only as much of the block as this run needs (rows
            // of a [N, 192] * [N, 1] product are 192 long).
            in[k - 1] = broadcast(k, p, n);
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
        if (so == 1 && Native<C>::is(o.dtype, true)) {
          run(in, reinterpret_cast<C*>(po), n, params);
        } else {
          run(in, buf[0], n, params);
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

namespace {

// Strides of t over `shape` (t broadcast to it; broadcast and size-1 dims get 0).
std::vector<int64_t> strides_over(const Shape& shape, const Tensor& t) {
  const int nd = static_cast<int>(shape.size());
  std::vector<int64_t> st(static_cast<size_t>(nd), 0);
  const int off = nd - static_cast<int>(t.dim());
  if (off < 0) internal_error("cpu pointwise: input has more dims than the output");
  for (int d = 0; d < t.dim(); ++d) {
    if (t.size(d) == shape[d + off]) {
      st[d + off] = t.size(d) == 1 ? 0 : t.stride(d);
    } else if (t.size(d) != 1) {
      internal_error("cpu pointwise: input does not broadcast to the output");
    }
  }
  return st;
}

// The dims of `shape` from innermost to outermost in the operands' memory order: dim a goes
// inside dim b when the first operand that strides both (nonzero strides) has the smaller
// stride on a (equal strides: the smaller size inside); operands that cannot tell leave the
// logical order. An insertion sort, so ties keep the row-major order.
std::vector<int> memory_order(const Shape& shape, const std::vector<std::vector<int64_t>>& st) {
  const int nd = static_cast<int>(shape.size());
  std::vector<int> perm(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  // > 0: dim a belongs outside dim b.
  auto outside = [&](int a, int b) {
    for (const auto& s : st) {
      const int64_t sa = s[a], sb = s[b];
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return sa > sb ? 1 : -1;
      if (shape[a] != shape[b]) return shape[a] > shape[b] ? 1 : -1;
    }
    return 0;
  };
  for (int i = 1; i < nd; ++i) {
    int cur = i;
    for (int j = i - 1; j >= 0; --j) {
      const int c = outside(perm[j], perm[cur]);
      if (c > 0) {
        std::swap(perm[j], perm[cur]);
        cur = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  return perm;
}

}  // namespace

Shape pw_output_strides(const Shape& shape, std::span<const Tensor> inputs) {
  const int nd = static_cast<int>(shape.size());
  std::vector<std::vector<int64_t>> st;
  for (const Tensor& t : inputs)
    if (t.defined() && t.dim() > 0) st.push_back(strides_over(shape, t));
  const std::vector<int> perm = memory_order(shape, st);
  Shape strides(static_cast<size_t>(nd), 1);
  int64_t run = 1;
  for (int i = 0; i < nd; ++i) {
    strides[perm[i]] = run;
    run *= std::max<int64_t>(shape[perm[i]], 1);
  }
  return strides;
}

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
  std::vector<std::vector<int64_t>> st(ops.size());
  auto fill = [&](size_t k, const Tensor& t) {
    ops[k].base = static_cast<char*>(t.data_ptr());
    ops[k].dtype = t.dtype();
    ops[k].isize = static_cast<int64_t>(t.itemsize());
    st[k] = strides_over(shape, t);
  };
  fill(0, out);
  for (size_t i = 0; i < inputs.size(); ++i) fill(i + 1, inputs[i]);
  // The walk follows the output's memory order (then the inputs'), so that the innermost run
  // is contiguous in the output wherever it can be: elementwise, any order gives the same
  // values. Then coalesce: drop size-1 dims, merge dims contiguous for every operand.
  const std::vector<int> perm = memory_order(shape, st);
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> cst(ops.size());
  for (int pi = nd0 - 1; pi >= 0; --pi) {
    const int d = perm[pi];
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

  // Cheap ops on fewer than 64K elements run on the calling thread: below that, waking a
  // sleeping worker (tens of microseconds in a VM) costs more than the second core gives back
  // (sigmoid_backward on 47K elements took 37 us on one thread and 90 us on two with a 32K
  // grain). Between back-to-back calls the workers still spin, and from 64K on a second thread
  // pays (hardsigmoid on 123K elements: 32 us on one thread, 20 us on two, warm). An op whose
  // element costs a transcendental function takes about 4x as long per element, and a second
  // thread from 16K on.
  const int64_t grain = costly(op) ? 16384 : 65536;
  const PwKernels& kt = pw_kernels();
  const int i = static_cast<int>(op);
  switch (compute) {
    case Compute::F32:
      run_typed<float>(kt.f32[i], kt.f32_b1[i], params, kt.convert, ops, sizes, numel, grain);
      break;
    case Compute::F64:
      run_typed<double>(kt.f64[i], kt.f64_b1[i], params, kt.convert, ops, sizes, numel, grain);
      break;
    case Compute::I64:
    case Compute::U8:
    case Compute::I8:
      if (!pw_has_loop(op, compute)) internal_error("cpu pointwise: no integer loop for this op");
      if (compute == Compute::U8)
        run_typed<uint8_t>(kt.u8[i], nullptr, params, kt.convert, ops, sizes, numel, grain);
      else if (compute == Compute::I8)
        run_typed<int8_t>(kt.i8[i], nullptr, params, kt.convert, ops, sizes, numel, grain);
      else
        run_typed<int64_t>(kt.i64[i], nullptr, params, kt.convert, ops, sizes, numel, grain);
      break;
  }
}

bool pw_has_loop(PwOp op, Compute compute) {
  const PwKernels& kt = pw_kernels();
  const int i = static_cast<int>(op);
  switch (compute) {
    case Compute::F32:
      return kt.f32[i] != nullptr;
    case Compute::F64:
      return kt.f64[i] != nullptr;
    case Compute::I64:
      return kt.i64[i] != nullptr;
    case Compute::U8:
      return kt.u8[i] != nullptr;
    case Compute::I8:
      return kt.i8[i] != nullptr;
  }
  return false;
}

}  // namespace crucible::cpu
