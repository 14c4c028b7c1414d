// The example plugin: its name and version. Its kernels are the files of examples/kernels/,
// each registering itself with CRUCIBLE_KERNEL; kernel.hpp defines the entry point
// crucible_plugin_v1() that lists them all.
#include <crucible/kernel.hpp>

CRUCIBLE_PLUGIN_NAME("example-plugin", "0.1.0")
