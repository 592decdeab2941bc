// MetaStore::memory_reader: the I/O thread's reads. It must never touch the disk (it
// answers kWouldBlock instead) and must agree with the full reader wherever it answers.
#include <doctest/doctest.h>

#include "mds/store/meta_store.h"
#include "tests/unit/mds/mds_harness.h"

namespace dfs::mds::test {
namespace {

void put(MetaStore& store, const std::string& key, const std::string& value) {
  WriteBatch batch;
  batch.put(key, value);
  REQUIRE(store.write(batch, /*sync=*/true));
}

TEST_CASE("mds/store: the memory reader declines what only the disk holds") {
  TempDir dir;
  std::string path = dir.path + "/meta";
  {
    auto store = open_rocks_meta_store(path, /*create=*/true);
    REQUIRE(store);
    put(**store, "k1", "v1");
    put(**store, "k2", "v2");
    // Written this session: in the memtable, so in memory.
    auto fresh = (*store)->memory_reader().get("k1");
    REQUIRE(fresh);
    CHECK(*fresh == std::optional<std::string>("v1"));
  }
  // Reopened: recovery moved the log into a table file and the block cache is empty.
  auto store = open_rocks_meta_store(path, /*create=*/false);
  REQUIRE(store);
  const KvReader& memory = (*store)->memory_reader();
  auto cold = memory.get("k1");
  REQUIRE(!cold);
  CHECK(cold.error().code() == ErrorCode::kWouldBlock);
  auto cold_scan = memory.scan("k", "l", 10);
  REQUIRE(!cold_scan);
  CHECK(cold_scan.error().code() == ErrorCode::kWouldBlock);

  // The full reader reads the disk, which leaves the block in the cache.
  auto full = (*store)->get("k1");
  REQUIRE(full);
  CHECK(*full == std::optional<std::string>("v1"));
  auto warm = memory.get("k2");
  REQUIRE(warm);
  CHECK(*warm == std::optional<std::string>("v2"));
  auto warm_scan = memory.scan("k", "l", 10);
  REQUIRE(warm_scan);
  CHECK(warm_scan->size() == 2);
  // A key the filters rule out is known absent without the disk.
  auto absent = memory.get("zz");
  REQUIRE(absent);
  CHECK(!absent->has_value());
}

TEST_CASE("mds/service: reads after a restart are served from the disk, then memory") {
  MdsHarness mds;
  auto made = mds.mkdir(kRootIno, "d");
  REQUIRE(made);
  mds.restart();  // the next reads find nothing in memory: the pool path serves them
  auto found = mds.lookup(kRootIno, "d");
  REQUIRE(found);
  CHECK(found->ino() == made->ino());
  auto again = mds.lookup(kRootIno, "d");  // now cached: the I/O thread path
  REQUIRE(again);
  CHECK(again->ino() == made->ino());
  auto missing = mds.lookup(kRootIno, "nope");
  REQUIRE(!missing);
  CHECK(missing.error().code() == ErrorCode::kNotFound);
}

}  // namespace
}  // namespace dfs::mds::test
