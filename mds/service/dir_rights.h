// DirRights: the directories each client session owns (docs/capabilities.md, "Directory
// rights"). A mount that creates a directory and asks for it (MknodRequest.own) owns it:
// nobody else can know a directory before it exists, so the creator is alone on it and
// may cache its names, defer creates, renames and unlinks in it and buffer the writes of
// the files it creates there, also while other mounts work elsewhere in the file system.
// The first request of another session that touches an owned directory (names it, or
// would be answered with its inode) recalls it from the owner (kMdsCacheRights with
// `dirs`) and waits: the owner pushes what it deferred and buffered, drops what it
// cached and acknowledges (kMdsCacheAck), and only then is the request served. An owner
// that does not acknowledge within the recall timeout is evicted (the owner's EvictFn),
// which also ends the wait. Sessions re-assert what they owned after a takeover.
//
// A mount that creates in an existing directory nobody owns may ask for it too
// (MknodRequest.own_parent). It is safe to give: a mount that does not own a directory
// caches nothing of it (its kernel keeps nothing, its client asks the MDS), so nobody
// holds anything the new owner's changes could make stale, and the next touch by
// another mount recalls it as above. What it costs is the recall, so a directory that
// was recalled is not given that way again for kContested: two mounts working in one
// directory share it instead of passing it back and forth.
//
// Owned by the MdsService on its I/O thread; no locking.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/proto/mds.pb.h"
#include "common/rpc/completion.h"
#include "mds/service/exclusive_cache.h"

namespace dfs::mds {

class DirRights {
 public:
  // As ExclusiveCache's: a notice to the session's connection, and the eviction of an
  // owner that did not answer a recall in time.
  using SendFn = ExclusiveCache::SendFn;
  using EvictFn = ExclusiveCache::EvictFn;
  // The next notice sequence number (shared with ExclusiveCache: one order per session).
  using SeqFn = std::function<uint64_t()>;

  // Most directories one session may own; a creation past it is not owned (the client
  // keeps a lower bound of its own, so that its prediction of a deferred mkdir holds).
  static constexpr size_t kMaxOwnedPerSession = 1u << 16;
  // How long a recalled directory is not given to a mount asking for an existing one.
  static constexpr Duration kContested{300'000};

  using NowFn = ExclusiveCache::NowFn;

  DirRights(asio::any_io_executor executor, Duration recall_timeout, SendFn send, EvictFn evict,
            SeqFn next_seq, NowFn now = [] { return Clock::now(); });

  // `client` created `dir` and asked to own it. False (not owned) past the bound.
  bool created(const std::string& client, uint64_t dir);
  // `client` asked to own `dir`, an existing directory it is about to create in. True
  // when it owns it now: nobody owns it, it was not recalled within kContested, and
  // `client` is under the bound (or owns it already).
  bool claimed_existing(const std::string& client, uint64_t dir);
  // `client`'s create in `dir` failed after claimed_existing() gave it `dir`: it goes
  // back, unless a recall of it is under way already (its acknowledgement ends that).
  void give_back(const std::string& client, uint64_t dir);
  bool owns(const std::string& client, uint64_t dir) const;
  // After a takeover: what `client` owned under the previous instance. Directories
  // another session owns here already stay with it.
  void reasserted(const std::string& client, const std::vector<uint64_t>& dirs);
  // `dir` was removed.
  void removed(uint64_t dir);
  // Whether any session but `client` owns anything: the cheap test before claims.
  bool others_own_any(const std::string& client) const;
  // Whether one of `inos` is owned by a session other than `client`.
  bool conflicts(const std::string& client, const std::vector<uint64_t>& inos) const;
  // Recalls the ones of `inos` other sessions own and waits until their owners have
  // acknowledged or were evicted (or this replica stopped serving: clear()). `reason`
  // goes to the owner and the log.
  awaitable<void> claim(const std::string& client, std::vector<uint64_t> inos,
                        std::string reason);
  // The client acknowledged the recall `seq`: it no longer caches those directories.
  void acknowledged(const std::string& client, uint64_t seq);
  // The session ended (closed, expired, evicted): what it owned is shared.
  void ended(const std::string& client);
  // Every second: resends unanswered recalls and evicts owners past the recall timeout.
  void tick(Clock::time_point now);
  // This replica stops serving: waiters go on and everything is forgotten.
  void clear();

  size_t owned_by(const std::string& client) const;
  // The newest recall of `client` not yet acknowledged (0: none), for its renewals.
  uint64_t pending_recall(const std::string& client) const;
  // When the oldest recall of `client` not yet acknowledged is due.
  std::optional<Clock::time_point> recall_due(const std::string& client) const;

 private:
  struct Owned {
    std::string owner;
    uint64_t recall_seq = 0;  // a recall of it is under way
  };
  struct Recall {
    uint64_t seq = 0;
    std::vector<uint64_t> dirs;
    Clock::time_point started;
    Clock::time_point last_sent;
    std::string reason;
    bool evicting = false;
  };
  void start_recall(const std::string& owner, std::vector<uint64_t> dirs, std::string reason);
  void send(const std::string& owner, Recall& recall);
  void disown(std::unordered_map<uint64_t, Owned>::iterator it);

  Duration recall_timeout_;
  SendFn send_;
  EvictFn evict_;
  SeqFn next_seq_;
  NowFn now_;
  std::unordered_map<uint64_t, Owned> owners_;
  std::unordered_map<std::string, size_t> counts_;        // directories owned, per session
  std::map<std::string, std::vector<Recall>> recalls_;    // per owner, oldest first
  // When each directory was last recalled; forgotten after kContested (tick).
  std::unordered_map<uint64_t, Clock::time_point> recalled_at_;
  asio::steady_timer changed_;  // cancelled to wake every waiting claim()
  uint64_t generation_ = 0;     // bumped by clear(): waiters of before give up
};

}  // namespace dfs::mds
