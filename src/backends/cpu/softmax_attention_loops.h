// The row passes of blocked attention (AttentionRowFns in softmax_kernels.h), instantiated once
// per ISA translation unit after softmax_loops.h, whose vector helpers they use (row_max,
// exp_sum, the vectors of vec_f32.h). A block is `rows` rows of n scores, `ld` apart, changed
// in place; f64 uses plain loops (std::exp), as in softmax_loops.h.
//
// Numerics, as attention.cpp had them per element: the same exponential (vexp is vm::exp's
// steps on a vector); the normaliser of a row is summed in vector partial sums added into a
// double (before: one f32 running sum), its logsumexp and reciprocal computed in double.

// ---- f32 -------------------------------------------------------------------------------------

void att_softmax_lse_f32(float* s, int64_t rows, int64_t n, int64_t ld, float* lse,
                         float masked_lse) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = s + r * ld;
    const float m = row_max(row, n);  // NaN anywhere gives NaN, and with it a NaN row
    if (m == -__builtin_inff()) {     // every key masked (or no key)
      std::fill(row, row + n, 0.0f);
      lse[r] = masked_lse;
      continue;
    }
    const double sum = exp_sum<true>(row, row, n, m);
    lse[r] = static_cast<float>(static_cast<double>(m) + std::log(sum));
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t j = 0; j < n; ++j) row[j] *= inv;
  }
}

void att_exp_minus_f32(float* s, int64_t rows, int64_t n, int64_t ld, const float* l) {
  // exp_sum's storing pass is the vector exp; its sum is not needed here.
  for (int64_t r = 0; r < rows; ++r) (void)exp_sum<true>(s + r * ld, s + r * ld, n, l[r]);
}

void att_ds_f32(float* dp, const float* p, int64_t rows, int64_t n, int64_t ld, const float* dd) {
  for (int64_t r = 0; r < rows; ++r) {
    float* d = dp + r * ld;
    const float* pr = p + r * ld;
    const float c = dd[r];
    for (int64_t j = 0; j < n; ++j) d[j] = pr[j] * (d[j] - c);
  }
}

// ---- f64 -------------------------------------------------------------------------------------

void att_softmax_lse_f64(double* s, int64_t rows, int64_t n, int64_t ld, double* lse,
                         double masked_lse) {
  for (int64_t r = 0; r < rows; ++r) {
    double* row = s + r * ld;
    double m = -__builtin_inf();
    for (int64_t j = 0; j < n; ++j) m = max_nan(m, row[j]);
    if (m == -__builtin_inf()) {
      std::fill(row, row + n, 0.0);
      lse[r] = masked_lse;
      continue;
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      row[j] = std::exp(row[j] - m);
      sum += row[j];
    }
    lse[r] = m + std::log(sum);
    const double inv = 1.0 / sum;
    for (int64_t j = 0; j < n; ++j) row[j] *= inv;
  }
}

void att_exp_minus_f64(double* s, int64_t rows, int64_t n, int64_t ld, const double* l) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) s[r * ld + j] = std::exp(s[r * ld + j] - l[r]);
}

void att_ds_f64(double* dp, const double* p, int64_t rows, int64_t n, int64_t ld,
                const double* dd) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) dp[r * ld + j] = p[r * ld + j] * (dp[r * ld + j] - dd[r]);
}
