// RocksMetaStore: MetaStore on one RocksDB database. The only place where
// rocksdb::Status becomes a dfs Error for the MDS.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <filesystem>

#include "mds/store/meta_store.h"

namespace dfs::mds {
namespace {

Error rocks_error(const rocksdb::Status& s, std::string_view what) {
  ErrorCode code = ErrorCode::kInternal;
  if (s.IsNoSpace()) {
    code = ErrorCode::kNoSpace;
  } else if (s.IsCorruption()) {
    code = ErrorCode::kCorruption;
  } else if (s.IsIOError()) {
    code = ErrorCode::kIoError;
  } else if (s.IsBusy() || s.IsTryAgain()) {
    code = ErrorCode::kUnavailable;
  }
  return Error(code, std::string(what) + ": rocksdb: " + s.ToString());
}

rocksdb::Options db_options(bool create) {
  rocksdb::Options o;
  o.create_if_missing = create;
  o.error_if_exists = create;
  o.keep_log_file_num = 3;
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  // Point lookups of inodes dominate: bloom filters spare reads of SST blocks.
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  // Debian's RocksDB is built for any x86-64, so its CRC32C is the table-driven one;
  // XXH3 checks the table files' blocks at a fraction of its CPU.
  table.checksum = rocksdb::kXXH3;
  // A flush (each compaction of a replicated rank's log makes one) leaves the blocks it
  // wrote in the cache: the I/O thread's reads (memory_reader) keep finding the keys
  // just written instead of going to the pool for them.
  using Prepopulate = rocksdb::BlockBasedTableOptions::PrepopulateBlockCache;
  table.prepopulate_block_cache = Prepopulate::kFlushOnly;
  table.block_cache = rocksdb::NewLRUCache(128u << 20);
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  o.max_background_jobs = 2;
  // Flushes and the first compactions rewrite the newest, most often replaced data:
  // compressing it costs CPU on every write burst for little space; older levels
  // compress.
  o.compression_per_level = {rocksdb::kNoCompression, rocksdb::kNoCompression,
                             rocksdb::kSnappyCompression};
  return o;
}

// Reads of one RocksDB database at one read tier: every tier (the store itself), or
// memory only (kBlockCacheTier: RocksDB answers Incomplete where it would read a file).
class RocksReader final : public KvReader {
 public:
  RocksReader(rocksdb::DB& db, rocksdb::ReadTier tier) : db_(db), tier_(tier) {}

  Result<std::optional<std::string>> get(std::string_view key) const override {
    std::string value;
    auto s = db_.Get(options(), rocksdb::Slice(key.data(), key.size()), &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    if (!s.ok()) return read_error(s, "reading the metadata store");
    return std::optional<std::string>(std::move(value));
  }

  Result<std::vector<KeyValue>> scan(std::string_view begin, std::string_view end,
                                     size_t limit) const override {
    std::vector<KeyValue> out;
    rocksdb::ReadOptions ro = options();
    rocksdb::Slice upper(end.data(), end.size());
    ro.iterate_upper_bound = &upper;
    std::unique_ptr<rocksdb::Iterator> it(db_.NewIterator(ro));
    for (it->Seek(rocksdb::Slice(begin.data(), begin.size())); it->Valid() && out.size() < limit;
         it->Next()) {
      out.push_back({it->key().ToString(), it->value().ToString()});
    }
    if (!it->status().ok()) return read_error(it->status(), "scanning the metadata store");
    return out;
  }

 private:
  rocksdb::ReadOptions options() const {
    rocksdb::ReadOptions ro;
    ro.read_tier = tier_;
    return ro;
  }
  Error read_error(const rocksdb::Status& s, std::string_view what) const {
    if (s.IsIncomplete() && tier_ == rocksdb::kBlockCacheTier) {
      return Error(ErrorCode::kWouldBlock, std::string(what) + ": not in memory");
    }
    return rocks_error(s, what);
  }

  rocksdb::DB& db_;
  rocksdb::ReadTier tier_;
};

class RocksMetaStore final : public MetaStore {
 public:
  RocksMetaStore(std::unique_ptr<rocksdb::DB> db, StoreLog log)
      : db_(std::move(db)),
        log_(log),
        reader_(*db_, rocksdb::kReadAllTier),
        memory_reader_(*db_, rocksdb::kBlockCacheTier) {}

  Result<std::optional<std::string>> get(std::string_view key) const override {
    return reader_.get(key);
  }
  Result<std::vector<KeyValue>> scan(std::string_view begin, std::string_view end,
                                     size_t limit) const override {
    return reader_.scan(begin, end, limit);
  }
  const KvReader& memory_reader() const override { return memory_reader_; }

  Status write(const WriteBatch& batch, bool sync) override {
    if (failed_.load()) {
      return make_error(ErrorCode::kReadOnly, "the metadata store failed a write; restart the MDS");
    }
    rocksdb::WriteBatch wb;
    for (const auto& op : batch.ops()) {
      if (op.is_delete) {
        wb.Delete(op.key);
      } else {
        wb.Put(op.key, op.value);
      }
    }
    rocksdb::WriteOptions wo;
    wo.disableWAL = log_ == StoreLog::kRaft;
    wo.sync = sync && !wo.disableWAL;
    auto s = db_->Write(wo, &wb);
    if (!s.ok()) {
      failed_.store(true);
      return rocks_error(s, "writing the metadata store");
    }
    if (sync && wo.disableWAL) return this->sync();
    return ok_status();
  }

  Status sync() override {
    if (failed_.load()) {
      return make_error(ErrorCode::kReadOnly, "the metadata store failed a write; restart the MDS");
    }
    rocksdb::Status s;
    if (log_ == StoreLog::kOwn) {
      s = db_->SyncWAL();
    } else {
      rocksdb::FlushOptions fo;
      fo.wait = true;
      s = db_->Flush(fo);
    }
    if (!s.ok()) {
      failed_.store(true);  // what reached the disk is unknown now
      return rocks_error(s, "syncing the metadata store");
    }
    return ok_status();
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  const StoreLog log_;
  RocksReader reader_;
  RocksReader memory_reader_;
  std::atomic<bool> failed_{false};
};

}  // namespace

Result<std::unique_ptr<MetaStore>> open_rocks_meta_store(const std::string& path, bool create,
                                                         StoreLog log) {
  std::error_code ec;
  if (create) {
    std::filesystem::create_directories(path, ec);
    if (std::filesystem::exists(path + "/CURRENT")) {
      return make_error(ErrorCode::kAlreadyExists, "a metadata store already exists at " + path);
    }
  } else if (!std::filesystem::exists(path + "/CURRENT")) {
    return make_error(ErrorCode::kNotFound,
                      "no metadata store at " + path + " (run dfs-mds --mkfs first)");
  }
  rocksdb::DB* raw = nullptr;
  auto s = rocksdb::DB::Open(db_options(create), path, &raw);
  if (!s.ok()) return rocks_error(s, "opening the metadata store at " + path);
  return std::unique_ptr<MetaStore>(new RocksMetaStore(std::unique_ptr<rocksdb::DB>(raw), log));
}

}  // namespace dfs::mds
