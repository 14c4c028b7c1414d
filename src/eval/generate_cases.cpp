// The feedback and scoring cases of a generated op. Feedback: the suite's cases of the op (what
// the model is shown and evaluated on between attempts). Scoring: the op's catalog samples with
// every size above 1 grown by one (consistently over the call, so shapes that must agree still
// agree; strides rebuilt around the new sizes), kept where the meta layer gives the same outcome
// (computes, or raises) as for the original, plus a few small real-model calls of the shipped
// traces; and another seed. No scoring call is a feedback call.
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "crucible/cases/trace.h"
#include "crucible/core/error.h"
#include "crucible/eval/generate.h"
#include "crucible/ops/materialize.h"
#include "crucible/suites/suite.h"
#include "suites/trace_shapes.h"

namespace crucible {

namespace {

// Trace calls above this many elements are left out of the scoring cases (the reference is slow).
constexpr int64_t kScoringMaxNumel = int64_t{1} << 16;
constexpr int kScoringTraceCalls = 4;

// ATen's error for `call` as the meta layer sees it; "" when it computes. `known` false when the
// meta layer cannot tell (the op has none).
std::string meta_error(const OpDef& op, const cases::CallSpec& call, bool& known) {
  known = true;
  try {
    op.run_meta(materialize_meta(op, call));
    return "";
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Internal) known = false;
    return e.what();
  } catch (const std::exception& e) {
    known = false;
    return e.what();
  }
}

int64_t grow(int64_t s) { return s >= 2 ? s + 1 : s; }

// Strides for the grown shape that keep the original's dimension order, broadcast (0) strides
// and gaps (a stride larger than the dense one keeps its ratio).
Shape grown_strides(const Shape& old_shape, const Shape& old_strides, const Shape& shape) {
  const size_t n = shape.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return old_strides[a] < old_strides[b]; });
  Shape out(n, 0);
  int64_t old_dense = 1, dense = 1;
  for (size_t d : order) {
    if (old_strides[d] == 0) continue;
    const int64_t ratio = std::max<int64_t>(1, old_strides[d] / std::max<int64_t>(1, old_dense));
    out[d] = dense * ratio;
    old_dense = old_strides[d] * std::max<int64_t>(1, old_shape[d]);
    dense = out[d] * std::max<int64_t>(1, shape[d]);
  }
  return out;
}

void grow_literal(cases::Literal& l) {
  if (l.kind == cases::LitKind::Tensor) {
    cases::TensorLit& t = l.tensor;
    const Shape old_shape = t.shape;
    for (int64_t& s : t.shape) s = grow(s);
    if (t.strides && t.strides->size() == t.shape.size())
      t.strides = grown_strides(old_shape, *t.strides, t.shape);
  }
  for (cases::Literal& item : l.items) grow_literal(item);
  for (auto& [k, v] : l.entries) grow_literal(v);
}

cases::CallSpec grown(cases::CallSpec call) {
  for (cases::Literal& a : call.args) grow_literal(a);
  for (auto& [k, v] : call.kwargs) grow_literal(v);
  return call;
}

int64_t call_numel(const cases::CallSpec& call) {
  int64_t n = 0;
  std::function<void(const cases::Literal&)> walk = [&](const cases::Literal& l) {
    if (l.kind == cases::LitKind::Tensor) {
      int64_t e = 1;
      for (int64_t s : l.tensor.shape) e *= s;
      n += e;
    }
    for (const cases::Literal& i : l.items) walk(i);
    for (const auto& [k, v] : l.entries) walk(v);
  };
  for (const cases::Literal& a : call.args) walk(a);
  for (const auto& [k, v] : call.kwargs) walk(v);
  return n;
}

// An even spread of `n` of `v`'s items (all when it holds no more).
std::vector<GenCase> spread(std::vector<GenCase> v, size_t n) {
  if (v.size() <= n) return v;
  std::vector<GenCase> out;
  for (size_t i = 0; i < n; ++i) out.push_back(std::move(v[i * v.size() / n]));
  return out;
}

}  // namespace

uint64_t scoring_seed(uint64_t seed) { return seed ^ 0x5c0e1e55ULL ^ (seed == 0x5c0e1e55ULL); }

OpCases generation_cases(const OpDef& op, const std::string& suite, int scoring_limit) {
  if (suite != "smoke" && suite != "opinfo")
    usage_error("--suite " + suite + ": generate takes smoke or opinfo (the feedback cases)");
  OpCases out;
  SuiteOptions so;
  so.suite = suite;
  so.ops = {op.name};
  std::set<std::string> feedback_calls;
  for (SuiteCase& sc : build_suite(so)) {
    if (!sc.skip_reason.empty()) continue;
    bool known = false;
    GenCase g{sc.c.call, sc.c.label, meta_error(op, sc.c.call, known)};
    if (!known) g.error.clear();
    feedback_calls.insert(cases::print_call(g.call));
    out.feedback.push_back(std::move(g));
  }

  // Scoring: every catalog sample, grown.
  std::vector<GenCase> scoring;
  std::set<std::string> seen;
  SampleContext ctx;
  for (Sample& s : op.samples(ctx)) {
    if (s.cpu_only_error) continue;
    bool known_a = false, known_b = false;
    const std::string err_a = meta_error(op, s.call, known_a);
    cases::CallSpec g = grown(s.call);
    const std::string err_b = meta_error(op, g, known_b);
    if (!known_a || !known_b || err_a.empty() != err_b.empty()) continue;
    const std::string text = cases::print_call(g);
    if (feedback_calls.count(text) || !seen.insert(text).second) continue;
    scoring.push_back({std::move(g), s.label, err_b});
  }
  const size_t limit = static_cast<size_t>(std::max(1, scoring_limit));
  std::vector<GenCase> traces;
  const std::string dir = shipped_traces_dir();
  if (!dir.empty()) {
    const auto calls = distinct_trace_calls(dir);
    if (auto it = calls.find(op.name); it != calls.end()) {
      for (const cases::TraceEntry& e : it->second) {
        if (static_cast<int>(traces.size()) >= kScoringTraceCalls) break;
        if (call_numel(e.call) > kScoringMaxNumel) continue;
        const std::string text = cases::print_call(e.call);
        if (feedback_calls.count(text) || !seen.insert(text).second) continue;
        bool known = false;
        std::string err = meta_error(op, e.call, known);
        if (!known) err.clear();
        traces.push_back({e.call, "trace: " + e.file + ":" + std::to_string(e.line), err});
      }
    }
  }
  // Must-raise calls get up to a quarter of the places; computing calls the rest.
  std::vector<GenCase> raising, computing;
  for (GenCase& g : scoring) (g.error.empty() ? computing : raising).push_back(std::move(g));
  const size_t room = limit > traces.size() ? limit - traces.size() : 0;
  const size_t n_raising = std::min(raising.size(), std::max<size_t>(room / 4, 1));
  out.scoring = spread(std::move(raising), std::min(n_raising, room));
  for (GenCase& g : spread(std::move(computing), room - out.scoring.size()))
    out.scoring.push_back(std::move(g));
  for (GenCase& t : traces) out.scoring.push_back(std::move(t));
  if (out.scoring.empty()) {
    // Nothing could change shape: the same calls with another seed (new values only).
    out.held_out = "values";
    out.scoring = spread(out.feedback, limit);
  }
  return out;
}

}  // namespace crucible
