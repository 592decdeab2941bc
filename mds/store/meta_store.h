// MetaStore: the MDS's ordered key-value store (RocksDB in production, a std::map in
// tests and simulation). Keys and values are described in FORMAT.md. Reads may run on
// any thread concurrently with the single writer (the Committer). Calls may block on
// the disk, so the I/O thread uses only memory_reader() (and the Committer's group
// writes, which append to the log without a sync); the rest goes through run_blocking.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status/status.h"

namespace dfs::mds {

struct KeyValue {
  std::string key;
  std::string value;
};

// A set of puts and deletes applied atomically by MetaStore::write.
class WriteBatch {
 public:
  struct Op {
    bool is_delete = false;
    std::string key;
    std::string value;
  };

  void put(std::string key, std::string value) {
    bytes_ += key.size() + value.size();
    ops_.push_back({false, std::move(key), std::move(value)});
  }
  void del(std::string key) {
    bytes_ += key.size();
    ops_.push_back({true, std::move(key), {}});
  }
  const std::vector<Op>& ops() const { return ops_; }
  // The ops, moved out; the batch is empty after.
  std::vector<Op> take_ops() {
    bytes_ = 0;
    return std::exchange(ops_, {});
  }
  bool empty() const { return ops_.empty(); }
  size_t bytes() const { return bytes_; }

 private:
  std::vector<Op> ops_;
  size_t bytes_ = 0;
};

// What the ops read: point lookups and ordered range scans.
class KvReader {
 public:
  virtual ~KvReader() = default;
  // Errors: kIoError, kCorruption.
  virtual Result<std::optional<std::string>> get(std::string_view key) const = 0;
  // The pairs with begin <= key < end in key order, at most `limit` of them.
  // Errors: kIoError, kCorruption.
  virtual Result<std::vector<KeyValue>> scan(std::string_view begin, std::string_view end,
                                             size_t limit) const = 0;
};

class MetaStore : public KvReader {
 public:
  // Applies `batch` atomically: after a crash either all of it or none is there. With
  // `sync`, the batch is durable (on stable storage) when this returns ok.
  // Errors: kIoError, kNoSpace; kReadOnly after any failed write (sticky: the store
  // refuses writes until it is reopened, since a failed sync leaves what reached the
  // disk unknown).
  virtual Status write(const WriteBatch& batch, bool sync) = 0;
  // Makes every write that returned before this call durable: one fsync of the store's
  // log, or, under a Raft log (StoreLog::kRaft), a flush of its memtable to a table
  // file. How writes made without `sync` become durable in a group. May run on another
  // thread while the writer goes on writing (later writes need not be covered).
  // Errors: as write().
  virtual Status sync() = 0;
  // Reads only what the store holds in memory (RocksDB's memtables and block cache); a
  // read that would need the disk fails with kWouldBlock instead. Lives as long as the
  // store. This is how the I/O thread serves hot reads without a hop to the pool.
  virtual const KvReader& memory_reader() const = 0;
};

// Which log makes a store's writes durable.
enum class StoreLog {
  // The store's own write-ahead log (a single MDS: it is the metadata log). sync() is
  // one fsync of it.
  kOwn,
  // The rank's Raft log, which holds every write before the store sees it. The store
  // keeps no log of its own, so each write is one memtable insert and no log record
  // (half a replica's write work); a crash loses what was not flushed yet, which the
  // Raft log replays. sync() and `sync` writes flush the memtable to a table file.
  kRaft,
};

// Opens (with `create`: creates, failing if one exists) the RocksDB store in `path`.
// Errors: kNotFound (no store and !create), kAlreadyExists, kIoError, kCorruption.
Result<std::unique_ptr<MetaStore>> open_rocks_meta_store(const std::string& path, bool create,
                                                         StoreLog log = StoreLog::kOwn);

// An in-memory store (unit tests, simulation). Thread-safe like the RocksDB one.
std::unique_ptr<MetaStore> make_mem_meta_store();

}  // namespace dfs::mds
