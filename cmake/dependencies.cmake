# Third-party libraries, all from Debian 12 packages (tools/install-deps.sh installs them).
find_package(Boost 1.81.0 REQUIRED CONFIG)
find_package(Protobuf REQUIRED)
find_package(RocksDB REQUIRED CONFIG)
find_package(spdlog REQUIRED CONFIG)
find_package(doctest REQUIRED CONFIG)
find_package(OpenSSL REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(FUSE3 REQUIRED IMPORTED_TARGET fuse3)
if(DFS_SANITIZE STREQUAL "")  # the MDS's malloc; a sanitizer build keeps its own
  pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
endif()

find_library(ISAL_LIBRARY isal REQUIRED)
find_path(ISAL_INCLUDE_DIR isa-l.h REQUIRED)
add_library(dfs_isal INTERFACE)
target_link_libraries(dfs_isal INTERFACE ${ISAL_LIBRARY})
target_include_directories(dfs_isal SYSTEM INTERFACE ${ISAL_INCLUDE_DIR})

find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
add_library(dfs_cli11 INTERFACE)
target_include_directories(dfs_cli11 SYSTEM INTERFACE ${CLI11_INCLUDE_DIR})

include(doctest)

# dfs_add_test(NAME SOURCES... LIBS ...): one doctest executable per component,
# built from its test sources so registrations are never dropped by the linker.
function(dfs_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES} ${PROJECT_SOURCE_DIR}/tests/support/doctest_main.cc)
  target_link_libraries(${name} PRIVATE ${T_LIBS} doctest::doctest)
  doctest_discover_tests(${name} ADD_LABELS 1 PROPERTIES TIMEOUT 600)
endfunction()
