// DirStore: the `dir` ObjectStore backend. Object data lives in files under
// path/objects; onodes (size, version, file id, block checksums), metadata records and
// the write-ahead journal live in the RocksDB under path/db. Every method is thread-safe:
// apply() serialises per object through StripedLocks and concurrent commits share WAL
// syncs (RocksDB group commit). A background thread trims the journal.
// On-disk format and the crash-consistency argument: osd/store/FORMAT.md.
#pragma once

#include <rocksdb/db.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "osd/store/file_pool.h"
#include "osd/store/file_table.h"
#include "osd/store/object_plan.h"
#include "osd/store/object_store.h"
#include "osd/store/onode.h"
#include "osd/store/pending_journal.h"
#include "osd/store/striped_locks.h"

namespace dfs::osd {

// What open_dir_store recovered, handed to the constructor.
struct DirStoreState {
  std::unique_ptr<rocksdb::Env> env;  // the db's files go through it; outlives db
  std::unique_ptr<rocksdb::DB> db;
  uint32_t block_bytes = 4096;
  uint64_t next_fid = 1;
  uint64_t next_seq = 1;
  uint64_t object_count = 0;
};

class DirStore final : public ObjectStore {
 public:
  DirStore(const DirStoreOptions& options, DirStoreState state);
  ~DirStore() override;

  Status apply(Transaction txn) override;
  Result<std::string> read(const ObjectKey& key, uint64_t offset, uint64_t length) override;
  Result<ObjectInfo> stat(const ObjectKey& key) override;
  Result<std::vector<std::pair<std::string, ObjectInfo>>> list(uint32_t pool, uint32_t pg) override;
  Result<std::optional<std::string>> get_meta(const std::string& key) override;
  Result<std::vector<std::pair<std::string, std::string>>> scan_meta(
      const std::string& prefix) override;
  Result<StoreUsage> usage() override;

 private:
  using OpList = std::vector<const Transaction::Op*>;

  // One object's part of an apply().
  struct ObjectWork {
    ObjectKey key;
    std::optional<Onode> before;
    ObjectPlan plan;
    FileRef target;                    // the file plan.ops run on
    std::vector<uint64_t> stale_seqs;  // journal records this txn makes obsolete...
    uint64_t stale_fid = 0;            // ...all of them of this file
    uint64_t seq = 0;                  // this txn's journal record for the object
  };

  // dir_store.cc
  Result<std::optional<Onode>> load_onode(const ObjectKey& key);
  Result<std::string> read_blocks(const Onode& onode, uint64_t first, uint64_t count);
  Status verify_blocks(const Onode& onode, uint64_t first, std::string_view blocks);
  Result<FileRef> open_data_file(uint64_t fid);
  Status sync_file(const FileRef& file);
  Error go_read_only(Error error);
  bool hook(std::atomic<bool> DirStoreTestHooks::*flag) const;

  // dir_store_apply.cc
  Result<std::vector<ObjectWork>> plan_objects(const std::map<ObjectKey, OpList>& groups);
  Status prepare_files(std::vector<ObjectWork>& works);
  Status prepare_one(ObjectWork& work);
  void discard_new_files(std::vector<ObjectWork>& works);
  Status fill_batch(std::vector<ObjectWork>& works, const OpList& meta_ops,
                    rocksdb::WriteBatch& batch);
  Status commit(rocksdb::WriteBatch& batch);
  Status finish(std::vector<ObjectWork>& works);
  Status finish_one(ObjectWork& work);
  Status check_space(uint64_t data_bytes) const;

  // dir_store_trim.cc
  void trim_loop();
  void maybe_request_trim();
  Status trim_journal();

  const DirStoreOptions options_;
  const uint32_t block_bytes_;
  std::unique_ptr<rocksdb::Env> env_;  // declared before db_: destroyed after it
  std::unique_ptr<rocksdb::DB> db_;
  FileTable files_;
  FilePool pool_;
  PendingJournal pending_;
  StripedLocks locks_;
  std::atomic<uint64_t> next_seq_;
  std::atomic<uint64_t> object_count_;
  std::atomic<bool> read_only_{false};
  const StoreDevice device_;  // found once: a store does not move while open

  std::mutex trim_mu_;
  std::condition_variable trim_cv_;
  bool trim_requested_ = false;  // guarded by trim_mu_
  bool stopping_ = false;        // guarded by trim_mu_
  std::thread trimmer_;          // started last, joined first
};

}  // namespace dfs::osd
