// ObjectIo (libdfs: a file's bytes in its objects) against a real object tier: dfs-mon
// and three dfs-osd processes on loopback. Striped writes and reads, holes remembered
// only when the caller says it is alone on the file, readahead serving a sequential
// reader, the size bookkeeping of running writes, and write-behind: its budget, its
// overlaps, drain, a failed write reported through the file's state, and the writes
// that join one across holes.
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "client-fuse/libdfs/file_state.h"
#include "client-fuse/libdfs/object_io.h"
#include "tests/support/data_pool_cluster.h"
#include "tests/support/doctest_result.h"

namespace dfs::test {
namespace {

using client::FileState;
using client::ReadPattern;
using client::ObjectIo;

constexpr uint64_t kObjectSize = 64 << 10;  // small objects: a few KiB span several

std::string random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (auto& ch : out) ch = static_cast<char>(rng());
  return out;
}

std::shared_ptr<FileState> new_file(uint64_t ino, const std::string& pool = "data") {
  auto st = std::make_shared<FileState>(ino);
  st->layout.object_size = kObjectSize;
  st->layout.stripe_unit = kObjectSize;
  st->layout.pool = pool;
  return st;
}

}  // namespace

TEST_CASE_FIXTURE(DataPoolCluster, "integration/object_io: a file's bytes in its objects") {
  ObjectIo io(c, ObjectIo::Options{/*readahead_bytes=*/256 << 10, /*max_parallel_objects=*/4,
                                   /*write_behind_bytes=*/1 << 20});
  auto run = [&](auto task) { return c.run(std::move(task)); };
  // A write through the OSDs, bracketed as the contract asks.
  auto write = [&](std::shared_ptr<FileState> f, uint64_t offset, std::string bytes) {
    uint64_t end = offset + bytes.size();
    io.write_started(*f);
    Status written = run(io.write(f, offset, std::move(bytes)));
    io.write_ended(*f, end, written.has_value());
    return written;
  };

  // A write spanning four objects, at an offset inside the first, reads back whole
  // and in pieces that cross object boundaries.
  auto st = new_file(0x100);
  const std::string data = random_bytes(3 * kObjectSize + 1000, 1);
  const uint64_t at = 5000;
  DFS_REQUIRE_OK(write(st, at, data));
  st->size = at + data.size();
  CHECK(st->commit_dirty);
  CHECK(st->commit_end == at + data.size());
  auto whole = run(io.read(st, 0, st->size, true));
  DFS_REQUIRE_OK(whole);
  CHECK(whole->substr(0, at) == std::string(at, '\0'));  // before the write: zeros
  CHECK(whole->substr(at) == data);
  auto across = run(io.read(st, kObjectSize - 10, 20, true));
  DFS_REQUIRE_OK(across);
  CHECK(*across == data.substr(kObjectSize - 10 - at, 20));

  // Holes: a missing object reads as zeros, and is remembered only when asked to.
  auto sparse = new_file(0x200);
  sparse->size = 4 * kObjectSize;
  auto hole = run(io.read(sparse, 2 * kObjectSize, 100, false));
  DFS_REQUIRE_OK(hole);
  CHECK(*hole == std::string(100, '\0'));
  CHECK(sparse->missing_objects.empty());  // not alone: another mount may write there
  hole = run(io.read(sparse, 2 * kObjectSize, 100, true));
  DFS_REQUIRE_OK(hole);
  CHECK(sparse->missing_objects.count(2) == 1);
  // Another writer fills it (a second file state: another mount's view)...
  auto other = new_file(0x200);
  DFS_REQUIRE_OK(write(other, 2 * kObjectSize, "FILLED"));
  // ...which a mount alone would not see, and one that is not alone does.
  CHECK(*run(io.read(sparse, 2 * kObjectSize, 6, true)) == std::string(6, '\0'));
  CHECK(*run(io.read(sparse, 2 * kObjectSize, 6, false)) == "FILLED");
  // The mount's own write forgets the hole it fills.
  DFS_REQUIRE_OK(write(sparse, 2 * kObjectSize + 6, "MINE"));
  CHECK(sparse->missing_objects.count(2) == 0);
  CHECK(*run(io.read(sparse, 2 * kObjectSize, 10, true)) == "FILLEDMINE");

  // A sequential reader is served from pieces read ahead, with the same bytes.
  ReadPattern reader;
  std::string sequential;
  for (uint64_t off = 0; off < st->size; off += 8192) {
    uint64_t n = std::min<uint64_t>(8192, st->size - off);
    auto piece = run(io.read_through(st, off, n, reader.sequential_after(off, n), true));
    DFS_REQUIRE_OK(piece);
    sequential += *piece;
    if (off == 8192) CHECK_FALSE(st->readahead.empty());  // the second read reads ahead
  }
  CHECK(sequential.substr(at) == data);

  // Running writes: the size to record never covers a write still running.
  auto sized = new_file(0x300);
  io.write_started(*sized);
  io.write_started(*sized);
  io.write_ended(*sized, 2 * kObjectSize, true);  // the far one ends first
  CHECK_FALSE(sized->commit_dirty);
  CHECK(sized->object_writes_running == 1);
  io.write_ended(*sized, kObjectSize, true);
  CHECK(sized->commit_dirty);
  CHECK(sized->commit_end == 2 * kObjectSize);
  sized->commit_dirty = false;
  io.write_started(*sized);
  io.write_ended(*sized, 3 * kObjectSize, false);  // a failed write records nothing
  CHECK_FALSE(sized->commit_dirty);
  CHECK(sized->commit_end == 2 * kObjectSize);

  // Write-behind: the budget, overlaps, and drain() waiting for the write to land.
  auto behind = new_file(0x400);
  const std::string behind_data = random_bytes(768 << 10, 2);
  CHECK(io.behind_fits(768 << 10));
  io.write_started(*behind);
  io.behind_started(*behind, 0, behind_data.size());
  CHECK_FALSE(io.behind_fits(512 << 10));  // 768 KiB of 1 MiB in flight
  CHECK(io.overlaps_behind(*behind, 700 << 10, 100 << 10));
  CHECK_FALSE(io.overlaps_behind(*behind, 768 << 10, 10));
  run([](ObjectIo& io, std::shared_ptr<FileState> st, std::string bytes) -> awaitable<int> {
    spawn_checked(co_await asio::this_coro::executor, io.write_behind(st, 0, std::move(bytes)));
    co_await io.drain(st);  // returns once the write has landed
    co_return 0;
  }(io, behind, behind_data));
  CHECK(behind->object_writes_running == 0);
  CHECK(behind->behind.empty());
  CHECK(io.behind_fits(1 << 20));
  CHECK(io.behind_writes() == 1);
  CHECK(behind->commit_end == behind_data.size());
  behind->size = behind_data.size();
  CHECK(*run(io.read(behind, 0, behind->size, true)) == behind_data);

  // A write-behind that fails is kept for the file's next flush or fsync.
  auto lost = new_file(0x500, "no-such-pool");
  io.write_started(*lost);
  io.behind_started(*lost, 0, 4096);
  run([](ObjectIo& io, std::shared_ptr<FileState> st) -> awaitable<int> {
    co_await io.write_behind(st, 0, std::string(4096, 'x'));
    co_return 0;
  }(io, lost));
  CHECK(lost->write_error.has_value());
  CHECK(io.behind_failures() == 1);
  CHECK_FALSE(lost->commit_dirty);
  CHECK(io.behind_fits(1 << 20));

  // Gathering: writes that continue a write-behind within its window join it across
  // the holes between them (rsync -S), which go as zeros; not across a hole too wide,
  // not one that overlaps it, and not where the file may hold bytes past it.
  auto gather = [](ObjectIo& io, std::shared_ptr<FileState> st, std::string first,
                   std::vector<std::pair<uint64_t, std::string>> next) -> awaitable<std::vector<bool>> {
    io.write_started(*st);
    io.behind_started(*st, 0, first.size());
    st->wrote(first.size());
    auto executor = co_await asio::this_coro::executor;
    spawn_checked(executor, io.write_behind(st, 0, std::move(first)));
    co_await asio::post(executor, asio::use_awaitable);  // it starts gathering
    std::vector<bool> joined;
    for (auto& [offset, bytes] : next) {
      uint64_t end = offset + bytes.size();
      joined.push_back(io.join_behind(*st, offset, bytes));
      st->wrote(end);
    }
    co_await io.drain(st);
    co_return joined;
  };
  auto gathered = new_file(0x600);
  const std::string first = random_bytes(8192, 3), second = random_bytes(4096, 4),
                    third = random_bytes(1000, 5);
  const uint64_t far_off = 21000 + ObjectIo::kMaxGatherHole + 1;
  auto joined = run(gather(io, gathered, first,
                           {{12288, second}, {20000, third}, {far_off, std::string(100, 'f')}}));
  CHECK(joined == std::vector<bool>{true, true, false});
  CHECK(io.joined_writes() == 2);
  CHECK(gathered->behind.empty());
  CHECK(io.behind_fits(1 << 20));
  CHECK(gathered->commit_end == 21000);  // the far write was never sent: not counted
  gathered->size = 21000;
  auto gathered_bytes = run(io.read(gathered, 0, 21000, true));
  DFS_REQUIRE_OK(gathered_bytes);
  CHECK(*gathered_bytes == first + std::string(4096, '\0') + second +
                               std::string(20000 - 16384, '\0') + third);

  auto overlapping = new_file(0x700);
  joined = run(gather(io, overlapping, random_bytes(8192, 6), {{4096, std::string(100, 'o')}}));
  CHECK(joined == std::vector<bool>{false});
  auto written_before = new_file(0x800);
  written_before->wrote(1 << 20);  // the file may hold bytes past the write: no hole is zero
  joined = run(gather(io, written_before, random_bytes(4096, 7), {{8192, std::string(100, 'w')}}));
  CHECK(joined == std::vector<bool>{false});
  CHECK(io.joined_writes() == 2);
}

}  // namespace dfs::test
