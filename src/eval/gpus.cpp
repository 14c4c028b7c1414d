// Spreading a run's workers over the visible GPUs.
#include "crucible/eval/gpus.h"

#include <cstdlib>
#include <filesystem>
#include <set>

#include "crucible/core/error.h"

namespace crucible {

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = s.find(',', start);
    std::string t = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!t.empty() && t.front() == ' ') t.erase(t.begin());
    while (!t.empty() && t.back() == ' ') t.pop_back();
    out.push_back(t);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> visible_gpus() {
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::vector<std::string> out;
    // CUDA stops at the first entry it cannot read; an empty variable shows no device.
    for (const std::string& e : split(env)) {
      if (e.empty()) break;
      out.push_back(e);
    }
    return out;
  }
  std::error_code ec;
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    if (e.is_directory(ec)) ++n;
  }
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

bool names_cuda_index(const std::string& spec) {
  if (spec.rfind("dir:", 0) == 0) return false;  // dir:cuda:<folder>: a folder, not a device
  const size_t at = spec.rfind("cuda:");
  if (at == std::string::npos || (at > 0 && spec[at - 1] != ':')) return false;
  const std::string index = spec.substr(at + 5);
  return !index.empty() && index.find_first_not_of("0123456789") == std::string::npos;
}

std::vector<std::string> plan_gpus(const std::string& flag, const std::string& cuda_index_named) {
  const std::vector<std::string> visible = visible_gpus();
  if (flag.empty() || flag == "auto") {
    if (visible.size() < 2 || !cuda_index_named.empty()) return {};
    return visible;
  }
  if (!cuda_index_named.empty())
    usage_error("--gpus " + flag + ": the backend " + cuda_index_named +
                " names its CUDA device, which a worker shown one GPU would not find; write "
                "aten:cuda (each worker's own GPU) or leave --gpus out");
  if (visible.empty())
    usage_error("--gpus " + flag +
                ": no GPU is visible (CUDA_VISIBLE_DEVICES is empty or unset and the NVIDIA "
                "driver lists no GPU in /proc/driver/nvidia/gpus)");
  if (flag == "all") return visible;
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& e : split(flag)) {
    if (e.empty())
      usage_error("--gpus '" + flag + "': an empty entry; give devices such as 0,1 or 'all'");
    bool known = false;
    for (const std::string& v : visible) known = known || v == e;
    if (!known) {
      std::string list;
      for (const std::string& v : visible) list += (list.empty() ? "" : ",") + v;
      usage_error("--gpus '" + flag + "': no visible GPU '" + e + "' (visible: " + list + ")");
    }
    if (!seen.insert(e).second)
      usage_error("--gpus '" + flag + "': GPU '" + e + "' is given twice");
    out.push_back(e);
  }
  return out;
}

void assign_worker_gpu(const std::vector<std::string>& gpus, int slot) {
  if (gpus.empty() || slot < 0) return;
  const std::string& d = gpus[static_cast<size_t>(slot) % gpus.size()];
  setenv("CUDA_VISIBLE_DEVICES", d.c_str(), 1);
}

}  // namespace crucible
