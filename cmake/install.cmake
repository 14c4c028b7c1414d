# Install rules and the CMake package config, so that a plugin builds against an installed
# crucible with find_package(crucible) and links crucible::kernel_abi.
#
#   cmake --install build --prefix <dir>                      everything
#   cmake --install build --prefix <dir> --component devel    headers + package config only
#
# Components: `runtime` (the crucible program, and the aten backend's library in
# <libdir>/crucible when libtorch was found), `devel` (headers, crucible::kernel_abi, the
# package config) and `library` (libcrucible.a, imported as crucible::crucible when present).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CRUCIBLE_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/crucible)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/crucible
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT devel
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(TARGETS crucible_kernel_abi EXPORT crucibleKernelAbiTargets COMPONENT devel)
install(EXPORT crucibleKernelAbiTargets NAMESPACE crucible::
  DESTINATION ${CRUCIBLE_CMAKE_INSTALL_DIR} COMPONENT devel)

install(TARGETS crucible RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
# The prompt templates of `crucible generate` (found at <bindir>/../share/crucible/prompts).
install(DIRECTORY ${CMAKE_SOURCE_DIR}/data/prompts
  DESTINATION ${CMAKE_INSTALL_DATADIR}/crucible COMPONENT runtime)
install(FILES $<TARGET_FILE:crucible_lib> DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library)

configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/crucibleConfig.cmake.in
  ${CMAKE_BINARY_DIR}/generated/crucibleConfig.cmake
  INSTALL_DESTINATION ${CRUCIBLE_CMAKE_INSTALL_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/generated/crucibleConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/generated/crucibleConfig.cmake
  ${CMAKE_BINARY_DIR}/generated/crucibleConfigVersion.cmake
  DESTINATION ${CRUCIBLE_CMAKE_INSTALL_DIR} COMPONENT devel)
