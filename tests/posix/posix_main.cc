// Entry point of posix_test: sets up the run root (DFS_POSIX_DIR or a temp dir on local
// disk), turns DFS_POSIX_SKIP (comma-separated test-name substrings) into doctest exclude
// filters, runs the cases and removes the run root.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/posix/posix_support.h"

namespace {

void add_skip_filters(doctest::Context& ctx) {
  const char* skip = std::getenv("DFS_POSIX_SKIP");
  if (skip == nullptr) return;
  std::string list = skip;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    std::string item = list.substr(pos, end - pos);
    if (!item.empty()) {
      std::fprintf(stderr, "posix_test: skipping cases matching *%s*\n", item.c_str());
      ctx.addFilter("test-case-exclude", ("*" + item + "*").c_str());
    }
    pos = end + 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  doctest::Context ctx;
  ctx.applyCommandLine(argc, argv);
  add_skip_filters(ctx);
  if (ctx.shouldExit()) return ctx.run();
  if (::geteuid() != 0) {
    std::fprintf(stderr, "posix_test: must run as root (cases drop privileges themselves)\n");
    return 2;
  }
  ::umask(022);
  if (!dfs::posix::init_run_root()) return 2;
  int rc = ctx.run();
  dfs::posix::cleanup_run_root();
  return rc;
}
