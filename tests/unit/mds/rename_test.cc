// rename edge cases: replace, type mismatches, non-empty targets, across directories
// with link counts, NOREPLACE, EXCHANGE, a directory under itself, no-op renames.
#include <doctest/doctest.h>

#include "mds_harness.h"

namespace dfs::mds::test {
namespace {
constexpr uint32_t kNoReplace = 1;
constexpr uint32_t kExchange = 2;
}  // namespace

TEST_CASE("mds/rename: within a directory and over a file") {
  MdsHarness h;
  auto a = h.create(kRootIno, "a");
  auto b = h.create(kRootIno, "b");
  DFS_REQUIRE_OK(h.rename(kRootIno, "a", kRootIno, "c"));
  DFS_REQUIRE_CODE(h.lookup(kRootIno, "a"), ErrorCode::kNotFound);
  CHECK(h.lookup(kRootIno, "c")->ino() == a->ino());
  auto over = h.rename(kRootIno, "c", kRootIno, "b");
  DFS_REQUIRE_OK(over);
  CHECK(over->did_replace());
  CHECK(over->replaced().ino() == b->ino());
  CHECK(over->replaced().nlink() == 0);
  CHECK(h.lookup(kRootIno, "b")->ino() == a->ino());
  CHECK(h.list(kRootIno) == std::vector<std::string>{"b"});
  DFS_REQUIRE_CODE(h.rename(kRootIno, "missing", kRootIno, "x"), ErrorCode::kNotFound);
}

TEST_CASE("mds/rename: replaces empty dir, refuses non-empty and type mismatches") {
  MdsHarness h;
  auto d1 = h.mkdir(kRootIno, "d1");
  auto d2 = h.mkdir(kRootIno, "d2");
  auto f = h.create(kRootIno, "f");
  DFS_REQUIRE_CODE(h.rename(kRootIno, "d1", kRootIno, "f"), ErrorCode::kNotDirectory);
  DFS_REQUIRE_CODE(h.rename(kRootIno, "f", kRootIno, "d1"), ErrorCode::kIsDirectory);
  DFS_REQUIRE_OK(h.create(d2->ino(), "inside"));
  DFS_REQUIRE_CODE(h.rename(kRootIno, "d1", kRootIno, "d2"), ErrorCode::kNotEmpty);
  CHECK(h.getattr(kRootIno)->nlink() == 4);
  DFS_REQUIRE_OK(h.rename(kRootIno, "d2", kRootIno, "d1"));
  CHECK(h.getattr(kRootIno)->nlink() == 3);  // d1 replaced: one subdirectory fewer
  CHECK(h.lookup(kRootIno, "d1")->ino() == d2->ino());
  DFS_REQUIRE_OK(h.lookup(d2->ino(), "inside"));
  h.run_for(Duration(100));
  DFS_REQUIRE_CODE(h.getattr(d1->ino()), ErrorCode::kStale);
  (void)f;
}

TEST_CASE("mds/rename: across directories moves the parent link") {
  MdsHarness h;
  auto src = h.mkdir(kRootIno, "src");
  auto dst = h.mkdir(kRootIno, "dst");
  auto sub = h.mkdir(src->ino(), "sub");
  auto file = h.create(src->ino(), "file");
  CHECK(h.getattr(src->ino())->nlink() == 3);
  DFS_REQUIRE_OK(h.rename(src->ino(), "sub", dst->ino(), "moved"));
  DFS_REQUIRE_OK(h.rename(src->ino(), "file", dst->ino(), "file"));
  CHECK(h.getattr(src->ino())->nlink() == 2);
  CHECK(h.getattr(dst->ino())->nlink() == 3);
  auto moved = h.getattr(sub->ino());
  CHECK(moved->parent() == dst->ino());
  CHECK(h.lookup(sub->ino(), "..")->ino() == dst->ino());
  CHECK(h.list(src->ino()).empty());
  CHECK(h.list(dst->ino()).size() == 2);
  CHECK(h.lookup(dst->ino(), "file")->ino() == file->ino());
}

TEST_CASE("mds/rename: a directory cannot move under itself") {
  MdsHarness h;
  auto a = h.mkdir(kRootIno, "a");
  auto b = h.mkdir(a->ino(), "b");
  auto c = h.mkdir(b->ino(), "c");
  DFS_REQUIRE_CODE(h.rename(kRootIno, "a", c->ino(), "a"), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.rename(kRootIno, "a", a->ino(), "self"), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.rename(a->ino(), "b", c->ino(), "x"), ErrorCode::kInvalidArgument);
  // Upwards is fine.
  DFS_REQUIRE_OK(h.rename(b->ino(), "c", kRootIno, "c"));
  // Exchange that would put a directory under itself.
  auto d = h.mkdir(c->ino(), "d");
  DFS_REQUIRE_CODE(h.rename(kRootIno, "c", d->ino(), "x", 0), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_OK(h.create(d->ino(), "x"));
  DFS_REQUIRE_CODE(h.rename(kRootIno, "c", d->ino(), "x", kExchange), ErrorCode::kInvalidArgument);
  DFS_REQUIRE_CODE(h.rename(d->ino(), "x", kRootIno, "c", kExchange), ErrorCode::kInvalidArgument);
}

TEST_CASE("mds/rename: noreplace and exchange") {
  MdsHarness h;
  auto a = h.create(kRootIno, "a");
  auto d = h.mkdir(kRootIno, "d");
  auto inner = h.create(d->ino(), "inner");
  DFS_REQUIRE_CODE(h.rename(kRootIno, "a", kRootIno, "d", kNoReplace), ErrorCode::kAlreadyExists);
  DFS_REQUIRE_OK(h.rename(kRootIno, "a", kRootIno, "b", kNoReplace));
  DFS_REQUIRE_CODE(h.rename(kRootIno, "b", kRootIno, "zz", kExchange), ErrorCode::kNotFound);
  DFS_REQUIRE_CODE(h.rename(kRootIno, "b", kRootIno, "d", kExchange | kNoReplace),
                   ErrorCode::kInvalidArgument);
  // A file and a non-empty directory swap names, here within one directory.
  DFS_REQUIRE_OK(h.rename(kRootIno, "b", kRootIno, "d", kExchange));
  CHECK(h.lookup(kRootIno, "b")->ino() == d->ino());
  CHECK(h.lookup(kRootIno, "d")->ino() == a->ino());
  CHECK(h.getattr(kRootIno)->nlink() == 3);
  // Across directories: the directory moves down, the file up; link counts follow.
  auto other = h.mkdir(kRootIno, "other");
  auto x = h.create(other->ino(), "x");
  DFS_REQUIRE_OK(h.rename(kRootIno, "b", other->ino(), "x", kExchange));
  CHECK(h.lookup(other->ino(), "x")->ino() == d->ino());
  CHECK(h.lookup(kRootIno, "b")->ino() == x->ino());
  CHECK(h.getattr(kRootIno)->nlink() == 3);      // root: other only
  CHECK(h.getattr(other->ino())->nlink() == 3);  // other: d
  CHECK(h.getattr(d->ino())->parent() == other->ino());
  CHECK(h.lookup(d->ino(), "inner")->ino() == inner->ino());
}

TEST_CASE("mds/rename: no-ops") {
  MdsHarness h;
  auto a = h.create(kRootIno, "a");
  DFS_REQUIRE_OK(h.link(a->ino(), kRootIno, "hard"));
  size_t before = h.log().size();
  auto self = h.rename(kRootIno, "a", kRootIno, "a");
  DFS_REQUIRE_OK(self);
  CHECK_FALSE(self->did_replace());
  // Two names of one inode: nothing happens, both stay.
  DFS_REQUIRE_OK(h.rename(kRootIno, "a", kRootIno, "hard"));
  CHECK(h.lookup(kRootIno, "a")->ino() == a->ino());
  CHECK(h.lookup(kRootIno, "hard")->ino() == a->ino());
  CHECK(h.getattr(a->ino())->nlink() == 2);
  CHECK(h.log().size() == before + 2);  // logged, but no state change
}

TEST_CASE("mds/rename: over an open file keeps it until release") {
  MdsHarness h;
  auto victim = h.create(kRootIno, "victim");
  DFS_REQUIRE_OK(h.write_inline(victim->ino(), 0, "old"));
  DFS_REQUIRE_OK(h.open(victim->ino()));
  DFS_REQUIRE_OK(h.create(kRootIno, "new"));
  DFS_REQUIRE_OK(h.rename(kRootIno, "new", kRootIno, "victim"));
  h.run_for(Duration(100));
  auto kept = h.getattr(victim->ino());
  DFS_REQUIRE_OK(kept);
  CHECK(kept->nlink() == 0);
  auto reopened = h.open(victim->ino());  // an open's reply carries the data
  DFS_REQUIRE_OK(reopened);
  CHECK(reopened->inline_data() == "old");
  CHECK(h.statfs()->orphans() == 1);
  DFS_REQUIRE_OK(h.release(victim->ino()));
  DFS_REQUIRE_OK(h.release(victim->ino()));
  h.run_for(Duration(100));
  DFS_REQUIRE_CODE(h.getattr(victim->ino()), ErrorCode::kStale);
  CHECK(h.statfs()->orphans() == 0);
}

}  // namespace dfs::mds::test
