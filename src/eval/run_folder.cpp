// The run folder: its default name, its creation, its lock, and results.jsonl written and read.
#include "eval/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;

std::string default_out_dir(const RunOptions& o) {
  std::string suite = o.suite.suite;
  for (char& c : suite)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '-';
  std::string backend = o.backend;
  for (char& c : backend)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '-';
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  const std::string shard =
      o.shard.active() ? fmt::format("-shard{}of{}", o.shard.index, o.shard.count) : "";
  return fmt::format("runs/{}-{}-{}{}-{}", suite, backend, stamp, shard, getpid());
}

void prepare_out_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) input_error("--out " + dir, "cannot create the run folder: " + ec.message());
  std::string probe = dir + "/.crucible-write-test";
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    input_error("--out " + dir,
                std::string("the run folder is not writable: ") + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

RunFolderLock::RunFolderLock(const std::string& dir) {
  const std::string path = dir + "/.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    input_error(path, std::string("cannot open the run folder's lock: ") + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    ::close(fd_);
    if (e == EWOULDBLOCK)
      usage_error("the run folder " + dir + " is in use by another crucible run (its lock, " +
                  path + ", is held); wait for that run to end or choose another --out");
    input_error(path, std::string("cannot lock the run folder: ") + std::strerror(e));
  }
}

RunFolderLock::~RunFolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

ResultsFile::ResultsFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) input_error(path, std::string("cannot open for writing: ") + std::strerror(errno));
}

ResultsFile::~ResultsFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultsFile::append(const json& j) {
  append_line(j.dump(-1, ' ', false, json::error_handler_t::replace));
}

void ResultsFile::append_line(std::string line) {
  line += '\n';
  const char* p = line.data();
  size_t n = line.size();
  while (n > 0) {
    ssize_t k = ::write(fd_, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      input_error(path_, std::string("write failed: ") + std::strerror(errno));
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
}

void load_previous(const std::string& path, const std::map<std::string, std::string>& ops_of_case,
                   std::vector<CaseResult>& results, std::vector<TimingRecord>& timings) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  if (!fs::is_regular_file(path, ec))
    input_error(path, "not a regular file (a run folder's results.jsonl is a file of JSON lines)");
  std::ifstream f(path);
  if (!f) input_error(path, std::string("cannot read: ") + std::strerror(errno));
  std::string line;
  std::streamoff good_end = 0;
  int lineno = 0;
  std::set<std::string> seen_cases, seen_timings;
  size_t duplicates = 0;
  while (std::getline(f, line)) {
    ++lineno;
    const bool complete = !f.eof();  // ended by a newline
    if (!complete) break;            // a torn last line from a killed run: cut off below
    const std::string where = fmt::format("{}:{}", path, lineno);
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) input_error(where, "not a JSON line; the file is damaged");
    if (!j.is_object() || !j.contains("record") || !j["record"].is_string())
      input_error(where, "not a crucible record (no \"record\": \"case\" or \"timing\")");
    const std::string kind = j["record"].get<std::string>();
    if (kind != "case" && kind != "timing")
      input_error(where, "unknown record \"" + kind + "\" (expected \"case\" or \"timing\")");
    // A field of the wrong type, a missing field, an unknown status: refused with the place.
    auto read = [&](auto from_json) {
      try {
        return from_json(j);
      } catch (const Error& e) {
        input_error(where, e.what());
      }
    };
    if (kind == "case") {
      CaseResult r = read(case_result_from_json);
      auto it = ops_of_case.find(r.case_id);
      if (it == ops_of_case.end())
        input_error(where, "case " + r.case_id +
                               " is not a case of this run (its suite, ops and dtypes); the "
                               "file belongs to another run");
      if (it->second != r.op)
        input_error(where,
                    "case " + r.case_id + " is a case of " + it->second + ", not of " + r.op);
      if (seen_cases.insert(r.case_id).second)
        results.push_back(std::move(r));
      else
        ++duplicates;
    } else {
      TimingRecord t = read(timing_record_from_json);
      if (!ops_of_case.count(t.case_id))
        input_error(where, "timing of case " + t.case_id +
                               ", which is not a case of this run; the file belongs to another "
                               "run");
      if (seen_timings.insert(t.case_id).second)
        timings.push_back(std::move(t));
      else
        ++duplicates;
    }
    good_end = f.tellg();
  }
  if (duplicates > 0)
    fmt::print(stderr,
               "crucible: note: {}: {} duplicate record(s) ignored (each case counts once)\n", path,
               duplicates);
  if (static_cast<std::streamoff>(fs::file_size(path, ec)) > good_end && !ec)
    fs::resize_file(path, static_cast<uintmax_t>(good_end), ec);
}

}  // namespace crucible
