// WalPrefillFs: the RocksDB FileSystem of the dir store. It hands RocksDB each new
// write-ahead log as a file already filled with zeros and synced, so a commit's WAL
// fdatasync overwrites allocated blocks of a file whose size does not change and need
// not write the inode as well (on this project's ext4 an appending 4 KiB write + sync
// took ~147 us, an overwrite ~79 us). One spare file is kept ready in the db directory;
// a background thread fills the next one after RocksDB takes it. Thread-safe. Held by
// the DirStore's rocksdb::Env, which outlives the DB. See osd/store/FORMAT.md.
#pragma once

#include <rocksdb/file_system.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status/status.h"

namespace dfs::osd {

class WalPrefillFs final : public rocksdb::FileSystemWrapper {
 public:
  // `db_dir`: where RocksDB keeps its WAL (no separate wal_dir). `prefill_bytes`: the
  // zeroed length of each WAL file; writes past it append as usual.
  WalPrefillFs(std::string db_dir, uint64_t prefill_bytes);
  ~WalPrefillFs() override;  // stops and joins the filler

  // Fills the first spare, blocking, so that the WAL DB::Open creates takes it.
  // Errors: kNoSpace, kIoError.
  Status prepare();
  // Starts the background filler (after DB::Open took the first spare).
  void start();

  const char* Name() const override { return "WalPrefillFs"; }

  // A WAL (`<db_dir>/<number>.log`) gets the spare when one is ready, else a plain new
  // file; every other file is passed through.
  rocksdb::IOStatus NewWritableFile(const std::string& fname, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override;

  // For tests: how many WALs got a prefilled file and how many a plain one, and
  // whether a spare is ready now.
  uint64_t prefilled_wals() const;
  uint64_t plain_wals() const;
  bool spare_ready() const;

 private:
  bool is_wal(const std::string& fname) const;
  Status fill_spare();
  void fill_loop();

  const std::string db_dir_;
  const std::string spare_path_;
  const uint64_t prefill_bytes_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool spare_ready_ = false;  // guarded by mu_
  bool want_spare_ = false;   // guarded by mu_
  bool stopping_ = false;     // guarded by mu_
  uint64_t prefilled_ = 0;    // guarded by mu_
  uint64_t plain_ = 0;        // guarded by mu_
  std::thread filler_;
};

}  // namespace dfs::osd
