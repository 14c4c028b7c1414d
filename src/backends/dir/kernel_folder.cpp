// Reading a kernel folder: sub-folder names -> catalog ops, and each op's source file.
#include "backends/dir/kernel_folder.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "crucible/core/error.h"
#include "crucible/ops/op.h"

namespace crucible::dir {

namespace fs = std::filesystem;

namespace {

bool is_source(const fs::path& p) {
  std::string ext = p.extension().string();
  if (ext == ".py") return p.filename() != "__init__.py";
  return ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".cu";
}

// Catalog overloads whose base name is `base`, for suggestions.
std::vector<std::string> overloads_of(const std::string& base) {
  std::vector<std::string> out;
  for (const OpDef* op : OpRegistry::catalog().all())
    if (op_base_name(op->name) == base) out.push_back(op->name.substr(5));
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::string op_of_folder_name(const std::string& name, std::string* why) {
  const OpRegistry& cat = OpRegistry::catalog();
  std::string n = name.starts_with("aten.") ? name.substr(5) : name;
  if (n.find('.') != std::string::npos) {
    if (cat.find("aten." + n)) return "aten." + n;
    std::string base = n.substr(0, n.find('.'));
    std::vector<std::string> alts = overloads_of(base);
    if (why)
      *why = alts.empty() ? fmt::format(
                                "'{}' is not an op in crucible's catalog (`crucible ops` "
                                "lists them)",
                                name)
                          : fmt::format(
                                "'{}' is not an op in crucible's catalog; overloads of {} "
                                "are: {}",
                                name, base, join(alts));
    return "";
  }
  // "relu__default", "add___Tensor" (add_.Tensor): a double underscore stands for the dot.
  std::vector<std::string> hits;
  for (size_t pos = n.find("__"); pos != std::string::npos; pos = n.find("__", pos + 1)) {
    std::string candidate = "aten." + n.substr(0, pos) + "." + n.substr(pos + 2);
    if (cat.find(candidate) && std::find(hits.begin(), hits.end(), candidate) == hits.end())
      hits.push_back(candidate);
  }
  if (hits.size() == 1) return hits[0];
  if (hits.size() > 1) {
    if (why)
      *why = fmt::format("'{}' could mean {}; name the folder with a dot instead ({})", name,
                         join(hits), hits[0].substr(5));
    return "";
  }
  // A bare base name (BackendBench's `relu/`): its `default` overload.
  if (cat.find("aten." + n + ".default")) return "aten." + n + ".default";
  std::vector<std::string> alts = overloads_of(n);
  if (why)
    *why = alts.empty() ? fmt::format(
                              "'{}' is not an op in crucible's catalog (name folders "
                              "<op>.<overload>, e.g. relu.default; `crucible ops` lists them)",
                              name)
                        : fmt::format("'{}' names no overload; rename the folder to one of: {}",
                                      name, join(alts));
  return "";
}

std::vector<std::string> kernel_impl_symbols(const std::string& op) {
  std::string n = op.starts_with("aten.") ? op.substr(5) : op;
  size_t dot = n.find('.');
  std::string base = n.substr(0, dot);
  std::string overload = dot == std::string::npos ? "default" : n.substr(dot + 1);
  return {base + "__" + overload + "_kernel_impl", base + "_" + overload + "_kernel_impl",
          base + "_kernel_impl"};
}

FolderScan scan_kernel_folder(const std::string& folder) {
  std::error_code ec;
  fs::path root = fs::absolute(folder, ec);
  if (ec || !fs::is_directory(root, ec))
    usage_error(
        fmt::format("dir:{}: no such folder (a kernel folder holds one sub-folder per op: "
                    "<folder>/relu.default/relu.default.cpp; see docs/kernel-folders.md)",
                    folder));
  std::vector<fs::path> subdirs;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory() && !e.path().filename().string().starts_with("."))
      subdirs.push_back(e.path());
  if (ec) usage_error(fmt::format("dir:{}: cannot read the folder: {}", folder, ec.message()));
  std::sort(subdirs.begin(), subdirs.end());

  FolderScan scan;
  std::vector<std::string> seen_ops;
  for (const fs::path& d : subdirs) {
    const std::string name = d.filename().string();
    std::string why;
    std::string op = op_of_folder_name(name, &why);
    if (op.empty()) {
      scan.ignored.push_back(name + "/: " + why);
      continue;
    }
    std::vector<fs::path> sources;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.is_regular_file() && is_source(e.path())) sources.push_back(e.path());
    std::sort(sources.begin(), sources.end());
    // Preferred: the file named like its folder (or like the op); else the folder's only source.
    const std::string dotted = op.substr(5);
    std::vector<fs::path> named;
    // BackendBench's generated kernels: <op>__<overload>/<op>__<overload>_implementation_v1.py.
    for (const fs::path& s : sources)
      if (s.stem() == name || s.stem() == dotted || s.stem() == name + "_implementation_v1")
        named.push_back(s);
    std::vector<fs::path>& pick = named.empty() ? sources : named;
    if (pick.empty()) {
      scan.ignored.push_back(
          fmt::format("{}/: no kernel source (expected {}/{}.cpp, .cu or .py)", name, name, name));
      continue;
    }
    if (pick.size() > 1) {
      std::vector<std::string> names;
      for (const fs::path& s : pick) names.push_back(s.filename().string());
      scan.ignored.push_back(
          fmt::format("{}/: several kernel sources ({}); name the one to use "
                      "{}.cpp (or .cu, .py)",
                      name, join(names), name));
      continue;
    }
    if (std::find(seen_ops.begin(), seen_ops.end(), op) != seen_ops.end()) {
      scan.ignored.push_back(
          fmt::format("{}/: a second folder for {}; only the first is used", name, op));
      continue;
    }
    seen_ops.push_back(op);
    KernelSource k;
    k.op = op;
    k.folder = name;
    k.source = pick[0].string();
    k.cuda = pick[0].extension() == ".cu";
    k.python = pick[0].extension() == ".py";
    scan.kernels.push_back(std::move(k));
  }
  return scan;
}

}  // namespace crucible::dir
