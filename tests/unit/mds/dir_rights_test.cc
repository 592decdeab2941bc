// DirRights: the directories client sessions own, on an io_context: a creator owns what
// it created, another session's claim recalls it and waits for the acknowledgement, an
// owner that does not answer is evicted, a session's end frees what it owned, and a
// takeover takes re-asserted directories that nobody owns.
#include <doctest/doctest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/rpc/asio.h"
#include "mds/service/dir_rights.h"

namespace dfs::mds::test {
namespace {

struct Sent {
  std::string client;
  uint64_t seq = 0;
  std::vector<uint64_t> dirs;
};

struct Fixture {
  explicit Fixture(size_t max = 1000) : max_dirs(max) {}
  asio::io_context io;
  std::vector<Sent> sent;
  std::vector<std::string> evicted;
  uint64_t seq = 100;
  size_t max_dirs;
  DirRights rights{io.get_executor(), Duration(30000), max_dirs,
                   [this](const std::string& client, const proto::CacheRightsNotice& n) {
                     sent.push_back(Sent{client, n.seq(), {n.dirs().begin(), n.dirs().end()}});
                     return true;
                   },
                   [this](const std::string& client, const std::string&) {
                     evicted.push_back(client);
                     rights.ended(client);  // what the MDS's eviction does in the end
                   },
                   [this] { return ++seq; }};

  void poll() {
    io.restart();
    io.poll();
  }
  // Starts a claim; *done turns true once it returns.
  void claim(const std::string& client, std::vector<uint64_t> inos, bool* done) {
    asio::co_spawn(
        io,
        [](DirRights* r, std::string client, std::vector<uint64_t> inos,
           bool* done) -> awaitable<void> {
          co_await r->claim(client, std::move(inos), "test");
          *done = true;
        }(&rights, client, std::move(inos), done),
        asio::detached);
    poll();
  }
  // Starts a claim of `file`'s read shares; *done turns true once it returns.
  void claim_shares(const std::string& client, uint64_t file, bool* done) {
    asio::co_spawn(
        io,
        [](DirRights* r, std::string client, uint64_t file, bool* done) -> awaitable<void> {
          std::vector<uint64_t> files{file};
          co_await r->claim_shares(client, std::move(files), "test");
          *done = true;
        }(&rights, client, file, done),
        asio::detached);
    poll();
  }
};

}  // namespace

TEST_CASE("mds/dir_rights: the creator owns a directory until another session claims it") {
  Fixture f;
  CHECK(f.rights.created("a", 10));
  CHECK(f.rights.created("a", 11));
  CHECK(f.rights.owned_by("a") == 2);
  CHECK_FALSE(f.rights.others_own_any("a"));
  CHECK(f.rights.others_own_any("b"));
  CHECK_FALSE(f.rights.conflicts("a", {10, 11}));
  CHECK(f.rights.conflicts("b", {1, 10}));

  bool own_claim = false;
  f.claim("a", {10}, &own_claim);  // the owner's own requests never wait
  CHECK(own_claim);
  CHECK(f.sent.empty());

  bool b_done = false;
  f.claim("b", {1, 10}, &b_done);
  CHECK_FALSE(b_done);
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].client == "a");
  CHECK(f.sent[0].dirs == std::vector<uint64_t>{10});
  CHECK(f.rights.pending_recall("a") == f.sent[0].seq);

  bool c_done = false;  // a second claimant of the same directory does not recall again
  f.claim("c", {10}, &c_done);
  CHECK(f.sent.size() == 1);

  f.rights.acknowledged("a", f.sent[0].seq + 1);  // a stray ack changes nothing
  f.poll();
  CHECK_FALSE(b_done);
  f.rights.acknowledged("a", f.sent[0].seq);
  f.poll();
  CHECK(b_done);
  CHECK(c_done);
  CHECK(f.rights.owned_by("a") == 1);  // 11 is still its own
  CHECK(f.rights.pending_recall("a") == 0);
  CHECK_FALSE(f.rights.conflicts("b", {10}));
}

TEST_CASE("mds/dir_rights: recalls are resent, and an owner that does not answer is evicted") {
  Fixture f;
  f.rights.created("a", 10);
  bool done = false;
  f.claim("b", {10}, &done);
  REQUIRE(f.sent.size() == 1);
  auto now = Clock::now();
  f.rights.tick(now + Duration(1500));
  REQUIRE(f.sent.size() == 2);
  CHECK(f.sent[1].seq == f.sent[0].seq);  // the same recall again
  f.rights.tick(now + Duration(31000));
  REQUIRE(f.evicted.size() == 1);
  CHECK(f.evicted[0] == "a");
  f.poll();
  CHECK(done);
  CHECK(f.rights.owned_by("a") == 0);
}

TEST_CASE("mds/dir_rights: removal and a session's end free the claims waiting on them") {
  Fixture f;
  f.rights.created("a", 10);
  f.rights.created("a", 11);
  bool first = false, second = false;
  f.claim("b", {10}, &first);
  f.claim("b", {11}, &second);
  f.rights.removed(10);
  f.poll();
  CHECK(first);
  CHECK_FALSE(second);
  f.rights.ended("a");
  f.poll();
  CHECK(second);
  CHECK_FALSE(f.rights.others_own_any("b"));
}

TEST_CASE("mds/dir_rights: re-asserted directories and files, and clear()") {
  Fixture f;
  f.rights.created("b", 12);
  f.rights.created("b", 40, DirRights::Kind::kFile);
  f.rights.shared("c", 41);
  f.rights.reasserted("a", {10, 11, 12}, {20, 12, 41}, {40, 41, 42});
  CHECK(f.rights.owned_by("a") == 3);  // 12 stays with b, 41 is shared by c
  CHECK(f.rights.files_owned_by("a") == 1);
  CHECK(f.rights.shared_by("a") == 2);  // 40 stays b's: not shared while owned
  CHECK(f.rights.shares("a", 41));
  CHECK(f.rights.shares("a", 42));
  CHECK(f.rights.conflicts("b", {10}));

  bool done = false, shares_done = false;
  f.claim("b", {10}, &done);
  f.claim_shares("b", 42, &shares_done);
  f.rights.clear();  // this replica stops serving: the waiters go on, nothing is held
  f.poll();
  CHECK(done);
  CHECK(shares_done);
  CHECK(f.rights.owned_by("a") == 0);
  CHECK(f.rights.shared_by("a") == 0);
}

TEST_CASE("mds/dir_rights: past the bound the least recently used directories are recalled") {
  Fixture f;  // a bound of 1000: recalled down to 875
  for (uint64_t d = 0; d < 1000; ++d) REQUIRE(f.rights.created("a", 1000 + d));
  CHECK(f.sent.empty());
  f.rights.used("a", 1000);  // the oldest is used again: it stays
  f.rights.used("b", 1001);  // not b's: nothing changes
  CHECK(f.rights.created("b", 5000));  // another session's are not counted
  REQUIRE(f.rights.created("a", 2000));  // one past the bound: never refused
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].client == "a");
  std::vector<uint64_t> oldest;
  for (uint64_t d = 1001; d < 1001 + 126; ++d) oldest.push_back(d);
  CHECK(f.sent[0].dirs == oldest);
  CHECK(f.rights.kept_by("a") == 875);
  CHECK(f.rights.owned_by("a") == 1001);  // until the acknowledgement
  CHECK(f.rights.owns("a", 1000));
  CHECK(f.rights.pending_recall("a") == f.sent[0].seq);

  // Created while the recall is under way: the kept ones stay within the bound.
  for (uint64_t d = 3000; d < 3100; ++d) REQUIRE(f.rights.created("a", d));
  CHECK(f.sent.size() == 1);
  CHECK(f.rights.kept_by("a") == 975);
  f.rights.acknowledged("a", f.sent[0].seq);
  CHECK(f.rights.owned_by("a") == 975);
  CHECK_FALSE(f.rights.owns("a", 1001));

  // A directory recalled for the bound is no contested one: its owner may ask again.
  CHECK(f.rights.claimed_existing("a", 1001));
  CHECK(f.rights.kept_by("a") == 976);

  // An owner that does not give them up is evicted, as for any recall.
  for (uint64_t d = 4000; d < 4030; ++d) REQUIRE(f.rights.created("a", d));
  REQUIRE(f.sent.size() == 2);
  f.rights.tick(Clock::now() + Duration(31000));
  REQUIRE(f.evicted.size() == 1);
  CHECK(f.evicted[0] == "a");
  CHECK(f.rights.owned_by("a") == 0);
  CHECK(f.rights.kept_by("b") == 1);
}

TEST_CASE("mds/dir_rights: an existing directory is given to who asks, unless recalled lately") {
  Fixture f;
  CHECK(f.rights.claimed_existing("a", 10));  // nobody owns it
  CHECK(f.rights.claimed_existing("a", 10));  // asked again: still its own
  CHECK_FALSE(f.rights.claimed_existing("b", 10));  // a owns it
  CHECK(f.rights.conflicts("b", {10}));

  bool done = false;
  f.claim("b", {10}, &done);  // b touches it: recalled from a
  REQUIRE(f.sent.size() == 1);
  f.rights.acknowledged("a", f.sent[0].seq);
  f.poll();
  CHECK(done);
  // Both work there now: it is given to neither while it is contested.
  CHECK_FALSE(f.rights.claimed_existing("a", 10));
  CHECK_FALSE(f.rights.claimed_existing("b", 10));
  CHECK(f.rights.owned_by("a") == 0);
  // A new directory is not affected, and creation ignores the contest (a new inode).
  CHECK(f.rights.claimed_existing("b", 11));

  CHECK(f.rights.owns("b", 11));
  f.rights.give_back("b", 11);  // its create failed
  CHECK_FALSE(f.rights.owns("b", 11));
  CHECK(f.rights.owned_by("b") == 0);

  f.rights.tick(Clock::now() + DirRights::kContested + Duration(1000));
  CHECK(f.rights.claimed_existing("a", 10));  // quiet long enough
  f.rights.ended("a");
  CHECK(f.rights.claimed_existing("b", 10));  // a session's end is no recall
}

TEST_CASE("mds/dir_rights: a directory named twice is recalled once, and one under recall is not given") {
  Fixture f;
  f.rights.created("a", 10);
  bool done = false;
  f.claim("b", {10, 10, 1}, &done);  // a rename inside one directory names it twice
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].dirs == std::vector<uint64_t>{10});
  CHECK(f.rights.kept_by("a") == 0);
  // While the recall is under way the owner is not told it owns it (its acknowledgement
  // would take it back after that answer), neither by a claim nor by a resent create.
  CHECK_FALSE(f.rights.claimed_existing("a", 10));
  CHECK_FALSE(f.rights.created("a", 10));
  CHECK(f.rights.owns("a", 10));  // until the acknowledgement
  f.rights.acknowledged("a", f.sent[0].seq);
  f.poll();
  CHECK(done);
  CHECK(f.rights.owned_by("a") == 0);
}

TEST_CASE("mds/dir_rights: a touch during a recall for the bound makes the directory contested") {
  Fixture f(1);
  f.rights.created("a", 10);
  f.rights.created("a", 11);  // past the bound: 10 goes back
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].dirs == std::vector<uint64_t>{10});
  bool done = false;
  f.claim("b", {10}, &done);
  CHECK_FALSE(done);
  CHECK(f.sent.size() == 1);  // the recall under way serves the claim too
  f.rights.acknowledged("a", f.sent[0].seq);
  f.poll();
  CHECK(done);
  CHECK_FALSE(f.rights.claimed_existing("a", 10));  // b touched it: both work there
}

TEST_CASE("mds/dir_rights: files are owned, recalled and counted like directories") {
  Fixture f;
  CHECK(f.rights.claimed_existing("a", 30, DirRights::Kind::kFile));
  CHECK(f.rights.created("a", 31, DirRights::Kind::kFile));
  CHECK(f.rights.created("a", 10));
  CHECK(f.rights.owned_by("a") == 3);
  CHECK(f.rights.files_owned_by("a") == 2);

  bool done = false;
  f.claim("b", {30}, &done);  // another session's open of the file
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].dirs == std::vector<uint64_t>{30});
  f.rights.acknowledged("a", f.sent[0].seq);
  f.poll();
  CHECK(done);
  CHECK(f.rights.files_owned_by("a") == 1);
  // Contested: neither the old owner nor the claimant is given it again for a while.
  CHECK_FALSE(f.rights.claimed_existing("a", 30, DirRights::Kind::kFile));
  CHECK_FALSE(f.rights.claimed_existing("b", 30, DirRights::Kind::kFile));

  f.rights.removed(31);  // its last name and open went
  CHECK(f.rights.files_owned_by("a") == 0);
  CHECK(f.rights.owned_by("a") == 1);
  f.rights.ended("a");
  CHECK(f.rights.owned_by("a") == 0);
}

TEST_CASE("mds/dir_rights: read shares: many readers, recalled by a change, not beside an owner") {
  Fixture f;
  CHECK(f.rights.shared("a", 50));
  CHECK(f.rights.shared("b", 50));
  CHECK(f.rights.shared("a", 50));  // asked again: still shared, counted once
  CHECK(f.rights.shared_by("a") == 1);
  CHECK(f.rights.owned_by("a") == 0);
  CHECK(f.rights.kept_by("a") == 1);  // toward the bound
  CHECK(f.rights.shared_by_others("a", 50));
  CHECK_FALSE(f.rights.shared_by_others("c", 51));
  CHECK_FALSE(f.rights.conflicts("c", {50}));  // a share is no ownership: reads go on
  // Not owned by anyone while shared; the owner's file is not shared.
  CHECK_FALSE(f.rights.claimed_existing("c", 50, DirRights::Kind::kFile));
  CHECK(f.rights.claimed_existing("c", 52, DirRights::Kind::kFile));
  CHECK_FALSE(f.rights.shared("a", 52));

  // A writer: its own share goes without a recall, the others' are recalled.
  f.rights.unshare("a", 50);
  CHECK_FALSE(f.rights.shares("a", 50));
  CHECK(f.rights.shared("c", 50));
  bool done = false;
  f.claim_shares("a", 50, &done);
  CHECK_FALSE(done);
  REQUIRE(f.sent.size() == 2);
  CHECK(f.sent[0].dirs == std::vector<uint64_t>{50});
  CHECK(f.sent[1].dirs == std::vector<uint64_t>{50});
  CHECK(std::set<std::string>{f.sent[0].client, f.sent[1].client} ==
        std::set<std::string>{"b", "c"});
  // Not given again while its recall is under way.
  CHECK_FALSE(f.rights.shared("b", 50));
  for (const auto& sent : f.sent) {
    f.rights.acknowledged(sent.client, sent.seq);
    f.poll();
  }
  CHECK(done);
  CHECK_FALSE(f.rights.shared_by_others("a", 50));
  CHECK(f.rights.shared_by("b") == 0);
  // Not contested: the writer may be given the file; a look recalls it from there.
  CHECK_FALSE(f.rights.contested(50));
  CHECK(f.rights.recalled_within(50, DirRights::kShareHoldOff));  // no new share at once
  CHECK(f.rights.claimed_existing("a", 50, DirRights::Kind::kFile));
  f.rights.give_back("a", 50);
  CHECK(f.rights.shared("b", 50));  // a reader shares it again once the writer is gone

  // A reader's own share becomes ownership; removal and a session's end free shares.
  CHECK(f.rights.shared("d", 53));
  CHECK(f.rights.claimed_existing("d", 53, DirRights::Kind::kFile));
  CHECK(f.rights.files_owned_by("d") == 1);
  CHECK(f.rights.shared_by("d") == 0);
  f.rights.removed(50);
  CHECK(f.rights.shared_by("b") == 0);
  CHECK(f.rights.shared("e", 54));
  f.rights.ended("e");
  CHECK(f.rights.shared_by("e") == 0);
  CHECK_FALSE(f.rights.shared_by_others("x", 54));
}

TEST_CASE("mds/dir_rights: a directory re-asserted as shared and as owned is not given to both") {
  // After a takeover a reader re-asserts its share of a directory, then another session
  // its ownership of it. Given both, a writer's claim recalled the share through the
  // owner's record and the MDS crashed.
  Fixture f;
  f.rights.reasserted("b", {}, {}, {60});
  f.rights.reasserted("a", {60}, {}, {});
  CHECK(f.rights.shares("b", 60));
  CHECK(f.rights.owned_by("a") == 0);
  bool done = false;
  f.claim_shares("c", 60, &done);
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].client == "b");
  f.rights.acknowledged("b", f.sent[0].seq);
  f.poll();
  CHECK(done);
  CHECK_FALSE(f.rights.shares("b", 60));
}

TEST_CASE("mds/dir_rights: read shares count toward the bound and are recalled as the oldest") {
  Fixture f(8);  // recalled down to 7
  for (uint64_t file = 60; file < 68; ++file) REQUIRE(f.rights.shared("a", file));
  CHECK(f.sent.empty());
  REQUIRE(f.rights.created("a", 70));  // the ninth: the two oldest shares go back (to 7)
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].dirs == std::vector<uint64_t>{60, 61});
  CHECK(f.rights.kept_by("a") == 7);
  f.rights.acknowledged("a", f.sent[0].seq);
  CHECK(f.rights.shared_by("a") == 6);
  CHECK(f.rights.owned_by("a") == 1);
  CHECK_FALSE(f.rights.shares("a", 60));
}

}  // namespace dfs::mds::test
