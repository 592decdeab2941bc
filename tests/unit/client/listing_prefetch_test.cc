#include "client-fuse/libdfs/listing_prefetch.h"

#include <doctest/doctest.h>

namespace dfs::client {
namespace {

using Question = ListingPrefetch::Question;
using State = ListingPrefetch::State;

proto::ReaddirReply listing(const std::string& name, size_t padding = 0) {
  proto::ReaddirReply reply;
  auto* e = reply.add_entries();
  e->set_name(name);
  e->mutable_inode()->set_inline_data(std::string(padding, 'x'));
  reply.set_eof(true);
  return reply;
}

// A listing showing `inos` (entries named after them) and its dots.
proto::ReaddirReply showing(std::initializer_list<uint64_t> inos) {
  proto::ReaddirReply reply;
  for (const char* dot : {".", ".."}) {
    auto* e = reply.add_entries();
    e->set_name(dot);
    e->set_ino(1);
  }
  for (uint64_t ino : inos) {
    auto* e = reply.add_entries();
    e->set_name("e" + std::to_string(ino));
    e->set_ino(ino);
  }
  reply.set_eof(true);
  return reply;
}

}  // namespace

TEST_CASE("client/listing_prefetch: a listing fetched ahead serves the same question once") {
  ListingPrefetch p(2);
  const Question asked{1000, 1000, 1024, 0};
  p.want(10, asked);
  p.want(10, asked);  // wanted twice: fetched once
  auto fetch = p.next(5);
  REQUIRE(fetch);
  CHECK(fetch->dir == 10);
  CHECK(fetch->question.changes == 5);  // stamped when it goes out
  CHECK_FALSE(p.next(5));
  Question now{1000, 1000, 1024, 5};
  CHECK(p.state(10, now) == State::kInFlight);
  p.arrived(10, listing("a"));
  CHECK(p.state(10, now) == State::kReady);
  auto got = p.take(10, now);
  REQUIRE(got);
  CHECK(got->entries(0).name() == "a");
  CHECK(p.state(10, now) == State::kAbsent);
  CHECK_FALSE(p.take(10, now));
  CHECK(p.hits() == 1);
}

TEST_CASE("client/listing_prefetch: a change since it was asked, another user or batch size: not used") {
  ListingPrefetch p(4);
  for (uint64_t dir : {1, 2, 3}) p.want(dir, Question{0, 0, 1024, 0});
  for (int i = 0; i < 3; ++i) REQUIRE(p.next(7));
  for (uint64_t dir : {1, 2, 3}) p.arrived(dir, listing("x"));
  CHECK(p.state(1, Question{0, 0, 1024, 8}) == State::kAbsent);  // changed since
  CHECK_FALSE(p.take(1, Question{0, 0, 1024, 8}));
  CHECK(p.state(1, Question{0, 0, 1024, 7}) == State::kAbsent);  // the stale one is gone
  CHECK_FALSE(p.take(2, Question{1000, 0, 1024, 7}));  // another user
  CHECK_FALSE(p.take(3, Question{0, 0, 512, 7}));      // another batch size
  CHECK(p.held() == 0);
  CHECK(p.hits() == 0);
}

TEST_CASE("client/listing_prefetch: a held listing is fetched again only once it went stale") {
  ListingPrefetch p(4);
  p.want(1, Question{0, 0, 1024, 3});
  REQUIRE(p.next(3));
  p.want(1, Question{0, 0, 1024, 3});  // in flight
  CHECK_FALSE(p.next(3));
  p.arrived(1, listing("a"));
  p.want(1, Question{0, 0, 1024, 3});  // held and still good
  CHECK_FALSE(p.next(3));
  p.want(1, Question{0, 0, 1024, 4});  // something changed since: fetched again
  auto again = p.next(4);
  REQUIRE(again);
  CHECK(again->dir == 1);
  CHECK(p.state(1, Question{0, 0, 1024, 4}) == State::kInFlight);
}

TEST_CASE("client/listing_prefetch: failed fetches are dropped, slots bound the fetches") {
  ListingPrefetch p(1);
  p.want(1, Question{});
  p.want(2, Question{});
  auto first = p.next(0);
  REQUIRE(first);
  CHECK_FALSE(p.next(0));  // one slot
  p.arrived(1, Result<proto::ReaddirReply>(make_error(ErrorCode::kTimeout, "MDS away")));
  CHECK(p.state(1, Question{}) == State::kAbsent);
  CHECK(p.in_flight() == 0);
  auto second = p.next(0);
  REQUIRE(second);
  CHECK(second->dir == 2);
  CHECK(p.fetched() == 0);
}

TEST_CASE("client/listing_prefetch: off with no slots, held bytes bounded, oldest dropped") {
  ListingPrefetch off(0);
  off.want(1, Question{});
  CHECK_FALSE(off.next(0));
  CHECK_FALSE(off.enabled());

  ListingPrefetch p(8, /*max_held_bytes=*/10000);
  for (uint64_t dir = 1; dir <= 4; ++dir) p.want(dir, Question{});
  for (int i = 0; i < 4; ++i) REQUIRE(p.next(0));
  for (uint64_t dir = 1; dir <= 4; ++dir) p.arrived(dir, listing("f", 4000));
  CHECK(p.held() == 2);  // 4 x ~4 KB against 10 KB: the two oldest went
  CHECK(p.state(1, Question{}) == State::kAbsent);
  CHECK(p.state(2, Question{}) == State::kAbsent);
  CHECK(p.state(3, Question{}) == State::kReady);
  CHECK(p.state(4, Question{}) == State::kReady);
}

TEST_CASE("client/listing_prefetch: a change reaching a held listing drops it, others stay") {
  ListingPrefetch p(4);
  const Question asked{0, 0, 1024, 0};
  for (uint64_t dir : {10, 20, 30}) p.want(dir, asked);
  for (int i = 0; i < 3; ++i) REQUIRE(p.next(0));
  p.arrived(10, showing({11, 12}));
  p.arrived(20, showing({21, 12}));  // 12: a hard link shown in both
  p.arrived(30, showing({31}));
  p.touched({}, {99});  // reaches none
  p.touched({}, {1});   // the dots' inode: the kernel gets no attributes for them
  for (uint64_t dir : {10, 20, 30}) CHECK(p.state(dir, asked) == State::kReady);
  p.touched({}, {12});  // an inode both show
  CHECK(p.state(10, asked) == State::kAbsent);
  CHECK(p.state(20, asked) == State::kAbsent);
  CHECK(p.state(30, asked) == State::kReady);
  p.touched({30}, {});  // its names changed
  CHECK(p.state(30, asked) == State::kAbsent);
  CHECK(p.held() == 0);

  // A directory whose names change is reached as an entry too (its times change).
  p.want(40, asked);
  REQUIRE(p.next(0));
  p.arrived(40, showing({41}));
  p.touched({41}, {});
  CHECK(p.state(40, asked) == State::kAbsent);
}

TEST_CASE("client/listing_prefetch: a change while a listing is in flight drops it when it lands") {
  ListingPrefetch p(4);
  const Question asked{0, 0, 1024, 0};
  for (uint64_t dir : {10, 20, 30}) p.want(dir, asked);
  for (int i = 0; i < 3; ++i) REQUIRE(p.next(0));
  p.touched({}, {11});  // what 10 will show
  p.touched({20}, {});  // 20's names
  CHECK(p.state(10, asked) == State::kInFlight);
  CHECK(p.state(20, asked) == State::kAbsent);  // nobody waits for it
  p.arrived(10, showing({11}));
  p.arrived(20, showing({21}));
  p.arrived(30, showing({31}));
  CHECK(p.state(10, asked) == State::kAbsent);
  CHECK(p.state(20, asked) == State::kAbsent);
  CHECK(p.state(30, asked) == State::kReady);  // 11 is not among its entries
  CHECK(p.take(30, asked));
  p.want(20, asked);  // landed: may be fetched again
  auto again = p.next(0);
  REQUIRE(again);
  CHECK(again->dir == 20);
}

TEST_CASE("client/listing_prefetch: a change of a listed directory itself leaves its listing") {
  // chmod -R changes each directory before listing it: "." and ".." get no attributes.
  ListingPrefetch p(4);
  const Question asked{0, 0, 1024, 0};
  p.want(10, asked);
  REQUIRE(p.next(0));
  p.touched({}, {1});  // the dots' inode (showing() gives them 1), in flight
  p.arrived(10, showing({11}));
  CHECK(p.state(10, asked) == State::kReady);
  p.touched({}, {1});  // and held
  CHECK(p.state(10, asked) == State::kReady);
}

TEST_CASE("client/listing_prefetch: a change of unknown reach forgets everything") {
  ListingPrefetch p(4);
  const Question asked{0, 0, 1024, 0};
  for (uint64_t dir : {10, 20}) p.want(dir, asked);
  for (int i = 0; i < 2; ++i) REQUIRE(p.next(0));
  p.arrived(10, showing({11}));
  p.forget_all();
  CHECK(p.state(10, asked) == State::kAbsent);
  CHECK(p.state(20, asked) == State::kAbsent);
  p.arrived(20, showing({21}));
  CHECK(p.state(20, asked) == State::kAbsent);
  CHECK(p.held() == 0);
  CHECK(p.in_flight() == 0);
}

}  // namespace dfs::client
