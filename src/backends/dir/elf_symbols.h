// The symbols a shared library defines, read from its ELF dynamic symbol table without loading
// it (the process that compiles kernel folders never runs their code).
#pragma once

#include <string>
#include <vector>

namespace crucible::dir {

// Names of the functions and objects `path` (an ELF64 shared library) exports. Throws an Input
// error when the file is not one.
std::vector<std::string> exported_symbols(const std::string& path);

}  // namespace crucible::dir
