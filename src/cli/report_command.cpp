// `crucible report <run folder>`: (re)writes the run folder's report.html.
#include <fmt/format.h>

#include "cli/commands.h"
#include "crucible/report/html_report.h"

namespace crucible {

int command_report(const std::string& folder) {
  fmt::print("{}\n", write_html_report(folder));
  return 0;
}

}  // namespace crucible
