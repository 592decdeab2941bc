// Committer: the single writer of a metadata store, with group commit. Mutations queue
// up on the I/O thread; one writer task takes everything queued as a group and, on a
// pool thread, decides each entry's leader values (index, time, new inode number),
// applies the entries in order into one GroupTxn (each sees its predecessors' writes)
// and writes the group as one WriteBatch with sync. Only then are the group's replies
// released: a reply is never sent before its entry is durable. A group is atomic on
// disk, and groups follow each other (the next starts after the previous is durable).
// Public methods run on the I/O executor.
#pragma once

#include <deque>
#include <functional>
#include <memory>

#include "common/rpc/asio.h"
#include "mds/ops/op_context.h"
#include "mds/service/completion.h"
#include "mds/store/meta_store.h"

namespace dfs::mds {

using NowFn = std::function<proto::Timespec()>;
// The real-time clock as a Timespec (the default NowFn). Thread-safe.
proto::Timespec realtime_now();

struct CommitterOptions {
  size_t max_group_entries = 1024;
  size_t max_group_bytes = 32u << 20;
};

struct CommitterStats {
  uint64_t groups = 0;
  uint64_t entries = 0;
  uint64_t failed_entries = 0;  // rejected by their op (not logged)
};

class Committer {
 public:
  Committer(asio::any_io_executor io, asio::thread_pool& pool, MetaStore& store, FsSettings fs,
            NowFn now, CommitterOptions options = {});

  // Reads the last log index and the inode counter. Blocking: call before serving.
  // Errors: store errors.
  Status load();

  // Logs and applies the op set in `entry`; the committer fills index, now, new_ino and
  // layout. Returns the op's serialized reply once its entry is durable, or the op's
  // error (nothing logged), or the store's error (kIoError, kReadOnly: the group failed
  // and the store refuses writes until restart).
  awaitable<Result<std::string>> submit(proto::MdsLogEntry entry);

  // Called on the I/O executor with each durable entry and its effects, in log order
  // (the service acts on orphans; tests record the log).
  using EntryListener = std::function<void(const proto::MdsLogEntry&, const ApplyEffects&)>;
  void add_listener(EntryListener listener) { listeners_.push_back(std::move(listener)); }

  uint64_t last_index() const { return last_index_; }
  bool idle() const { return !writing_ && queue_.empty(); }
  const CommitterStats& stats() const { return stats_; }
  const FsSettings& fs() const { return fs_; }

 private:
  struct Pending {
    explicit Pending(asio::any_io_executor ex, proto::MdsLogEntry e)
        : entry(std::move(e)), done(std::move(ex)) {}
    proto::MdsLogEntry entry;
    Result<std::string> result;  // written by the pool task, read after it returns
    ApplyEffects effects;
    Completion<bool> done;
  };
  using Group = std::vector<std::shared_ptr<Pending>>;

  awaitable<void> writer_loop();
  Group take_group();
  // Runs on the pool: decide, apply, write. Returns the group's write status.
  Status process(Group& group, uint64_t first_index);
  Status decide(Pending& p, GroupTxn& txn, uint64_t index);

  asio::any_io_executor io_;
  asio::thread_pool& pool_;
  MetaStore& store_;
  FsSettings fs_;
  NowFn now_;
  CommitterOptions options_;
  std::deque<std::shared_ptr<Pending>> queue_;  // I/O thread
  bool writing_ = false;
  uint64_t last_index_ = 0;  // I/O thread; the pool task gets a copy
  CommitterStats stats_;
  std::vector<EntryListener> listeners_;
};

}  // namespace dfs::mds
