// raft_rocks_crash_child <path> <ack fd> <seed> <rocks|file>: the process the crash tests
// kill. Reopens the log (a RocksStorage in a DB at <path>, or a FileStorage in
// <path>/log that rewrites its file every few hundred KiB), then forever appends a few
// entries (sometimes replacing an uncommitted suffix with a higher term, sometimes
// compacting), syncs, and writes a CrashAck (native order) to the ack fd once sync
// returned. On an error it writes last_index = UINT64_MAX, explains on stderr and exits
// non-zero.
#include <unistd.h>

#include <cstdio>
#include <random>

#include "common/raft/file_storage.h"
#include "common/raft/rocks_storage.h"
#include "tests/unit/raft/rocks_fixture.h"

using namespace dfs::raft;
using dfs::raft::testing::CrashAck;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <path> <ack fd> <seed> <rocks|file>\n", argv[0]);
    return 2;
  }
  int fd = std::atoi(argv[2]);
  std::mt19937_64 rng(std::strtoull(argv[3], nullptr, 10));
  auto fail = [&](const std::string& what) {
    CrashAck marker{UINT64_MAX, 0};
    ssize_t n = ::write(fd, &marker, sizeof marker);
    (void)n;
    std::fprintf(stderr, "crash child: %s\n", what.c_str());
    return 3;
  };
  std::unique_ptr<rocksdb::DB> db;
  std::unique_ptr<RaftLogStorage> storage;
  const std::string path = argv[1];
  const std::string kind = argv[4];
  if (kind == "rocks") {
    db = testing::open_db(path);
    auto opened = RocksStorage::open(db.get(), "raft/1/", ConfState{{1, 2, 3}});
    if (!opened) return fail(opened.error().to_string());
    storage = std::move(*opened);
  } else if (kind == "file") {
    const std::string log = path + "/log";
    auto opened = FileStorage::open(log, ConfState{{1, 2, 3}}, ::access(log.c_str(), F_OK) != 0,
                                    256u << 10);
    if (!opened) return fail(opened.error().to_string());
    storage = std::move(*opened);
  } else {
    return fail("unknown storage '" + kind + "'");
  }
  RaftLogStorage& s = *storage;
  HardState hs = s.hard_state();
  Term term = std::max(hs.term, *s.term(s.last_index())) + 1;  // a new "leader" per run
  while (true) {
    Index last = s.last_index();
    Index from = last + 1;
    if (rng() % 5 == 0) {
      // Replace an uncommitted suffix (a new leader overwriting a deposed one's tail).
      Index lowest = std::max(s.first_index(), hs.commit + 1);
      Index back = rng() % 4;
      from = last >= lowest + back ? last - back : lowest;
      term += 1;
    }
    std::vector<Entry> entries;
    for (Index i = from; i <= last + 1 + rng() % 16; ++i) {
      entries.push_back(Entry{term, i, EntryType::kNormal, testing::crash_entry_data(i, term)});
    }
    s.append(entries);
    hs = HardState{term, 1, std::max(hs.commit, from > 3 ? from - 3 : 0)};
    s.set_hard_state(hs);
    Index snap = s.snapshot().meta.index;
    if (rng() % 8 == 0 && hs.commit > snap) {
      s.apply_snapshot(Snapshot{SnapshotMeta{hs.commit, *s.term(hs.commit), ConfState{{1, 2, 3}}},
                                testing::crash_image(hs.commit)});
    }
    dfs::Status st = s.sync();
    if (!st) return fail(st.error().to_string());
    CrashAck ack{s.last_index(), *s.term(s.last_index())};
    if (::write(fd, &ack, sizeof ack) != sizeof ack) return 4;
  }
}
