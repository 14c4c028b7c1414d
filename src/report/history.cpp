// The run history in SQLite (see history.h).
#include "crucible/report/history.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;

std::string default_history_path() {
  if (const char* d = std::getenv("XDG_DATA_HOME"); d && *d)
    return (fs::path(d) / "crucible" / "history.db").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".local" / "share" / "crucible" / "history.db").string();
  usage_error(
      "no place for the run history: neither XDG_DATA_HOME nor HOME is set; give --history "
      "<file> or --history none");
}

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS crucible_history (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  folder TEXT NOT NULL UNIQUE,
  started_at TEXT, recorded_at TEXT NOT NULL,
  suite TEXT, backend TEXT, reference TEXT, baseline TEXT,
  version TEXT, git_commit TEXT, host TEXT, machine TEXT, argv TEXT, seed INTEGER,
  ops_total INTEGER, ops_passed INTEGER, cases_total INTEGER,
  correctness REAL, coverage REAL, perf_score REAL,
  summary TEXT NOT NULL, manifest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cases (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  case_id TEXT NOT NULL, op TEXT NOT NULL, call TEXT, status TEXT NOT NULL, detail TEXT,
  reproducer TEXT, source TEXT, cnt INTEGER,
  timed INTEGER NOT NULL, timing_error TEXT,
  candidate_median_s REAL, candidate_p10_s REAL, candidate_p90_s REAL, candidate_samples INTEGER,
  baseline_median_s REAL, baseline_p10_s REAL, baseline_p90_s REAL, baseline_samples INTEGER,
  speedup REAL, flops REAL, bytes REAL, gflops REAL, gbps REAL, reliable INTEGER,
  PRIMARY KEY (run_id, case_id));
)sql";

// A prepared statement, finalized when it goes out of scope.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Statement() { sqlite3_finalize(st_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& bind(int i, const std::string& v) {
    sqlite3_bind_text(st_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, double v) {
    sqlite3_bind_double(st_, i, v);
    return *this;
  }
  Statement& bind(int i, int64_t v) {
    sqlite3_bind_int64(st_, i, v);
    return *this;
  }
  Statement& bind_null(int i) {
    sqlite3_bind_null(st_, i);
    return *this;
  }
  bool step() {  // true: a row
    int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("step");
  }
  void reset() {
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
  }
  std::string text(int c) const {
    const unsigned char* t = sqlite3_column_text(st_, c);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  double real(int c) const { return sqlite3_column_double(st_, c); }
  int64_t integer(int c) const { return sqlite3_column_int64(st_, c); }
  bool is_null(int c) const { return sqlite3_column_type(st_, c) == SQLITE_NULL; }

 private:
  [[noreturn]] void fail(const char* what) {
    input_error(path_, fmt::format("the run history: {} failed: {}", what, sqlite3_errmsg(db_)));
  }
  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* st_ = nullptr;
};

void exec(sqlite3* db, const std::string& path, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    input_error(path, "the run history: " + msg);
  }
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}
double num(const json& j, const char* key, double otherwise) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : otherwise;
}

}  // namespace

History::History(const std::string& path, bool create) : path_(path) {
  std::error_code ec;
  if (create) {
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec) input_error(path, "cannot create the run history's folder: " + ec.message());
  } else if (!fs::exists(path, ec)) {
    input_error(path,
                "no run history here (a run records itself into it; --history <file> "
                "names another)");
  }
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    input_error(path, "cannot open the run history: " + msg);
  }
  sqlite3_busy_timeout(db_, 30000);  // runs finishing at once wait for each other
  try {
    exec(db_, path_, "PRAGMA foreign_keys = ON;");
    // A file that is not SQLite, or SQLite of something else, is refused.
    Statement tables(db_, path_, "SELECT count(*) FROM sqlite_master WHERE type = 'table'");
    tables.step();
    const int64_t n = tables.integer(0);
    Statement ours(db_, path_,
                   "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = "
                   "'crucible_history'");
    ours.step();
    if (n > 0 && ours.integer(0) == 0)
      input_error(path_, "not a crucible run history (an SQLite database of something else)");
    exec(db_, path_, "BEGIN IMMEDIATE;");
    exec(db_, path_, kSchema);
    exec(db_, path_,
         "INSERT INTO crucible_history (version) SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM "
         "crucible_history);");
    exec(db_, path_, "COMMIT;");
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

History::~History() {
  if (db_) sqlite3_close(db_);
}

int64_t History::record(const RunData& run) {
  const json& s = run.summary;
  const json& m = run.manifest;
  std::error_code ec;
  const std::string folder = fs::weakly_canonical(fs::absolute(run.folder), ec).string();
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const json machine = m.contains("machine") ? m["machine"] : json::object();

  exec(db_, path_, "BEGIN IMMEDIATE;");
  try {
    int64_t id = 0;
    {
      Statement find(db_, path_, "SELECT id FROM runs WHERE folder = ?1");
      find.bind(1, folder);
      if (find.step()) id = find.integer(0);
    }
    if (id != 0) {
      Statement del(db_, path_, "DELETE FROM cases WHERE run_id = ?1");
      del.bind(1, id);
      del.step();
    }
    Statement put(db_, path_,
                  "INSERT OR REPLACE INTO runs (id, folder, started_at, recorded_at, suite, "
                  "backend, reference, baseline, version, git_commit, host, machine, argv, seed, "
                  "ops_total, ops_passed, cases_total, correctness, coverage, perf_score, summary, "
                  "manifest) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                  "?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)");
    if (id != 0)
      put.bind(1, id);
    else
      put.bind_null(1);
    put.bind(2, folder).bind(3, str(m, "started_at")).bind(4, std::string(stamp));
    put.bind(5, str(s, "suite")).bind(6, str(s, "backend")).bind(7, str(s, "reference"));
    put.bind(8, str(s, "baseline")).bind(9, str(m, "version")).bind(10, str(m, "git_commit"));
    put.bind(11, str(machine, "hostname")).bind(12, machine.dump());
    put.bind(13, m.contains("argv") ? m["argv"].dump() : std::string("[]"));
    put.bind(14, static_cast<int64_t>(num(m, "seed", 0)));
    put.bind(15, static_cast<int64_t>(num(s, "ops_total", 0)));
    put.bind(16, static_cast<int64_t>(num(s, "ops_passed", 0)));
    put.bind(17, static_cast<int64_t>(num(s, "cases_total", 0)));
    put.bind(18, num(s, "correctness_score", 0)).bind(19, num(s, "coverage", 0));
    if (s.contains("perf_score") && s["perf_score"].is_number())
      put.bind(20, s["perf_score"].get<double>());
    else
      put.bind_null(20);
    put.bind(21, s.dump(-1, ' ', false, json::error_handler_t::replace));
    put.bind(22, m.dump(-1, ' ', false, json::error_handler_t::replace));
    put.step();
    if (id == 0) id = sqlite3_last_insert_rowid(db_);

    Statement add(db_, path_,
                  "INSERT OR IGNORE INTO cases VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                  "?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, "
                  "?26)");
    int64_t position = 0;
    for (const CaseRow& c : run.cases) {
      add.bind(1, id).bind(2, position++).bind(3, c.case_id).bind(4, c.op).bind(5, c.call);
      add.bind(6, c.status).bind(7, c.detail).bind(8, c.reproducer).bind(9, c.source);
      add.bind(10, c.cnt).bind(11, int64_t{c.timed}).bind(12, c.timing_error);
      add.bind(13, c.candidate.median_s).bind(14, c.candidate.p10_s).bind(15, c.candidate.p90_s);
      add.bind(16, int64_t{c.candidate.samples});
      add.bind(17, c.baseline.median_s).bind(18, c.baseline.p10_s).bind(19, c.baseline.p90_s);
      add.bind(20, int64_t{c.baseline.samples});
      add.bind(21, c.speedup).bind(22, c.flops).bind(23, c.bytes).bind(24, c.gflops);
      add.bind(25, c.gbps).bind(26, int64_t{c.reliable});
      add.step();
      add.reset();
    }
    exec(db_, path_, "COMMIT;");
    return id;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<HistoryEntry> History::list(int limit) const {
  Statement q(db_, path_,
              "SELECT id, started_at, suite, backend, version, git_commit, host, folder, "
              "ops_total, ops_passed, cases_total, correctness, perf_score FROM runs ORDER BY id "
              "DESC LIMIT ?1");
  q.bind(1, static_cast<int64_t>(limit > 0 ? limit : -1));
  std::vector<HistoryEntry> out;
  while (q.step()) {
    HistoryEntry e;
    e.id = q.integer(0);
    e.started_at = q.text(1);
    e.suite = q.text(2);
    e.backend = q.text(3);
    e.version = q.text(4);
    e.git_commit = q.text(5);
    e.host = q.text(6);
    e.folder = q.text(7);
    e.ops_total = static_cast<int>(q.integer(8));
    e.ops_passed = static_cast<int>(q.integer(9));
    e.cases_total = static_cast<int>(q.integer(10));
    e.correctness = q.real(11);
    e.perf_score = q.is_null(12) ? -1 : q.real(12);
    out.push_back(e);
  }
  return out;
}

RunData History::load(int64_t id) const {
  RunData d;
  {
    Statement q(db_, path_, "SELECT folder, summary, manifest FROM runs WHERE id = ?1");
    q.bind(1, id);
    if (!q.step())
      input_error(path_, fmt::format("the run history has no run {} (crucible history lists "
                                     "them)",
                                     id));
    d.id = id;
    d.folder = q.text(0);
    d.summary = json::parse(q.text(1), nullptr, false);
    d.manifest = json::parse(q.text(2), nullptr, false);
    if (d.summary.is_discarded() || d.manifest.is_discarded())
      input_error(path_, fmt::format("run {} of the history is damaged", id));
  }
  Statement q(db_, path_,
              "SELECT case_id, op, call, status, detail, reproducer, source, cnt, timed, "
              "timing_error, candidate_median_s, candidate_p10_s, candidate_p90_s, "
              "candidate_samples, baseline_median_s, baseline_p10_s, baseline_p90_s, "
              "baseline_samples, speedup, flops, bytes, gflops, gbps, reliable FROM cases WHERE "
              "run_id = ?1 ORDER BY position");
  q.bind(1, id);
  while (q.step()) {
    CaseRow c;
    c.case_id = q.text(0);
    c.op = q.text(1);
    c.call = q.text(2);
    c.status = q.text(3);
    c.detail = q.text(4);
    c.reproducer = q.text(5);
    c.source = q.text(6);
    c.cnt = q.integer(7);
    c.timed = q.integer(8) != 0;
    c.timing_error = q.text(9);
    c.candidate = {q.real(10), q.real(11), q.real(12), static_cast<int>(q.integer(13))};
    c.baseline = {q.real(14), q.real(15), q.real(16), static_cast<int>(q.integer(17))};
    c.speedup = q.real(18);
    c.flops = q.real(19);
    c.bytes = q.real(20);
    c.gflops = q.real(21);
    c.gbps = q.real(22);
    c.reliable = q.integer(23) != 0;
    d.cases.push_back(std::move(c));
  }
  return d;
}

}  // namespace crucible
