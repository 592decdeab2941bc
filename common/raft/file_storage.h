// FileStorage: RaftLogStorage in one append-only file, for a group with a directory of
// its own (an MDS rank's log). Every write (a hard state, entries, a snapshot) is a
// record; each sync() appends the records written since the last one as one batch and
// syncs the file: one write and one fdatasync per group commit, each entry's bytes
// copied once and checksummed with ISA-L's CRC32C, where a RocksDB log would also put
// them in a memtable, check them with the software CRC32C of Debian's portable build
// and flush them into table files. Opening replays the records in order through the
// in-memory mirror that serves the reads (MirroredStorage), as RocksStorage's does.
//
// Once the file holds more than twice what is live (entries compacted away, hard
// states rewritten) and at least the rewrite floor, sync() writes the live state as one
// batch to `<path>.new`, syncs it and renames it over the file. A rewrite that fails
// before the rename leaves the old file, and the sync appends to it instead.
//
// Batch: a 16-byte header (magic "DFSL", body length, body CRC32C, CRC32C of those
// three; little-endian u32s), then the body, records one after the other, each a u32
// length (of what follows) and:
//   'h' term, vote, commit                          (u64 each, big-endian)
//   's' index, term, voter count, voters..., image  (a snapshot; the first, at index 0,
//                                                    the initial configuration)
//   'e' index, term, type u8, data                  (one entry; replayed as append(),
//                                                    so it drops any suffix from index)
// A crash can tear only the last batch, the one write not yet synced (its pages may
// reach the disk in any order). Opening cuts a last batch that is short or fails its
// checksum off the file, so the log is what the syncs before it wrote. A damaged batch
// with a whole batch anywhere after it is damage to synced records: the open fails with
// kCorruption rather than cut acknowledged entries and votes off the log.
// Single owner (the group's executor); sync() may run on a blocking pool thread while
// the owner waits, as for RocksStorage.
#pragma once

#include <memory>
#include <string>

#include "common/raft/mirrored_storage.h"

namespace dfs::raft {

class FileStorage final : public MirroredStorage {
 public:
  // The file size below which the file is never rewritten.
  static constexpr uint64_t kRewriteFloor = 64u << 20;

  // Opens the log in the file at `path`; with `create`, makes a new one whose
  // configuration is `initial` (synced, with its directory, before it returns) and
  // refuses an existing one. Errors: kNotFound (no log and not `create`),
  // kAlreadyExists (`create` over a log), kIoError, kCorruption (a damaged batch before
  // whole ones, or records that check out but do not make a log: a gap, a snapshot
  // going back).
  static Result<std::unique_ptr<FileStorage>> open(std::string path, ConfState initial,
                                                   bool create,
                                                   uint64_t rewrite_floor = kRewriteFloor);
  ~FileStorage() override;
  FileStorage(const FileStorage&) = delete;
  FileStorage& operator=(const FileStorage&) = delete;

  void set_hard_state(const HardState& hs) override;
  void append(const std::vector<Entry>& entries) override;
  void apply_snapshot(const Snapshot& snap) override;
  // Errors: kIoError; sticky: every later sync fails too (restart to recover). A failed
  // rewrite is not an error (the sync appends instead).
  Status sync() override;

  uint64_t sync_count() const { return syncs_; }  // syncs that wrote something
  uint64_t file_bytes() const { return file_bytes_; }
  uint64_t rewrites() const { return rewrites_; }
  // Bytes cut off the end of the file when it was opened (a torn last batch).
  uint64_t torn_bytes() const { return torn_bytes_; }

 private:
  FileStorage(std::string path, uint64_t rewrite_floor);
  Status load(int fd);
  Status replay_batch(std::string_view body);
  Status replay(char kind, std::string_view payload);
  // Each appends one record to `out`, built in place.
  static void add_snapshot(std::string& out, const Snapshot& snap);
  static void add_hard_state(std::string& out, const HardState& hs);
  static void add_entry(std::string& out, const Entry& e);
  static void begin_record(std::string& out, char kind);
  // Fills in the header of the record begun at `start`.
  static void end_record(std::string& out, size_t start);
  // The whole live state as records: snapshot, hard state, entries.
  std::string live_records() const;
  Status rewrite();
  bool wants_rewrite();
  Status fail(std::string what);

  std::string path_;
  uint64_t rewrite_floor_;
  int fd_ = -1;
  std::string pending_;   // records since the last sync
  uint64_t file_bytes_ = 0;
  uint64_t next_rewrite_check_ = 0;  // file size at which to weigh a rewrite again
  std::optional<Error> failed_;
  uint64_t syncs_ = 0;
  uint64_t rewrites_ = 0;
  uint64_t torn_bytes_ = 0;
};

}  // namespace dfs::raft
