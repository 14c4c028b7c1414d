// Reading .dynsym of an ELF64 file.
#include "backends/dir/elf_symbols.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "crucible/core/error.h"

namespace crucible::dir {

std::vector<std::string> exported_symbols(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) input_error(path, "cannot read the compiled kernel library");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto bad = [&](const char* what) {
    input_error(path, std::string("not an ELF64 library: ") + what);
  };
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0 ||
      bytes[EI_CLASS] != ELFCLASS64)
    bad("bad header");
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shoff + uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) > bytes.size())
    bad("bad section table");
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, bytes.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  };
  std::vector<std::string> out;
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh = section(i);
    if (sh.sh_type != SHT_DYNSYM) continue;
    if (sh.sh_link >= eh.e_shnum || sh.sh_entsize != sizeof(Elf64_Sym) ||
        sh.sh_offset + sh.sh_size > bytes.size())
      bad("bad .dynsym");
    Elf64_Shdr strtab = section(sh.sh_link);
    if (strtab.sh_offset + strtab.sh_size > bytes.size()) bad("bad .dynstr");
    for (size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, bytes.data() + sh.sh_offset + k * sizeof(Elf64_Sym), sizeof sym);
      unsigned bind = ELF64_ST_BIND(sym.st_info), type = ELF64_ST_TYPE(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
          (type != STT_FUNC && type != STT_OBJECT) || sym.st_name >= strtab.sh_size)
        continue;
      const char* name = bytes.data() + strtab.sh_offset + sym.st_name;
      out.emplace_back(name, strnlen(name, strtab.sh_size - sym.st_name));
    }
  }
  return out;
}

}  // namespace crucible::dir
