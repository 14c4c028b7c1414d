# Python kernels of kernel folders (src/backends/python/): CPython embedded through its C API,
# initialised only in candidate processes. Debian's interpreter is the default (its torch is
# python3-torch); a PyTorch in another environment of the same Python version is chosen at run
# time with CRUCIBLE_PYTHON (docs/kernel-folders.md). Without libpython3-dev, Python kernels are
# reported as unusable (with what to install) and everything else builds as before.
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 COMPONENTS Interpreter Development.Embed)
set(_crucible_python_sources ${CMAKE_SOURCE_DIR}/src/backends/python/python_kernel.cpp)
if(Python3_Development.Embed_FOUND)
  message(STATUS "python kernels: CPython ${Python3_VERSION} (${Python3_EXECUTABLE})")
  # Python's headers for the one file that includes them (the other objects keep their flags).
  target_link_libraries(crucible_lib PRIVATE ${Python3_LIBRARIES})
  set_source_files_properties(${_crucible_python_sources} PROPERTIES
    INCLUDE_DIRECTORIES "${Python3_INCLUDE_DIRS}"
    COMPILE_DEFINITIONS "CRUCIBLE_HAVE_PYTHON=1;CRUCIBLE_PYTHON_EXECUTABLE=\"${Python3_EXECUTABLE}\"")
else()
  message(STATUS "python kernels: off (libpython3-dev not found; scripts/install-deps.sh installs it)")
endif()
