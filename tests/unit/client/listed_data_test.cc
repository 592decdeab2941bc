// ListedData: inline files' data from listings, kept for the first open of each.
#include "client-fuse/libdfs/listed_data.h"

#include <doctest/doctest.h>

namespace dfs::client {
namespace {

TEST_CASE("client/listed_data: an open takes the data of the version it knows, once") {
  ListedData listed;
  listed.remember(1, 7, "one");
  listed.remember(2, 3, "two");
  CHECK(listed.files() == 2);
  CHECK(listed.bytes() == 6);

  CHECK(listed.take(1, 7) == std::optional<std::string>("one"));
  CHECK_FALSE(listed.take(1, 7));  // taken
  // Another version: stale, and gone either way.
  CHECK_FALSE(listed.take(2, 4));
  CHECK_FALSE(listed.take(2, 3));
  CHECK(listed.files() == 0);
  CHECK(listed.bytes() == 0);
  CHECK_FALSE(listed.take(9, 1));  // never listed
}

TEST_CASE("client/listed_data: a file listed again replaces what was kept, and a drop forgets it") {
  ListedData listed;
  listed.remember(1, 1, "old data");
  listed.remember(1, 2, "new");
  CHECK(listed.files() == 1);
  CHECK(listed.bytes() == 3);
  CHECK_FALSE(listed.take(1, 1));
  listed.remember(1, 2, "new");
  CHECK(listed.take(1, 2) == std::optional<std::string>("new"));
  listed.remember(5, 1, "five");
  listed.drop(5);
  listed.drop(5);
  CHECK(listed.bytes() == 0);
  CHECK_FALSE(listed.take(5, 1));
}

TEST_CASE("client/listed_data: past the bound the oldest go first") {
  ListedData listed(10);
  listed.remember(1, 1, "aaaa");
  listed.remember(2, 1, "bbbb");
  listed.remember(1, 2, "AAAA");  // listed again: now the newest
  listed.remember(3, 1, "cccc");  // 12 bytes would not fit: 2, the oldest, goes
  CHECK(listed.bytes() == 8);
  CHECK_FALSE(listed.take(2, 1));
  CHECK(listed.take(1, 2) == std::optional<std::string>("AAAA"));
  CHECK(listed.take(3, 1) == std::optional<std::string>("cccc"));

  // Many taken by opens: their places are forgotten, the bound still holds.
  ListedData many(100);
  for (uint64_t ino = 1; ino <= 5000; ++ino) {
    many.remember(ino, 1, "0123456789");
    if (ino % 2 == 0) CHECK(many.take(ino, 1));
  }
  CHECK(many.bytes() <= 100);
  CHECK(many.files() == many.bytes() / 10);
  CHECK(many.take(4999, 1));  // the newest stays
}

}  // namespace
}  // namespace dfs::client
