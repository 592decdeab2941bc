#include "common/daemon/allocator_tuning.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace dfs {

std::string allocator_tunables() {
  return "glibc.malloc.arena_max=1:"
         "glibc.malloc.mmap_threshold=33554432:"
         "glibc.malloc.trim_threshold=268435456:"
         "glibc.malloc.top_pad=67108864:"
         "glibc.malloc.hugetlb=1";
}

namespace {

bool sanitized_build() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#else
  return false;
#endif
}

// jemalloc's control interface, when jemalloc is this process's malloc (linked into the
// program or preloaded: the library that malloc resolves to); nullptr otherwise.
using MallctlFn = int (*)(const char*, void*, size_t*, void*, size_t);
MallctlFn jemalloc_mallctl() {
  Dl_info provider{};
  void* malloc_symbol = ::dlsym(RTLD_DEFAULT, "malloc");
  if (malloc_symbol == nullptr || ::dladdr(malloc_symbol, &provider) == 0 ||
      provider.dli_fname == nullptr || std::strstr(provider.dli_fname, "jemalloc") == nullptr) {
    return nullptr;
  }
  return reinterpret_cast<MallctlFn>(::dlsym(RTLD_DEFAULT, "mallctl"));
}

bool tuning_disabled() {
  const char* setting = std::getenv("DFS_ALLOCATOR_TUNING");
  return setting != nullptr && std::strcmp(setting, "0") == 0;
}

bool malloc_tunables_set() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr;
}

}  // namespace

void tune_allocator(char** argv) {
  if (sanitized_build() || jemalloc_mallctl() != nullptr || tuning_disabled() ||
      malloc_tunables_set()) {
    return;
  }
  const char* theirs = std::getenv("GLIBC_TUNABLES");
  const std::string before = theirs != nullptr ? theirs : "";
  const std::string ours = allocator_tunables();
  const std::string tunables = before.empty() ? ours : before + ":" + ours;
  // The program's own path rather than /proc/self/exe, which would rename the process
  // "exe" for ps, top and killall.
  char path[4096];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(path) - 1) return;
  path[n] = '\0';
  if (::setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  ::execv(path, argv);
  // The exec failed (no /proc, say): go on with glibc's defaults, and put the variable
  // back so that the summary does not claim a tuning this process does not have.
  if (theirs != nullptr) {
    ::setenv("GLIBC_TUNABLES", before.c_str(), 1);
  } else {
    ::unsetenv("GLIBC_TUNABLES");
  }
}

const char* allocator_tuning_summary() {
  if (sanitized_build()) return "malloc: the sanitizer's allocator";
  if (MallctlFn mallctl = jemalloc_mallctl()) {
    const char* version = nullptr;
    size_t size = sizeof(version);
    const bool known = mallctl("version", &version, &size, nullptr, 0) == 0 && version;
    static const std::string line = std::string("malloc: jemalloc ") +
                                    (known ? version : "(version unknown)");
    return line.c_str();
  }
  if (const char* tunables = std::getenv("GLIBC_TUNABLES"); tunables && *tunables) {
    static const std::string line = std::string("malloc tunables: ") + tunables;
    return line.c_str();
  }
  return tuning_disabled() ? "malloc: glibc defaults (DFS_ALLOCATOR_TUNING=0)"
                           : "malloc: glibc defaults";
}

}  // namespace dfs
