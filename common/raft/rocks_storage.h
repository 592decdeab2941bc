// RocksStorage: RaftLogStorage inside a RocksDB database that the caller owns (a
// monitor's log in the DB of its map; an MDS rank's log made by older versions), under a
// key prefix so that several groups share one DB. Reads are served from an in-memory
// mirror of the uncompacted log (MirroredStorage); writes go to the mirror and to one
// pending rocksdb::WriteBatch, which sync() writes with sync=true: one fsync for
// everything the core wrote since the last sync (group commit).
// Single owner (the group's executor); see sync() for the one cross-thread call.
//
// Why a key prefix rather than a column family: column families must all be named when
// the DB is opened and are created/dropped with DB-wide operations, while groups come
// and go with MDS ranks; a prefix needs no coordination with the DB's owner, and a
// caller who wants separate tuning can still pass a column family handle.
//
// Layout under `prefix` (all integers big-endian, so entries scan in index order):
//   prefix 'h'                -> HardState: term, vote, commit (3 x u64)
//   prefix 's'                -> SnapshotMeta: index, term, then the voters (u64 each)
//   prefix 'i'                -> snapshot image: the application's opaque bytes
//   prefix 'e' <index u64>    -> entry: term u64, type u8, data
// The first index is snapshot index + 1 (one source of truth, not stored apart).
// The image is stored in full: an application with a large state hands compact() a
// small pointer (e.g. a RocksDB checkpoint name and index) and keeps the state itself.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <memory>
#include <string>

#include "common/raft/mirrored_storage.h"

namespace dfs::raft {

class RocksStorage final : public MirroredStorage {
 public:
  // Loads the group stored under `prefix` in `db` (column family `cf`, default when
  // null), or starts a fresh one whose configuration is `initial` (what is stored wins
  // on reopen). Restores exactly what the last successful sync() wrote.
  // Requires: `db` (with its WAL enabled) outlives the storage; no other group's prefix
  // starts with this one (end it with a separator: "raft/<16 hex digits>/").
  // Errors: kIoError (read failed), kCorruption (undecodable record, gap in the log).
  static Result<std::unique_ptr<RocksStorage>> open(rocksdb::DB* db, std::string prefix,
                                                    ConfState initial,
                                                    rocksdb::ColumnFamilyHandle* cf = nullptr);

  void set_hard_state(const HardState& hs) override;
  void append(const std::vector<Entry>& entries) override;
  void apply_snapshot(const Snapshot& snap) override;

  // Writes the pending batch with sync=true. May run on a blocking pool thread while the
  // owner waits, provided no other method runs meanwhile (RaftGroup guarantees it: the
  // node is not touched between ready() and advance()).
  // Errors: kIoError; sticky: every later sync fails too (restart to recover).
  Status sync() override;

  uint64_t sync_count() const { return syncs_; }  // syncs that wrote something

 private:
  RocksStorage(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, std::string prefix,
               ConfState initial);
  Status load();
  std::string key(char tag) const;
  std::string entry_key(Index index) const;
  void put_snapshot_meta(const SnapshotMeta& meta);

  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* cf_;
  std::string prefix_;
  rocksdb::WriteBatch batch_;  // writes since the last sync
  std::optional<Error> failed_;
  uint64_t syncs_ = 0;
};

}  // namespace dfs::raft
