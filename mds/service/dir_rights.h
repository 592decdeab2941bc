// DirRights: the directories each client session owns (docs/capabilities.md, "Directory
// rights"), and the files it owns by themselves ("File rights": given at an open when no
// other session has the file open, or at the create of a file in a directory the mount
// does not own; recalled, bounded and re-asserted as directories are, Kind::kFile), and
// the files sessions read through their page cache ("Read shares": any number of
// sessions share a file nobody changes; a change recalls every share first). A share and
// an ownership of one file never coexist, nor do the shares of two sessions with an
// ownership; each counts toward its holder's bound and goes back as an owned inode does.
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
  // How long a recalled inode is not shared with a lookup or getattr: mounts that keep
  // changing what others look at would otherwise wait for a recall at every change.
  static constexpr Duration kShareHoldOff{2'000};

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
  // Whether a touch recalled `ino` from its owner, or a change its shares, within
  // `within`.
  bool recalled_within(uint64_t ino, Duration within) const;
  // After a takeover: what `client` owned and shared under the previous instance.
  // Inodes another session owns here already stay with it; so do files others share,
  // which `client` does not own then, and files owned here, which it does not share.
  void reasserted(const std::string& client, const std::vector<uint64_t>& dirs,
                  const std::vector<uint64_t>& files, const std::vector<uint64_t>& read_files);
  // `dir` was removed (a directory, or a file with no name and no open): nobody owns or
  // shares it.
  void removed(uint64_t dir);
  // Whether any session but `client` owns anything (read shares aside): the cheap test
  // before claims.
  bool others_own_any(const std::string& client) const;
  // Whether one of `inos` is owned by a session other than `client`.
  bool conflicts(const std::string& client, const std::vector<uint64_t>& inos) const;

  // ---- Read shares ----
  // `client` opens `file` read-only and asks to keep its pages across opens. True when
  // it shares it now (or did already): nobody owns the file, and no recall of
  // `client`'s share is under way. The caller checked that nothing changes the file
  // (no change in flight, every other session with it open shares it). As created()
  // for the bound.
  bool shared(const std::string& client, uint64_t file);
  bool shares(const std::string& client, uint64_t file) const;
  // Whether a session other than `client` shares `file`.
  bool shared_by_others(const std::string& client, uint64_t file) const;
  // `client` changes `file` itself: its own share goes without a recall (the client
  // gave it up before asking).
  void unshare(const std::string& client, uint64_t file);
  // Recalls the shares of `inos` that sessions other than `client` hold and waits until
  // each acknowledged or was evicted (or this replica stopped serving: clear()).
  awaitable<void> claim_shares(const std::string& client, std::vector<uint64_t> inos,
                               std::string reason);

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

  // What `client` owns, recalled or not: everything, and the files among it; and the
  // files it shares.
  size_t owned_by(const std::string& client) const;
  size_t files_owned_by(const std::string& client) const;
  size_t shared_by(const std::string& client) const;
  // What `client` owns or shares and is not being recalled: at most max_per_session().
  size_t kept_by(const std::string& client) const;
  size_t max_per_session() const { return max_per_session_; }
  // The newest recall of `client` not yet acknowledged (0: none), for its renewals.
  uint64_t pending_recall(const std::string& client) const;
  // When the oldest recall of `client` not yet acknowledged is due.
  std::optional<Clock::time_point> recall_due(const std::string& client) const;

 private:
  // What one session holds of one inode: owned, or a read share.
  struct Holding {
    uint64_t recall_seq = 0;  // a recall of it is under way
    std::list<uint64_t>::iterator in_lru;  // its place in the holder's lru while not recalled
  };
  struct Owned : Holding {
    std::string owner;
    Kind kind = Kind::kDirectory;
  };
  struct Holder {
    size_t owned = 0;          // recalled or not
    size_t files = 0;          // of them
    size_t shared = 0;         // read shares, recalled or not
    std::list<uint64_t> lru;   // held and not being recalled, least recently used first
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
  // them (recalled_at_), rather than the bound or a change that recalls shares.
  void start_recall(const std::string& owner, std::vector<uint64_t> dirs, std::string reason,
                    bool contested = true);
  // Recalls the least recently used of `owner`'s directories past the bound.
  void trim(const std::string& owner);
  void send(const std::string& owner, Recall& recall);
  void disown(std::unordered_map<uint64_t, Owned>::iterator it);
  // What `holder` holds of `ino` (owned or shared); null: nothing.
  Holding* holding(const std::string& holder, uint64_t ino);
  // `holder`'s share of `file` goes (it must hold one).
  void drop_share(const std::string& holder, uint64_t file);
  // A holder with nothing left is forgotten.
  void forget_if_empty(std::unordered_map<std::string, Holder>::iterator holder);

  Duration recall_timeout_;
  size_t max_per_session_;
  SendFn send_;
  EvictFn evict_;
  SeqFn next_seq_;
  NowFn now_;
  std::unordered_map<uint64_t, Owned> owners_;
  std::unordered_map<uint64_t, std::unordered_map<std::string, Holding>> shares_;  // by file
  std::unordered_map<std::string, Holder> holders_;       // sessions that own or share anything
  std::map<std::string, std::vector<Recall>> recalls_;    // per owner, oldest first
  // When each directory was last recalled; forgotten after kContested (tick).
  std::unordered_map<uint64_t, Clock::time_point> recalled_at_;
  // Inodes whose shares a change recalled, and when (kShareHoldOff). Not contested: the
  // mount that changes a file may be given it, and another's next look recalls it.
  std::unordered_map<uint64_t, Clock::time_point> shares_recalled_at_;
  asio::steady_timer changed_;  // cancelled to wake every waiting claim()
  uint64_t generation_ = 0;     // bumped by clear(): waiters of before give up
};

}  // namespace dfs::mds
