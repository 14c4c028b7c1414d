// The run history: every run recorded in a SQLite database -- its metadata (id, time, backend,
// suite, crucible's version and commit, machine, command line, summary) and each case's verdict
// and timing -- so runs can be listed and compared long after their folders are gone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crucible/report/run_data.h"

struct sqlite3;

namespace crucible {

// $XDG_DATA_HOME/crucible/history.db, else $HOME/.local/share/crucible/history.db.
std::string default_history_path();

// One line of `crucible history`.
struct HistoryEntry {
  int64_t id = 0;
  std::string started_at;  // UTC, ISO 8601
  std::string suite, backend, version, git_commit, host, folder;
  int ops_total = 0, ops_passed = 0, cases_total = 0;
  double correctness = 0;
  double perf_score = -1;  // -1: not timed / no score
};

class History {
 public:
  // Opens the database at `path`, creating it (and its folder) when `create`; an input error
  // naming the file when it cannot, or when the file is not a crucible history.
  History(const std::string& path, bool create);
  ~History();
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // Records a run; a folder recorded before (a resumed run) keeps its id and is replaced.
  int64_t record(const RunData& run);
  // The runs, newest first (`limit` 0: all).
  std::vector<HistoryEntry> list(int limit) const;
  // A recorded run; an input error when there is no run `id`.
  RunData load(int64_t id) const;

  const std::string& path() const { return path_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace crucible
