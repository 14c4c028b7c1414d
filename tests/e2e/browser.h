// Headless Chromium (Debian's `chromium`) for the tests of report.html: the page's DOM after
// its scripts ran, what its console printed, and a screenshot.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/cli_helpers.h"
#include "sandbox/remove_tree.h"

namespace crucible::e2e {

// The chromium binary, or "" when it is not installed.
inline std::string chromium_binary() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const std::string cmd = std::string("command -v ") + name + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) continue;
    char buf[512] = {0};
    const bool found = fgets(buf, sizeof buf, p) != nullptr;
    pclose(p);
    if (found) {
      std::string path(buf);
      while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
      return path;
    }
  }
  return "";
}

#define CRUCIBLE_REQUIRE_CHROMIUM()                                                            \
  ASSERT_FALSE(::crucible::e2e::chromium_binary().empty())                                     \
      << "chromium is not installed: the HTML report is tested in a real browser. Install it " \
         "with scripts/install-deps.sh (Debian: apt-get install chromium)"

struct Page {
  int status = -1;
  std::string dom;                   // --dump-dom
  std::vector<std::string> console;  // the page's console messages
};

// Loads `url` (file://...#fragment) headless and returns its DOM once its scripts ran, and
// every console message (Chromium logs them as "INFO:CONSOLE(...)" lines on stderr).
inline Page load_page(const std::string& url, const std::string& screenshot = "") {
  const std::string profile = temp_dir("chromium-profile");
  const std::string err = profile + "/stderr.txt";
  std::string cmd = shell_quote(chromium_binary()) +
                    " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions "
                    "--user-data-dir=" +
                    shell_quote(profile) +
                    " --enable-logging=stderr --v=0 --window-size=1280,2400 ";
  cmd += screenshot.empty() ? "--dump-dom " : "--screenshot=" + shell_quote(screenshot) + " ";
  cmd += shell_quote(url) + " 2>" + shell_quote(err);
  Page p;
  FILE* f = popen(("HOME=" + shell_quote(profile) + " timeout 120 " + cmd).c_str(), "r");
  if (!f) return p;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) p.dom.append(buf, n);
  const int st = pclose(f);
  p.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  const std::string log = read_text(err);
  std::regex console_line(R"(:CONSOLE[^\]]*\] (.*))");
  for (std::sregex_iterator it(log.begin(), log.end(), console_line), end; it != end; ++it)
    p.console.push_back((*it)[1].str());
  crucible::remove_tree(std::filesystem::path(profile).string());
  return p;
}

inline std::string file_url(const std::string& path, const std::string& fragment = "") {
  return "file://" + std::filesystem::absolute(path).string() +
         (fragment.empty() ? "" : "#" + fragment);
}

// The ops of the table's rows, in the page's order.
inline std::vector<std::string> table_ops(const std::string& dom) {
  std::vector<std::string> ops;
  std::regex row(R"re(<tr data-op="([^"]*)")re");
  for (std::sregex_iterator it(dom.begin(), dom.end(), row), end; it != end; ++it)
    ops.push_back((*it)[1].str());
  return ops;
}

// The value of attribute `attr` of the element with id `id` ("" when absent).
inline std::string attribute_of(const std::string& dom, const std::string& id,
                                const std::string& attr) {
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t start = dom.rfind('<', at), end = dom.find('>', at);
  const std::string tag = dom.substr(start, end - start);
  std::smatch m;
  if (std::regex_search(tag, m, std::regex(" " + attr + "=\"([^\"]*)\""))) return m[1].str();
  return "";
}

}  // namespace crucible::e2e
