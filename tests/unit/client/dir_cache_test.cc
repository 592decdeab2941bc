#include "client-fuse/libdfs/dir_cache.h"

#include <doctest/doctest.h>

namespace dfs::client {

TEST_CASE("client/dir_cache: only directories we created are known") {
  DirCache c;
  CHECK(c.contains(1, "a") == std::nullopt);
  c.added(1, "a");  // untracked: ignored
  CHECK(c.contains(1, "a") == std::nullopt);
  c.created(7);
  CHECK(c.contains(7, "a") == false);
  c.added(7, "a");
  CHECK(c.contains(7, "a") == true);
  CHECK(c.contains(7, "b") == false);
  c.removed(7, "a");
  CHECK(c.contains(7, "a") == false);
  CHECK(c.names() == 0);
}

TEST_CASE("client/dir_cache: forgetting makes a directory unknown again") {
  DirCache c;
  c.created(3);
  c.added(3, "x");
  c.added(3, "y");
  CHECK(c.names() == 2);
  c.forget(3);
  CHECK(c.contains(3, "x") == std::nullopt);
  CHECK(c.names() == 0);
  CHECK(c.dirs() == 0);
}

TEST_CASE("client/dir_cache: past the name limit everything is forgotten") {
  DirCache c(3);
  c.created(1);
  c.created(2);
  c.added(1, "a");
  c.added(1, "b");
  c.added(2, "c");
  CHECK(c.contains(2, "c") == true);
  c.added(2, "d");  // fourth name: over the limit
  CHECK(c.contains(1, "a") == std::nullopt);
  CHECK(c.contains(2, "d") == std::nullopt);
  CHECK(c.names() == 0);
}

}  // namespace dfs::client
