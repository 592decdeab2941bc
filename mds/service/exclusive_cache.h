// ExclusiveCache: which mount may cache and defer alone (docs/capabilities.md,
// "Exclusive caching"). A mount that wants it (SessionRequest.wants_cache) gets it while
// it is the only such session; a second one's session open recalls it from the holder
// (kMdsCacheRights), which pushes what it deferred and buffered, drops what it cached and
// acknowledges (kMdsCacheAck); only then is the newcomer answered, so everything it
// reads already includes the holder's changes. A holder that does not acknowledge
// within the recall timeout is evicted (the owner's EvictFn), which also ends the wait.
// When one wanting session is left, it is granted the right again (a pushed notice).
// After a takeover nothing is granted for a grace period except to a session that held
// the right under the previous instance and re-asserts it.
//
// This is the whole file system as one grant: the per-inode rights of common/caps are
// the refinement. Owned by the MdsService on its I/O thread; no locking.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "common/proto/mds.pb.h"
#include "common/rpc/completion.h"
#include "common/util/wall_clock.h"

namespace dfs::mds {

class ExclusiveCache {
 public:
  // Sends a notice to the session's connection; false when it has none open.
  using SendFn = std::function<bool(const std::string& client, const proto::CacheRightsNotice&)>;
  // Evicts (and fences) a holder that did not answer a recall in time.
  using EvictFn = std::function<void(const std::string& client, const std::string& reason)>;
  // The time (the steady clock; a simulation gives its own), and the wall clock's
  // milliseconds, which sequence numbers start from.
  using NowFn = std::function<Clock::time_point()>;
  using WallMsFn = std::function<uint64_t()>;

  ExclusiveCache(asio::any_io_executor executor, Duration recall_timeout, SendFn send,
                 EvictFn evict, NowFn now = [] { return Clock::now(); },
                 WallMsFn wall_ms = wall_clock_ms);

  struct Answer {
    bool exclusive = false;
    uint64_t seq = 0;
  };
  // A session opened (or re-opened on a new connection). `wants`: it caches when alone
  // (a mount with cache=shared does not, and still recalls the right and keeps it from
  // being granted while it is there); `claims`: it held the right under the previous MDS
  // instance. Waits until no other session holds the right (recalling it), then answers
  // whether this one holds it now.
  awaitable<Answer> open(const std::string& client, bool wants, bool claims);
  // The client acknowledged the recall `seq`: it no longer caches.
  void acknowledged(const std::string& client, uint64_t seq);
  // The session ended (closed, expired, evicted): its right and want go.
  void ended(const std::string& client);
  // Every second: resends unanswered recalls, evicts holders past the recall timeout,
  // and grants the right to a session left alone once a grace period is over.
  void tick(Clock::time_point now);
  // After a takeover or start: until `grace` has passed, only re-asserted rights count.
  void begin_grace(Clock::time_point now, Duration grace);
  // Every session of the previous instance is back (or evicted): the grace ends now, and
  // a session left alone is granted the right.
  void end_grace(Clock::time_point now);
  // Returns once no session other than `client` holds the right while `client` wants it
  // (at once in the usual case). That happens only after a takeover: a mount that
  // re-asserts the right after others opened their sessions holds it until it has pushed
  // what it deferred, and their requests must not read the state it changes meanwhile.
  // Checked first, so that the usual request awaits nothing.
  awaitable<void> given_up_for(const std::string& client);
  // Whether given_up_for(client) would wait now: another session holds the right while
  // `client`, a session of its own, works beside it.
  bool held_by_other_than(const std::string& client) const;
  // This replica stops serving: waiters are answered "shared" and everything is forgotten.
  void clear();

  const std::optional<std::string>& holder() const { return holder_; }
  // When `client` must have answered the recall under way to it (it holds the right).
  std::optional<Clock::time_point> recall_due(const std::string& client) const {
    if (!recall_ || holder_ != client) return std::nullopt;
    return recall_->started + recall_timeout_;
  }
  bool recalling() const { return recall_.has_value(); }
  // The newest grant's or recall's sequence number.
  uint64_t seq() const { return seq_; }
  // A new sequence number for another kind of notice (DirRights): one order per session.
  uint64_t issue_seq() { return next_seq(); }

 private:
  struct Recall {
    uint64_t seq = 0;
    Clock::time_point started;
    Clock::time_point last_sent;
    std::string reason;
  };
  // Recalls the right from its holder (unless a recall is under way) and waits until no
  // session other than `client` holds it. False when this replica stopped serving
  // meanwhile (clear()).
  awaitable<bool> recall_for(const std::string& client, const std::string& reason);
  void start_recall(const std::string& reason, Clock::time_point now);
  void send_recall();
  // Grants the right to the only wanting session, if that is the situation.
  void grant_if_alone(Clock::time_point now);
  // One session wants the right and no mount works without it.
  bool alone() const { return wanting_.size() == 1 && sharing_.empty(); }
  void wake_waiters();
  uint64_t next_seq() { return ++seq_; }
  uint64_t seq_base() const { return wall_ms_() << 16; }

  Duration recall_timeout_;
  SendFn send_;
  EvictFn evict_;
  NowFn now_;
  WallMsFn wall_ms_;
  std::set<std::string> wanting_;
  std::set<std::string> sharing_;  // mounts that never cache (cache=shared)
  std::optional<std::string> holder_;
  std::optional<Recall> recall_;
  bool evicting_holder_ = false;
  Clock::time_point grace_until_{};
  // Sequence numbers start from the wall clock (milliseconds, shifted) so that a new
  // instance's notices order after the previous instance's.
  uint64_t seq_;
  asio::steady_timer changed_;  // cancelled to wake every waiting open()
  uint64_t generation_ = 0;     // bumped by clear(): waiters of before give up
};

}  // namespace dfs::mds
