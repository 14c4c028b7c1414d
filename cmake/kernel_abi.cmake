# The C kernel ABI (include/crucible/kernel.h, kernel.hpp) as an INTERFACE target, and the
# kernel libraries crucible's own tests load: the example kernels as one plugin, and the small
# test plugins of tests/fixtures/plugins/ (one MODULE library per .c/.cc file).
find_path(CRUCIBLE_DLPACK_INCLUDE_DIR dlpack/dlpack.h)
if(NOT CRUCIBLE_DLPACK_INCLUDE_DIR)
  message(FATAL_ERROR "DLPack's dlpack/dlpack.h was not found: install libdlpack-dev "
                      "(scripts/install-deps.sh)")
endif()
# Kernel folders are compiled on the fly with the same DLPack headers (kernel_compiler.cpp).
set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/backends/dir/kernel_compiler.cpp APPEND PROPERTY
  COMPILE_DEFINITIONS CRUCIBLE_DLPACK_INCLUDE_DIR="${CRUCIBLE_DLPACK_INCLUDE_DIR}")

add_library(crucible_kernel_abi INTERFACE)
add_library(crucible::kernel_abi ALIAS crucible_kernel_abi)
set_target_properties(crucible_kernel_abi PROPERTIES EXPORT_NAME kernel_abi)
target_include_directories(crucible_kernel_abi INTERFACE
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
  $<BUILD_INTERFACE:${CRUCIBLE_DLPACK_INCLUDE_DIR}>
  $<INSTALL_INTERFACE:include>)
target_link_libraries(crucible_lib PUBLIC crucible_kernel_abi)

if(CRUCIBLE_BUILD_TESTS AND TARGET crucible_tests)
  set(CRUCIBLE_TEST_PLUGIN_DIR ${CMAKE_BINARY_DIR}/test_plugins)
  file(GLOB CRUCIBLE_TEST_PLUGIN_SOURCES CONFIGURE_DEPENDS
    ${CMAKE_SOURCE_DIR}/tests/fixtures/plugins/*.c ${CMAKE_SOURCE_DIR}/tests/fixtures/plugins/*.cc)
  file(GLOB CRUCIBLE_EXAMPLE_KERNELS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/kernels/*/*.cpp)
  add_library(crucible_test_plugin_examples MODULE ${CRUCIBLE_EXAMPLE_KERNELS})
  set_target_properties(crucible_test_plugin_examples PROPERTIES OUTPUT_NAME examples)
  set(CRUCIBLE_TEST_PLUGIN_TARGETS crucible_test_plugin_examples)
  foreach(src ${CRUCIBLE_TEST_PLUGIN_SOURCES})
    get_filename_component(name ${src} NAME_WE)
    add_library(crucible_test_plugin_${name} MODULE ${src})
    set_target_properties(crucible_test_plugin_${name} PROPERTIES OUTPUT_NAME ${name})
    list(APPEND CRUCIBLE_TEST_PLUGIN_TARGETS crucible_test_plugin_${name})
  endforeach()
  foreach(t ${CRUCIBLE_TEST_PLUGIN_TARGETS})
    target_link_libraries(${t} PRIVATE crucible_kernel_abi)
    target_compile_options(${t} PRIVATE -Wall -Wextra -Wpedantic)
    if(CRUCIBLE_WERROR)
      target_compile_options(${t} PRIVATE -Werror)
    endif()
    set_target_properties(${t} PROPERTIES PREFIX "lib" C_STANDARD 99 C_STANDARD_REQUIRED ON
      C_EXTENSIONS OFF CXX_STANDARD 17 LIBRARY_OUTPUT_DIRECTORY ${CRUCIBLE_TEST_PLUGIN_DIR})
  endforeach()
  add_dependencies(crucible_tests ${CRUCIBLE_TEST_PLUGIN_TARGETS})
  target_compile_definitions(crucible_tests PRIVATE
    CRUCIBLE_TEST_PLUGIN_DIR="${CRUCIBLE_TEST_PLUGIN_DIR}"
    CRUCIBLE_BINARY_DIR="${CMAKE_BINARY_DIR}"
    CRUCIBLE_CMAKE_COMMAND="${CMAKE_COMMAND}")
endif()
