// generation.jsonl: the journal of a generation, one JSON object a line, appended and flushed to
// disk as each event happens, so an interrupted generation resumes without repeating a call it
// already paid for. Events: "start" (the options), "call" (a provider call's full outcome: the
// answer, the tokens, the cost), "attempt" (an attempt's verdicts), "op" (an op's final verdict).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace crucible::llm {

class Journal {
 public:
  // Opens `path` for appending (created when missing).
  explicit Journal(std::string path);
  // Appends one event and syncs it to disk; safe from several threads.
  void append(const nlohmann::json& event);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::mutex mu_;
};

// The events of a journal in order. A last line cut off by a kill is left out; a damaged line
// elsewhere is an Input error naming file:line.
std::vector<nlohmann::json> read_journal(const std::string& path);

}  // namespace crucible::llm
