// Spreading a run's workers over the visible GPUs: worker slot k runs with CUDA_VISIBLE_DEVICES
// set to the (k mod n)-th of the n devices, before anything in it starts CUDA, so each worker
// (and each candidate process it forks) sees one GPU as device 0.
#pragma once

#include <string>
#include <vector>

namespace crucible {

// The devices CUDA would show this process: the entries of CUDA_VISIBLE_DEVICES when it is set
// (indices, UUIDs or MIG names, as given), else "0" .. "n-1" for the n GPUs the NVIDIA driver
// lists in /proc/driver/nvidia/gpus (none without the driver).
std::vector<std::string> visible_gpus();

// The devices a run spreads its workers over, from --gpus: "auto" (the default: every visible
// device when there are two or more, else none, and the workers see what the environment
// shows them), "all" (every visible device), or a comma-separated list of entries of
// visible_gpus(). `cuda_index_named` is a backend of the run that names its device
// (aten:cuda:1), which a worker that sees one GPU could not find: spreading is then refused
// where asked for and skipped under "auto". Usage errors name --gpus.
std::vector<std::string> plan_gpus(const std::string& flag, const std::string& cuda_index_named);

// Whether a backend spec names a CUDA device by its index (aten:cuda:1, where the part after
// "cuda:" is an index). dir:cuda:<folder> runs on each worker's own GPU and names none.
bool names_cuda_index(const std::string& spec);

// In a worker (after fork, before anything starts CUDA): shows it its one device of `gpus`
// for its slot (no effect when `gpus` is empty).
void assign_worker_gpu(const std::vector<std::string>& gpus, int slot);

}  // namespace crucible
