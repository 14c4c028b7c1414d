// Spreadsheets (XLSX, through Debian's libxlsxwriter): tables of text and numbers, one sheet
// per table, as the op-by-op flow writes them (one sheet per model plus a summary).
#pragma once

#include <filesystem>
#include <string>
#include <variant>
#include <vector>

namespace crucible {

// An empty cell, a string, or a number (NaN and infinities are written as text: XLSX has no
// representation for them).
using XlsxCell = std::variant<std::monostate, std::string, double>;

struct XlsxSheet {
  std::string name;  // made valid for Excel: at most 31 characters, no []:*?/\, unique
  std::vector<std::string> header;
  std::vector<std::vector<XlsxCell>> rows;
};

// The sheet name Excel accepts for `name` (invalid characters become '_', cut to 31
// characters), made unique against `taken` by a numeric suffix.
std::string xlsx_sheet_name(const std::string& name, const std::vector<std::string>& taken);

// Writes the sheets (header row bold and frozen, an autofilter over the table, column widths
// fitted to the text) to `path`, replacing it. Raises an Input error naming the path when the
// file cannot be written.
void write_xlsx(const std::filesystem::path& path, const std::vector<XlsxSheet>& sheets);

}  // namespace crucible
