// XLSX workbooks through libxlsxwriter (see xlsx.h).
#include "crucible/report/xlsx.h"

#include <xlsxwriter.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible {

std::string xlsx_sheet_name(const std::string& name, const std::vector<std::string>& taken) {
  std::string base;
  for (char ch : name)
    base += std::string_view("[]:*?/\\").find(ch) == std::string_view::npos ? ch : '_';
  if (base.empty()) base = "sheet";
  // Excel forbids a leading or trailing apostrophe.
  if (base.front() == '\'') base.front() = '_';
  if (base.back() == '\'') base.back() = '_';
  base = base.substr(0, 31);
  auto is_taken = [&](const std::string& s) {
    return std::any_of(taken.begin(), taken.end(), [&](const std::string& t) {
      return std::equal(s.begin(), s.end(), t.begin(), t.end(),
                        [](char a, char b) { return std::tolower(a) == std::tolower(b); });
    });
  };
  std::string out = base;
  for (int i = 2; is_taken(out); ++i) {
    std::string suffix = fmt::format("~{}", i);
    out = base.substr(0, 31 - suffix.size()) + suffix;
  }
  return out;
}

namespace {

struct WorkbookCloser {
  void operator()(lxw_workbook* wb) const {
    if (wb != nullptr) workbook_close(wb);
  }
};

[[noreturn]] void fail(const std::filesystem::path& path, lxw_error e) {
  input_error(path.string(), fmt::format("cannot write the workbook: {}", lxw_strerror(e)));
}

std::string cell_text(const XlsxCell& c) {
  if (const auto* s = std::get_if<std::string>(&c)) return *s;
  if (const auto* d = std::get_if<double>(&c)) return fmt::format("{:.6g}", *d);
  return {};
}

}  // namespace

void write_xlsx(const std::filesystem::path& path, const std::vector<XlsxSheet>& sheets) {
  // libxlsxwriter reports a missing folder only when closing, on standard error: say it first.
  const auto parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(parent)) {
    input_error(path.string(),
                fmt::format("cannot write the workbook: no folder {}", parent.string()));
  }
  std::unique_ptr<lxw_workbook, WorkbookCloser> wb(workbook_new(path.c_str()));
  if (!wb) input_error(path.string(), "cannot create the workbook");
  lxw_format* bold = workbook_add_format(wb.get());
  format_set_bold(bold);
  std::vector<std::string> names;
  for (const XlsxSheet& sheet : sheets) {
    names.push_back(xlsx_sheet_name(sheet.name, names));
    lxw_worksheet* ws = workbook_add_worksheet(wb.get(), names.back().c_str());
    if (ws == nullptr)
      input_error(path.string(), fmt::format("cannot add sheet '{}'", names.back()));
    size_t ncols = sheet.header.size();
    for (const auto& row : sheet.rows) ncols = std::max(ncols, row.size());
    std::vector<size_t> width(ncols, 6);
    for (size_t c = 0; c < sheet.header.size(); ++c) {
      worksheet_write_string(ws, 0, static_cast<lxw_col_t>(c), sheet.header[c].c_str(), bold);
      width[c] = std::max(width[c], sheet.header[c].size());
    }
    for (size_t r = 0; r < sheet.rows.size(); ++r) {
      const auto row_index = static_cast<lxw_row_t>(r + 1);
      for (size_t c = 0; c < sheet.rows[r].size(); ++c) {
        const XlsxCell& cell = sheet.rows[r][c];
        const auto col = static_cast<lxw_col_t>(c);
        if (const auto* d = std::get_if<double>(&cell); d != nullptr && std::isfinite(*d)) {
          worksheet_write_number(ws, row_index, col, *d, nullptr);
        } else if (!std::holds_alternative<std::monostate>(cell)) {
          // Cells hold at most 32767 characters.
          std::string text = cell_text(cell).substr(0, 32767);
          if (const auto* dd = std::get_if<double>(&cell)) {
            text = std::isnan(*dd) ? "nan" : (*dd > 0 ? "inf" : "-inf");
          }
          worksheet_write_string(ws, row_index, col, text.c_str(), nullptr);
        }
        width[c] = std::max(width[c], std::min<size_t>(cell_text(cell).size(), 60));
      }
    }
    for (size_t c = 0; c < ncols; ++c) {
      worksheet_set_column(ws, static_cast<lxw_col_t>(c), static_cast<lxw_col_t>(c),
                           static_cast<double>(width[c]) + 2, nullptr);
    }
    if (!sheet.header.empty()) {
      worksheet_freeze_panes(ws, 1, 0);
      worksheet_autofilter(ws, 0, 0, static_cast<lxw_row_t>(sheet.rows.size()),
                           static_cast<lxw_col_t>(ncols - 1));
    }
  }
  lxw_error e = workbook_close(wb.release());
  if (e != LXW_NO_ERROR) fail(path, e);
}

}  // namespace crucible
