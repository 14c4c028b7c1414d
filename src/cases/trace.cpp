// Trace files: "Operator: aten.x.y" lines, each followed by "cnt: N, (POSITIONAL, KEYWORDS)"
// lines. Errors name the file, the line in the file and the column.
#include "crucible/cases/trace.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "crucible/core/error.h"

namespace crucible::cases {

namespace {

namespace fs = std::filesystem;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

size_t skip_spaces(std::string_view line, size_t at) {
  while (at < line.size() && is_space(line[at])) ++at;
  return at;
}

std::string got(std::string_view line, size_t at) {
  if (at >= line.size()) return "end of line";
  size_t end = at;
  while (end < line.size() && !is_space(line[end]) && end - at < 40) ++end;
  return "'" + std::string(line.substr(at, std::max<size_t>(end - at, 1))) + "'";
}

[[noreturn]] void fail(const std::string& file, int line_no, size_t col0, std::string_view expected,
                       std::string_view line) {
  input_error(file + ":" + std::to_string(line_no) + ":" + std::to_string(col0 + 1),
              "expected " + std::string(expected) + ", got " + got(line, col0));
}

// "aten.add.Tensor": namespace.name.overload, each part an identifier.
bool is_op_name(std::string_view s) {
  int parts = 0;
  size_t k = 0;
  while (true) {
    if (k >= s.size() || !is_name_start(s[k])) return false;
    while (k < s.size() && is_name_char(s[k])) ++k;
    ++parts;
    if (k == s.size()) break;
    if (s[k] != '.') return false;
    ++k;
  }
  return parts == 3;
}

void parse_trace_into(std::string_view text, const std::string& file, std::vector<TraceEntry>& out);

}  // namespace

std::string normalise_op_name(std::string_view op) {
  if (op == "aten.sum.SymInt") return "aten.sum.dim_IntList";
  return std::string(op);
}

std::vector<TraceEntry> parse_trace(std::string_view text, const std::string& file) {
  std::vector<TraceEntry> out;
  out.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  parse_trace_into(text, file, out);
  return out;
}

namespace {

void parse_trace_into(std::string_view text, const std::string& file,
                      std::vector<TraceEntry>& out) {
  std::string op;
  std::string op_as_written;
  int line_no = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_no;
    while (!line.empty() && is_space(line.back())) line.remove_suffix(1);
    const size_t first = skip_spaces(line, 0);
    if (first == line.size()) continue;  // blank line
    const std::string_view rest = line.substr(first);

    if (rest.starts_with("Operator:")) {
      const size_t name_at = skip_spaces(line, first + 9);
      const std::string_view name = line.substr(name_at);
      if (!is_op_name(name)) {
        fail(file, line_no, name_at, "an operator name namespace.name.overload (aten.add.Tensor)",
             line);
      }
      op_as_written = std::string(name);
      op = normalise_op_name(name);
      continue;
    }
    if (!rest.starts_with("cnt:")) {
      fail(file, line_no, first, "'Operator: <name>' or 'cnt: <N>, <call>'", line);
    }
    if (op.empty()) {
      input_error(file + ":" + std::to_string(line_no) + ":" + std::to_string(first + 1),
                  "expected an 'Operator: <name>' line before the first cnt: line, got 'cnt:'");
    }
    const size_t cnt_at = skip_spaces(line, first + 4);
    size_t cnt_end = cnt_at;
    while (cnt_end < line.size() && line[cnt_end] >= '0' && line[cnt_end] <= '9') ++cnt_end;
    int64_t cnt = 0;
    const auto [p, ec] = std::from_chars(line.data() + cnt_at, line.data() + cnt_end, cnt);
    if (cnt_end == cnt_at ||
        (cnt_end < line.size() && line[cnt_end] != ',' && !is_space(line[cnt_end]))) {
      fail(file, line_no, cnt_at, "a non-negative integer count after 'cnt:'", line);
    }
    if (ec != std::errc() || p != line.data() + cnt_end) {
      input_error(file + ":" + std::to_string(line_no) + ":" + std::to_string(cnt_at + 1),
                  "count " + std::string(line.substr(cnt_at, cnt_end - cnt_at)) +
                      " is out of range for int64");
    }
    const size_t comma_at = skip_spaces(line, cnt_end);
    if (comma_at >= line.size() || line[comma_at] != ',') {
      fail(file, line_no, comma_at, "',' after the count", line);
    }
    const size_t call_at = skip_spaces(line, comma_at + 1);

    TraceEntry e;
    e.op = op;
    e.op_as_written = op_as_written;
    e.cnt = cnt;
    e.call_text = std::string(line.substr(call_at));
    e.file = file;
    e.line = line_no;
    e.call = parse_call(e.call_text, SourceOrigin{file, line_no, static_cast<int>(call_at) + 1});
    out.push_back(std::move(e));
  }
}

}  // namespace

std::vector<TraceEntry> read_traces(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) input_error(path, "no such file or folder: " + path);

  std::vector<std::string> files;
  if (fs::is_directory(st)) {
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".txt") {
        files.push_back(it->path().string());
      }
    }
    if (ec) input_error(path, "cannot list folder: " + ec.message());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }

  std::vector<TraceEntry> out;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) input_error(f, "cannot open file for reading");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) input_error(f, "cannot read file");
    parse_trace_into(text.view(), f, out);
  }
  return out;
}

}  // namespace crucible::cases
