# The worker sandbox (src/eval/sandbox.cpp) that untrusted kernels (plugin:, dir:) run in:
# libseccomp from Debian (libseccomp-dev), found with pkg-config. Landlock needs no library
# (three system calls declared in <linux/landlock.h>). Linked by full path, so that an exported
# crucible_lib needs no imported target to be re-created by its users.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SECCOMP REQUIRED libseccomp>=2.4)
target_include_directories(crucible_lib PRIVATE ${SECCOMP_INCLUDE_DIRS})
target_link_libraries(crucible_lib PRIVATE ${SECCOMP_LINK_LIBRARIES})
