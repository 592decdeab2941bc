// TempDir: a fresh directory under $TMPDIR (default /tmp), removed with everything in
// it when the object goes, unless DFS_KEEP_TEST_DIR is set (to look at a failure).
// Header-only so that any test binary can use it without linking dfs_test_support.
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace dfs::test {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "dfs-test") {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();  // test set-up: nothing can run without it
    }
    path_ = tmpl;
  }
  ~TempDir() {
    if (std::getenv("DFS_KEEP_TEST_DIR")) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace dfs::test
