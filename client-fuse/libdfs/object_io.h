// ObjectIo: the bytes of regular files in their objects (docs/architecture.md, "File
// data" and "Write-behind of object data"): striped reads, readahead, striped writes,
// and the bookkeeping of the object writes running now, among them the writes
// acknowledged before the OSDs have them (write-behind).
//
// It decides nothing about rights: its owner (FileClient) says whether holes may be
// remembered (it is alone on the file, so every write passes through it) and whether a
// write may go behind. What it keeps of a file lives in the file's FileState (layout,
// size, readahead pieces, holes, running writes); its own state is the write-behind
// budget and counters.
//
// The rules it keeps:
//   - every object write is bracketed by write_started / write_ended; commit_end, the
//     size the MDS is to record, takes the end of finished writes only when none runs,
//     so a crash leaves a shorter file, never zeros inside one;
//   - drain() waits until no write of the file runs;
//   - a hole found by a read is noted only if no write of the file began since the
//     read did, nor FileState::forget_holes; a write forgets the holes it fills before
//     it starts;
//   - write-behind bytes in flight stay within Options::write_behind_bytes;
//   - a write-behind waits `behind_gather_window` before it leaves, and a write that
//     continues it past a hole joins it, the hole sent as zeros, only where the file
//     holds nothing but zeros (the hole starts at FileState::high_water); the joined
//     range is one running write-behind, so a later write into the hole waits for it.
// Callers hold the file's io lock (FileState::io) as FileState describes: shared for
// reads and writes, so a running write-behind holds it shared until it ends.
//
// Runs on the ObjectClient's I/O thread; no locks of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "client-fuse/libdfs/object_client.h"

namespace dfs::client {

struct FileState;

class ObjectIo {
 public:
  struct Options {
    uint64_t readahead_bytes = 8u << 20;  // sequential-read prefetch window (0: off)
    uint32_t max_parallel_objects = 16;   // object requests in flight per operation
    uint64_t write_behind_bytes = 64u << 20;  // write-behind bytes in flight at most
    // How long a write-behind waits for the writes that continue it (0: it leaves at
    // once). drain() sends it at once: fsync and reads do not wait for the window.
    std::chrono::microseconds behind_gather_window{1000};
  };
  // A write joins a gathering one across a hole of at most this many bytes, up to this
  // many in all: no more than the largest FUSE write, so that no OSD write grows past
  // what a write could send before (a replica on a slow link must take it within the
  // OSDs' replica timeout).
  static constexpr uint64_t kMaxGatherHole = 64u << 10;
  static constexpr uint64_t kMaxGatherBytes = 1u << 20;
  // The largest piece read ahead (the size of the largest FUSE read).
  static constexpr uint64_t kMaxPrefetchPiece = 1u << 20;

  ObjectIo(ObjectClient& objects, Options options) : objects_(objects), options_(options) {}

  // ---- Reads ----

  // [offset, offset + length) of the file's objects: missing objects and short ones
  // read as zeros. `holes_known`: missing objects are remembered in st->missing_objects
  // and not asked for again. Errors: the OSDs' (kNotFound is a hole, not an error).
  awaitable<Result<std::string>> read(std::shared_ptr<FileState> st, uint64_t offset,
                                      uint64_t length, bool holes_known);
  // A read for a reader, served from the pieces read ahead when they cover it.
  // `sequential`: the reader's read continues its previous one (ReadPattern). Sequential
  // readers, and a read from the start of a file (most often the first of a whole-file
  // read), get the next pieces read ahead. Requires offset + length <= st->size.
  awaitable<Result<std::string>> read_through(std::shared_ptr<FileState> st, uint64_t offset,
                                              uint64_t length, bool sequential,
                                              bool holes_known);

  // ---- Writes ----

  // Writes `data` at `offset` to the objects it spans and returns once every OSD
  // write was answered. Bracket it with write_started / write_ended.
  awaitable<Status> write(std::shared_ptr<FileState> st, uint64_t offset, std::string data);
  void write_started(FileState& st);
  // A write that began with write_started ended at `end`; `written`: it succeeded.
  void write_ended(FileState& st, uint64_t end, bool written);
  // Waits until no object write of the file runs.
  awaitable<void> drain(std::shared_ptr<FileState> st);
  // Takes the file's io lock exclusive (a change of where its data lives), which waits
  // for the running write-behinds; the gathering one leaves at once for it. Release it
  // with the FileState::io guard as any.
  awaitable<void> lock_exclusive(std::shared_ptr<FileState> st);

  // ---- Write-behind ----

  // Whether `length` more bytes fit the write-behind budget.
  bool behind_fits(uint64_t length) const {
    return behind_bytes_ + length <= options_.write_behind_bytes;
  }
  // Whether [offset, offset + length) overlaps a write of the file acknowledged early
  // and still running (a write that overlaps one must wait for it: drain()).
  bool overlaps_behind(const FileState& st, uint64_t offset, uint64_t length) const;
  // A write of [offset, offset + length) is acknowledged before it reaches the OSDs:
  // its range is recorded as running behind and the budget charged, at once (before
  // the next write checks them). Requires: write_started for it, behind_fits(length).
  void behind_started(FileState& st, uint64_t offset, uint64_t length);
  // The write behind_started announced: writes it, frees its range and budget, and
  // ends with write_ended. A failure is kept in st->write_error for the file's next
  // flush or fsync to report, as a local file system reports a failed writeback.
  awaitable<void> write_behind(std::shared_ptr<FileState> st, uint64_t offset, std::string data);
  // Whether the write of `data` at `offset` joined the file's gathering write-behind
  // (then `data` has moved into it and the write is acknowledged): it starts at or past
  // the gathering write's end, which is the file's high water, within kMaxGatherHole,
  // and fits kMaxGatherBytes and the budget. Call before FileState::wrote for it.
  bool join_behind(FileState& st, uint64_t offset, std::string& data);

  // For the unmount's log.
  uint64_t behind_writes() const { return behind_writes_; }
  uint64_t behind_failures() const { return behind_failures_; }
  uint64_t joined_writes() const { return joined_writes_; }

 private:
  // The file's gathering write-behind, if any, leaves now (its window is cut short):
  // for whoever is about to wait for the file's writes.
  void send_gathering(FileState& st);
  // Starts reading [from, from + window) of the file ahead of the reader.
  void prefetch(std::shared_ptr<FileState> st, uint64_t from, uint64_t window, bool holes_known);
  template <class T>
  awaitable<std::vector<T>> in_parallel(std::vector<awaitable<T>> tasks) {
    return gather_bounded(std::move(tasks), options_.max_parallel_objects);
  }

  ObjectClient& objects_;
  Options options_;
  uint64_t behind_bytes_ = 0;     // write-behind bytes not yet on the OSDs
  uint64_t behind_writes_ = 0;    // writes acknowledged early
  uint64_t behind_failures_ = 0;  // ... of which failed afterwards
  uint64_t joined_writes_ = 0;    // writes that joined a gathering write-behind
};

}  // namespace dfs::client
