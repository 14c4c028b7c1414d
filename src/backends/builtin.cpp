// The backends built into this binary.
#include "backends/backend_state.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/dir/dir_backend.h"
#include "backends/faulty/faulty_backend.h"
#include "backends/flag_gems/flag_gems_backend.h"
#include "backends/plugin/kernel_library.h"
#include "backends/ref/ref_backend.h"
#include "crucible/backends/backend.h"
#ifdef CRUCIBLE_HAVE_ATEN
#include "backends/aten_module.h"
#endif

namespace crucible {

void register_builtin_backends(BackendRegistry& r) {
  r.add({"ref", "golden reference: simple loops in f64, rounded once", true,
         [](const std::string&) { return make_ref_backend(); }});
  r.add({"cpu", "fast: vectorized (AVX-512/AVX2/portable) multithreaded kernels", true,
         [](const std::string&) { return make_cpu_backend(); }});
#ifdef CRUCIBLE_HAVE_ATEN
  // libtorch loads with the backend's library, on first use (src/backends/aten_module.h).
  const auto load = [] { load_aten_module(); };
  r.add({"aten",
         "ATen through libtorch's dispatcher, on the CPU (libtorch " CRUCIBLE_ATEN_LIBTORCH ")",
         true, [](const std::string& spec) { return make_aten_backend_from_module(spec); }, load});
  r.add({"aten:", "aten:cuda[:N]: ATen on a CUDA device (a libtorch with CUDA)", true,
         [](const std::string& spec) { return make_aten_backend_from_module(spec); }, load});
#endif
  r.add({"plugin:", "plugin:<lib.so>: a plugin library of C ABI kernels (docs/kernel-abi.md)", true,
         [](const std::string& spec) { return make_plugin_backend(spec); }});
  r.add({"dir:",
         "dir:<folder>: kernel sources, one op per sub-folder, compiled on the fly; "
         "dir:cuda:<folder> runs its Python kernels on CUDA (docs/kernel-folders.md)",
         true, [](const std::string& spec) { return make_dir_backend(spec); }});
  r.add({"flag_gems",
         "FlagGems' Triton kernels (its own op table) from the Python environment of "
         "$CRUCIBLE_PYTHON, on CUDA (docs/gpu.md, \"FlagGems\")",
         true, [](const std::string& spec) { return make_flag_gems_backend(spec); }});
  r.add({"faulty", "kernels that are wrong on purpose (for crucible's own tests)", false,
         [](const std::string&) { return make_faulty_backend(); }});
}

std::string backend_state(const std::string& name) {
  if (name == "flag_gems") return flag_gems_state();
#ifdef CRUCIBLE_HAVE_ATEN
  if (name == "aten" || name == "aten:") return aten_module_state();
#endif
  return "";
}

}  // namespace crucible
