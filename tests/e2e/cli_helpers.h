// Helpers for end-to-end tests that drive the real `crucible` binary.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/remove_tree.h"

namespace crucible::e2e {

// Whether a CUDA device is visible, asked of nvidia-smi (the test process never starts CUDA).
// The GPU-labelled tests skip where it is not.
inline bool gpu_visible() {
  static const bool visible = [] {
    FILE* p = popen("nvidia-smi -L 2>/dev/null", "r");
    if (!p) return false;
    std::string out;
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
    return out.find("GPU ") != std::string::npos;
  }();
  return visible;
}

struct Output {
  int status = -1;
  std::string out;  // stdout and stderr together
};

// Runs a shell command and captures its output (stderr included) and exit status.
inline Output run_shell(const std::string& cmd) {
  Output o;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
  int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

// Runs `<env> crucible <args>` through the shell (env: "NAME=value ..." or empty) and captures
// its output and exit status.
inline Output crucible_env(const std::string& env, const std::string& args) {
  return run_shell((env.empty() ? "" : env + " ") + std::string(CRUCIBLE_BINARY) + " " + args);
}

// Runs `crucible <args>` through the shell and captures its output and exit status.
inline Output crucible(const std::string& args) { return crucible_env("", args); }

// A fresh, empty folder under the build's temporary space.
inline std::string temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("crucible-e2e-" + name + "-" + std::to_string(::getpid()));
  remove_tree(dir.string());  // never std::filesystem::remove_all: see sandbox/remove_tree.h
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

inline std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace crucible::e2e
