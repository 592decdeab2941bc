#include <doctest/doctest.h>

#include "tests/unit/caps/cap_table_fixture.h"

namespace dfs::caps::test {
namespace {

constexpr Rights kAll = kFileRights;
constexpr Rights kReader = kAttrShared | kDataRead | kDataCache;

TEST_CASE("caps/table: a client alone gets everything it wants at once") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.want(1, want_of(7, kAll, 1), 0));
  Grant g = only<Grant>(t.take_outbox(), 1);
  CHECK(g.issued == kAll);
  CHECK(g.want_id == 1);
  CHECK(t.held(1, 7) == kAll);
}

TEST_CASE("caps/table: wants are validated") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  CHECK(t.want(1, want_of(7, kDirExcl, 1), 0).error().code() == ErrorCode::kInvalidArgument);
  CHECK(t.want(2, want_of(7, kDataRead, 1), 0).error().code() == ErrorCode::kNotFound);
  REQUIRE(t.want(1, want_of(7, kDataRead, 2), 0));
  CHECK(t.want(1, want_of(7, kDirShared, 3, InodeKind::kDir), 0).error().code() ==
        ErrorCode::kInvalidArgument);
}

TEST_CASE("caps/table: a conflicting want recalls and is granted after the ack") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.open_session(2, 0));
  REQUIRE(t.want(1, want_of(7, kAll, 1), 0));
  t.take_outbox();
  REQUIRE(t.want(2, want_of(7, kReader, 1), 10));
  std::vector<Outgoing> out = t.take_outbox();
  Revoke r = only<Revoke>(out, 1);
  // 1 keeps what does not conflict with a reader and is not exclusive.
  CHECK(r.issued_after == (kAttrShared | kDataRead | kDataCache));
  CHECK(sent<Grant>(out, 2).empty());  // must wait: Fb, Fw and Ax are still held
  CHECK(t.held(1, 7) == kAll);         // being revoked still counts as held

  SUBCASE("the ack releases the grant") {
    REQUIRE(t.ack(1, Ack{7, r.seq, r.issued_after}, 20));
    Grant g = only<Grant>(t.take_outbox(), 2);
    CHECK(g.issued == kReader);
    CHECK(g.want_id == 1);
    CHECK(t.held(1, 7) == r.issued_after);
  }
  SUBCASE("a stale ack is ignored") {
    REQUIRE(t.ack(1, Ack{7, r.seq - 1, kNoRights}, 20));
    CHECK(t.take_outbox().empty());
    CHECK(t.held(1, 7) == kAll);
  }
  SUBCASE("an unacknowledged recall is resent, then its holder is evicted") {
    t.tick(10 + 100);
    CHECK(only<Revoke>(t.take_outbox(), 1).seq == r.seq);  // same seq: a resend
    Result<TimeMs> lease = t.renew(1, 500);                // renewing does not push the deadline
    REQUIRE(lease);
    CHECK(*lease == 10 + 1000 - 500);  // the lease ends by the recall's deadline
    t.tick(10 + 1000);
    std::vector<Outgoing> out2 = t.take_outbox();
    CHECK(only<Evicted>(out2, 1).session == 1);
    CHECK(only<Grant>(out2, 2).issued == kReader);
    CHECK(t.fenced(1));
    CHECK(t.renew(1, 1100).error().code() == ErrorCode::kPermissionDenied);
    CHECK(t.open_session(1, 1100).error().code() == ErrorCode::kPermissionDenied);
  }
}

TEST_CASE("caps/table: newest request wins, the holder falls back") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.open_session(2, 0));
  REQUIRE(t.want(1, want_of(7, kReader, 1), 0));
  REQUIRE(t.want(2, want_of(7, kDataWrite | kDataRead, 1), 0));
  std::vector<Outgoing> out = t.take_outbox();
  Revoke r = only<Revoke>(out, 1);
  CHECK(r.issued_after == kDataRead);  // As and Fc conflict with Fw
  REQUIRE(t.ack(1, Ack{7, r.seq, r.issued_after}, 5));
  out = t.take_outbox();
  Grant g2 = only<Grant>(out, 2);
  CHECK(g2.issued == (kDataWrite | kDataRead));
  CHECK(sent<Grant>(out, 1).empty());  // 1 still wants As Fc but does not get them back
  // 2 goes away: 1 is alone again and regains what it wants.
  REQUIRE(t.release(2, Release{7, g2.seq, kDataWrite | kDataRead}, 6));
  CHECK(only<Grant>(t.take_outbox(), 1).issued == kReader);
}

TEST_CASE("caps/table: exclusive rights come back when a client is alone again") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.open_session(2, 0));
  REQUIRE(t.want(1, want_of(7, kAll, 1), 0));
  REQUIRE(t.want(2, want_of(7, kDataRead, 1), 0));
  Revoke r = only<Revoke>(t.take_outbox(), 1);
  CHECK_FALSE(r.issued_after.intersects(kExclusiveRights));
  REQUIRE(t.ack(1, Ack{7, r.seq, r.issued_after}, 1));
  Grant g2 = only<Grant>(t.take_outbox(), 2);
  REQUIRE(t.release(2, Release{7, g2.seq, kDataRead}, 2));
  Grant again = only<Grant>(t.take_outbox(), 1);
  CHECK(again.issued == kAll);
  CHECK(again.want_id == 0);  // pushed, not an answer
}

TEST_CASE("caps/table: only the ack of the latest recall settles overlapping recalls") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.open_session(2, 0));
  REQUIRE(t.open_session(3, 0));
  REQUIRE(t.want(1, want_of(7, kReader, 1), 0));
  t.take_outbox();
  REQUIRE(t.want(2, want_of(7, kDataWrite, 1), 1));  // recalls As and Fc from 1
  Revoke first = only<Revoke>(t.take_outbox(), 1);
  Result<MutationTicket> m = t.prepare_mutation(3, 7, InodeKind::kFile, kDataRead, 2);
  REQUIRE(m);
  Revoke second = only<Revoke>(t.take_outbox(), 1);  // and then Fr
  CHECK(second.seq > first.seq);
  CHECK(second.issued_after == kNoRights);
  // The ack of the first arrives late: 1 has not seen the second yet, so nothing settles.
  REQUIRE(t.ack(1, Ack{7, first.seq, first.issued_after}, 3));
  CHECK(t.held(1, 7) == kReader);
  CHECK(t.take_ready().empty());
  REQUIRE(t.ack(1, Ack{7, second.seq, kNoRights}, 4));
  CHECK(t.held(1, 7) == kNoRights);
  CHECK(t.take_ready().size() == 1);
  t.finish_mutation(m->id, 5);
  CHECK(only<Grant>(t.take_outbox(), 2).issued == kDataWrite);
}

TEST_CASE("caps/table: rights held but no longer wanted are recalled when they block") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.open_session(2, 0));
  const Rights dir_all = kDirShared | kDirExcl;
  REQUIRE(t.want(1, want_of(5, kDirShared, 1, InodeKind::kDir), 0));
  REQUIRE(t.want(2, want_of(5, dir_all, 1, InodeKind::kDir), 0));
  Grant g2 = only<Grant>(t.take_outbox(), 2);
  CHECK(g2.issued == kDirShared);  // 1 wants too: no Dx
  // 1 stops wanting; the Release it sent with that Want is lost.
  REQUIRE(t.want(1, want_of(5, kNoRights, 2, InodeKind::kDir), 1));
  std::vector<Outgoing> out = t.take_outbox();
  CHECK(only<Revoke>(out, 1).issued_after == kNoRights);  // its leftover Ds blocks 2's Dx
  REQUIRE(t.ack(1, Ack{5, only<Revoke>(out, 1).seq, kNoRights}, 2));
  CHECK(only<Grant>(t.take_outbox(), 2).issued == dir_all);
}

TEST_CASE("caps/table: a release with an old seq is ignored") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.want(1, want_of(7, kReader, 1), 0));
  Grant g1 = only<Grant>(t.take_outbox(), 1);
  REQUIRE(t.want(1, want_of(7, kReader, 2), 0));  // answered with a fresh seq
  Grant g2 = only<Grant>(t.take_outbox(), 1);
  CHECK(g2.seq > g1.seq);
  REQUIRE(t.release(1, Release{7, g1.seq, kDataCache}, 1));
  CHECK(t.held(1, 7) == kReader);
  REQUIRE(t.release(1, Release{7, g2.seq, kDataCache}, 1));
  CHECK(t.held(1, 7) == (kAttrShared | kDataRead));
}

TEST_CASE("caps/table: a session that stops renewing is evicted and fenced") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.open_session(2, 0));
  REQUIRE(t.want(1, want_of(7, kAll, 1), 0));
  t.take_outbox();
  REQUIRE(t.renew(2, 600));
  t.tick(999);
  CHECK_FALSE(t.fenced(1));
  t.tick(1000);
  CHECK(t.fenced(1));
  CHECK_FALSE(t.fenced(2));
  CHECK(only<Evicted>(t.take_outbox(), 1).session == 1);
  CHECK(t.held(1, 7) == kNoRights);
}

TEST_CASE("caps/table: a session over its cap limit gives back the least recently used") {
  CapTableOptions o = short_options();
  o.max_caps_per_session = 2;
  CapTable t(o);
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.want(1, want_of(10, kReader, 1), 0));
  REQUIRE(t.want(1, want_of(11, kReader, 2), 1));
  REQUIRE(t.want(1, want_of(12, kReader, 3), 2));
  std::vector<Outgoing> out = t.take_outbox();
  Revoke r = only<Revoke>(out, 1);
  CHECK(r.ino == 10);
  CHECK(r.issued_after == kNoRights);
  CHECK(t.caps_issued(1) == 2);
  REQUIRE(t.ack(1, Ack{10, r.seq, kNoRights}, 3));
  CHECK(t.held(1, 10) == kNoRights);
  CHECK(t.take_outbox().empty());  // the want was dropped with the recall: no regrant
}

TEST_CASE("caps/table: a mutation waits for the holders, and blocks grants until done") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.open_session(2, 0));
  const Ino dir = 5;
  const Rights entries = kDirShared | kDirExcl;
  REQUIRE(t.want(1, want_of(dir, kDirShared, 1, InodeKind::kDir), 0));
  t.take_outbox();
  Result<MutationTicket> m = t.prepare_mutation(2, dir, InodeKind::kDir, entries, 1);
  REQUIRE(m);
  CHECK_FALSE(m->ready);
  Revoke r = only<Revoke>(t.take_outbox(), 1);
  CHECK(r.issued_after == kNoRights);
  CHECK(t.take_ready().empty());
  REQUIRE(t.ack(1, Ack{dir, r.seq, kNoRights}, 2));
  std::vector<MutationReady> ready = t.take_ready();
  REQUIRE(ready.size() == 1);
  CHECK(ready[0].id == m->id);
  CHECK_FALSE(ready[0].cancelled);
  // 1 asks again while the change is applied: it waits.
  REQUIRE(t.want(1, want_of(dir, kDirShared, 2, InodeKind::kDir), 3));
  CHECK(sent<Grant>(t.take_outbox(), 1).empty());
  t.finish_mutation(m->id, 4);
  Grant g = only<Grant>(t.take_outbox(), 1);
  CHECK(g.issued == kDirShared);
  CHECK(g.want_id == 2);
  // Nobody else holds anything: the next one is ready at once.
  Result<MutationTicket> m2 = t.prepare_mutation(1, dir, InodeKind::kDir, entries, 5);
  REQUIRE(m2);
  CHECK(m2->ready);
}

TEST_CASE("caps/table: eviction unblocks a mutation waiting on the evicted holder") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.open_session(2, 0));
  REQUIRE(t.want(1, want_of(7, kAttrShared, 1), 0));
  Result<MutationTicket> m = t.prepare_mutation(2, 7, InodeKind::kFile, kAttrShared | kAttrExcl, 0);
  REQUIRE(m);
  CHECK_FALSE(m->ready);
  REQUIRE(t.renew(2, 900));
  t.tick(1000);
  CHECK(t.fenced(1));
  std::vector<MutationReady> ready = t.take_ready();
  REQUIRE(ready.size() == 1);
  CHECK(ready[0].id == m->id);
}

TEST_CASE("caps/table: close drops rights without a fence") {
  CapTable t(short_options());
  REQUIRE(t.open_session(1, 0));
  REQUIRE(t.want(1, want_of(7, kAll, 1), 0));
  t.close_session(1, 1);
  CHECK_FALSE(t.fenced(1));
  CHECK(t.held(1, 7) == kNoRights);
  CHECK_FALSE(t.has_session(1));
}

}  // namespace
}  // namespace dfs::caps::test
