// The op-by-op flow's reports (crucible opbyop): per model, every unique node with its status,
// errors, PCC and speed-up, and the chained run's first divergent node; across models, a
// summary. Written as opbyop.json, opbyop.md and opbyop.xlsx (one sheet per model plus a
// summary sheet, as tt-torch's models_op_per_op.xlsx).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace crucible {

// One unique node: an op with one argument signature, and the graph lines where it occurs.
struct OpByOpRow {
  std::string op;
  std::string call;   // the node as a case (arguments' specs)
  std::string lines;  // "12, 40, 68"
  int64_t occurrences = 0;
  std::string status;  // unsupported, raised, crashed, timed_out, wrong, passed
  std::string detail;
  double pcc = std::nan("");
  double max_abs_err = std::nan("");
  double max_rel_err = std::nan("");
  double speedup = std::nan("");  // against the baseline, when timed
  std::string reproducer;         // replays the node on its real inputs
};

struct OpByOpModel {
  std::string model;  // the graph's name
  std::string file;
  std::string kind;            // forward, training
  std::string chained_status;  // passed, failed, unsupported, crashed, ... ("" when not run)
  std::string chained_detail;
  std::string first_divergence;  // the first divergent node's statement ("" when none)
  int first_divergence_line = 0;
  std::vector<OpByOpRow> rows;
};

// The statuses of the op-by-op flow, in this order (the summary's columns).
const std::vector<std::string>& opbyop_statuses();

// Writes opbyop.json, opbyop.md and opbyop.xlsx into `dir`.
void write_opbyop_reports(const std::string& dir, const std::string& backend,
                          const std::vector<OpByOpModel>& models);

}  // namespace crucible
