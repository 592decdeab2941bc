// DirRights: the directories each client session owns (docs/capabilities.md, "Directory
// rights"), and the files it owns by themselves ("File rights": given at an open when no
// other session has the file open, or at the create of a file in a directory the mount
// does not own; recalled, bounded and re-asserted as directories are, Kind::kFile).
// A mount that creates a directory and asks for it (MknodRequest.own) owns it:
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
// What one session owns is bounded (`max_per_session`, [mds] max_dirs_per_client): past
// the bound the least recently used of its directories are recalled, down to 7/8 of it,
// as if another mount had touched them. Used means created, asked for, or created in by
// the owner (the requests the MDS sees; lookups the owner answers itself it does not).
// A creation is never refused for the bound: a mount predicts that the directory it
// creates with `own` is its own (a deferred mkdir), so the MDS grants it and recalls
// older ones instead. What a session owns is thus at most the bound plus the directories
// it creates while a recall is under way, and that recall ends within the recall timeout
// (acknowledged, or the owner evicted).
//
// Owned by the MdsService on its I/O thread; no locking.
#pragma once

#include <functional>
#include <list>
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

  // The default bound on the directories one session owns ([mds] max_dirs_per_client).
  static constexpr size_t kDefaultMaxPerSession = 16384;
  // How long a recalled directory is not given to a mount asking for an existing one.
  static constexpr Duration kContested{300'000};

  using NowFn = ExclusiveCache::NowFn;

  // What is owned: a directory (with the files the owner creates in it, which the MDS
  // does not track), or a file by itself (docs/capabilities.md, "File rights"). Both
  // are recalled alike; the kind is kept for operators (`dfs client ls`).
  enum class Kind { kDirectory, kFile };

  // `max_per_session` must be at least 1.
  DirRights(asio::any_io_executor executor, Duration recall_timeout, size_t max_per_session,
            SendFn send, EvictFn evict, SeqFn next_seq, NowFn now = [] { return Clock::now(); });

  // `client` created `dir` and asked to own it: it does (false only for a directory
  // another session owns, which a new inode never is). May recall `client`'s least
  // recently used directories (the bound).
  bool created(const std::string& client, uint64_t dir, Kind kind = Kind::kDirectory);
  // `client` asked to own `dir`, an existing directory it is about to create in. True
  // when it owns it now: nobody owns it and it was not recalled by another session's
  // touch within kContested (or `client` owns it already). As created() for the bound.
  bool claimed_existing(const std::string& client, uint64_t dir, Kind kind = Kind::kDirectory);
  // `client` created in `dir` (or otherwise used it): if it owns it, it is its most
  // recently used.
  void used(const std::string& client, uint64_t dir);
  // `client`'s create in `dir` failed after claimed_existing() gave it `dir`: it goes
  // back, unless a recall of it is under way already (its acknowledgement ends that).
  void give_back(const std::string& client, uint64_t dir);
  bool owns(const std::string& client, uint64_t dir) const;
  // Whether another session's touch recalled `dir` within kContested: mounts share it.
  bool contested(uint64_t dir) const;
  // After a takeover: what `client` owned under the previous instance. Directories
  // another session owns here already stay with it.
  void reasserted(const std::string& client, const std::vector<uint64_t>& dirs,
                  const std::vector<uint64_t>& files);
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

  // What `client` owns, recalled or not: everything, and the files among it.
  size_t owned_by(const std::string& client) const;
  size_t files_owned_by(const std::string& client) const;
  // What `client` owns and is not being recalled: at most max_per_session().
  size_t kept_by(const std::string& client) const;
  size_t max_per_session() const { return max_per_session_; }
  // The newest recall of `client` not yet acknowledged (0: none), for its renewals.
  uint64_t pending_recall(const std::string& client) const;
  // When the oldest recall of `client` not yet acknowledged is due.
  std::optional<Clock::time_point> recall_due(const std::string& client) const;

 private:
  struct Owned {
    std::string owner;
    Kind kind = Kind::kDirectory;
    uint64_t recall_seq = 0;  // a recall of it is under way
    std::list<uint64_t>::iterator in_lru;  // its place in the owner's lru while not recalled
  };
  struct Holder {
    size_t owned = 0;          // recalled or not
    size_t files = 0;          // of them
    std::list<uint64_t> lru;   // owned and not being recalled, least recently used first
  };
  struct Recall {
    uint64_t seq = 0;
    std::vector<uint64_t> dirs;
    Clock::time_point started;
    Clock::time_point last_sent;
    std::string reason;
    bool evicting = false;
  };
  // `owner`'s `dirs` not under a recall already. `contested`: another session touched
  // them (recalled_at_), rather than the bound.
  void start_recall(const std::string& owner, std::vector<uint64_t> dirs, std::string reason,
                    bool contested = true);
  // Recalls the least recently used of `owner`'s directories past the bound.
  void trim(const std::string& owner);
  void send(const std::string& owner, Recall& recall);
  void disown(std::unordered_map<uint64_t, Owned>::iterator it);

  Duration recall_timeout_;
  size_t max_per_session_;
  SendFn send_;
  EvictFn evict_;
  SeqFn next_seq_;
  NowFn now_;
  std::unordered_map<uint64_t, Owned> owners_;
  std::unordered_map<std::string, Holder> holders_;       // sessions that own anything
  std::map<std::string, std::vector<Recall>> recalls_;    // per owner, oldest first
  // When each directory was last recalled; forgotten after kContested (tick).
  std::unordered_map<uint64_t, Clock::time_point> recalled_at_;
  asio::steady_timer changed_;  // cancelled to wake every waiting claim()
  uint64_t generation_ = 0;     // bumped by clear(): waiters of before give up
};

}  // namespace dfs::mds
