// Helpers for tests that put a raft log in a real RocksDB: a temporary directory and
// the crash workload's deterministic entry contents (shared with the crash child).
#pragma once

#include <rocksdb/db.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/temp_dir.h"

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

}  // namespace dfs::raft::testing
