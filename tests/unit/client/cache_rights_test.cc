// CacheRights: the mount's rights as the MDS granted them, and the rules of giving them
// back, driven through the sequences of notices, rounds, lapses and renewals that the
// FileClient feeds it. OwnedDirs: what owning a directory covers.
#include "client-fuse/libdfs/cache_rights.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "client-fuse/libdfs/in_flight_calls.h"

using dfs::client::CacheRights;
using dfs::client::InFlightCalls;
using dfs::client::OwnedDirs;
namespace asio = dfs::asio;

namespace {

constexpr uint64_t kDir = 10;
constexpr uint64_t kFile = 11;
constexpr uint64_t kElsewhere = 99;

// Takes the grant a session reply carried, as a quiet mount does.
CacheRights granted(uint64_t seq = 1) {
  CacheRights rights(true);
  CHECK_FALSE(rights.exclusive_notice(true, seq, true, "session reply"));
  REQUIRE(rights.take_grant(true));
  return rights;
}

// The ownership epoch of a request sent before a recall (of another inode) that is
// answered by now: what an answer crossing that recall was asked at.
uint64_t epoch_before_a_recall(CacheRights& rights, uint64_t seq);

// Recall `seq` of `file`, held: its give-up's one round answers it and has the kernel
// drop the file (its inode, and a new kernel inode number for it), and nothing else.
void recall_one_file(CacheRights& rights, uint64_t seq, uint64_t file);

// Runs the give-up to its end, returning the acknowledgements of each round.
std::vector<std::vector<uint64_t>> finish_give_up(CacheRights& rights) {
  std::vector<std::vector<uint64_t>> rounds;
  while (auto round = rights.next_round()) rounds.push_back(round->answering);
  return rounds;
}

void recall_one_file(CacheRights& rights, uint64_t seq, uint64_t file) {
  auto recall = rights.dirs_recalled({file}, seq, false);
  CHECK(recall.dropped);
  REQUIRE(recall.start);
  auto round = rights.next_round();
  REQUIRE(round);
  CHECK(round->answering == std::vector<uint64_t>{seq});
  CHECK(round->invalidate.inos == std::vector<uint64_t>{file});   // its inode, nothing else
  CHECK(round->invalidate.files == std::vector<uint64_t>{file});  // a new kernel inode
  CHECK_FALSE(rights.next_round());
}

uint64_t epoch_before_a_recall(CacheRights& rights, uint64_t seq) {
  const uint64_t before = rights.ownership_epoch();
  rights.dirs_recalled({kElsewhere}, seq, false);
  finish_give_up(rights);
  return before;
}

}  // namespace

TEST_CASE("client/owned_dirs: a directory covers the files created in it until they leave") {
  OwnedDirs owned;
  owned.own(kDir);
  owned.file_created(kFile, kDir);
  owned.file_created(12, kElsewhere);  // not owned: not covered
  CHECK(owned.covers(kDir));
  CHECK(owned.covers(kFile));
  CHECK_FALSE(owned.covers(12));
  owned.file_created(13, kDir);
  owned.file_moved(13, kElsewhere);
  CHECK_FALSE(owned.covers(13));
  owned.file_moved(13, kDir);  // it had another name meanwhile: it stays uncovered
  CHECK_FALSE(owned.covers(13));
  owned.file_left(kFile);
  CHECK_FALSE(owned.covers(kFile));

  owned.own(20);
  owned.file_created(21, 20);
  std::vector<uint64_t> dropped;
  CHECK(owned.give_up({20, 30}, &dropped));
  CHECK_FALSE(owned.covers(21));
  CHECK(dropped == std::vector<uint64_t>{21});  // kDir's files stay covered
  CHECK_FALSE(owned.give_up({20}));  // given up already
  owned.removed(kDir);
  CHECK(owned.size() == 0);
}

TEST_CASE("client/cache_rights: a grant waits until the mount is quiet, then every inode is alone") {
  CacheRights rights(true);
  CHECK_FALSE(rights.alone(kFile));
  CHECK_FALSE(rights.exclusive_notice(true, 3, false, "pushed grant"));
  CHECK(rights.grant_waiting());
  CHECK_FALSE(rights.take_grant(false));  // a file is open
  CHECK_FALSE(rights.exclusive());
  CHECK(rights.take_grant(true));
  CHECK(rights.exclusive());
  CHECK(rights.alone(kFile));
  CHECK(rights.alone(kElsewhere));
  CHECK_FALSE(rights.grant_waiting());
}

TEST_CASE("client/cache_rights: a mount that does not want exclusive caching, or is unmounting, takes no grant") {
  CacheRights off(false);
  CHECK_FALSE(off.exclusive_notice(true, 1, true, "session reply"));
  CHECK_FALSE(off.take_grant(true));
  CHECK_FALSE(off.exclusive());

  CacheRights stopping(true);
  stopping.stop();
  CHECK_FALSE(stopping.exclusive_notice(true, 1, true, "session reply"));
  CHECK_FALSE(stopping.take_grant(true));
}

TEST_CASE("client/cache_rights: a recall stops the right at once and is answered after one round") {
  CacheRights rights = granted(1);
  auto give_up = rights.exclusive_notice(false, 2, false, "another mount");
  REQUIRE(give_up);
  CHECK(give_up->was_exclusive);
  CHECK(give_up->dropped);
  CHECK_FALSE(rights.exclusive());  // before anything is pushed
  CHECK(rights.giving_up());
  auto round = rights.next_round();
  REQUIRE(round);
  CHECK(round->answering == std::vector<uint64_t>{2});
  CHECK(round->invalidate.everything);
  CHECK_FALSE(rights.next_round());
  CHECK_FALSE(rights.giving_up());
}

TEST_CASE("client/cache_rights: pushed notices apply in seq order and a session reply always applies") {
  CacheRights rights = granted(5);
  CHECK_FALSE(rights.exclusive_notice(false, 4, false, "late recall"));  // older: ignored
  CHECK_FALSE(rights.exclusive_notice(false, 5, false, "resent grant's seq"));
  CHECK(rights.exclusive());
  REQUIRE(rights.exclusive_notice(false, 6, false, "recall"));
  finish_give_up(rights);
  // A grant that the recall overtook arrives late: it must not undo the recall.
  CHECK_FALSE(rights.exclusive_notice(true, 5, false, "late grant"));
  CHECK_FALSE(rights.grant_waiting());
  CHECK_FALSE(rights.take_grant(true));
  // A session reply (a new session, a takeover) is the MDS's word now, whatever its seq.
  CHECK_FALSE(rights.exclusive_notice(true, 2, true, "session reply"));
  CHECK(rights.take_grant(true));
}

TEST_CASE("client/cache_rights: a pushed recall of a right never applied is answered but not one in a session reply") {
  CacheRights rights(true);
  auto give_up = rights.exclusive_notice(false, 7, false, "recall");
  REQUIRE(give_up);
  CHECK_FALSE(give_up->was_exclusive);
  CHECK_FALSE(give_up->dropped);
  auto rounds = finish_give_up(rights);
  CHECK(rounds == std::vector<std::vector<uint64_t>>{{7}});

  CacheRights fresh(true);
  CHECK_FALSE(fresh.exclusive_notice(false, 1, true, "session reply"));
  CHECK_FALSE(fresh.giving_up());
}

TEST_CASE("client/cache_rights: a recall arriving during a round gets a round of its own") {
  CacheRights rights = granted(1);
  rights.owned().own(kDir);
  REQUIRE(rights.exclusive_notice(false, 2, false, "recall"));
  auto first = rights.next_round();
  REQUIRE(first);
  CHECK(first->answering == std::vector<uint64_t>{2});
  // While the first round pushes, the owned directory is recalled too.
  auto dirs = rights.dirs_recalled({kDir}, 3, false);
  CHECK(dirs.dropped);
  CHECK_FALSE(dirs.start);  // joins the running give-up
  CHECK_FALSE(rights.alone(kDir));
  auto second = rights.next_round();
  REQUIRE(second);
  CHECK(second->answering == std::vector<uint64_t>{3});
  CHECK_FALSE(second->invalidate.everything);  // the first round dropped everything
  CHECK(second->invalidate.inos == std::vector<uint64_t>{kDir});
  CHECK_FALSE(rights.next_round());
}

TEST_CASE("client/cache_rights: a grant arriving during a give-up is taken up only once it is over") {
  CacheRights rights = granted(1);
  REQUIRE(rights.exclusive_notice(false, 2, false, "recall"));
  REQUIRE(rights.next_round());
  CHECK_FALSE(rights.exclusive_notice(true, 3, false, "the other mount left"));
  CHECK(rights.grant_waiting());
  CHECK_FALSE(rights.take_grant(true));  // still giving up
  CHECK_FALSE(rights.next_round());
  CHECK(rights.take_grant(true));
  CHECK(rights.exclusive());
}

TEST_CASE("client/cache_rights: a recall during a give-up drops a waiting grant and is answered in turn") {
  CacheRights rights = granted(1);
  REQUIRE(rights.exclusive_notice(false, 2, false, "recall"));
  REQUIRE(rights.next_round());
  CHECK_FALSE(rights.exclusive_notice(true, 3, false, "grant"));
  CHECK_FALSE(rights.exclusive_notice(false, 4, false, "recall again"));
  CHECK_FALSE(rights.grant_waiting());
  auto rounds = finish_give_up(rights);
  CHECK(rounds == std::vector<std::vector<uint64_t>>{{4}});
  CHECK_FALSE(rights.take_grant(true));
}

TEST_CASE("client/cache_rights: owned directories: a recall is answered whether or not they were owned") {
  CacheRights rights(true);
  rights.owned().own(kDir);
  rights.owned().file_created(kFile, kDir);
  CHECK(rights.alone(kDir));
  CHECK(rights.alone(kFile));
  CHECK_FALSE(rights.alone(kElsewhere));

  auto unknown = rights.dirs_recalled({kElsewhere}, 5, false);
  CHECK_FALSE(unknown.dropped);
  REQUIRE(unknown.start);
  CHECK_FALSE(unknown.start->dropped);
  CHECK(finish_give_up(rights) == std::vector<std::vector<uint64_t>>{{5}});
  CHECK(rights.alone(kFile));

  auto recall = rights.dirs_recalled({kDir}, 6, false);
  CHECK(recall.dropped);
  REQUIRE(recall.start);
  CHECK(recall.start->dropped);
  CHECK_FALSE(rights.alone(kDir));
  CHECK_FALSE(rights.alone(kFile));
  auto round = rights.next_round();
  REQUIRE(round);
  // Only what the directory let the kernel cache: its names and inode, its files.
  CHECK_FALSE(round->invalidate.everything);
  auto scope = round->invalidate.inos;
  std::sort(scope.begin(), scope.end());
  CHECK(scope == std::vector<uint64_t>{kDir, kFile});
  CHECK(round->invalidate.files.empty());  // its name goes with the directory's
}

TEST_CASE("client/cache_rights: an owned file is covered wherever its names are, until recalled") {
  CacheRights rights(true);
  const uint64_t epoch = rights.ownership_epoch();
  CHECK(rights.own_file_claimed(kFile, epoch));
  CHECK(rights.alone(kFile));
  CHECK_FALSE(rights.alone(kDir));
  rights.owned().file_moved(kFile, kElsewhere);  // a rename: the file is owned itself
  rights.owned().file_left(kFile);               // a link
  CHECK(rights.alone(kFile));
  CHECK(rights.owned().files() == std::vector<uint64_t>{kFile});
  CHECK(rights.owned().dirs().empty());

  recall_one_file(rights, 7, kFile);
  CHECK_FALSE(rights.alone(kFile));

  // Granted to an open whose answer crossed a recall: not owned.
  CHECK_FALSE(rights.own_file_claimed(kFile, epoch_before_a_recall(rights, 8)));
  CHECK_FALSE(rights.alone(kFile));
  CHECK(rights.owned().size() == 0);
}

TEST_CASE("client/cache_rights: a lapsed lease stops every right and a renewal saying nothing changed restores them") {
  CacheRights rights = granted(4);
  rights.owned().own(kDir);
  CHECK(rights.lapse());
  CHECK_FALSE(rights.lapse());  // once
  CHECK_FALSE(rights.exclusive());
  CHECK_FALSE(rights.alone(kDir));
  CHECK_FALSE(rights.alone(kElsewhere));
  CHECK_FALSE(rights.take_grant(true));

  auto renewal = rights.renewed(true, 4, false);
  CHECK(renewal.was_lapsed);
  CHECK(renewal.exclusive_back);
  CHECK_FALSE(renewal.exclusive_lost);
  CHECK(renewal.dirs_dropped == 0);
  CHECK(rights.alone(kDir));  // owned directories come back at once
  CHECK(rights.take_grant(true));
  CHECK(rights.exclusive());

  CHECK_FALSE(rights.renewed(true, 4, false).was_lapsed);  // not lapsed: nothing happens
}

TEST_CASE("client/cache_rights: a renewal after a lapse: the MDS moved on, or a recall of directories is under way") {
  CacheRights rights = granted(4);
  rights.owned().own(kDir);
  rights.owned().own_file(kElsewhere);
  REQUIRE(rights.lapse());
  auto renewal = rights.renewed(true, 5, true);  // a newer notice is on its way
  CHECK(renewal.exclusive_lost);
  CHECK_FALSE(renewal.exclusive_back);
  CHECK(renewal.dirs_dropped == 2);
  // The file owned by itself gets a new kernel inode: the kernel's size of it goes.
  CHECK(renewal.invalidate.files == std::vector<uint64_t>{kElsewhere});
  CHECK(renewal.invalidate.inos == std::vector<uint64_t>{kElsewhere});
  CHECK_FALSE(rights.alone(kElsewhere));
  CHECK_FALSE(rights.alone(kDir));
  CHECK_FALSE(rights.take_grant(true));

  CacheRights only_dirs(true);
  only_dirs.owned().own(kDir);
  REQUIRE(only_dirs.lapse());
  auto back = only_dirs.renewed(false, 0, false);
  CHECK_FALSE(back.exclusive_lost);  // it never held exclusive caching
  CHECK(only_dirs.alone(kDir));
}

TEST_CASE("client/cache_rights: a lease does not lapse while nothing is held or a give-up runs") {
  CacheRights nothing(true);
  CHECK_FALSE(nothing.lapse());

  CacheRights rights = granted(1);
  rights.owned().own(kDir);
  REQUIRE(rights.exclusive_notice(false, 2, false, "recall"));
  CHECK_FALSE(rights.lapse());  // the give-up answers the MDS itself
}

TEST_CASE("client/cache_rights: an eviction takes every right, and the new session's reply decides anew") {
  CacheRights rights = granted(1);
  rights.owned().own(kDir);
  rights.owned().own_file(kElsewhere);
  auto scope = rights.evicted();
  REQUIRE(scope.has_value());
  CHECK(scope->everything);
  CHECK(scope->files == std::vector<uint64_t>{kElsewhere});
  CHECK_FALSE(rights.exclusive());
  CHECK_FALSE(rights.alone(kDir));
  CHECK(rights.owned().size() == 0);
  CHECK_FALSE(rights.evicted().has_value());  // nothing held any more

  CHECK_FALSE(rights.exclusive_notice(true, 1, true, "session reply"));
  CHECK(rights.take_grant(true));
}

TEST_CASE("client/cache_rights: a directory the MDS gave is owned unless a recall or an eviction came since") {
  CacheRights rights(true);
  uint64_t asked = rights.ownership_epoch();
  CHECK(rights.own_claimed(kDir, asked));
  CHECK(rights.alone(kDir));

  asked = rights.ownership_epoch();
  auto recall = rights.dirs_recalled({kDir}, 9, false);  // it may have named the one asked for
  REQUIRE(recall.start);
  finish_give_up(rights);
  CHECK_FALSE(rights.own_claimed(20, asked));
  CHECK_FALSE(rights.alone(20));
  CHECK(rights.own_claimed(20, rights.ownership_epoch()));

  asked = rights.ownership_epoch();
  rights.evicted();
  CHECK_FALSE(rights.own_claimed(30, asked));
  CHECK(rights.owned().size() == 0);
}

TEST_CASE("client/in_flight_calls: settled(mark) waits for the calls started before the mark only") {
  asio::io_context io;
  InFlightCalls calls(io.get_executor());
  auto first = std::make_unique<InFlightCalls::Running>(calls);
  const uint64_t mark = calls.mark();
  auto later = std::make_unique<InFlightCalls::Running>(calls);  // started after the mark
  bool settled = false;
  asio::co_spawn(
      io,
      [](InFlightCalls* c, uint64_t m, bool* done) -> dfs::awaitable<void> {
        co_await c->settled(m);
        *done = true;
      }(&calls, mark, &settled),
      asio::detached);
  io.poll();
  CHECK_FALSE(settled);
  first.reset();  // the only call started before the mark ends
  io.restart();
  io.poll();
  CHECK(settled);
  CHECK(calls.running() == 1);
  later.reset();
  CHECK(calls.running() == 0);
}

TEST_CASE("client/cache_rights: a session reply during a give-up of directories acknowledges nothing") {
  CacheRights rights(true);
  rights.owned().own(kDir);
  rights.owned().own(kElsewhere);
  auto recall = rights.dirs_recalled({kDir}, 10, false);
  REQUIRE(recall.start);
  // The connection broke; the session is re-opened while the give-up runs. The reply's
  // seq is the MDS's newest: that of a recall of kElsewhere this mount has not seen.
  CHECK_FALSE(rights.exclusive_notice(false, 11, true, "session reply"));
  CHECK(finish_give_up(rights) == std::vector<std::vector<uint64_t>>{{10}});
  CHECK(rights.alone(kElsewhere));  // still its own until that recall arrives
  auto late = rights.dirs_recalled({kElsewhere}, 11, false);
  REQUIRE(late.start);
  CHECK(finish_give_up(rights) == std::vector<std::vector<uint64_t>>{{11}});
  CHECK_FALSE(rights.alone(kElsewhere));
}

TEST_CASE("client/cache_rights: read shares: pages kept, never alone, given up like owned files") {
  constexpr uint64_t kShared = 20, kOther = 21;
  CacheRights rights(true);
  const uint64_t epoch = rights.ownership_epoch();
  REQUIRE(rights.share_claimed(kShared, epoch, true));
  REQUIRE(rights.share_claimed(kOther, epoch, true));
  CHECK(rights.read_shared(kShared));
  CHECK_FALSE(rights.alone(kShared));  // others may read it: nothing is answered alone
  CHECK(rights.holds_any());           // the lease guards it
  CHECK(rights.owned().shared().size() == 2);

  // The mount's own writing open ends it here, without a recall.
  rights.share_given_up(kOther);
  CHECK_FALSE(rights.read_shared(kOther));

  // A recall: the kernel drops the file's pages and makes a new incarnation.
  recall_one_file(rights, 7, kShared);
  CHECK_FALSE(rights.read_shared(kShared));

  // A share answered to a request sent before a recall is not taken up.
  CHECK_FALSE(rights.share_claimed(kShared, epoch_before_a_recall(rights, 8), true));
  CHECK_FALSE(rights.read_shared(kShared));

  // Ownership replaces a share; a lapsed lease stops it; an eviction drops it with its
  // pages.
  REQUIRE(rights.share_claimed(kShared, rights.ownership_epoch(), true));
  REQUIRE(rights.own_file_claimed(kShared, rights.ownership_epoch()));
  CHECK(rights.alone(kShared));
  CHECK_FALSE(rights.read_shared(kShared));
  CHECK(rights.owned().shared().empty());
  REQUIRE(rights.share_claimed(kOther, rights.ownership_epoch(), true));
  REQUIRE(rights.lapse());
  CHECK_FALSE(rights.read_shared(kOther));
  auto renewal = rights.renewed(false, 0, false);
  CHECK(renewal.was_lapsed);
  CHECK(rights.read_shared(kOther));
  auto scope = rights.evicted();
  REQUIRE(scope);
  auto files = scope->files;
  std::sort(files.begin(), files.end());
  CHECK(files == std::vector<uint64_t>{kShared, kOther});
  CHECK_FALSE(rights.read_shared(kOther));
}

TEST_CASE("client/cache_rights: a give-up pushes unless it names only shares no pending change names") {
  constexpr uint64_t kShared = 20, kSharedThenOwned = 21;
  CacheRights rights(true);
  REQUIRE(rights.share_claimed(kShared, rights.ownership_epoch(), true));
  REQUIRE(rights.share_claimed(kSharedThenOwned, rights.ownership_epoch(), false));

  // Shares alone, nothing on its way names them: nothing to push (acknowledged ahead of
  // the mount's other changes).
  auto shares_only = rights.dirs_recalled({kShared}, 2, false);
  REQUIRE(shares_only.start);
  CHECK_FALSE(shares_only.start->pushes);
  auto round = rights.next_round();
  REQUIRE(round);
  CHECK_FALSE(round->push);
  CHECK_FALSE(rights.next_round());

  // A change not answered yet names the shared inode: it goes first.
  REQUIRE(rights.share_claimed(kShared, rights.ownership_epoch(), true));
  auto named = rights.dirs_recalled({kShared}, 3, true);
  REQUIRE(named.start);
  CHECK(named.start->pushes);
  round = rights.next_round();
  REQUIRE(round);
  CHECK(round->push);
  CHECK_FALSE(rights.next_round());

  // A directory shared, then owned (a create there asked for it): what was deferred in
  // it goes first.
  REQUIRE(rights.own_claimed(kSharedThenOwned, rights.ownership_epoch()));
  REQUIRE(rights.owned().shares(kSharedThenOwned));
  auto owned = rights.dirs_recalled({kSharedThenOwned}, 4, false);
  REQUIRE(owned.start);
  CHECK(owned.dropped);
  CHECK(owned.start->pushes);
  round = rights.next_round();
  REQUIRE(round);
  CHECK(round->push);
  CHECK_FALSE(rights.next_round());
}

TEST_CASE("client/cache_rights: a recall of exclusive caching after a lapse pushes what was deferred under it") {
  CacheRights rights = granted(4);
  REQUIRE(rights.lapse());
  CHECK_FALSE(rights.exclusive());
  auto give_up = rights.exclusive_notice(false, 5, false, "another mount");
  REQUIRE(give_up);
  CHECK(give_up->was_exclusive);
  CHECK(give_up->pushes);
  auto round = rights.next_round();
  REQUIRE(round);
  CHECK(round->push);
  CHECK(round->invalidate.everything);
  CHECK_FALSE(rights.next_round());
  // The renewal that follows restores nothing: the right went.
  auto renewal = rights.renewed(false, 5, false);
  CHECK(renewal.was_lapsed);
  CHECK_FALSE(renewal.exclusive_back);
  CHECK_FALSE(rights.exclusive());

  // Never held: nothing to push.
  CacheRights never(true);
  auto answered = never.exclusive_notice(false, 2, false, "another mount");
  REQUIRE(answered);
  CHECK_FALSE(answered->pushes);
}
