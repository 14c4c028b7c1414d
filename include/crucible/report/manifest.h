// manifest.json: what ran, where, with what — enough to reproduce and to compare runs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace crucible {

struct MachineInfo {
  std::string cpu_model;
  std::vector<std::string> cpu_flags;  // the SIMD-relevant ones: avx2, avx512f, ...
  int cores = 0;                       // online logical CPUs
  uint64_t memory_bytes = 0;
  std::string os;  // kernel release
  std::string hostname;
};

MachineInfo machine_info();

struct BackendInfo {
  std::string role;  // "candidate", "reference", "baseline"
  std::string name;
  std::string version;
  std::string device;
};

nlohmann::json make_manifest(const std::vector<std::string>& argv, uint64_t seed,
                             const nlohmann::json& options,
                             const std::vector<BackendInfo>& backends);

}  // namespace crucible
