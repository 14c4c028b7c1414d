// The scripted model server of the generate tests (tests/llm/scripted_server.py), started on
// loopback for one test and stopped with it.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "e2e/cli_helpers.h"

namespace crucible::llm_test {

// The text of a kernel of tests/llm/kernels/.
inline std::string kernel_source(const std::string& name) {
  return e2e::read_text(std::string(CRUCIBLE_SOURCE_DIR) + "/tests/llm/kernels/" + name);
}

class ScriptedServer {
 public:
  // Starts the server with `script` (see scripted_server.py) in `dir`.
  ScriptedServer(const std::string& dir, const nlohmann::json& script) : dir_(dir) {
    const std::string script_path = dir + "/script.json";
    std::ofstream(script_path) << script.dump(2);
    const std::string port_file = dir + "/port";
    log_ = dir + "/requests.jsonl";
    std::filesystem::remove(port_file);
    std::filesystem::remove(log_);
    const std::string server = std::string(CRUCIBLE_SOURCE_DIR) + "/tests/llm/scripted_server.py";
    pid_ = fork();
    if (pid_ == 0) {
      execlp("python3", "python3", server.c_str(), script_path.c_str(), port_file.c_str(),
             log_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 200 && !std::filesystem::exists(port_file); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    port_ = e2e::read_text(port_file);
  }
  ~ScriptedServer() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  bool started() const { return !port_.empty(); }
  std::string url() const { return "http://127.0.0.1:" + port_; }
  // The log so far: each request as it arrived (api, op, index, kind, t) and again as its
  // answer was sent (kind "done").
  std::vector<nlohmann::json> requests() const {
    return std::filesystem::exists(log_) ? e2e::read_jsonl(log_) : std::vector<nlohmann::json>{};
  }
  int requests_for(const std::string& op) const {
    int n = 0;
    for (const auto& r : requests()) n += r.value("op", "") == op && r.value("kind", "") != "done";
    return n;
  }

 private:
  std::string dir_, log_, port_;
  pid_t pid_ = -1;
};

// A step of a script answering with a kernel of tests/llm/kernels/.
inline nlohmann::json code_step(const std::string& kernel) {
  return {{"code", kernel_source(kernel)}};
}

}  // namespace crucible::llm_test
