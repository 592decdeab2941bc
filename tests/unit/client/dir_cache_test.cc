#include "client-fuse/libdfs/dir_cache.h"

#include <doctest/doctest.h>
#include <vector>

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

using Names = std::vector<DirCache::ListedName>;

TEST_CASE("client/dir_cache: a listing read from start to end teaches every name") {
  DirCache c;
  const DirCache::ListingStamp stamp{5, 1};
  CHECK_FALSE(c.listed(9, 0, stamp, Names{{"a", 10}, {"b", 11}}, 200, false));
  CHECK(c.contains(9, "a") == std::nullopt);  // not complete yet
  CHECK(c.partial_listings() == 1);
  CHECK(c.listed(9, 200, stamp, Names{{"c", 12}}, 300, true));
  CHECK(c.contains(9, "a") == true);
  CHECK(c.contains(9, "c") == true);
  CHECK(c.contains(9, "zz") == false);
  CHECK(c.ino_of(9, "b") == 11u);
  CHECK(c.names() == 3);
  CHECK(c.partial_listings() == 0);
  // A tracked directory knows more than a listing: a new one changes nothing.
  CHECK(c.listed(9, 0, stamp, Names{{"a", 10}}, 100, true));
  CHECK(c.contains(9, "c") == true);

  // An empty directory in one batch.
  CHECK(c.listed(4, 0, stamp, Names{}, 0, true));
  CHECK(c.empty(4) == true);
}

TEST_CASE("client/dir_cache: a listing with a gap or a change in between teaches nothing") {
  DirCache c;
  const DirCache::ListingStamp stamp{5, 1};
  // A batch that does not continue where the one before ended.
  c.listed(1, 0, stamp, Names{{"a", 10}}, 100, false);
  CHECK_FALSE(c.listed(1, 150, stamp, Names{{"b", 11}}, 200, true));
  CHECK(c.contains(1, "a") == std::nullopt);
  // A continuation without a start.
  CHECK_FALSE(c.listed(2, 100, stamp, Names{{"b", 11}}, 200, true));
  // A change of this client's own, or a recall, between two batches.
  c.listed(3, 0, stamp, Names{{"a", 10}}, 100, false);
  CHECK_FALSE(c.listed(3, 100, {6, 1}, Names{{"b", 11}}, 200, true));
  c.listed(3, 0, stamp, Names{{"a", 10}}, 100, false);
  CHECK_FALSE(c.listed(3, 100, {5, 2}, Names{{"b", 11}}, 200, true));
  // Interrupted by the owner, or forgotten.
  c.listed(3, 0, stamp, Names{{"a", 10}}, 100, false);
  c.listing_interrupted(3);
  CHECK_FALSE(c.listed(3, 100, stamp, Names{{"b", 11}}, 200, true));
  c.listed(3, 0, stamp, Names{{"a", 10}}, 100, false);
  c.forget(3);
  CHECK_FALSE(c.listed(3, 100, stamp, Names{{"b", 11}}, 200, true));
  CHECK(c.dirs() == 0);
  // A listing started again from the start replaces the one under way.
  c.listed(3, 0, stamp, Names{{"old", 10}}, 100, false);
  CHECK(c.listed(3, 0, stamp, Names{{"new", 11}}, 100, true));
  CHECK(c.contains(3, "old") == false);
  CHECK(c.contains(3, "new") == true);
}

TEST_CASE("client/dir_cache: a listing over the name limit is not kept, nor are stale ones") {
  DirCache c(2);
  const DirCache::ListingStamp stamp{0, 0};
  CHECK_FALSE(c.listed(1, 0, stamp, Names{{"a", 1}, {"b", 2}, {"c", 3}}, 0, true));
  CHECK(c.contains(1, "a") == std::nullopt);
  CHECK(c.partial_listings() == 0);
  // Readers that stop early leave listings behind; past a bound they go.
  DirCache many;
  for (uint64_t dir = 1; dir <= 200; ++dir) many.listed(dir, 0, stamp, Names{{"a", 1}}, 5, false);
  CHECK(many.partial_listings() <= 64);
  many.retain_if([](uint64_t) { return false; });
  CHECK(many.partial_listings() == 0);
}

}  // namespace dfs::client
