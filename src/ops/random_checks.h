// Statistical tests of independence for the random family's judges, and the seed-dependence
// verdict. Each test has a false-alarm rate below 1e-6 for a correct generator (two-sided
// normal tails at kIndependenceSigmas, chi-square upper tail at the 1e-6 quantile), so a
// correct backend fails none of the catalog's random cases in practice, while a sequence
// that ignores the seed, a permutation that never (or barely) shuffles and a fixed 0/1 pattern
// fail.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "crucible/ops/op.h"

namespace crucible::random_checks {

// |z| above this fails: P(|N(0,1)| > 5.3) = 1.2e-7.
constexpr double kIndependenceSigmas = 5.3;
// The tests run from this many values on (the normal approximations hold there).
constexpr size_t kMinValues = 256;

// Lag-`lag` serial correlation of consecutive values (in the tensor's logical order): under
// independence sqrt(n) * (r + 1/n) is about N(0, 1). A constant sequence is not tested here
// (the distribution checks catch it). Returns the failure reason, if any.
std::optional<std::string> serial_correlation(const std::vector<double>& v, size_t lag);

// Wald-Wolfowitz runs test of a 0/1 sequence (a fixed pattern: alternating, blocks, ...);
// tested when at least 20 zeros and 20 ones occur and the count of runs has a standard
// deviation of 10 or more (where its normal approximation holds).
std::optional<std::string> runs_test(const std::vector<double>& ones);

// A permutation of 0..n-1 drawn uniformly: position and value independent (a chi-square test
// on a B x B table of position bins against value bins, B up to 8 with at least 5 expected per
// cell), no rank correlation between position and value (Spearman, |z| < 5.3), fewer than 10
// fixed points (Poisson(1): P(>= 10) < 1.2e-7) and no lag-1 serial correlation.
std::optional<std::string> permutation_uniformity(const std::vector<double>& perm);

// The upper 1e-6 quantile of the chi-square distribution with `dof` degrees of freedom
// (Wilson-Hilferty).
double chi_square_critical(double dof);

// log10 of the probability that `k` independent draws, each with collision probability `q`
// (the chance two draws agree), agree all: k * log10(q).
double collision_log10(double k, double q);

// The verdict on seed dependence: when the op declares ComparePolicy::seed_collision_log10
// and, for these inputs, two seeds give the same bytes with probability below
// 10^kSeedCollisionLog10, but `first` (the candidate's outputs under the case's seed) and
// `other` (under another seed) are byte-identical, returns the failure reason; else nullopt.
std::optional<std::string> seed_dependence_failure(const OpDef& op, const Values& inputs,
                                                   const Values& ref_outputs, const Values& first,
                                                   const Values& other);

// The seed the evaluator's second, different-seed run uses for a case seeded `seed`.
uint64_t other_seed(uint64_t seed);

}  // namespace crucible::random_checks
