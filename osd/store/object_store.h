// ObjectStore: the OSD's local, crash-consistent storage of objects and of small
// metadata records (PG logs, PG info). Owned by one dfs-osd; every method blocks on
// disk I/O, so callers run them on the blocking thread pool, never on an I/O thread.
// All methods are thread-safe; concurrent apply() calls share one journal sync.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status/status.h"
#include "osd/store/store_device.h"

namespace dfs::osd {

// An object's identity inside an OSD: its pool, its placement group, its name.
// Objects are listed per (pool, pg), so the pg is part of the key.
struct ObjectKey {
  uint32_t pool = 0;
  uint32_t pg = 0;
  std::string name;

  auto operator<=>(const ObjectKey&) const = default;
};

// The version an object was last modified at: (map epoch, PG sequence).
struct ObjectVersion {
  uint64_t epoch = 0;
  uint64_t seq = 0;

  auto operator<=>(const ObjectVersion&) const = default;
};

// Largest object size either backend accepts; an op reaching past it is kInvalidArgument.
// It bounds the per-object checksum array (256 Ki entries at 4 KiB blocks).
inline constexpr uint64_t kMaxObjectBytes = uint64_t{1} << 30;

struct ObjectInfo {
  uint64_t size = 0;
  ObjectVersion version;
};

struct StoreUsage {
  uint64_t total_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t available_bytes = 0;
  uint64_t object_count = 0;
  // The file system the byte figures are of; stores on one share them. Empty id: none
  // (memory) or unknown.
  StoreDevice device;
};

// A batch of mutations applied atomically by ObjectStore::apply(): after a crash
// either all of them are visible or none.
class Transaction {
 public:
  enum class OpType { kWrite, kTruncate, kRemove, kSetVersion, kPutMeta, kDeleteMeta };
  struct Op {
    OpType type;
    ObjectKey key;        // object ops
    uint64_t offset = 0;  // kWrite: where; kTruncate: new size
    std::string data;     // kWrite: bytes; kPutMeta: value
    ObjectVersion version;
    std::string meta_key;  // kPutMeta, kDeleteMeta
  };

  // Writes `data` at `offset`, creating the object if missing and growing its size
  // to at least offset + data.size(); a gap past the old end reads as zeros.
  void write(ObjectKey key, uint64_t offset, std::string data);
  // Sets the size, creating the object if missing; growing reads as zeros.
  void truncate(ObjectKey key, uint64_t size);
  // Removes the object; a no-op if it does not exist.
  void remove(ObjectKey key);
  // Records the version of the object's latest change (object must exist by then).
  void set_version(ObjectKey key, ObjectVersion version);
  // Small metadata records, in one key space shared by the whole store.
  void put_meta(std::string key, std::string value);
  void delete_meta(std::string key);

  const std::vector<Op>& ops() const { return ops_; }
  bool empty() const { return ops_.empty(); }
  // Moves the ops out (a backend applying the transaction keeps the payloads).
  std::vector<Op> take_ops() && { return std::move(ops_); }

 private:
  std::vector<Op> ops_;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Applies `txn` atomically. Durable on return: a crash (kill -9, power loss) after
  // it returns keeps every op; a crash before keeps all or none of them.
  // Errors: kNoSpace (nothing applied), kIoError, kReadOnly (a previous sync failed;
  // the store refuses writes until it is reopened), kInvalidArgument (an op reaches past
  // kMaxObjectBytes, or set_version names an object that does not exist at that point of
  // the transaction; nothing applied), kCorruption (a partial-block write found the
  // stored block's checksum wrong; nothing applied).
  virtual Status apply(Transaction txn) = 0;

  // Reads up to `length` bytes from `offset`; shorter at the end of the object, empty
  // past it. Every stored block's crc32c is verified.
  // Errors: kNotFound, kCorruption (checksum mismatch: never returns bad bytes), kIoError.
  virtual Result<std::string> read(const ObjectKey& key, uint64_t offset, uint64_t length) = 0;

  // Errors: kNotFound, kIoError.
  virtual Result<ObjectInfo> stat(const ObjectKey& key) = 0;

  // Every object of one placement group, ordered by name.
  virtual Result<std::vector<std::pair<std::string, ObjectInfo>>> list(uint32_t pool,
                                                                       uint32_t pg) = 0;

  // Metadata records written by put_meta. get_meta returns nullopt when absent.
  virtual Result<std::optional<std::string>> get_meta(const std::string& key) = 0;
  // Every record whose key starts with `prefix`, ordered by key.
  virtual Result<std::vector<std::pair<std::string, std::string>>> scan_meta(
      const std::string& prefix) = 0;

  // Capacity of the underlying device and what the store holds.
  virtual Result<StoreUsage> usage() = 0;
};

// Fault injection for tests of the dir backend; production leaves DirStoreOptions's
// pointer empty. Flags may be flipped while the store runs.
struct DirStoreTestHooks {
  // Skips file I/O after a commit (journal application, unlinks), as if the process
  // died right after the RocksDB commit; the next open must replay the journal.
  std::atomic<bool> skip_post_commit_io{false};
  // Makes every data-file fdatasync fail with EIO.
  std::atomic<bool> fail_syncs{false};
};

struct DirStoreOptions {
  std::string path;     // the store's directory; holds db/ and objects/
  bool create = false;  // initialise an empty directory (mkfs); else it must exist
  // Fixed at mkfs (recorded in meta/format); ignored when opening an existing store.
  // A power of two from 512 to 1 MiB.
  uint32_t checksum_block_bytes = 4096;
  // Per object and transaction, writes of at most this many bytes go through the
  // journal (one WAL sync); larger appends and whole-object rewrites go straight to
  // the data file (one fdatasync plus the WAL sync). See osd/store/FORMAT.md.
  uint32_t deferred_max_bytes = 64 * 1024;
  // Journal records are trimmed (files synced, records deleted) in the background
  // once this many have accumulated.
  uint32_t journal_trim_records = 512;
  // Data files kept open (LRU).
  uint32_t max_open_files = 512;
  // apply() fails with kNoSpace unless the file system keeps this much free beyond
  // twice the transaction's data.
  uint64_t reserve_bytes = 16 << 20;
  // Each RocksDB WAL is handed out as a file of this many zeros, synced, so that a
  // commit's WAL sync overwrites in place instead of growing the file (no file-system
  // journal commit per sync). About the WAL's size when RocksDB switches to the next
  // (its 64 MiB write buffer); writes past it append. The store keeps one spare of
  // this size next to the WAL. 0 disables it. See osd/store/FORMAT.md.
  uint64_t wal_prefill_bytes = 64 << 20;
  std::shared_ptr<DirStoreTestHooks> test_hooks;
};

// The `dir` backend: object data as files under path/objects, object metadata,
// checksums and the write-ahead journal in a RocksDB under path/db.
// Recovers before returning: replays the journal, deletes orphan data files.
// Errors: kNotFound (no store at path and !create), kInvalidArgument (bad options at
// mkfs), kCorruption, kIoError.
Result<std::unique_ptr<ObjectStore>> open_dir_store(const DirStoreOptions& options);

// An in-memory store with the same semantics (tests and simulation).
std::unique_ptr<ObjectStore> make_memory_store();

}  // namespace dfs::osd
