#include "client-fuse/vfs/inode_table.h"

#include <doctest/doctest.h>

namespace dfs::vfs {

TEST_CASE("client/inode_table: the root is the kernel's inode 1") {
  SUBCASE("root is dfs inode 1") {
    InodeTable t(1);
    CHECK(t.to_fuse(1) == 1);
    CHECK(t.to_dfs(1) == 1);
    CHECK(t.to_fuse(77) == 77);
    CHECK(t.to_dfs(77) == 77);
  }
  SUBCASE("a subdirectory mount swaps the root with inode 1") {
    InodeTable t(500);
    CHECK(t.to_fuse(500) == 1);
    CHECK(t.to_dfs(1) == 500);
    CHECK(t.to_fuse(1) == 500);
    CHECK(t.to_dfs(500) == 1);
    for (uint64_t i : {2ull, 499ull, 501ull, 1ull << 40}) {
      CHECK(t.to_dfs(t.to_fuse(i)) == i);
    }
  }
}

TEST_CASE("client/inode_table: lookup counts rise on replies and fall on forget") {
  InodeTable t(1);
  t.add_lookup(5);
  t.add_lookup(5, 2);
  CHECK(t.lookups(5) == 3);
  CHECK(!t.forget(5, 2));
  CHECK(t.lookups(5) == 1);
  CHECK(t.forget(5, 1));
  CHECK(t.lookups(5) == 0);
  CHECK(t.size() == 0);
  CHECK(t.bad_forgets() == 0);
  // The root is pinned; forgetting what was never looked up is counted as a bug.
  t.add_lookup(1);
  CHECK(!t.forget(1, 1));
  CHECK(t.forget(9, 1));
  CHECK(t.bad_forgets() == 1);
}

TEST_CASE("client/inode_table: a new incarnation is a new kernel inode of the same file") {
  InodeTable t(1);
  uint64_t first = t.to_fuse(7);
  t.add_lookup(first);
  t.new_incarnation(7);
  uint64_t second = t.to_fuse(7);
  CHECK(second != first);
  CHECK(t.to_dfs(second) == 7);
  CHECK(t.to_dfs(first) == 7);
  CHECK(InodeTable::shown_ino(second) == InodeTable::shown_ino(first));
  t.add_lookup(second, 2);
  // The old incarnation's last forget leaves the file held by the new one.
  CHECK(!t.forget(first, 1));
  CHECK(t.forget(second, 2));
  // Once forgotten entirely, the file starts again from its plain number.
  CHECK(t.to_fuse(7) == 7);
  // The root never changes.
  t.new_incarnation(1);
  CHECK(t.to_fuse(1) == kFuseRootIno);
}

TEST_CASE("client/inode_table: the incarnations of a file the kernel still holds") {
  InodeTable t(1);
  CHECK(t.incarnations_held(7).empty());
  const uint64_t first = t.to_fuse(7);
  t.add_lookup(first);
  t.new_incarnation(7);
  const uint64_t second = t.to_fuse(7);
  CHECK(t.incarnations_held(7) == std::vector<uint64_t>{first});  // the new one unused yet
  t.add_lookup(second);
  CHECK(t.incarnations_held(7) == std::vector<uint64_t>{first, second});
  t.forget(first, 1);
  CHECK(t.incarnations_held(7) == std::vector<uint64_t>{second});
  CHECK(t.incarnations_held(8).empty());
}

}  // namespace dfs::vfs
