# Build-wide settings: language level, warnings and the sanitizer builds.
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS ON)  # statement expressions power DFS_TRY
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo)
endif()

set(DFS_SANITIZE "" CACHE STRING "Sanitizer build: empty, 'asan' (ASan+UBSan) or 'tsan'")
option(DFS_WERROR "Treat warnings as errors" OFF)

add_compile_options(-Wall -Wextra -Wno-unused-parameter -fno-omit-frame-pointer)
if(DFS_WERROR)
  add_compile_options(-Werror)
endif()

if(DFS_SANITIZE STREQUAL "asan")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(DFS_SANITIZE STREQUAL "tsan")
  add_compile_options(-fsanitize=thread)
  add_link_options(-fsanitize=thread)
elseif(NOT DFS_SANITIZE STREQUAL "")
  message(FATAL_ERROR "DFS_SANITIZE must be empty, asan or tsan (got '${DFS_SANITIZE}')")
endif()

# Every target includes from the source root: #include "common/status/status.h".
include_directories(${PROJECT_SOURCE_DIR})
