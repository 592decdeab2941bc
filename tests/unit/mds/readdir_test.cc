// readdir and readdirplus: dot entries, paging, cookies stable under inserts and
// deletes, 100,000 entries created through group commit, hash-bucket collisions.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

#include "mds/store/keys.h"
#include "mds_harness.h"

namespace dfs::mds::test {
namespace {

// Creates `names` in `dir` concurrently, so that group commit batches them.
void create_many(MdsHarness& h, uint64_t dir, const std::vector<std::string>& names,
                 size_t parallel = 2000) {
  for (size_t at = 0; at < names.size();) {
    std::vector<awaitable<Result<rpc::Reply>>> batch;
    for (; at < names.size() && batch.size() < parallel; ++at) {
      proto::MknodRequest req;
      *req.mutable_header() = h.header();
      req.set_parent(dir);
      req.set_name(names[at]);
      req.set_mode(S_IFREG | 0644);
      batch.push_back(h.service().handle(rpc::kMdsMknod, req.SerializeAsString(), nullptr));
    }
    for (auto& r : h.run(gather(std::move(batch)))) {
      REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().to_string()));
    }
  }
}

}  // namespace

TEST_CASE("mds/readdir: dots, types, plus and paging") {
  MdsHarness h;
  auto d = h.mkdir(kRootIno, "d");
  DFS_REQUIRE_OK(h.create(d->ino(), "file"));
  DFS_REQUIRE_OK(h.mkdir(d->ino(), "sub"));
  DFS_REQUIRE_OK(h.symlink(d->ino(), "link", "file"));
  auto all = h.readdir(d->ino(), 0, 100, /*plus=*/true);
  DFS_REQUIRE_OK(all);
  REQUIRE(all->entries_size() == 5);
  CHECK(all->eof());
  CHECK(all->entries(0).name() == ".");
  CHECK(all->entries(0).cookie() == 1);
  CHECK(all->entries(0).ino() == d->ino());
  CHECK(all->entries(1).name() == "..");
  CHECK(all->entries(1).cookie() == 2);
  CHECK(all->entries(1).ino() == kRootIno);
  std::map<std::string, proto::DirEntry> by_name;
  for (const auto& e : all->entries()) by_name[e.name()] = e;
  CHECK(by_name["file"].type() == S_IFREG);
  CHECK(by_name["sub"].type() == S_IFDIR);
  CHECK(by_name["link"].type() == S_IFLNK);
  CHECK(by_name["link"].inode().symlink() == "file");
  CHECK(by_name["sub"].inode().nlink() == 2);
  for (const auto& e : all->entries()) CHECK(e.cookie() > 0);
  // One entry per call: the cookies chain through everything.
  std::vector<std::string> one_by_one;
  uint64_t cookie = 0;
  for (int i = 0; i < 10; ++i) {
    auto r = h.readdir(d->ino(), cookie, 1);
    DFS_REQUIRE_OK(r);
    if (r->entries_size() == 0) {
      CHECK(r->eof());
      break;
    }
    one_by_one.push_back(r->entries(0).name());
    cookie = r->entries(0).cookie();
  }
  CHECK(one_by_one.size() == 5);
  auto f = h.lookup(d->ino(), "file");
  DFS_REQUIRE_CODE(h.readdir(f->ino(), 0, 10), ErrorCode::kNotDirectory);
  DFS_REQUIRE_CODE(h.readdir(123456789, 0, 10), ErrorCode::kStale);
}

TEST_CASE("mds/readdir: plus with inline_max brings small inline files' data") {
  MdsHarness h;
  auto dir = h.mkdir(kRootIno, "d");
  DFS_REQUIRE_OK(dir);
  auto small = h.create(dir->ino(), "small");
  auto big = h.create(dir->ino(), "big");
  auto empty = h.create(dir->ino(), "empty");
  DFS_REQUIRE_OK(small);
  DFS_REQUIRE_OK(big);
  DFS_REQUIRE_OK(empty);
  DFS_REQUIRE_OK(h.write_inline(small->ino(), 0, "tiny"));
  DFS_REQUIRE_OK(h.write_inline(big->ino(), 0, std::string(3000, 'b')));
  DFS_REQUIRE_OK(h.mkdir(dir->ino(), "sub"));

  for (uint32_t inline_max : {0u, 2048u}) {
    CAPTURE(inline_max);
    proto::ReaddirRequest req;
    *req.mutable_header() = h.header(false);
    req.set_ino(dir->ino());
    req.set_plus(true);
    req.set_inline_max(inline_max);
    auto reply = h.call<proto::ReaddirReply>(rpc::kMdsReaddir, req);
    DFS_REQUIRE_OK(reply);
    std::map<std::string, const proto::DirEntry*> by_name;
    for (const auto& e : reply->entries()) by_name[e.name()] = &e;
    REQUIRE(by_name.size() == 6);  // . .. small big empty sub
    bool on = inline_max > 0;
    CHECK(by_name["small"]->inline_data_included() == on);
    CHECK(by_name["small"]->inode().inline_data() == (on ? "tiny" : ""));
    CHECK(by_name["empty"]->inline_data_included() == on);
    CHECK_FALSE(by_name["big"]->inline_data_included());  // above inline_max
    CHECK(by_name["big"]->inode().inline_data().empty());
    CHECK_FALSE(by_name["sub"]->inline_data_included());
  }
}

TEST_CASE("mds/readdir: 100,000 entries with cookies stable while entries come and go") {
  MdsHarness h;
  auto d = h.mkdir(kRootIno, "big");
  std::vector<std::string> names;
  for (int i = 0; i < 100000; ++i) names.push_back("entry-" + std::to_string(i));
  create_many(h, d->ino(), names);
  CHECK(h.service().committer().stats().groups < 2000);  // grouped, not one fsync each

  // A listing in pages of 1000; between pages, delete some not-yet-seen and seen
  // entries and add new ones. Entries present throughout appear exactly once; no
  // name appears twice.
  std::set<std::string> present(names.begin(), names.end());
  std::set<std::string> removed, added, seen;
  std::mt19937 rng(7);
  uint64_t cookie = 0;
  int round = 0;
  for (;;) {
    auto r = h.readdir(d->ino(), cookie, 1000);
    DFS_REQUIRE_OK(r);
    for (const auto& e : r->entries()) {
      if (e.name() == "." || e.name() == "..") continue;
      CHECK_MESSAGE(seen.insert(e.name()).second, "duplicate " << e.name());
      cookie = e.cookie();
    }
    if (!r->entries().empty()) cookie = r->entries(r->entries_size() - 1).cookie();
    if (r->eof()) break;
    ++round;
    for (int k = 0; k < 20; ++k) {
      std::string victim = "entry-" + std::to_string(rng() % 100000);
      if (!present.count(victim)) continue;
      DFS_REQUIRE_OK(h.unlink(d->ino(), victim));
      present.erase(victim);
      removed.insert(victim);
    }
    std::vector<std::string> fresh;
    for (int k = 0; k < 20; ++k)
      fresh.push_back("new-" + std::to_string(round) + "-" + std::to_string(k));
    create_many(h, d->ino(), fresh);
    added.insert(fresh.begin(), fresh.end());
  }
  for (const auto& name : names) {
    if (!removed.count(name)) CHECK_MESSAGE(seen.count(name), "missing " << name);
  }
  for (const auto& name : seen) {
    CHECK((present.count(name) || removed.count(name) || added.count(name)));
  }
  auto all = h.list(d->ino(), 4096);
  CHECK(all.size() == 100000 - removed.size() + added.size());
}

TEST_CASE("mds/readdir: names sharing a hash bucket get distinct slots") {
  MdsHarness h(Backend::kMem);
  auto d = h.mkdir(kRootIno, "d");
  // Plant entries in the bucket of "target" directly, as a colliding name would.
  uint64_t bucket = name_bucket("target");
  WriteBatch b;
  b.put(dentry_key(d->ino(), bucket * kSlotsPerBucket, "collider-a"),
        encode_dentry_value({99, S_IFREG}));
  b.put(dentry_key(d->ino(), bucket * kSlotsPerBucket + 1, "collider-b"),
        encode_dentry_value({98, S_IFREG}));
  DFS_REQUIRE_OK(h.store().write(b, true));
  auto t = h.create(d->ino(), "target");
  DFS_REQUIRE_OK(t);
  CHECK(h.lookup(d->ino(), "target")->ino() == t->ino());
  auto r = h.readdir(d->ino(), 2, 100);
  DFS_REQUIRE_OK(r);
  std::set<uint64_t> cookies;
  for (const auto& e : r->entries()) cookies.insert(e.cookie());
  CHECK(cookies.size() == 3);
  CHECK(cookies.count(bucket * kSlotsPerBucket + 2) == 1);
  // Paging one at a time through the bucket loses nothing.
  std::vector<std::string> names;
  uint64_t cookie = 2;
  for (;;) {
    auto one = h.readdir(d->ino(), cookie, 1);
    if (one->entries_size() == 0) break;
    names.push_back(one->entries(0).name());
    cookie = one->entries(0).cookie();
  }
  CHECK(names == std::vector<std::string>{"collider-a", "collider-b", "target"});
  // A freed slot is reused by the next colliding name.
  WriteBatch del;
  del.del(dentry_key(d->ino(), bucket * kSlotsPerBucket, "collider-a"));
  DFS_REQUIRE_OK(h.store().write(del, true));
  DFS_REQUIRE_OK(h.unlink(d->ino(), "target"));
  DFS_REQUIRE_OK(h.create(d->ino(), "target"));
  auto again = h.readdir(d->ino(), 2, 100);
  CHECK(again->entries(0).cookie() == bucket * kSlotsPerBucket);
  CHECK(again->entries(0).name() == "target");
}

}  // namespace dfs::mds::test
