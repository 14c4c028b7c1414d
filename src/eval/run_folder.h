// The run folder of `crucible run`: its name, its lock, its results.jsonl (appended to a line at a
// time, and read back on --resume).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "crucible/eval/run.h"
#include "crucible/results/result.h"

namespace crucible {

// runs/<suite>-<backend>-<timestamp>-<pid>, with the suite and backend made safe as file names.
std::string default_out_dir(const RunOptions& o);

// Creates the run folder `dir` (--out) and checks that it is writable.
void prepare_out_dir(const std::string& dir);

// The run folder's lock: held (flock on <folder>/.lock) from before the folder is read until
// the run ends, so two runs or resumes of one folder cannot interleave their lines.
class RunFolderLock {
 public:
  explicit RunFolderLock(const std::string& dir);
  ~RunFolderLock();
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;

 private:
  int fd_ = -1;
};

// Appends lines to results.jsonl with one write() each, so a killed run loses no finished line.
class ResultsFile {
 public:
  explicit ResultsFile(const std::string& path);
  ~ResultsFile();
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;
  void append(const nlohmann::json& j);
  // Appends one line (a JSON object without the newline) with a single write.
  void append_line(std::string line);

 private:
  std::string path_;
  int fd_ = -1;
};

// Reads the results of an earlier (possibly killed) run. Every line must be a case or timing
// record of a case of this run (`ops_of_case`: case id -> op); anything else is refused with
// its file:line. The only damage tolerated is a torn last line (no newline), which is cut off.
// A case recorded more than once counts once (the first record).
void load_previous(const std::string& path, const std::map<std::string, std::string>& ops_of_case,
                   std::vector<CaseResult>& results, std::vector<TimingRecord>& timings);

}  // namespace crucible
