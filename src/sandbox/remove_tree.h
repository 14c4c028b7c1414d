// Removes a folder and everything under it with plain system calls, never std::filesystem.
//
// A crucible built against a pip PyTorch loads libtorch, which exports its own copy of
// std::filesystem's out-of-line functions (built with another libstdc++); crucible's calls bind
// to them, and remove_all of that copy crashed at exit in every sandboxed run. Scratch folders
// and cache entries, which kernels fill with whatever they like, are removed here instead.
#pragma once

#include <string>

namespace crucible {

// Removes `path` (a folder or a file) and all it holds; symbolic links are removed, never
// followed; folders a kernel left without permissions are opened up first. Returns "" on
// success, else the first error ("<path>: <reason>"); a missing `path` is success.
std::string remove_tree(const std::string& path);

}  // namespace crucible
