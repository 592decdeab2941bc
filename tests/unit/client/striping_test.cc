#include "client-fuse/libdfs/striping.h"

#include <doctest/doctest.h>

#include <random>

namespace dfs::client {
namespace {

proto::Layout make_layout(uint32_t object_size, uint32_t unit = 0, uint32_t count = 0,
                          std::string pool = "") {
  proto::Layout l;
  l.set_object_size(object_size);
  l.set_stripe_unit(unit);
  l.set_stripe_count(count);
  l.set_pool(std::move(pool));
  return l;
}

// Where each byte of a range lands, computed one byte at a time from map_range.
uint64_t total_length(const std::vector<ObjectExtent>& extents) {
  uint64_t n = 0;
  for (const auto& e : extents) n += e.length;
  return n;
}

}  // namespace

TEST_CASE("client/striping: object names are hex inode and 8-digit hex index") {
  CHECK(object_name(0x10000000001ull, 0) == "10000000001.00000000");
  CHECK(object_name(1, 0x2a) == "1.0000002a");
  CHECK(object_name(0xabc, 0x123456789ull) == "abc.123456789");
}

TEST_CASE("client/striping: effective layout fills defaults") {
  SUBCASE("all defaults") {
    auto l = effective_layout(proto::Layout(), proto::Layout());
    CHECK(l.object_size == 4u << 20);
    CHECK(l.pool == "data");
    CHECK(l.plain());
  }
  SUBCASE("file system default") {
    auto l = effective_layout(proto::Layout(), make_layout(1 << 20, 0, 0, "fast"));
    CHECK(l.object_size == 1u << 20);
    CHECK(l.pool == "fast");
  }
  SUBCASE("the file's own layout wins, pool falls back") {
    auto l = effective_layout(make_layout(64 << 10), make_layout(1 << 20, 0, 0, "fast"));
    CHECK(l.object_size == 64u << 10);
    CHECK(l.pool == "fast");
  }
  SUBCASE("a stripe unit that does not divide the object means plain chunking") {
    auto l = effective_layout(make_layout(1 << 20, 300000, 4), proto::Layout());
    CHECK(l.plain());
    CHECK(l.stripe_unit == l.object_size);
  }
  SUBCASE("valid striping is kept") {
    auto l = effective_layout(make_layout(1 << 20, 64 << 10, 4), proto::Layout());
    CHECK(!l.plain());
    CHECK(l.stripe_unit == 64u << 10);
    CHECK(l.stripe_count == 4);
  }
}

TEST_CASE("client/striping: plain chunking") {
  auto l = effective_layout(make_layout(4 << 20), proto::Layout());
  const uint64_t os = 4u << 20;
  SUBCASE("inside one object") {
    auto e = map_range(l, 100, 1000);
    REQUIRE(e.size() == 1);
    CHECK(e[0] == ObjectExtent{0, 100, 1000, 0});
  }
  SUBCASE("across a boundary") {
    auto e = map_range(l, os - 10, 30);
    REQUIRE(e.size() == 2);
    CHECK(e[0] == ObjectExtent{0, os - 10, 10, 0});
    CHECK(e[1] == ObjectExtent{1, 0, 20, 10});
  }
  SUBCASE("many objects") {
    auto e = map_range(l, 0, 3 * os + 5);
    REQUIRE(e.size() == 4);
    CHECK(e[3] == ObjectExtent{3, 0, 5, 3 * os});
  }
  SUBCASE("beyond 4 GiB") {
    uint64_t off = (5ull << 30) + 123;
    auto e = map_range(l, off, 10);
    REQUIRE(e.size() == 1);
    CHECK(e[0].object_index == off / os);
    CHECK(e[0].object_offset == off % os);
    CHECK(object_name(0x1234, e[0].object_index) == "1234.00000500");
  }
  SUBCASE("empty range") { CHECK(map_range(l, 77, 0).empty()); }
}

TEST_CASE("client/striping: RAID-0 striping") {
  // 4 objects of 1 MiB, 256 KiB stripe unit: units go 0,1,2,3,0,1,2,3,...
  auto l = effective_layout(make_layout(1 << 20, 256 << 10, 4), proto::Layout());
  const uint64_t su = 256u << 10;
  auto e = map_range(l, 0, 5 * su);
  REQUIRE(e.size() == 5);
  CHECK(e[0] == ObjectExtent{0, 0, su, 0});
  CHECK(e[1] == ObjectExtent{1, 0, su, su});
  CHECK(e[3] == ObjectExtent{3, 0, su, 3 * su});
  CHECK(e[4] == ObjectExtent{0, su, su, 4 * su});
  // The second object set starts after 4 MiB.
  auto second = map_range(l, 4u << 20, 10);
  REQUIRE(second.size() == 1);
  CHECK(second[0] == ObjectExtent{4, 0, 10, 0});
}

TEST_CASE("client/striping: every byte maps once, and object sizes add up") {
  std::mt19937_64 rng(42);
  for (auto layout : {effective_layout(make_layout(1 << 16), proto::Layout()),
                      effective_layout(make_layout(1 << 16, 1 << 12, 3), proto::Layout())}) {
    for (int round = 0; round < 200; ++round) {
      uint64_t off = rng() % (1 << 20);
      uint64_t len = rng() % (1 << 18);
      auto extents = map_range(layout, off, len);
      CHECK(total_length(extents) == len);
      uint64_t buf = 0;
      for (const auto& e : extents) {
        CHECK(e.buffer_offset == buf);  // in file order, no gaps
        CHECK(e.object_offset + e.length <= layout.object_size);
        buf += e.length;
      }
      // The objects of a file of size `off` hold exactly `off` bytes.
      uint64_t held = 0;
      for (uint64_t i : objects_in_range(layout, 0, off))
        held += object_bytes_below(layout, i, off);
      CHECK(held == off);
    }
  }
}

TEST_CASE("client/striping: objects touched by a shrink") {
  auto l = effective_layout(make_layout(1 << 20), proto::Layout());
  CHECK(objects_in_range(l, 10, 10).empty());
  CHECK(objects_in_range(l, 20, 10).empty());
  auto objs = objects_in_range(l, (1 << 20) + 5, 3u << 20);
  CHECK(objs == std::vector<uint64_t>{1, 2});
  CHECK(object_bytes_below(l, 1, (1 << 20) + 5) == 5);
  CHECK(object_bytes_below(l, 2, (1 << 20) + 5) == 0);
  CHECK(object_bytes_below(l, 0, (1 << 20) + 5) == 1u << 20);
}

}  // namespace dfs::client
