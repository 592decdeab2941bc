// Helpers for tests that put a raft log on a real disk (RocksStorage, FileStorage): a
// temporary directory, entries, and the crash workload (the child's deterministic entry
// contents, killing it, checking what it left).
#pragma once

#include <rocksdb/db.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/raft/storage.h"
#include "tests/support/temp_dir.h"
#ifdef DFS_RAFT_CRASH_CHILD
#include <doctest/doctest.h>

#include "tests/support/kill_child.h"
#endif

namespace dfs::raft::testing {

using TempDir = test::TempDir;  // tests/support/temp_dir.h

// Opens (creating if needed) a RocksDB at `path`; aborts on failure (test setup).
inline std::unique_ptr<rocksdb::DB> open_db(const std::string& path) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* db = nullptr;
  rocksdb::Status st = rocksdb::DB::Open(options, path, &db);
  if (!st.ok()) {
    std::fprintf(stderr, "open %s: %s\n", path.c_str(), st.ToString().c_str());
    std::abort();
  }
  return std::unique_ptr<rocksdb::DB>(db);
}

// The crash workload's entry payload: a function of (index, term), so a reopened log
// can be checked entry by entry without a model of what the child wrote.
inline std::string crash_entry_data(uint64_t index, uint64_t term) {
  std::string s = "i=" + std::to_string(index) + ",t=" + std::to_string(term) + ",";
  s.resize(64 + index % 64, 'p');
  return s;
}
inline std::string crash_image(uint64_t index) { return "image@" + std::to_string(index); }

// What the child reports through the pipe after each sync returned.
struct CrashAck {
  uint64_t last_index = 0;
  uint64_t last_term = 0;
};

inline std::vector<Entry> make_entries(Index from, Index to, Term term) {
  std::vector<Entry> out;
  for (Index i = from; i <= to; ++i) {
    out.push_back(Entry{term, i, EntryType::kNormal, "cmd" + std::to_string(i)});
  }
  return out;
}

inline std::vector<Entry> all_entries(const RaftLogStorage& s) {
  if (s.last_index() < s.first_index()) return {};
  return s.entries(s.first_index(), s.last_index() + 1, UINT64_MAX);
}

#ifdef DFS_RAFT_CRASH_CHILD  // the test's side of the crash workload (not the child's)

struct ChildRun {
  std::optional<CrashAck> last_ack;
  bool child_failed = false;
};

// Starts the child, kills it after `delay`, and collects the (last index, last term)
// it reported after each sync (UINT64_MAX as the index reports a failure).
// `storage`: "rocks" (a RocksStorage in a DB at `path`) or "file" (a FileStorage in
// `path`/log, rewritten often).
inline ChildRun run_child_and_kill(const std::string& path, uint64_t seed,
                                   std::chrono::milliseconds delay, const std::string& storage) {
  auto killed = test::run_and_kill(
      {DFS_RAFT_CRASH_CHILD, path, "3", std::to_string(seed), storage}, delay);
  ChildRun run;
  run.child_failed = !killed.died_of_kill;
  for (size_t at = 0; at + sizeof(CrashAck) <= killed.reports.size(); at += sizeof(CrashAck)) {
    CrashAck ack;
    std::memcpy(&ack, killed.reports.data() + at, sizeof ack);
    if (ack.last_index == UINT64_MAX) run.child_failed = true;
    run.last_ack = ack;
  }
  return run;
}

// The reopened log is one the child could have synced: consecutive entries whose
// contents match (index, term), terms never decreasing, commit within the log, the
// snapshot's image matching its index.
inline void check_consistent(const RaftLogStorage& s) {
  const Snapshot& snap = s.snapshot();
  CHECK(s.first_index() == snap.meta.index + 1);
  if (snap.meta.index > 0) CHECK(snap.data == crash_image(snap.meta.index));
  Term prev = snap.meta.term;
  for (const Entry& e : all_entries(s)) {
    CHECK(e.term >= prev);
    CHECK(e.data == crash_entry_data(e.index, e.term));
    prev = e.term;
  }
  CHECK(s.hard_state().commit <= s.last_index());
  CHECK(s.hard_state().term >= prev);
}

#endif  // DFS_RAFT_CRASH_CHILD

}  // namespace dfs::raft::testing
