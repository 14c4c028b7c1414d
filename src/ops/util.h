// Helpers shared by the catalog's op families: ATen's type promotion, output allocation and
// strided elementwise iteration with broadcasting. Internal to libcrucible.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "crucible/core/element_runs.h"
#include "crucible/core/tensor.h"
#include "crucible/core/value.h"

namespace crucible::opsutil {

// ATen's result_type over the given operands (tensors and scalars, in any order): dimensioned
// tensors take priority over 0-d tensors, which take priority over Python scalars, each within
// the bool < integral < floating category order (c10 ResultTypeState). A Python float among
// integral tensors gives the default dtype f32; a Python int among bool tensors gives i64.
DType result_type(std::span<const Value> operands);
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);

// The dtype of a "float op" (exp, tanh, sigmoid, div true-division, mean): integral and bool
// inputs give f32 (the default dtype), floating inputs keep their dtype.
DType to_float_dtype(DType t);

// Strided iteration over a common (broadcast) shape. For each output element, `fn` gets the
// element offsets (in elements, relative to each tensor's storage start) of every operand.
// `operands` may have shapes broadcastable to `shape`.
void for_each_offset(const Shape& shape, std::span<const Tensor> operands,
                     const std::function<void(std::span<const int64_t> offsets)>& fn);

// The same iteration by runs: the dims every operand walks contiguously are merged, and `fn`
// gets each run of at most kRunLength elements of the innermost (merged) dim: the logical
// (row-major) index of its first element in `shape`, the offsets of every operand there, its
// length and every operand's stride along it. With `parallel`
// the runs are spread over the references' threads in tasks cut by the size of the call alone
// (fn must then be safe to call concurrently on different runs; an exception is rethrown once
// every task has finished).
constexpr int64_t kRunLength = 4096;
using RunFn =
    std::function<void(int64_t first, const int64_t* offsets, int64_t n, const int64_t* strides)>;
void for_each_run(const Shape& shape, std::span<const Tensor> operands, bool parallel,
                  const RunFn& fn);
// The same over operands given by their strides over `shape` (0 where broadcast) and their
// start offsets, in elements.
void for_each_run(const Shape& shape, const std::vector<Shape>& strides,
                  std::span<const int64_t> offsets, bool parallel, const RunFn& fn);

// f64 working values of a reference: a block from the storage cache (storage.cpp), so that a
// large buffer reuses pages mapped by an earlier call instead of faulting in fresh zeroed ones,
// and not zero-filled (the f64 copies of [128, 32, 112, 112] inputs spent as long being zeroed
// and faulted in as being converted). Counted against the allocation limit like any tensor.
class Doubles {
 public:
  Doubles() = default;
  explicit Doubles(size_t n);       // n values, unspecified until written
  Doubles(size_t n, double value);  // n copies of value
  double* data() { return p_; }
  const double* data() const { return p_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  double& operator[](size_t i) { return p_[i]; }
  const double& operator[](size_t i) const { return p_[i]; }
  double* begin() { return p_; }
  double* end() { return p_ + n_; }
  const double* begin() const { return p_; }
  const double* end() const { return p_ + n_; }
  operator std::span<const double>() const { return {p_, n_}; }  // NOLINT: a view, as a vector's

 private:
  std::shared_ptr<Storage> block_;
  double* p_ = nullptr;
  size_t n_ = 0;
};

// A tensor's elements in logical (row-major) order as doubles (load_as_double's conversion),
// and doubles in that order stored into a tensor (store_from_double's).
Doubles read_doubles(const Tensor& t);
void write_doubles(const Tensor& t, const double* v);

// The n elements of `t` along `dim` from logical index `first` (first, first + step, ... where
// step is the product of the sizes after dim), as doubles; and doubles stored there. A 0-d
// tensor has one element (n == 1).
void load_row(const Tensor& t, int64_t first, int64_t dim, int64_t n, double* v);
void store_row(const Tensor& t, int64_t first, int64_t dim, int64_t n, const double* v);

// Per-thread scratch buffers for the runs' values: at least n values, one buffer per slot
// (valid until the same thread asks for the same slot again).
double* scratch_doubles(size_t slot, int64_t n);
int64_t* scratch_ints(size_t slot, int64_t n);
inline void scratch_for(size_t slot, int64_t n, double** p) { *p = scratch_doubles(slot, n); }
inline void scratch_for(size_t slot, int64_t n, int64_t** p) { *p = scratch_ints(slot, n); }

// The address of the element at storage offset `offset` (in elements) of t's storage.
inline char* element_at(const Tensor& t, int64_t offset) {
  return static_cast<char*>(t.storage()->data()) + offset * static_cast<int64_t>(t.itemsize());
}

// out = f(v), v the inputs' values at each element (broadcast to out's shape), in values of T
// (double: load_as_double's conversions, int64: load_as_int's), each input's run of values
// passed through prepare(T* v, int64_t n) first; by runs over the references' threads (f must
// be pure). The engine of the map helpers below and of arith::map_float/map_int.
template <typename T, typename Prepare, typename F>
void map_values(std::span<const Tensor> ins, const Tensor& out, const Prepare& prepare,
                const F& f) {
  std::vector<Tensor> ops{out};
  ops.insert(ops.end(), ins.begin(), ins.end());
  const size_t nk = ins.size();
  for_each_run(out.shape(), ops, true,
               [&](int64_t, const int64_t* o, int64_t n, const int64_t* st) {
                 thread_local std::vector<T*> runs;
                 thread_local std::vector<T> vals;
                 runs.resize(nk);
                 vals.resize(nk);
                 T* res;
                 scratch_for(0, n, &res);
                 for (size_t k = 0; k < nk; ++k) {
                   scratch_for(k + 1, n, &runs[k]);
                   load_run(element_at(ins[k], o[k + 1]), st[k + 1], n, ins[k].dtype(), runs[k]);
                   prepare(runs[k], n);
                 }
                 for (int64_t i = 0; i < n; ++i) {
                   for (size_t k = 0; k < nk; ++k) vals[k] = runs[k][i];
                   res[i] = f(vals.data());
                 }
                 store_run(element_at(out, o[0]), st[0], n, out.dtype(), res);
               });
}

// Elementwise maps computed in double (floating outputs) and rounded once to `out`'s dtype.
// `out` must have the broadcast shape of the inputs. They run by runs (for_each_run), in
// parallel: `f` must be a pure function of its arguments.
void map_unary(const Tensor& in, const Tensor& out, const std::function<double(double)>& f);
void map_binary(const Tensor& a, const Tensor& b, const Tensor& out,
                const std::function<double(double, double)>& f);
// Exact integer versions (int64 arithmetic, wrapped to the output width as ATen does).
void map_unary_int(const Tensor& in, const Tensor& out, const std::function<int64_t(int64_t)>& f);
void map_binary_int(const Tensor& a, const Tensor& b, const Tensor& out,
                    const std::function<int64_t(int64_t, int64_t)>& f);

// Reduction helper: the output shape of reducing `dims` of `shape` (keepdim or not), and the
// list of dims normalised (empty `dims` = all dims, as ATen's sum.dim_IntList with dim=[]).
std::vector<int64_t> normalise_dims(std::span<const int64_t> dims, int64_t ndim);
Shape reduced_shape(const Shape& shape, std::span<const int64_t> dims, bool keepdim);

}  // namespace crucible::opsutil
