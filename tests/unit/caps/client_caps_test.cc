#include "common/caps/client_caps.h"

#include <doctest/doctest.h>

namespace dfs::caps {
namespace {

template <class T>
std::vector<T> of_type(const std::vector<ClientMessage>& out) {
  std::vector<T> v;
  for (const ClientMessage& m : out) {
    if (std::holds_alternative<T>(m)) v.push_back(std::get<T>(m));
  }
  return v;
}

constexpr Rights kReader = kAttrShared | kDataRead | kDataCache;
constexpr CapSeq kBase = seq_base(1);

TEST_CASE("caps/client: grants are adopted in seq order only") {
  ClientCaps c(1, {}, 1000);
  c.want(7, InodeKind::kFile, kFileRights, 0);
  std::vector<Want> w = of_type<Want>(c.take_outbox());
  REQUIRE(w.size() == 1);
  c.on_grant(Grant{7, kFileRights, kBase + 1, w[0].want_id}, 1);
  CHECK(c.can_use(7, kDataBuffer, 1));
  CHECK_FALSE(c.want_pending(7));
  c.on_revoke(Revoke{7, kReader, kBase + 2}, 2);
  CHECK_FALSE(c.can_use(7, kDataBuffer, 2));    // no new use of a revoked right
  CHECK(c.usable(7, 2).contains(kDataBuffer));  // but it stays in use for the flush
  CHECK(c.revoking(7) == (kFileRights - kReader));
  CHECK(c.take_outbox().empty());  // no ack before the flush
  // A delayed older Grant must not bring Fb back.
  c.on_grant(Grant{7, kFileRights, kBase + 1, 0}, 3);
  CHECK(c.revoking(7) == (kFileRights - kReader));
  c.flushed(7);
  std::vector<Ack> acks = of_type<Ack>(c.take_outbox());
  REQUIRE(acks.size() == 1);
  CHECK(acks[0].seq == kBase + 2);
  CHECK(acks[0].now_holds == kReader);
  CHECK(c.held(7) == kReader);
  // The MDS resends the Revoke (our Ack was lost): acked again at once.
  c.on_revoke(Revoke{7, kReader, kBase + 2}, 4);
  CHECK(of_type<Ack>(c.take_outbox()).size() == 1);
}

TEST_CASE("caps/client: a revoke of nothing in use is acked at once") {
  ClientCaps c(1, {}, 1000);
  c.want(7, InodeKind::kFile, kReader, 0);
  c.take_outbox();
  c.on_grant(Grant{7, kReader, kBase + 1, 1}, 0);
  c.release(7, kDataCache);
  std::vector<Release> rel = of_type<Release>(c.take_outbox());
  REQUIRE(rel.size() == 1);
  CHECK(rel[0].seq == kBase + 1);
  c.on_revoke(Revoke{7, kAttrShared | kDataRead, kBase + 2}, 1);
  std::vector<Ack> acks = of_type<Ack>(c.take_outbox());
  REQUIRE(acks.size() == 1);
  CHECK(acks[0].now_holds == (kAttrShared | kDataRead));
  // For an inode it no longer tracks, too; and a Grant for one is given back.
  c.on_revoke(Revoke{9, kNoRights, kBase + 3}, 1);
  CHECK(of_type<Ack>(c.take_outbox()).size() == 1);
  c.on_grant(Grant{9, kDataRead, kBase + 4, 0}, 1);
  CHECK(of_type<Release>(c.take_outbox()).size() == 1);
}

TEST_CASE("caps/client: a dropped inode is not revived by an old grant") {
  ClientCaps c(1, {}, 1000);
  c.want(7, InodeKind::kFile, kReader, 0);
  c.on_grant(Grant{7, kReader, kBase + 1, 1}, 0);
  c.on_grant(Grant{8, kNoRights, kBase + 5, 0}, 0);  // a later seq seen elsewhere
  c.release(7, kReader);
  CHECK(c.inodes().empty());
  c.want(7, InodeKind::kFile, kDataRead, 1);
  c.on_grant(Grant{7, kReader, kBase + 3, 0}, 1);  // sent before the release
  CHECK(c.held(7) == kNoRights);
}

TEST_CASE("caps/client: no right is usable past the lease") {
  ClientCaps c(1, {}, 1000);
  c.want(7, InodeKind::kFile, kReader, 0);
  c.on_grant(Grant{7, kReader, kBase + 1, 1}, 0);
  CHECK(c.can_use(7, kDataCache, 999));
  CHECK_FALSE(c.can_use(7, kDataCache, 1000));
  CHECK(c.usable(7, 1000) == kNoRights);
  c.renew(900);
  c.on_lease(900, 1000);
  CHECK(c.can_use(7, kDataCache, 1500));
  c.on_lease(100, 1000);  // a late answer to an older Renew never shortens it
  CHECK(c.lease_until() == 1900);
}

TEST_CASE("caps/client: unanswered wants are resent with the same id") {
  ClientCaps c(1, ClientCapsOptions{.want_resend_ms = 100}, 1000);
  c.want(7, InodeKind::kFile, kReader, 0);
  uint64_t id = of_type<Want>(c.take_outbox())[0].want_id;
  c.tick(99);
  CHECK(c.take_outbox().empty());
  c.tick(100);
  std::vector<Want> again = of_type<Want>(c.take_outbox());
  REQUIRE(again.size() == 1);
  CHECK(again[0].want_id == id);
}

TEST_CASE("caps/client: reconnect claims what is held and orders out the old instance") {
  ClientCaps c(1, {}, 1000);
  c.want(7, InodeKind::kFile, kFileRights, 0);
  c.on_grant(Grant{7, kFileRights, kBase + 1, 1}, 0);
  c.on_revoke(Revoke{7, kReader, kBase + 2}, 0);  // flush in progress
  c.take_outbox();
  c.begin_reconnect(2, 10);
  std::vector<Reconnect> r = of_type<Reconnect>(c.take_outbox());
  REQUIRE(r.size() == 1);
  REQUIRE(r[0].caps.size() == 1);
  CHECK(r[0].caps[0].held == kFileRights);
  // A Grant of the old instance delivered late changes nothing.
  c.on_grant(Grant{7, kFileRights, kBase + 9, 0}, 11);
  CHECK(c.revoking(7) == (kFileRights - kReader));
  c.flushed(7);
  std::vector<Ack> acks = of_type<Ack>(c.take_outbox());
  REQUIRE(acks.size() == 1);
  CHECK(acks[0].seq == seq_base(2));
}

TEST_CASE("caps/client: the least recently used inodes are named for release") {
  ClientCaps c(1, {}, 1000);
  for (Ino i = 1; i <= 4; ++i) c.want(i, InodeKind::kFile, kDataRead, static_cast<TimeMs>(i));
  c.touch(1, 10);
  std::vector<Ino> old = c.lru_beyond(2);
  REQUIRE(old.size() == 2);
  CHECK(old[0] == 2);
  CHECK(old[1] == 3);
}

}  // namespace
}  // namespace dfs::caps
