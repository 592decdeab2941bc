#include "client-fuse/libdfs/data_ahead.h"

#include <doctest/doctest.h>

namespace dfs::client {
namespace {

DataAhead::File file(uint64_t ino, uint64_t size, uint64_t version = 1) {
  return DataAhead::File{ino, version, size, StripeLayout{}};
}

// Fetches everything startable now and marks each finished with its size in bytes.
std::vector<uint64_t> run_fetches(DataAhead& d) {
  std::vector<uint64_t> started;
  while (auto f = d.next()) {
    f->piece->data = std::string(f->file.size, 'd');
    started.push_back(f->file.ino);
    d.finished(f->file.ino);
  }
  return started;
}

}  // namespace

TEST_CASE("client/data_ahead: listed files are fetched in order and handed out once") {
  DataAhead d(1 << 20);
  d.want(file(1, 100));
  d.want(file(2, 200));
  d.want(file(1, 100));  // listed twice: fetched once
  auto f = d.next();
  REQUIRE(f);
  CHECK(f->file.ino == 1);
  CHECK(f->piece->length == 100);
  auto piece = d.take(1, 1);  // still in flight: the reader waits on it
  REQUIRE(piece);
  CHECK(piece == f->piece);
  CHECK_FALSE(d.take(1, 1));
  d.finished(1);
  CHECK(run_fetches(d) == std::vector<uint64_t>{2});
  CHECK(d.fetched() == 2);
  CHECK(d.used() == 1);
}

TEST_CASE("client/data_ahead: another version, a change here, empty or big files: nothing") {
  DataAhead d(64 << 20);
  d.want(file(1, 100, 7));
  d.want(file(2, 100));
  d.want(file(3, 0));
  d.want(file(4, DataAhead::kMaxFileBytes + 1));
  d.drop(2);  // written before it was fetched
  CHECK(run_fetches(d) == std::vector<uint64_t>{1});
  CHECK_FALSE(d.take(1, 8));  // the file changed since it was listed
  CHECK_FALSE(d.take(1, 7));  // ... and the stale piece is gone
  CHECK(d.held_bytes() == 0);
}

TEST_CASE("client/data_ahead: slots, budget and credits bound the fetches") {
  SUBCASE("at most kMaxInFlight at a time") {
    DataAhead d(64 << 20);
    for (uint64_t i = 1; i <= 10; ++i) d.want(file(i, 10));
    int started = 0;
    while (d.next()) ++started;
    CHECK(started == static_cast<int>(DataAhead::kMaxInFlight));
  }
  SUBCASE("a walk that reads nothing stops after kStartCredits fetches") {
    DataAhead d(64 << 20);
    for (uint64_t i = 1; i <= 100; ++i) d.want(file(i, 10));
    size_t fetched = 0;
    for (int round = 0; round < 10; ++round) fetched += run_fetches(d).size();
    CHECK(fetched == static_cast<size_t>(DataAhead::kStartCredits));
  }
  SUBCASE("reading what was fetched earns more") {
    DataAhead d(64 << 20);
    for (uint64_t i = 1; i <= 100; ++i) d.want(file(i, 10));
    uint64_t read = 0;
    for (int round = 0; round < 100; ++round) {
      for (uint64_t ino : run_fetches(d)) {
        if (d.take(ino, 1)) ++read;
      }
    }
    CHECK(read == 100);
  }
  SUBCASE("data never read is evicted, oldest first, when the budget is needed") {
    DataAhead d(300);
    for (uint64_t i = 1; i <= 5; ++i) d.want(file(i, 100));
    CHECK(run_fetches(d).size() == 5);  // 4 and 5 made room by evicting 1 and 2
    CHECK(d.held_bytes() == 300);
    CHECK_FALSE(d.take(1, 1));
    CHECK_FALSE(d.take(2, 1));
    CHECK(d.take(3, 1));
  }
  SUBCASE("off with no budget") {
    DataAhead d(0);
    d.want(file(1, 10));
    CHECK_FALSE(d.next());
  }
}

}  // namespace dfs::client
