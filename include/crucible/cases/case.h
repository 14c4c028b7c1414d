// A case: an op, its arguments in the case grammar, and a seed. Materialising a case is
// deterministic: the same (op, call, seed) gives the same bytes on every machine.
#pragma once

#include <cstdint>
#include <string>

#include "crucible/cases/literal.h"
#include "crucible/core/value.h"

namespace crucible {

struct Case {
  std::string op;        // "aten.add.Tensor"
  cases::CallSpec call;  // the arguments
  uint64_t seed = 0;     // the run's seed; streams per tensor are derived from it
  std::string label;     // what the case exercises ("broadcast", "trace", ...)
  std::string source;    // where it came from: "opinfo", "data/traces/x.txt:12"
  int64_t cnt = 0;       // occurrences in the traced model (traces only)
  bool perf = false;     // a performance case (timed with --perf)

  // A stable id: a hash of op, printed call and seed (hex), used by --resume.
  std::string id() const;
  // The one-line command that re-runs exactly this case.
  std::string reproducer(const std::string& backend) const;
  // Total elements over the case's tensor arguments.
  int64_t total_elements() const;
};

}  // namespace crucible
