// RecentListings: a directory's first listing batch, listed again while nothing changed.
#include "client-fuse/libdfs/recent_listings.h"

#include <doctest/doctest.h>

namespace dfs::client {
namespace {

proto::ReaddirReply listing(std::initializer_list<const char*> names) {
  proto::ReaddirReply reply;
  uint64_t cookie = 2;
  for (const char* name : names) {
    auto* e = reply.add_entries();
    e->set_name(name);
    e->set_ino(100 + cookie);
    e->set_cookie(++cookie);
  }
  reply.set_eof(true);
  return reply;
}

const RecentListings::Question kRootPlus{0, 0, 512, true};

TEST_CASE("client/recent_listings: a listing is listed again only while the counter stays") {
  RecentListings recent;
  recent.keep(1, kRootPlus, 7, listing({"a", "b"}));
  auto again = recent.find(1, kRootPlus, 7);
  REQUIRE(again);
  CHECK(again->entries_size() == 2);
  CHECK(again->eof());
  CHECK(recent.find(1, kRootPlus, 7));  // as often as asked while nothing changes
  CHECK_FALSE(recent.find(2, kRootPlus, 7));  // another directory: never listed

  // Something changed: stale, and dropped.
  CHECK_FALSE(recent.find(1, kRootPlus, 8));
  CHECK_FALSE(recent.find(1, kRootPlus, 7));
  CHECK(recent.size() == 0);
}

TEST_CASE("client/recent_listings: only the same question gets it") {
  RecentListings recent;
  recent.keep(1, kRootPlus, 3, listing({"a"}));
  CHECK_FALSE(recent.find(1, {1000, 1000, 512, true}, 3));  // another user
  CHECK_FALSE(recent.find(1, {0, 0, 64, true}, 3));         // another batch size
  CHECK_FALSE(recent.find(1, {0, 0, 512, false}, 3));       // without attributes
  CHECK(recent.find(1, kRootPlus, 3));                      // kept meanwhile
}

TEST_CASE("client/recent_listings: inline data is not kept, and the bound drops the oldest") {
  RecentListings recent(2);
  proto::ReaddirReply with_data = listing({"f"});
  auto* e = with_data.mutable_entries(0);
  e->mutable_inode()->set_ino(e->ino());
  e->mutable_inode()->set_inline_data("bytes");
  e->set_inline_data_included(true);
  recent.keep(1, kRootPlus, 5, with_data);
  auto again = recent.find(1, kRootPlus, 5);
  REQUIRE(again);
  CHECK_FALSE(again->entries(0).inline_data_included());
  CHECK(again->entries(0).inode().inline_data().empty());
  CHECK(again->entries(0).inode().ino() == e->ino());

  recent.keep(2, kRootPlus, 5, listing({"x"}));
  recent.keep(3, kRootPlus, 5, listing({"y"}));
  CHECK(recent.size() == 2);
  CHECK_FALSE(recent.find(1, kRootPlus, 5));
  CHECK(recent.find(2, kRootPlus, 5));
  CHECK(recent.find(3, kRootPlus, 5));

  // A listing kept at a later counter value makes every older one stale.
  recent.keep(4, kRootPlus, 6, listing({"z"}));
  CHECK(recent.size() == 1);
  CHECK(recent.find(4, kRootPlus, 6));

  // Kept again: the newer listing replaces the older.
  recent.keep(4, kRootPlus, 6, listing({"z", "w"}));
  CHECK(recent.size() == 1);
  CHECK(recent.find(4, kRootPlus, 6)->entries_size() == 2);
}

}  // namespace
}  // namespace dfs::client
