// report.html: a run folder as one self-contained page that opens offline -- the scores, a
// sortable and filterable per-op table, the speed-up distribution, a roofline of every timed
// case against the machine's measured peaks, per-family bars, the op-by-op timeline of model
// runs, and the failing cases with their reproducers. Chart.js (Debian's libjs-chart.js) and
// the run's data are inlined; every text from the run is escaped.
#pragma once

#include <string>
#include <string_view>

#include "crucible/report/run_data.h"

namespace crucible {

// The page of a run.
std::string render_html_report(const RunData& run);

// Reads the run folder `dir` and writes `dir`/report.html (atomically); returns its path.
std::string write_html_report(const std::string& dir);

// Text as HTML character data or a quoted attribute value: & < > " ' escaped.
std::string html_escape(std::string_view text);

// JSON that can stand inside a <script> element: every <, > and & as a \u escape, so no text
// of the run can end the element or open a comment.
std::string json_for_script(const nlohmann::json& j);

}  // namespace crucible
