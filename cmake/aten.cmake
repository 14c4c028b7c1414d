# The `aten` backend (src/backends/aten/): built when CMake finds libtorch. On Debian 12 that is
# libtorch-dev (PyTorch 1.13, CPU); a PyTorch 2.x installation works too, CUDA builds included:
#   cmake --preset default -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
# The aten sources build as a library of their own, libcrucible_aten.so (a MODULE beside the
# crucible program), that crucible loads the first time a run names aten
# (src/backends/aten_module.h): libtorch's static initialisers take ~0.7 s, which every other
# run, and every test process, would otherwise pay at start-up. libtorch's headers and flags
# apply to these sources only. The library binds to the program's own crucible symbols, so each
# program that may load it links all of crucible_lib and exports crucible's symbols
# (crucible_link_lib in the top-level CMakeLists.txt). Included at the end of the top-level
# CMakeLists.txt (after tests/ and bench/), so that it can reach their targets too.
if(CRUCIBLE_SANITIZE)
  set(_crucible_aten_default OFF)  # libtorch is not instrumented; sanitizer builds leave it out
else()
  set(_crucible_aten_default ON)
endif()
option(CRUCIBLE_WITH_ATEN "Build the aten backend when libtorch is found" ${_crucible_aten_default})

# The aten sources never build inside crucible_lib's own target (its glob picks them up).
get_target_property(_crucible_lib_sources crucible_lib SOURCES)
list(FILTER _crucible_lib_sources EXCLUDE REGEX "/src/backends/aten/")

set(CRUCIBLE_HAVE_ATEN OFF)
if(CRUCIBLE_WITH_ATEN)
  find_package(Torch QUIET)
  if(TORCH_FOUND AND "${TORCH_CXX_FLAGS}" MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
    message(WARNING "libtorch at ${TORCH_INSTALL_PREFIX} uses the pre-C++11 libstdc++ ABI, which "
      "cannot be linked with crucible: the aten backend is left out. Use a libtorch built with "
      "the C++11 ABI (Debian's libtorch-dev, PyTorch >= 2.7 wheels, or the cxx11-abi download).")
  elseif(TORCH_FOUND)
    set(CRUCIBLE_HAVE_ATEN ON)
  endif()
endif()

if(NOT CRUCIBLE_HAVE_ATEN)
  # Nor the loader of the backend's library.
  list(FILTER _crucible_lib_sources EXCLUDE REGEX "/src/backends/aten_module\\.cpp$")
  set_property(TARGET crucible_lib PROPERTY SOURCES ${_crucible_lib_sources})
  message(STATUS "aten backend: off (libtorch not found; scripts/install-deps.sh installs it)")
  return()
endif()
set_property(TARGET crucible_lib PROPERTY SOURCES ${_crucible_lib_sources})
include(GNUInstallDirs)
message(STATUS "aten backend: libtorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")

file(GLOB CRUCIBLE_ATEN_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/backends/aten/*.cpp)
add_library(crucible_aten MODULE ${CRUCIBLE_ATEN_SOURCES})
add_dependencies(crucible_aten crucible_git_commit)
target_include_directories(crucible_aten PRIVATE
  ${CMAKE_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/generated ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(crucible_aten PRIVATE torch nlohmann_json::nlohmann_json fmt::fmt
  crucible_kernel_abi)
target_compile_options(crucible_aten PRIVATE ${CRUCIBLE_WARNINGS})
# Installed, it keeps the run path of a libtorch outside the system's folders (a PyTorch wheel's).
set_target_properties(crucible_aten PROPERTIES PREFIX "lib" OUTPUT_NAME crucible_aten
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR} INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS crucible_aten LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/crucible
  COMPONENT runtime)

# The registry (src/backends/builtin.cpp) registers the backend and the loader
# (src/backends/aten_module.cpp) finds its library; tests and benchmarks named *aten* test it
# instead of the build-without-ATen behaviour.
set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/backends/builtin.cpp
  APPEND PROPERTY COMPILE_DEFINITIONS CRUCIBLE_HAVE_ATEN CRUCIBLE_ATEN_LIBTORCH="${Torch_VERSION}")
file(RELATIVE_PATH _aten_installed ${CMAKE_INSTALL_FULL_BINDIR}
  ${CMAKE_INSTALL_FULL_LIBDIR}/crucible/libcrucible_aten.so)
set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/backends/aten_module.cpp APPEND PROPERTY
  COMPILE_DEFINITIONS CRUCIBLE_ATEN_INSTALL_RELATIVE="${_aten_installed}"
  CRUCIBLE_ATEN_BUILD_PATH="${CMAKE_BINARY_DIR}/libcrucible_aten.so")
foreach(_target crucible crucible_tests ${CRUCIBLE_BENCH_TARGETS})
  if(TARGET ${_target})
    add_dependencies(${_target} crucible_aten)
  endif()
endforeach()
foreach(_dir tests bench)
  if(IS_DIRECTORY ${CMAKE_SOURCE_DIR}/${_dir} AND EXISTS ${CMAKE_BINARY_DIR}/${_dir})
    file(GLOB_RECURSE _aten_files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${_dir}/*aten*.cpp)
    if(_aten_files)
      set_property(SOURCE ${_aten_files} DIRECTORY ${CMAKE_SOURCE_DIR}/${_dir}
        APPEND PROPERTY COMPILE_DEFINITIONS CRUCIBLE_HAVE_ATEN)
    endif()
  endif()
endforeach()

# The conformance runs (tests/e2e/test_aten_conformance.cpp) carry the ctest label `aten`
# (`ctest -L aten` runs just them) and a longer time limit than the other tests.
if(TARGET crucible_tests)
  set(_labels_file ${CMAKE_BINARY_DIR}/aten_test_labels.cmake)
  # Included after gtest_discover_tests' own file, so the discovered tests exist by then.
  file(WRITE ${_labels_file} "set_tests_properties(AtenConformance.Opinfo AtenConformance.Traces "
    "PROPERTIES LABELS aten TIMEOUT 1800)\n")
  set_property(DIRECTORY ${CMAKE_SOURCE_DIR}/tests APPEND PROPERTY TEST_INCLUDE_FILES ${_labels_file})
endif()
