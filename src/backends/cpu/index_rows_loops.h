// The loops of index_rows.h, included inside one namespace per ISA level, after the file
// defines kLanes (f32 lanes of its widest vector: 16, 8 or 4) and kBagVectors (how many such
// vectors a bag sum keeps in registers). No include guard: each including file compiles them
// once with its own flags.

// One native vector of f32 (a GCC vector of exactly the register width: wider ones compile to
// memory round trips).
typedef float VF __attribute__((vector_size(4 * kLanes)));

inline VF loadv(const float* p) {
  VF v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Sums the rows' columns [0, kLanes * V) in V vector registers (V independent add chains per
// row), then stores them.
template <int V>
inline void bag_sum_block(float* out, const float* w, int64_t ld, const int64_t* rows,
                          const float* scale, int64_t count) {
  VF acc[V] = {};
  for (int64_t k = 0; k < count; ++k) {
    const float* r = w + rows[k] * ld;
    if (scale) {
      const float s = scale[k];
      for (int l = 0; l < V; ++l) acc[l] += s * loadv(r + kLanes * l);
    } else {
      for (int l = 0; l < V; ++l) acc[l] += loadv(r + kLanes * l);
    }
  }
  std::memcpy(out, acc, sizeof(acc));
}

void bag_sum(float* out, const float* w, int64_t ld, int64_t d, const int64_t* rows,
             const float* scale, int64_t count) {
  int64_t j0 = 0;
  for (; j0 + kLanes * kBagVectors <= d; j0 += kLanes * kBagVectors)
    bag_sum_block<kBagVectors>(out + j0, w + j0, ld, rows, scale, count);
  for (; j0 + kLanes * 4 <= d; j0 += kLanes * 4)
    bag_sum_block<4>(out + j0, w + j0, ld, rows, scale, count);
  for (; j0 + kLanes <= d; j0 += kLanes) bag_sum_block<1>(out + j0, w + j0, ld, rows, scale, count);
  for (int64_t j = j0; j < d; ++j) {
    float acc = 0;
    for (int64_t k = 0; k < count; ++k) acc += (scale ? scale[k] : 1.0f) * w[rows[k] * ld + j];
    out[j] = acc;
  }
}

// The sum of a vector's lanes, as a tree of halves (log2(kLanes) dependent adds, in
// registers).
typedef float V8 __attribute__((vector_size(32)));
typedef float V4 __attribute__((vector_size(16)));

template <typename T>
inline float lane_sum(T v) {
  if constexpr (sizeof(T) == 64) {
    return lane_sum<V8>(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                        __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
  } else if constexpr (sizeof(T) == 32) {
    return lane_sum<V4>(__builtin_shufflevector(v, v, 0, 1, 2, 3) +
                        __builtin_shufflevector(v, v, 4, 5, 6, 7));
  } else {
    const V4 a = v + __builtin_shufflevector(v, v, 2, 3, 0, 1);
    const V4 b = a + __builtin_shufflevector(a, a, 1, 0, 3, 2);
    return b[0];
  }
}

void dot_rows(float* out, const float* a, int64_t lda, const int64_t* ia, const float* b,
              int64_t ldb, const int64_t* ib, int64_t d, int64_t count) {
  constexpr int64_t kStep = 4 * kLanes;
  // The rows are random: those of dot k + kAhead are prefetched while dot k runs.
  constexpr int64_t kAhead = 4;
  for (int64_t k = 0; k < count; ++k) {
    if (k + kAhead < count) {
      const char* px = reinterpret_cast<const char*>(a + ia[k + kAhead] * lda);
      const char* py = reinterpret_cast<const char*>(b + ib[k + kAhead] * ldb);
      for (int64_t byte = 0; byte < d * 4; byte += 64) {
        __builtin_prefetch(px + byte);
        __builtin_prefetch(py + byte);
      }
    }
    const float* x = a + ia[k] * lda;
    const float* y = b + ib[k] * ldb;
    // Four independent chains over blocks of four vectors, then single vectors, then the tail.
    VF acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
    int64_t j = 0;
    for (; j + kStep <= d; j += kStep) {
      acc0 += loadv(x + j) * loadv(y + j);
      acc1 += loadv(x + j + kLanes) * loadv(y + j + kLanes);
      acc2 += loadv(x + j + 2 * kLanes) * loadv(y + j + 2 * kLanes);
      acc3 += loadv(x + j + 3 * kLanes) * loadv(y + j + 3 * kLanes);
    }
    for (; j + kLanes <= d; j += kLanes) acc0 += loadv(x + j) * loadv(y + j);
    float s = lane_sum((acc0 + acc1) + (acc2 + acc3));
    for (; j < d; ++j) s += x[j] * y[j];
    out[k] = s;
  }
}

void axpy(float* __restrict y, const float* __restrict x, float alpha, int64_t n) {
  if (alpha == 1.0f) {
    for (int64_t j = 0; j < n; ++j) y[j] += x[j];
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] += alpha * x[j];
  }
}

// Lanes of x that are NaN, infinite or above 2^50 in magnitude (see nn_util.h), as -1.
typedef int32_t VI __attribute__((vector_size(4 * kLanes)));
inline VI extreme_lanes(VF x) {
  VI u;
  std::memcpy(&u, &x, sizeof(u));
  return (u & 0x7fffffff) > 0x58800000;
}

bool axpy_check(float* __restrict y, const float* __restrict x, float alpha, int64_t n) {
  VI bad = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const VF xv = loadv(x + j);
    bad |= extreme_lanes(xv);
    const VF r = loadv(y + j) + (alpha == 1.0f ? xv : alpha * xv);
    std::memcpy(y + j, &r, sizeof(r));
  }
  int32_t any = 0;
  for (int l = 0; l < kLanes; ++l) any |= bad[l];
  for (; j < n; ++j) {
    uint32_t u;
    std::memcpy(&u, x + j, 4);
    any |= (u & 0x7fffffffu) > 0x58800000u;
    y[j] += alpha == 1.0f ? x[j] : alpha * x[j];
  }
  return any != 0;
}

bool copy_check(float* __restrict dst, const float* __restrict src, int64_t n) {
  VI bad = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const VF v = loadv(src + j);
    bad |= extreme_lanes(v);
    std::memcpy(dst + j, &v, sizeof(v));
  }
  int32_t any = 0;
  for (int l = 0; l < kLanes; ++l) any |= bad[l];
  for (; j < n; ++j) {
    uint32_t u;
    std::memcpy(&u, src + j, 4);
    any |= (u & 0x7fffffffu) > 0x58800000u;
    dst[j] = src[j];
  }
  return any != 0;
}

RowKernels make_row_kernels() {
  return RowKernels{bag_sum, dot_rows, axpy, axpy_check, copy_check};
}
