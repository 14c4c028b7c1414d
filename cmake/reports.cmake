# Report writers: XLSX workbooks through Debian's libxlsxwriter.
find_package(PkgConfig REQUIRED)
pkg_check_modules(XLSXWRITER REQUIRED IMPORTED_TARGET xlsxwriter)
target_link_libraries(crucible_lib PRIVATE PkgConfig::XLSXWRITER)
