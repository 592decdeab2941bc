// The ObjectStore contract, run on every backend (TEST_CASE_TEMPLATE).
#include <doctest/doctest.h>

#include <algorithm>

#include "osd/store/object_store.h"
#include "tests/unit/osd_store/store_fixtures.h"

namespace dfs::osd::testing {
namespace {

#define DFS_STORE_BACKENDS MemoryBackend, DirBackend, DirDirectBackend

std::string zeros(size_t n) { return std::string(n, '\0'); }

void write1(ObjectStore& s, const ObjectKey& k, uint64_t off, std::string data) {
  Transaction t;
  t.write(k, off, std::move(data));
  apply_ok(s, std::move(t));
}

void truncate1(ObjectStore& s, const ObjectKey& k, uint64_t size) {
  Transaction t;
  t.truncate(k, size);
  apply_ok(s, std::move(t));
}

uint64_t size_of(ObjectStore& s, const ObjectKey& k) {
  Result<ObjectInfo> info = s.stat(k);
  REQUIRE_MESSAGE(info.has_value(), why(info));
  return info->size;
}

TEST_CASE_TEMPLATE("osd/store: write and read round-trip at offsets", T, DFS_STORE_BACKENDS) {
  T b;
  ObjectStore& s = *b.store;
  write1(s, okey("a"), 0, "hello");
  CHECK(read_ok(s, okey("a")) == "hello");
  CHECK(read_ok(s, okey("a"), 1, 3) == "ell");
  CHECK(read_ok(s, okey("a"), 3, 100) == "lo");
  CHECK(read_ok(s, okey("a"), 5, 10).empty());
  CHECK(read_ok(s, okey("a"), 1000, 10).empty());
  CHECK(read_ok(s, okey("a"), 0, 0).empty());

  std::string big = pattern(300000, 1);
  write1(s, okey("b"), 12345, big);
  std::string expect = zeros(12345) + big;
  CHECK(size_of(s, okey("b")) == expect.size());
  CHECK(read_ok(s, okey("b")) == expect);
  CHECK(read_ok(s, okey("b"), 4095, 9000) == expect.substr(4095, 9000));

  std::string patch = pattern(5000, 2);
  write1(s, okey("b"), 100001, patch);
  expect.replace(100001, patch.size(), patch);
  CHECK(read_ok(s, okey("b")) == expect);
  CHECK(read_ok(s, okey("b"), 99999, 5003) == expect.substr(99999, 5003));

  CHECK(s.read(okey("missing"), 0, 10).error().code() == ErrorCode::kNotFound);
  CHECK(s.stat(okey("missing")).error().code() == ErrorCode::kNotFound);
}

TEST_CASE_TEMPLATE("osd/store: gaps read as zeros", T, DFS_STORE_BACKENDS) {
  T b;
  ObjectStore& s = *b.store;
  write1(s, okey("g"), 0, "abc");
  write1(s, okey("g"), 10000, "xyz");
  CHECK(read_ok(s, okey("g")) == "abc" + zeros(9997) + "xyz");
  write1(s, okey("h"), 70000, pattern(70000, 3));
  CHECK(read_ok(s, okey("h"), 0, 70000) == zeros(70000));
  write1(s, okey("e"), 5000, "");  // an empty write still grows the object
  CHECK(read_ok(s, okey("e")) == zeros(5000));
}

TEST_CASE_TEMPLATE("osd/store: small unaligned writes grow an object", T, DFS_STORE_BACKENDS) {
  T b;
  ObjectStore& s = *b.store;
  std::string model;
  uint64_t offsets[] = {0, 700, 511, 4095, 4096, 8000, 12287, 3, 20000, 16383, 1};
  uint32_t seed = 10;
  for (uint64_t off : offsets) {
    std::string data = pattern(1 + (seed * 977) % 3000, seed);
    ++seed;
    write1(s, okey("p"), off, data);
    if (model.size() < off + data.size()) model.resize(off + data.size(), '\0');
    model.replace(off, data.size(), data);
    REQUIRE(read_ok(s, okey("p")) == model);
  }
  b.reopen();
  CHECK(read_ok(*b.store, okey("p")) == model);
}

TEST_CASE_TEMPLATE("osd/store: truncate down and up", T, DFS_STORE_BACKENDS) {
  T b;
  ObjectStore& s = *b.store;
  std::string data = pattern(10000, 4);
  write1(s, okey("t"), 0, data);
  truncate1(s, okey("t"), 5000);
  CHECK(read_ok(s, okey("t")) == data.substr(0, 5000));
  truncate1(s, okey("t"), 9000);
  CHECK(read_ok(s, okey("t")) == data.substr(0, 5000) + zeros(4000));
  truncate1(s, okey("t"), 0);
  CHECK(size_of(s, okey("t")) == 0);
  CHECK(read_ok(s, okey("t")).empty());

  truncate1(s, okey("new"), 777);  // creates
  CHECK(read_ok(s, okey("new")) == zeros(777));

  // Bytes cut by a truncate never come back inside a later gap.
  write1(s, okey("u"), 0, pattern(200000, 5));
  truncate1(s, okey("u"), 100);
  write1(s, okey("u"), 150000, "Z");
  std::string got = read_ok(s, okey("u"));
  CHECK(got == pattern(200000, 5).substr(0, 100) + zeros(149900) + "Z");
}

TEST_CASE_TEMPLATE("osd/store: remove then recreate leaves no stale bytes", T, DFS_STORE_BACKENDS) {
  T b;
  ObjectStore& s = *b.store;
  write1(s, okey("r"), 0, pattern(90000, 6));
  Transaction v;
  v.set_version(okey("r"), {3, 4});
  apply_ok(s, std::move(v));
  Transaction rm;
  rm.remove(okey("r"));
  rm.remove(okey("never-existed"));
  apply_ok(s, std::move(rm));
  CHECK(s.stat(okey("r")).error().code() == ErrorCode::kNotFound);
  write1(s, okey("r"), 4096, "new");
  CHECK(read_ok(s, okey("r")) == zeros(4096) + "new");
  CHECK(s.stat(okey("r"))->version == ObjectVersion{});

  // Remove and recreate inside one transaction.
  Transaction t;
  t.remove(okey("r"));
  t.write(okey("r"), 10, "x");
  apply_ok(s, std::move(t));
  CHECK(read_ok(s, okey("r")) == zeros(10) + "x");
  // A whole-object rewrite drops the old content.
  write1(s, okey("r"), 0, pattern(100000, 7));
  write1(s, okey("r"), 0, pattern(100001, 8));
  CHECK(read_ok(s, okey("r")) == pattern(100001, 8));
}

TEST_CASE_TEMPLATE("osd/store: stat reports size and version", T, DFS_STORE_BACKENDS) {
  T b;
  ObjectStore& s = *b.store;
  Transaction t;
  t.write(okey("v"), 0, "abcd");
  t.set_version(okey("v"), {7, 42});
  apply_ok(s, std::move(t));
  Result<ObjectInfo> info = s.stat(okey("v"));
  REQUIRE(info.has_value());
  CHECK(info->size == 4);
  CHECK(info->version == ObjectVersion{7, 42});
  write1(s, okey("v"), 2, "zzzz");  // data changes keep the recorded version
  CHECK(s.stat(okey("v"))->version == ObjectVersion{7, 42});
  CHECK(s.stat(okey("v"))->size == 6);
  auto listed = s.list(1, 1);
  REQUIRE(listed.has_value());
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0].second.version == ObjectVersion{7, 42});
  CHECK((*listed)[0].second.size == 6);
}

TEST_CASE_TEMPLATE("osd/store: list is per placement group and ordered by name", T,
                   DFS_STORE_BACKENDS) {
  T b;
  ObjectStore& s = *b.store;
  std::vector<std::string> names = {"b", "a", "ab", std::string("a\0x", 3), "\xff", "A", ""};
  Transaction t;
  for (const std::string& n : names) t.write(okey(n, 1), 0, n + "!");
  t.write(okey("other-pg", 2), 0, "x");
  t.write(okey("other-pool", 1, 2), 0, "x");
  t.write(okey("pg-256", 256), 0, "x");
  t.truncate(okey("pg0", 0, 1), 0);
  apply_ok(s, std::move(t));

  auto listed = s.list(1, 1);
  REQUIRE(listed.has_value());
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  REQUIRE(listed->size() == sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    CHECK((*listed)[i].first == sorted[i]);
    CHECK((*listed)[i].second.size == sorted[i].size() + 1);
  }
  CHECK(s.list(1, 2)->size() == 1);
  CHECK(s.list(2, 1)->size() == 1);
  CHECK(s.list(1, 256)->size() == 1);
  CHECK(s.list(1, 0)->size() == 1);
  CHECK(s.list(3, 3)->empty());
}

TEST_CASE_TEMPLATE("osd/store: meta put, get, scan and delete", T, DFS_STORE_BACKENDS) {
  T b;
  ObjectStore& s = *b.store;
  Transaction t;
  t.put_meta("pg/1/info", "info1");
  t.put_meta("pg/1/log/0002", "two");
  t.put_meta("pg/1/log/0001", "one");
  t.put_meta("pg/2/info", "info2");
  t.put_meta("pg/1\xff", "edge");
  t.put_meta("empty", "");
  apply_ok(s, std::move(t));
  CHECK(s.get_meta("pg/1/info")->value() == "info1");
  CHECK(s.get_meta("empty")->value().empty());
  CHECK(!s.get_meta("nope")->has_value());

  auto scanned = s.scan_meta("pg/1/");
  REQUIRE(scanned.has_value());
  REQUIRE(scanned->size() == 3);
  CHECK((*scanned)[0] == std::pair<std::string, std::string>("pg/1/info", "info1"));
  CHECK((*scanned)[1].first == "pg/1/log/0001");
  CHECK((*scanned)[2].first == "pg/1/log/0002");
  CHECK(s.scan_meta("pg/1")->size() == 4);
  CHECK(s.scan_meta("")->size() == 6);
  CHECK(s.scan_meta("zzz")->empty());

  Transaction d;
  d.delete_meta("pg/1/log/0001");
  d.put_meta("pg/1/info", "info1b");
  d.delete_meta("absent");
  apply_ok(s, std::move(d));
  CHECK(!s.get_meta("pg/1/log/0001")->has_value());
  CHECK(s.get_meta("pg/1/info")->value() == "info1b");
  CHECK(s.scan_meta("pg/1/")->size() == 2);
}

TEST_CASE_TEMPLATE("osd/store: a failing transaction applies nothing", T, DFS_STORE_BACKENDS) {
  T b;
  ObjectStore& s = *b.store;
  write1(s, okey("a"), 0, "old-a");

  Transaction t;
  t.write(okey("a"), 0, pattern(100000, 9));
  t.write(okey("b"), 0, "b");
  t.put_meta("m", "v");
  t.set_version(okey("missing"), {1, 1});
  Status st = s.apply(std::move(t));
  REQUIRE(!st.has_value());
  CHECK(st.error().code() == ErrorCode::kInvalidArgument);

  Transaction removed_then_versioned;
  removed_then_versioned.remove(okey("a"));
  removed_then_versioned.set_version(okey("a"), {1, 1});
  CHECK(s.apply(std::move(removed_then_versioned)).error().code() == ErrorCode::kInvalidArgument);

  Transaction too_big;
  too_big.write(okey("b"), 0, "b");
  too_big.write(okey("a"), kMaxObjectBytes - 1, "xy");
  CHECK(s.apply(std::move(too_big)).error().code() == ErrorCode::kInvalidArgument);
  Transaction too_long;
  too_long.truncate(okey("a"), kMaxObjectBytes + 1);
  CHECK(s.apply(std::move(too_long)).error().code() == ErrorCode::kInvalidArgument);

  CHECK(read_ok(s, okey("a")) == "old-a");
  CHECK(s.stat(okey("b")).error().code() == ErrorCode::kNotFound);
  CHECK(!s.get_meta("m")->has_value());
  b.reopen();
  CHECK(read_ok(*b.store, okey("a")) == "old-a");
  CHECK(b.store->stat(okey("b")).error().code() == ErrorCode::kNotFound);
}

TEST_CASE_TEMPLATE("osd/store: ops of one transaction apply in order", T, DFS_STORE_BACKENDS) {
  T b;
  ObjectStore& s = *b.store;
  write1(s, okey("o"), 0, pattern(20000, 11));
  Transaction t;
  t.write(okey("o"), 0, "aaaa");
  t.truncate(okey("o"), 2);
  t.write(okey("o"), 3, "b");
  t.write(okey("gone"), 0, "x");
  t.remove(okey("gone"));
  t.put_meta("k", "1");
  t.delete_meta("k");
  t.write(okey("big"), 0, pattern(150000, 12));
  t.write(okey("big"), 1000, "patch");
  t.truncate(okey("big"), 120000);
  t.truncate(okey("big"), 130000);
  apply_ok(s, std::move(t));
  CHECK(read_ok(s, okey("o")) == std::string("aa\0b", 4));
  CHECK(s.stat(okey("gone")).error().code() == ErrorCode::kNotFound);
  CHECK(!s.get_meta("k")->has_value());
  std::string big = pattern(150000, 12);
  big.replace(1000, 5, "patch");
  big = big.substr(0, 120000) + zeros(10000);
  CHECK(read_ok(s, okey("big")) == big);
  b.reopen();
  CHECK(read_ok(*b.store, okey("big")) == big);
}

TEST_CASE_TEMPLATE("osd/store: usage counts objects", T, DFS_STORE_BACKENDS) {
  T b;
  ObjectStore& s = *b.store;
  Transaction t;
  t.write(okey("1"), 0, "x");
  t.write(okey("2"), 0, pattern(100000, 13));
  t.truncate(okey("3"), 10);
  apply_ok(s, std::move(t));
  Transaction r;
  r.remove(okey("2"));
  r.remove(okey("2"));
  apply_ok(s, std::move(r));
  Result<StoreUsage> u = s.usage();
  REQUIRE(u.has_value());
  CHECK(u->object_count == 2);
  CHECK(u->total_bytes >= u->available_bytes);
  b.reopen();
  CHECK(b.store->usage()->object_count == 2);
}

TEST_CASE_TEMPLATE("osd/store: reopen keeps objects, versions and metadata", T,
                   DFS_STORE_BACKENDS) {
  T b;
  if (!T::kDurable) return;
  Transaction t;
  t.write(okey("k1"), 0, pattern(5000, 14));
  t.write(okey("k2", 7), 100, pattern(300000, 15));
  t.set_version(okey("k2", 7), {2, 9});
  t.put_meta("pglog", "entries");
  apply_ok(*b.store, std::move(t));
  write1(*b.store, okey("k1"), 10, "overwrite");
  b.reopen();
  ObjectStore& s = *b.store;
  std::string k1 = pattern(5000, 14);
  k1.replace(10, 9, "overwrite");
  CHECK(read_ok(s, okey("k1")) == k1);
  CHECK(read_ok(s, okey("k2", 7)) == zeros(100) + pattern(300000, 15));
  CHECK(s.stat(okey("k2", 7))->version == ObjectVersion{2, 9});
  CHECK(s.get_meta("pglog")->value() == "entries");
  CHECK(s.list(1, 7)->size() == 1);
  write1(s, okey("k3"), 0, "after reopen");  // new file ids do not collide
  CHECK(read_ok(s, okey("k3")) == "after reopen");
  CHECK(read_ok(s, okey("k1")) == k1);
}

}  // namespace
}  // namespace dfs::osd::testing
