// PendingTouches: what the deferred changes awaiting the MDS name, counted per change.
#include "client-fuse/libdfs/pending_touches.h"

#include <doctest/doctest.h>

namespace dfs::client {
namespace {

TEST_CASE("client/pending_touches: a change names its directories, inodes and names until "
          "answered") {
  PendingTouches touches;
  const PendingTouches::Change unlink{{10}, {11}, {{10, "f"}}};
  touches.add(unlink);
  CHECK(touches.touched(10));
  CHECK_FALSE(touches.changed(10));  // its names change, not the inode as such
  CHECK(touches.touched(11));
  CHECK(touches.changed(11));
  CHECK(touches.named(10, "f"));
  CHECK_FALSE(touches.named(10, "g"));
  CHECK_FALSE(touches.named(11, "f"));
  CHECK_FALSE(touches.touched(12));

  // A second change naming the same: both must be answered.
  const PendingTouches::Change create{{10, 12}, {12}, {{10, "f"}}};
  touches.add(create);
  touches.remove(unlink);
  CHECK(touches.touched(10));
  CHECK(touches.named(10, "f"));
  CHECK_FALSE(touches.touched(11));
  touches.remove(create);
  CHECK_FALSE(touches.touched(10));
  CHECK_FALSE(touches.touched(12));
  CHECK_FALSE(touches.named(10, "f"));
  touches.remove(create);  // answered twice (never happens): nothing goes negative
  touches.add(unlink);
  CHECK(touches.named(10, "f"));
}

TEST_CASE("client/pending_touches: names are told apart by directory and by every byte") {
  PendingTouches touches;
  touches.add({{}, {}, {{1, std::string("a\0b", 3)}, {2, "a"}}});
  CHECK(touches.named(1, std::string("a\0b", 3)));
  CHECK_FALSE(touches.named(1, "a"));
  CHECK(touches.named(2, "a"));
  CHECK_FALSE(touches.named(3, "a"));
  CHECK_FALSE(touches.touched(1));  // a name alone does not touch its directory
}

}  // namespace
}  // namespace dfs::client
