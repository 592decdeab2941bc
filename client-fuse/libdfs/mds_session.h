// MdsSession: libdfs's link to the metadata server. It finds rank 0 in the cluster
// map (and follows it to a new address), opens the client session on every new
// connection, stamps each request with the caller's credentials and, for a mutation, a
// request id (client entity, seq) that stays the same across resends, so the MDS,
// which deduplicates by it, applies the mutation once even when a connection was lost
// with its outcome unknown. Deferred mutations (DeferredQueue: what the owner answered
// from its predictions) travel ahead of the next call in one kMdsBatch, so the MDS
// applies them first, at no extra round trip.
//
// Early replies: every request says the mount keeps its mutations (kFlagMayReplyEarly),
// so a replicated rank answers them once logged on its leader, before a majority has
// them (kFlagRepliedEarly). Such a mutation is kept until a kMdsSync sent after its
// reply is answered (a background round while any are kept, or the owner's fsync),
// and on every new session, before any other request goes there, the kept ones are
// sent again in their order with their request ids: the next leader answers those it
// has from its remembered replies and applies the others.
// Runs on the ObjectClient's I/O thread: call only there.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client-fuse/libdfs/creds.h"
#include "client-fuse/libdfs/deferred_queue.h"
#include "client-fuse/libdfs/in_flight_calls.h"
#include "client-fuse/libdfs/object_client.h"
#include "common/proto/mds.pb.h"
#include "common/rpc/connection.h"
#include "common/rpc/methods.h"

namespace dfs::client {

class MdsSession {
 public:
  // `objects` provides the map, the messenger and the timeouts (op_timeout bounds
  // every call, retries included; attempt_timeout one try).
  explicit MdsSession(ObjectClient& objects);

  // Opens the session, waiting up to `timeout` for an MDS to appear in the map.
  // Errors: kUnavailable, kTimeout, or the MDS's own error.
  awaitable<Result<proto::SessionReply>> open(Duration timeout);
  // The last session reply: root inode, default layout, inline threshold.
  const proto::SessionReply& session() const { return session_; }

  // Sends `request` (whose `header` this fills in) and parses the reply as `Resp`.
  // `mutating` requests get a fresh request id, kept across resends. Retryable
  // failures (no MDS in the map, connection lost or refused, timeouts) are retried
  // until op_timeout. Errors: the MDS's error codes; kTimeout / kUnavailable when the
  // MDS could not be reached in time (the caller maps them to EIO).
  template <class Resp, class Req>
  awaitable<Result<Resp>> call(uint32_t method, Req request, const Creds& creds, bool mutating) {
    stamp(request, creds, mutating);
    note_direct_change(method, mutating);
    note_started(method, mutating);
    InFlightCalls::Running running(calls_);
    MutationRunning counted(mutations_running_, mutating);
    auto frame = co_await call_raw(method, request.SerializeAsString());
    note_direct_change(method, mutating, frame);
    if (!frame) co_return unexpected(std::move(frame).error());
    co_return rpc::parse_body<Resp>(frame->body);
  }

  // A right granted in a reply holds for the answers to calls started after that reply
  // arrived (InFlightCalls): take answers_mark() when it arrives, and cache under the
  // right once answers_settled(mark) has ended. Lock waits (call_unbounded) and
  // display-only questions (call_brief) are not counted: their answers cache nothing.
  uint64_t answers_mark() const { return calls_.mark(); }
  // Calls running now (call() and call_alone()).
  size_t calls_running() const { return calls_.running(); }
  awaitable<void> answers_settled(uint64_t mark) { return calls_.settled(mark); }

  // `request` goes at once, alone, passing the deferred changes queued or in flight.
  // For three callers only:
  //   - the on_new_instance hook. It runs inside the connection attempt of a call that
  //     may be a batch of deferred changes; waiting for that batch would deadlock, and
  //     carrying changes deferred after it, or letting any other mutating call pass it
  //     while the hook runs, would reorder them (a rename whose file's create was in
  //     that batch failed with "no entry" after a failover);
  //   - a read none of those changes can affect (FileClient::readdir_ahead_of_deferred and
  //     FileClient::mds_inode_shared);
  //   - the acknowledgement of a recall whose give-up pushed nothing
  //     (FileClient::acknowledge): none of those changes was made under what it gives up.
  template <class Resp, class Req>
  awaitable<Result<Resp>> call_alone(uint32_t method, Req request, const Creds& creds,
                                     bool mutating) {
    stamp(request, creds, mutating);
    note_direct_change(method, mutating);
    note_started(method, mutating);
    InFlightCalls::Running running(calls_);
    MutationRunning counted(mutations_running_, mutating);
    auto frame = co_await call_with_retries(method, request.SerializeAsString());
    note_direct_change(method, mutating, frame);
    if (!frame) co_return unexpected(std::move(frame).error());
    co_return rpc::parse_body<Resp>(frame->body);
  }

  // A read-only question asked for display (statfs), sent alone and given up after
  // `timeout` instead of op_timeout: `df`, and umount(8)'s statfs of the mount point, must
  // not wait a minute on an unreachable MDS. It may pass deferred changes: its answer
  // (counts) does not depend on them in any way that matters.
  template <class Resp, class Req>
  awaitable<Result<Resp>> call_brief(uint32_t method, Req request, const Creds& creds,
                                     Duration timeout) {
    stamp(request, creds, false);
    DFS_CO_AWAIT_TRY(auto frame, call_with_retries(method, request.SerializeAsString(), timeout));
    co_return rpc::parse_body<Resp>(frame.body);
  }

  // A request that may wait at the MDS as long as it takes (a lock wait): no op_timeout,
  // resent as it is after a lost connection or an MDS failover until answered, so it
  // must be idempotent. Errors: the MDS's, kFenced (the session was evicted meanwhile).
  template <class Resp, class Req>
  awaitable<Result<Resp>> call_unbounded(uint32_t method, Req request, const Creds& creds) {
    stamp(request, creds, false);
    DFS_CO_AWAIT_TRY(auto frame, call_until_answered(method, request.SerializeAsString()));
    co_return rpc::parse_body<Resp>(frame.body);
  }

  // A mutation the owner has already answered for (a deferred create, attribute
  // change...): its request, serialized with a fresh request id, and what to do with
  // its outcome. It goes into deferred_queue() (or the queue's late source).
  template <class Req>
  DeferredOp deferred(uint32_t method, Req request, const Creds& creds,
                      std::function<void(Result<rpc::Frame>)> done) {
    stamp(request, creds, true);
    note_started(method, true);
    return DeferredOp{method, request.SerializeAsString(), std::move(done)};
  }
  // What the mount answered and the MDS has not: every call first sends what is
  // predicted there, in order, in one batch with the call.
  DeferredQueue& deferred_queue() { return deferred_; }
  const DeferredQueue& deferred_queue() const { return deferred_; }
  // Sends whatever is deferred now (the owner's timer, sync), and waits for it.
  awaitable<void> flush_deferred();

  // Caching rights (docs/capabilities.md): whether every session open asks for them,
  // what this mount holds now (exclusive caching, owned directories: `claims` fills
  // them into each session open, which re-asserts them to a new MDS instance), and who
  // hears each session reply (which grants or withholds exclusive caching).
  void set_wants_cache(bool wants) { wants_cache_ = wants; }
  void set_cache_claims(std::function<void(proto::SessionRequest&)> claims) {
    cache_claims_ = std::move(claims);
  }
  void on_session_reply(std::function<void(const proto::SessionReply&)> hook) {
    on_session_reply_ = std::move(hook);
  }
  // Ends the session at the MDS now (unmount), instead of letting it expire: a mount
  // left alone gets exclusive caching back at once. Best effort, bounded by `timeout`.
  awaitable<void> close(Duration timeout);

  // Called (and awaited) when a session opens on an MDS instance other than the one
  // before (it restarted and lost its in-memory open counts): the owner re-sends
  // kMdsOpen for every file it holds open (call_alone), within the reclaim grace period.
  void on_new_instance(std::function<awaitable<void>()> hook) {
    on_new_instance_ = std::move(hook);
  }

  // Moves when a mutation sent as a call of its own that may change what a listing or
  // an inode's attributes show starts and when its call is answered or fails. Opens,
  // releases and inode range grants change nothing shown and do not count; deferred
  // changes do not either (the owner answered those, so it knows what they reach). A
  // value that has not moved says no such call started or finished in between.
  uint64_t direct_visible_changes() const { return direct_visible_changes_; }
  // Moves only when such a change starts (a call going out, a change deferred), not at
  // answers: a value that has not moved says no such change started in between.
  uint64_t changes_started() const { return changes_started_; }
  // Mutating calls (call() and call_alone()) running now; deferred changes, which every
  // call waits for or carries, are not counted.
  size_t mutations_running() const { return mutations_running_; }
  // Moves when a change of names (a create, link, unlink or rename) sent as a call of
  // its own starts and when it ends; the deferred ones are left out (the owner answered
  // those already, so it knows their effect).
  uint64_t direct_changes() const { return direct_changes_; }
  // Changes a listing could show (of names, attributes, xattrs, data) whose call ended
  // without an answer (the MDS could not be reached within op_timeout): the MDS may
  // apply them still, at any later moment.
  uint64_t uncertain_changes() const { return uncertain_changes_; }

  // The session's lease: renewed every quarter of the MDS's session timeout from open()
  // on. Called (on the I/O thread) when the MDS or an OSD says this client was evicted
  // and fenced: the owner fails what it had not written and takes a new entity
  // (ObjectClient::take_new_entity), under which the next call opens a new session.
  void on_fenced(std::function<void(const Error&)> hook) { on_fenced_ = std::move(hook); }

  // The session's lease as this client counts it: three quarters of the MDS's session
  // timeout from the sending of the last session open or renewal that the MDS answered.
  // The MDS evicts a session for silence only once the whole timeout has passed since a
  // renewal arrived, which is after it was sent: while the lease lasts, this session has
  // not been evicted for silence, and a right the MDS granted it is still its own. The
  // quarter left over covers clocks that run at slightly different rates. max() when the
  // MDS sets no session timeout.
  Clock::time_point lease_expires() const { return lease_expires_; }
  // Called (on the I/O thread) with every answered renewal.
  void on_renewed(std::function<void(const proto::RenewReply&)> hook) {
    on_renewed_ = std::move(hook);
  }

  // Number of calls that were resent after a failed attempt (for tests and logs).
  uint64_t resends() const { return resends_; }
  // Mutations answered early, those still kept (not known safe yet), and those sent
  // again on a new session (for tests and logs).
  uint64_t early_replies() const { return early_replies_; }
  size_t unsafe_kept() const { return unsafe_.size(); }
  uint64_t unsafe_resent() const { return unsafe_resent_; }

  // Calls and their total latency per method, for the log at unmount.
  struct MethodStats {
    uint64_t calls = 0;
    std::chrono::microseconds total{0};
  };
  const std::map<uint32_t, MethodStats>& stats() const { return stats_; }
  std::string stats_summary() const;
  // Deferred changes sent, and the batches that carried them (also with a call).
  uint64_t deferred_sent() const { return deferred_sent_; }
  uint64_t batches_sent() const { return batches_sent_; }
  // Deferred changes the MDS sent back from a batch and that went again alone.
  uint64_t deferred_sent_back() const { return deferred_sent_back_; }

 private:
  template <class Req>
  void stamp(Req& request, const Creds& creds, bool mutating) {
    auto* header = request.mutable_header();
    creds.to_proto(header->mutable_creds());
    if (mutating) {
      header->mutable_reqid()->set_client(objects_.entity());
      header->mutable_reqid()->set_seq(next_seq_++);
    }
  }
  static bool shows_in_listings(uint32_t method) {
    return method != rpc::kMdsOpen && method != rpc::kMdsRelease && method != rpc::kMdsAllocInos;
  }
  void note_started(uint32_t method, bool mutating) {
    if (mutating && shows_in_listings(method)) ++changes_started_;
  }
  // Counts a mutating call as running for its scope.
  class MutationRunning {
   public:
    MutationRunning(size_t& running, bool mutating) : running_(mutating ? &running : nullptr) {
      if (running_) ++*running_;
    }
    ~MutationRunning() {
      if (running_) --*running_;
    }
    MutationRunning(const MutationRunning&) = delete;
    MutationRunning& operator=(const MutationRunning&) = delete;

   private:
    size_t* running_;
  };
  static bool changes_names(uint32_t method) {
    return method == rpc::kMdsMknod || method == rpc::kMdsSymlink || method == rpc::kMdsLink ||
           method == rpc::kMdsUnlink || method == rpc::kMdsRename;
  }
  void note_direct_change(uint32_t method, bool mutating) {
    if (mutating && changes_names(method)) ++direct_changes_;
    if (mutating && shows_in_listings(method)) ++direct_visible_changes_;
  }
  void note_direct_change(uint32_t method, bool mutating, const Result<rpc::Frame>& outcome) {
    note_direct_change(method, mutating);
    if (mutating && shows_in_listings(method) && !outcome &&
        is_retryable(outcome.error().code())) {
      ++uncertain_changes_;
    }
  }
  awaitable<Result<rpc::Frame>> call_raw(uint32_t method, std::string body);
  // Sends `items` in order as kMdsBatch requests and hands each deferred one its
  // outcome (deferred_); the result of the item without a `done` (call_raw's own
  // request) is returned.
  awaitable<Result<rpc::Frame>> call_batch(std::vector<DeferredOp> items);
  // The deferred items of `items` from `first` on that `reply` (their batch's) says the
  // MDS sent back go again one by one, alone; their results in `reply` become those.
  // Errors: a retryable one (the MDS unreachable until op_timeout) that stopped it.
  awaitable<Status> resend_sent_back(std::vector<DeferredOp>& items, size_t first,
                                     proto::BatchReply& reply);
  // Retries until `timeout` (default: op_timeout) has passed, giving each attempt
  // `attempt_timeout` (default: the client's attempt_timeout).
  awaitable<Result<rpc::Frame>> call_with_retries(
      uint32_t method, std::string body, std::optional<Duration> timeout = std::nullopt,
      std::optional<Duration> attempt_timeout = std::nullopt);
  awaitable<Result<rpc::Frame>> call_until_answered(uint32_t method, std::string body);
  // A mutation answered early, kept until it is known safe.
  struct UnsafeRequest {
    uint64_t number;  // in the order kept
    uint32_t method;
    std::string body;
  };
  // Requests whose effect the MDS may answer for early: the mutations it replays safely
  // with the same outcome. Opens and releases are not kept (a new instance has the open
  // files re-sent: on_new_instance), nor inode range grants (never answered early).
  static bool kept_if_early(uint32_t method);
  // Keeps `body` when `reply` says it was answered early.
  void keep_if_early(uint32_t method, const std::string& body, const rpc::Frame& reply);
  // Everything kept up to `number` is safe (a kMdsSync sent after it was answered).
  void forget_safe(uint64_t number);
  // While mutations are kept: a kMdsSync every kSafetyInterval, which makes them safe.
  awaitable<void> safety_loop(std::weak_ptr<bool> alive);
  // Sends the kept mutations on `conn`, a new session, in order. Errors: a retryable one
  // (they stay kept and go again on the next session).
  awaitable<Status> resend_unsafe(const rpc::ConnectionPtr& conn, Clock::time_point deadline);
  // The connection to rank 0 with a session open on it. Errors: retryable ones.
  awaitable<Result<rpc::ConnectionPtr>> session_connection(Clock::time_point deadline);
  // A new map names another active MDS for rank 0 (its leader changed): drop the
  // connection to the old one, so that calls waiting on it are retried at the new one
  // at once rather than after attempt_timeout (a leader cut off from the network never
  // answers, and its socket may not notice for minutes), and renew at once, which opens
  // the session there.
  void follow_rank_move();
  awaitable<void> renew_loop(std::weak_ptr<bool> alive);
  // The MDS answered a session open or renewal sent at `sent`, giving `lease_ms`.
  void extend_lease(Clock::time_point sent, uint64_t lease_ms);
  void report_fenced(const Error& error);

  ObjectClient& objects_;
  proto::SessionReply session_;
  rpc::ConnectionPtr session_conn_;  // the connection the session was opened on
  std::string session_addr_;         // and the MDS address it goes to
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for the map listener
  std::function<awaitable<void>()> on_new_instance_;
  std::function<void(const Error&)> on_fenced_;
  bool wants_cache_ = false;
  std::function<void(proto::SessionRequest&)> cache_claims_;
  std::function<void(const proto::SessionReply&)> on_session_reply_;
  bool renewing_ = false;
  asio::steady_timer renew_wake_;  // the renewal loop's wait; cancelled to renew at once
  Clock::time_point lease_expires_{};
  std::function<void(const proto::RenewReply&)> on_renewed_;
  // Every call waits for the batches of deferred changes in flight before it takes the
  // next ones and goes out: the MDS answers a batch once all its items are applied, so
  // it then applies this client's changes in the order they were made, a read sees
  // every change made before it, and no reply of a later call reaches the owner while
  // an earlier change is unanswered. (A read reaching the MDS while a batch's items were
  // still being replicated did not see them: a just-created name looked up as missing;
  // and a directory's mtime changed by a later mkdir was answered from a prediction
  // made before it.) The one exception is a read that none of those changes can affect
  // (call_alone; FileClient checks PendingTouches): it reads and teaches nothing they
  // change.
  DeferredQueue deferred_;
  InFlightCalls calls_;  // call() and call_alone(): answers that may feed caches
  uint64_t next_seq_ = 1;
  uint64_t resends_ = 0;
  uint64_t direct_visible_changes_ = 0;
  uint64_t changes_started_ = 0;
  size_t mutations_running_ = 0;
  uint64_t direct_changes_ = 0;
  uint64_t uncertain_changes_ = 0;
  std::map<uint32_t, MethodStats> stats_;
  uint64_t deferred_sent_ = 0;
  uint64_t batches_sent_ = 0;
  uint64_t deferred_sent_back_ = 0;
  std::deque<UnsafeRequest> unsafe_;
  uint64_t unsafe_numbered_ = 0;
  bool safety_running_ = false;
  uint64_t early_replies_ = 0;
  uint64_t unsafe_resent_ = 0;
};

}  // namespace dfs::client
