// manifest.json: command line, version and commit, seed, machine, compiler, backends.
#include "crucible/report/manifest.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "crucible/backends/blas_core.h"
#include "crucible/build_info.h"

namespace crucible {

MachineInfo machine_info() {
  MachineInfo m;
  m.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  static const std::set<std::string> kInteresting = {
      "sse4_2",   "avx",      "avx2",     "fma",         "f16c",        "avx512f",
      "avx512bw", "avx512vl", "avx512dq", "avx512_bf16", "avx512_fp16", "avx512_vnni",
      "avx_vnni", "amx_tile", "amx_bf16", "amx_int8"};
  while (std::getline(cpu, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string val = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && m.cpu_model.empty()) m.cpu_model = val;
    if (key == "flags" && m.cpu_flags.empty()) {
      std::istringstream ss(val);
      std::string f;
      while (ss >> f)
        if (kInteresting.count(f)) m.cpu_flags.push_back(f);
    }
  }
  std::ifstream mem("/proc/meminfo");
  while (std::getline(mem, line)) {
    if (line.rfind("MemTotal:", 0) == 0) {
      std::istringstream ss(line.substr(9));
      uint64_t kb = 0;
      ss >> kb;
      m.memory_bytes = kb * 1024;
    }
  }
  struct utsname u;
  if (uname(&u) == 0) {
    m.os = std::string(u.sysname) + " " + u.release;
    m.hostname = u.nodename;
  }
  return m;
}

nlohmann::json make_manifest(const std::vector<std::string>& argv, uint64_t seed,
                             const nlohmann::json& options,
                             const std::vector<BackendInfo>& backends) {
  using nlohmann::json;
  MachineInfo m = machine_info();
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  json bj = json::array();
  for (const BackendInfo& b : backends)
    bj.push_back(
        {{"role", b.role}, {"name", b.name}, {"version", b.version}, {"device", b.device}});
  return {{"tool", "crucible"},
          {"version", CRUCIBLE_VERSION},
          {"git_commit", CRUCIBLE_GIT_COMMIT},
          {"build_type", CRUCIBLE_BUILD_TYPE},
          {"compiler", CRUCIBLE_CXX_COMPILER},
          {"started_at", stamp},
          {"argv", argv},
          {"seed", seed},
          {"options", options},
          {"machine",
           {{"cpu_model", m.cpu_model},
            {"cpu_flags", m.cpu_flags},
            {"cores", m.cores},
            {"memory_bytes", m.memory_bytes},
            {"os", m.os},
            {"hostname", m.hostname},
            {"blas_core", cpu::blas_core_name()},
            {"openblas_coretype_env", std::getenv("OPENBLAS_CORETYPE")
                                          ? json(std::getenv("OPENBLAS_CORETYPE"))
                                          : json(nullptr)}}},
          {"backends", bj}};
}

}  // namespace crucible
