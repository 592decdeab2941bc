// Client-side state of one open (or not yet flushed) regular file, and of one open
// handle. Internal to FileClient; owned by its I/O thread.
//
// Consistency rules: `size` is the file's size as this client knows it (the MDS's
// plus writes not yet committed) and is authoritative while the state exists, since
// every change to the file passes through this client (single-client mode; the
// capability issue makes this a granted exclusive cap). Locks, always taken in this
// order: flush_mu (one flush, uninline or truncate at a time), then io (shared by
// reads and writes, exclusive for changes of where the data lives).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_set>

#include "client-fuse/libdfs/async_sync.h"
#include "client-fuse/libdfs/creds.h"
#include "client-fuse/libdfs/inline_buffer.h"
#include "client-fuse/libdfs/striping.h"
#include "common/rpc/asio.h"
#include "common/proto/mds.pb.h"

namespace dfs::client {

// A write-behind that has not left for the OSDs yet: the kernel writes a file back one
// run of dirty pages at a time, and a file written with holes (rsync -S skips runs of
// zeros) comes as many short runs. The writes that continue it within a short window
// join it across the holes between them (ObjectIo::join_behind), and go as one.
struct BehindGather {
  BehindGather(asio::any_io_executor executor, uint64_t offset_, std::string data_)
      : timer(executor), offset(offset_), data(std::move(data_)) {}
  asio::steady_timer timer;  // the window; cancelled to send it at once
  uint64_t offset;
  std::string data;
};

// One prefetched piece of an object-backed file.
struct Prefetch {
  uint64_t offset = 0;
  uint64_t length = 0;
  AsyncEvent done;
  Result<std::string> data;
};

struct FileState {
  explicit FileState(uint64_t ino_) : ino(ino_) {}

  uint64_t ino;
  StripeLayout layout;
  bool is_inline = false;
  InlineBuffer inline_data;       // the whole file while is_inline
  uint64_t mds_inline_bytes = 0;  // how much inline data the MDS holds
  uint64_t size = 0;
  proto::Timespec mtime;  // of the last write not yet committed

  // The state holds one MDS open of the file (kMdsOpen, or kMdsMknod with open) from
  // its first handle until it is dropped, which is `linger` after the last handle
  // closed: a file reopened soon after (rsync, tar, editors) costs no round trip.
  bool mds_open = false;
  Creds opener;  // who made that open: the release goes out with these credentials
  Clock::time_point linger_until{};

  // Object writes whose end of file and mtime the MDS has not recorded yet.
  bool commit_dirty = false;
  uint64_t commit_end = 0;
  // Object writes running now (they share the io lock), and the furthest end reached by
  // those that finished. commit_end takes finished_end only when none runs: a size the
  // MDS records never covers bytes still on their way to the OSDs, so a crash leaves a
  // shorter file, not zeros in the middle of one.
  int object_writes_running = 0;
  uint64_t finished_end = 0;
  bool finished_any = false;
  // Set when object_writes_running falls to zero (a new event for each busy spell).
  std::shared_ptr<AsyncEvent> writes_drained;
  // Pushes of buffered bytes or the size sent by a flush (WriteInline, CommitWrite) and
  // not answered yet: they left the dirty flags already. A recall waits for them
  // (FileClient::push_all), so that the MDS reads what they record after it.
  int pushes_running = 0;
  std::shared_ptr<AsyncEvent> pushes_settled;  // set when pushes_running falls to zero
  // Counts one push for its lifetime.
  class PushRunning {
   public:
    explicit PushRunning(FileState& st) : st_(st) {
      if (st_.pushes_running++ == 0) st_.pushes_settled = std::make_shared<AsyncEvent>();
    }
    ~PushRunning() {
      if (--st_.pushes_running == 0) st_.pushes_settled->set();
    }
    PushRunning(const PushRunning&) = delete;
    PushRunning& operator=(const PushRunning&) = delete;

   private:
    FileState& st_;
  };
  // Object writes acknowledged before the OSDs had them (write_behind.cc): their byte
  // ranges, offset to end. A write that overlaps one waits for it, so they land in order.
  std::multimap<uint64_t, uint64_t> behind;
  // The write-behind still taking in the writes that continue it, if any.
  std::shared_ptr<BehindGather> gather;
  // Past this offset the file holds nothing but zeros (the bytes any read returns; an
  // object may keep bytes past the recorded size that a crashed writer left), in its
  // objects or on their way: the size when the state was made alone on the file, moved
  // up by every write and down by a truncate. Unknown (the largest value) once another
  // mount may have written (a state made or refreshed while shared, a recall, an
  // eviction). A write-behind joins another across a hole only past it.
  static constexpr uint64_t kUnknownHighWater = UINT64_MAX;
  uint64_t high_water = 0;
  void wrote(uint64_t end) { high_water = std::max(high_water, end); }
  bool clear_privileges = false;
  Creds writer;  // the credentials buffered writes are pushed with
  // Deferred pushes of this file's bytes not yet answered: the state, which holds the
  // bytes, is not dropped until they are (a failed one is sent again).
  int deferred_pushes = 0;

  int handles = 0;
  AsyncMutex flush_mu;
  AsyncRwLock io;
  std::optional<Error> write_error;  // a failed background write, reported by fsync
  // The mount's session was evicted while this file had writes the MDS or the OSDs did
  // not have: they are lost, and every later read, write or flush through a handle
  // opened before fails with EIO (kFenced). A new open gets a new state.
  bool fenced = false;

  // Objects a read found missing (holes): read as zeros without asking again until
  // this client writes to them. Kept and used only while the mount is alone on the
  // file (every write passes through it); a recall clears them.
  std::unordered_set<uint64_t> missing_objects;
  uint64_t write_gen = 0;  // bumped by every object write: a read that raced one learns nothing
  // Holes known no more (a recall, an eviction, a truncate, a refresh): a read running
  // now does not note the ones it finds either.
  void forget_holes() {
    missing_objects.clear();
    ++write_gen;
  }

  // Prefetched pieces by file offset; dropped on every write and truncate.
  std::map<uint64_t, std::shared_ptr<Prefetch>> readahead;
  // What was read of the objects is known no more (another mount may write there from
  // now on: a recall, an eviction, a truncate, a refresh): the prefetched pieces and the
  // holes go.
  void forget_cached_data() {
    readahead.clear();
    forget_holes();
  }
  // Another mount may write the file from now on: nothing cached of its data holds, and
  // where its zeros begin is unknown.
  void others_may_write() {
    forget_cached_data();
    high_water = kUnknownHighWater;
  }
  // Opened without an MDS open, from the whole file's data fetched ahead, which
  // readahead[0] holds while the state lives: its reads never reach the OSDs, so an
  // unlink takes nothing from them (file_open.cc, "Opens answered locally").
  bool data_pinned = false;
  // This mount read the file through its kernel's page cache under a read share, ended
  // by its own opening for writing: the kernel may still hold pages of it that its
  // readers read, and kernels before 6.6 keep them across a direct write, so each
  // direct write has the kernel drop them (FileClient::write).
  bool kernel_pages = false;

  bool dirty() const { return commit_dirty || inline_data.dirty(); }
  // What a push records of the object writes (kMdsCommitWrite): take_commit() takes it
  // from the state, which then has nothing to record; recommit() marks a record to send
  // (writes that landed, a new end, or a record the MDS did not take), so the next push
  // sends it.
  struct CommitRecord {
    uint64_t end = 0;
    bool clear_privileges = false;
  };
  CommitRecord take_commit() {
    CommitRecord taken{commit_end, clear_privileges};
    commit_dirty = false;
    clear_privileges = false;
    return taken;
  }
  void recommit(CommitRecord record) {
    commit_dirty = true;
    commit_end = std::max(commit_end, record.end);
    clear_privileges = clear_privileges || record.clear_privileges;
  }
  // Writes the MDS has not recorded yet: buffered, or still on their way to the OSDs.
  bool has_unrecorded_writes() const { return dirty() || object_writes_running > 0; }
};

// Whether the reads through one handle go sequentially, which earns them read-ahead.
class ReadPattern {
 public:
  // A read of [offset, offset + length): whether it continues the one before.
  bool sequential_after(uint64_t offset, uint64_t length) {
    run_ = offset == next_ ? run_ + 1 : 0;
    next_ = offset + length;
    return run_ > 0;
  }

 private:
  uint64_t next_ = 0;  // where a sequential reader reads next
  uint32_t run_ = 0;   // consecutive sequential reads
};

struct Handle {
  uint64_t ino = 0;
  int flags = 0;
  Creds creds;  // the opener's: writes through this handle are pushed with them
  std::shared_ptr<FileState> state;  // regular files
  bool mds_open = false;             // other files: this handle holds its own MDS open
  ReadPattern reads;                 // whether it is read sequentially (read-ahead)
  bool offer_to_page_cache = false;  // opened from held data (data_for_page_cache)
  // Lock owners that took record locks through this handle: their locks on the file go
  // when it is released (the kernel stops sending flushes, which would name them).
  std::set<uint64_t> record_lock_owners;
};

// The current time as a protobuf Timespec (mtime of buffered writes).
proto::Timespec now_timespec();

// A directory entry name the MDS can take. Errors: kNameTooLong, kInvalidArgument.
Status check_name(const std::string& name);

// The file (inode) no longer exists: buffered state for it can only be dropped.
inline bool is_gone(const Error& e) {
  return e.code() == ErrorCode::kStale || e.code() == ErrorCode::kNotFound;
}

}  // namespace dfs::client
