// ExclusiveCache: the MDS's grant of exclusive caching, on an io_context: the only mount
// gets it, a second mount's open waits until the holder acknowledges the recall, a
// holder that does not answer is evicted, the mount left alone gets it back, and after
// a takeover only a re-asserted claim counts until the grace period is over.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "common/rpc/asio.h"
#include "mds/service/exclusive_cache.h"

namespace dfs::mds::test {
namespace {

struct Sent {
  std::string client;
  bool exclusive = false;
  uint64_t seq = 0;
};

struct Fixture {
  asio::io_context io;
  std::vector<Sent> sent;
  std::vector<std::string> evicted;
  ExclusiveCache cache{io.get_executor(), Duration(30000),
                       [this](const std::string& client, const proto::CacheRightsNotice& n) {
                         sent.push_back(Sent{client, n.exclusive(), n.seq()});
                         return true;
                       },
                       [this](const std::string& client, const std::string&) {
                         evicted.push_back(client);
                       }};

  void poll() {
    io.restart();
    io.poll();
  }
  // Starts an open; its answer lands in *out once it comes. `wants`: false for a mount
  // with cache=shared.
  void start(const std::string& client, bool claims,
             std::optional<ExclusiveCache::Answer>* out, bool wants = true) {
    asio::co_spawn(
        io,
        [](ExclusiveCache* c, std::string client, bool wants, bool claims,
           std::optional<ExclusiveCache::Answer>* out) -> awaitable<void> {
          *out = co_await c->open(client, wants, claims);
        }(&cache, client, wants, claims, out),
        asio::detached);
    poll();
  }
  ExclusiveCache::Answer open(const std::string& client, bool claims = false) {
    std::optional<ExclusiveCache::Answer> out;
    start(client, claims, &out);
    REQUIRE(out.has_value());
    return *out;
  }
};

}  // namespace

TEST_CASE("mds/exclusive_cache: the only mount gets it, a second one waits for the recall") {
  Fixture f;
  auto a = f.open("a");
  CHECK(a.exclusive);
  CHECK(*f.cache.holder() == "a");

  std::optional<ExclusiveCache::Answer> b;
  f.start("b", false, &b);
  CHECK_FALSE(b.has_value());  // waits for a to push what it deferred
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].client == "a");
  CHECK_FALSE(f.sent[0].exclusive);
  CHECK(f.sent[0].seq > a.seq);

  f.cache.acknowledged("a", f.sent[0].seq - 1);  // an older ack changes nothing
  f.poll();
  CHECK_FALSE(b.has_value());
  f.cache.acknowledged("a", f.sent[0].seq);
  f.poll();
  REQUIRE(b.has_value());
  CHECK_FALSE(b->exclusive);
  CHECK_FALSE(f.cache.holder().has_value());

  // b leaves: a is alone again and is granted the right with a newer seq.
  f.cache.ended("b");
  REQUIRE(f.sent.size() == 2);
  CHECK(f.sent[1].client == "a");
  CHECK(f.sent[1].exclusive);
  CHECK(f.sent[1].seq > f.sent[0].seq);
  CHECK(*f.cache.holder() == "a");
}

TEST_CASE("mds/exclusive_cache: a holder that does not answer is evicted, then the waiter goes on") {
  Fixture f;
  CHECK(f.open("a").exclusive);
  std::optional<ExclusiveCache::Answer> b;
  f.start("b", false, &b);
  auto started = Clock::now();
  f.cache.tick(started + Duration(1500));  // resent, not yet evicted
  CHECK(f.sent.size() == 2);
  CHECK(f.evicted.empty());
  f.cache.tick(started + Duration(31000));
  REQUIRE(f.evicted == std::vector<std::string>{"a"});
  f.cache.tick(started + Duration(32000));  // evicted once, not again
  CHECK(f.evicted.size() == 1);
  CHECK_FALSE(b.has_value());
  f.cache.ended("a");  // the eviction ends its session
  f.poll();
  REQUIRE(b.has_value());
  // b is the only mount left: it holds the right now (granted by ended()).
  CHECK(*f.cache.holder() == "b");
}

TEST_CASE("mds/exclusive_cache: a mount that never caches recalls it too and keeps it away") {
  Fixture f;
  CHECK(f.open("a").exclusive);
  std::optional<ExclusiveCache::Answer> shared;
  f.start("s", false, &shared, /*wants=*/false);
  CHECK_FALSE(shared.has_value());  // waits for a to push what it deferred
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].client == "a");
  CHECK_FALSE(f.sent[0].exclusive);
  f.cache.acknowledged("a", f.sent[0].seq);
  f.poll();
  REQUIRE(shared.has_value());
  CHECK_FALSE(shared->exclusive);
  CHECK_FALSE(f.cache.holder().has_value());
  // a is the only mount that caches, but not the only mount: nothing is granted.
  f.cache.tick(Clock::now());
  CHECK_FALSE(f.cache.holder().has_value());
  CHECK_FALSE(f.open("a").exclusive);
  // Once the shared mount leaves, a is granted it again.
  f.cache.ended("s");
  CHECK(*f.cache.holder() == "a");
  CHECK(f.sent.back().exclusive);
}

TEST_CASE("mds/exclusive_cache: the holder reconnecting keeps it, and mid-recall is told to give up") {
  Fixture f;
  auto a = f.open("a");
  CHECK(a.exclusive);
  CHECK(f.open("a", true).exclusive);
  std::optional<ExclusiveCache::Answer> b;
  f.start("b", false, &b);
  auto again = f.open("a", true);
  CHECK_FALSE(again.exclusive);
  CHECK(again.seq == f.sent.back().seq);  // the recall's seq, to acknowledge
}

TEST_CASE("mds/exclusive_cache: after a takeover only a re-asserted claim counts during the grace") {
  Fixture f;
  auto now = Clock::now();
  f.cache.begin_grace(now, Duration(10000));
  CHECK_FALSE(f.open("new").exclusive);  // alone, but a previous holder may come back
  // The previous holder re-asserts while "new" works shared already: it holds the right
  // only to give it up, pushing what it deferred (the answer carries the recall's seq).
  auto claimed = f.open("old", true);
  CHECK_FALSE(claimed.exclusive);
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].client == "old");
  CHECK_FALSE(f.sent[0].exclusive);
  CHECK(claimed.seq == f.sent[0].seq);
  // The newcomer asks again: it waits for the claimant to give up.
  std::optional<ExclusiveCache::Answer> again;
  f.start("new", false, &again);
  CHECK_FALSE(again.has_value());
  f.cache.acknowledged("old", f.sent.back().seq);
  f.poll();
  REQUIRE(again.has_value());
  CHECK_FALSE(again->exclusive);

  Fixture h;  // a claimant that is the only mount keeps the right
  h.cache.begin_grace(Clock::now(), Duration(10000));
  CHECK(h.open("old", true).exclusive);
  CHECK(h.sent.empty());

  Fixture g;
  g.cache.begin_grace(Clock::now(), Duration(10000));
  CHECK_FALSE(g.open("only").exclusive);
  g.cache.tick(Clock::now() + Duration(11000));  // grace over: the only mount gets it
  REQUIRE(g.sent.size() == 1);
  CHECK(g.sent[0].exclusive);
  CHECK(*g.cache.holder() == "only");
}

TEST_CASE("mds/exclusive_cache: a replica that stops serving answers its waiters") {
  Fixture f;
  CHECK(f.open("a").exclusive);
  std::optional<ExclusiveCache::Answer> b;
  f.start("b", false, &b);
  f.cache.clear();
  f.poll();
  REQUIRE(b.has_value());
  CHECK_FALSE(b->exclusive);
  CHECK_FALSE(f.cache.holder().has_value());
}

}  // namespace dfs::mds::test
