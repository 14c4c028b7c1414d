# The `cpu` backend (src/backends/cpu): OpenBLAS from Debian, and per-file ISA flags.
# Vector kernels live in files named *_avx512.cpp or *_avx2.cpp; only those files are compiled
# with the wider instruction sets, and the backend calls them only when cpu_features() says the
# processor has them, so one binary runs on every x86-64.
find_package(PkgConfig REQUIRED)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
target_link_libraries(crucible_lib PUBLIC PkgConfig::OPENBLAS)

# -O3: GCC's -O2 vectorizer (very-cheap cost model) leaves loops that need an epilogue scalar.
# -fno-math-errno: the kernels never read errno, and with it set GCC follows a vector square root
# of a negative lane with a call of the scalar sqrtf for each such element (to set errno: about
# 30 ns each, most of an rsqrt of 128 normal values); the results are the same IEEE values.
set(CRUCIBLE_CPU_AVX512_FLAGS -O3 -fno-math-errno -fno-trapping-math -mavx512f -mavx512bw -mavx512vl -mavx2 -mfma
  -mf16c)
set(CRUCIBLE_CPU_AVX2_FLAGS -O3 -fno-math-errno -fno-trapping-math -mavx2 -mfma -mf16c)
file(GLOB CRUCIBLE_CPU_AVX512_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/src/backends/cpu/*_avx512.cpp)
file(GLOB CRUCIBLE_CPU_AVX2_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/src/backends/cpu/*_avx2.cpp)
# The engine's conversion and broadcast-fill loops too (at -O2 a broadcast row was filled one
# scalar store at a time, as long as the multiply it fed).
set_source_files_properties(${CMAKE_SOURCE_DIR}/src/backends/cpu/pointwise_portable.cpp
  ${CMAKE_SOURCE_DIR}/src/backends/cpu/pointwise_engine.cpp
  PROPERTIES COMPILE_OPTIONS "-O3;-fno-math-errno;-fno-trapping-math")
if(CRUCIBLE_CPU_AVX512_SOURCES)
  set_source_files_properties(${CRUCIBLE_CPU_AVX512_SOURCES} PROPERTIES
    COMPILE_OPTIONS "${CRUCIBLE_CPU_AVX512_FLAGS}")
endif()
if(CRUCIBLE_CPU_AVX2_SOURCES)
  set_source_files_properties(${CRUCIBLE_CPU_AVX2_SOURCES} PROPERTIES
    COMPILE_OPTIONS "${CRUCIBLE_CPU_AVX2_FLAGS}")
endif()
