// XLSX workbooks: written through libxlsxwriter, read back with Python's zipfile (the real
// container format), sheet names made valid.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "crucible/core/error.h"
#include "crucible/report/xlsx.h"

namespace crucible {
namespace {

std::string run(const std::string& cmd) {
  std::string out_path = testing::TempDir() + "/xlsx_cmd_out.txt";
  int rc = std::system((cmd + " > " + out_path + " 2>&1").c_str());
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(rc, 0) << ss.str();
  return ss.str();
}

TEST(Xlsx, SheetNamesAreValidAndUnique) {
  EXPECT_EQ(xlsx_sheet_name("gpt2/fwd:[x]", {}), "gpt2_fwd__x_");
  EXPECT_EQ(xlsx_sheet_name(std::string(40, 'a'), {}).size(), 31u);
  EXPECT_EQ(xlsx_sheet_name("Summary", {"summary"}), "Summary~2");
  EXPECT_EQ(xlsx_sheet_name("", {}), "sheet");
}

TEST(Xlsx, WritesSheetsThatReadBack) {
  auto path = std::filesystem::path(testing::TempDir()) / "crucible_test.xlsx";
  XlsxSheet summary{
      .name = "summary",
      .header = {"model", "nodes", "first divergence"},
      .rows = {{std::string("gpt2-tiny-fwd"), 200.0, std::string("aten.gelu.default")},
               {std::string("resnet"), 169.0, XlsxCell{}}}};
  XlsxSheet model{
      .name = "gpt2/tiny",
      .header = {"op", "pcc"},
      .rows = {{std::string("aten.mm.default"), 0.999}, {std::string("aten.exp"), std::nan("")}}};
  write_xlsx(path, {summary, model});
  ASSERT_TRUE(std::filesystem::exists(path));
  std::string py =
      "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); "
      "print(z.read('xl/workbook.xml').decode()); "
      "print(z.read('xl/sharedStrings.xml').decode()); "
      "print(z.read('xl/worksheets/sheet1.xml').decode())";
  std::string out = run("python3 -c \"" + py + "\" " + path.string());
  EXPECT_NE(out.find("name=\"summary\""), std::string::npos) << out;
  EXPECT_NE(out.find("name=\"gpt2_tiny\""), std::string::npos) << out;
  EXPECT_NE(out.find("aten.gelu.default"), std::string::npos);
  EXPECT_NE(out.find("<v>200</v>"), std::string::npos) << out;
  EXPECT_NE(out.find(">nan<"), std::string::npos);  // NaN written as text
  EXPECT_NE(out.find("autoFilter"), std::string::npos);
}

TEST(Xlsx, UnwritablePathIsAnInputErrorNamingIt) {
  try {
    write_xlsx("/nonexistent-dir/x.xlsx", {XlsxSheet{.name = "s", .header = {"a"}, .rows = {}}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.xlsx"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crucible
