// Helpers shared by the graph tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "crucible/core/error.h"
#include "crucible/graph/parse.h"

namespace crucible::graph::testing {

inline std::string example(const std::string& name) {
  return std::string(CRUCIBLE_SOURCE_DIR) + "/data/models/examples/" + name;
}

// The message of the Input error parsing `text` throws ("" when it parses).
inline std::string parse_error(const std::string& text) {
  try {
    parse_graph(text, "g.graph");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input) << e.what();
    return e.what();
  }
  return "";
}

// A graph's header followed by `body`.
inline std::string with_header(const std::string& body) {
  return "crucible-graph 1\nname t\nkind forward\n" + body;
}

}  // namespace crucible::graph::testing
