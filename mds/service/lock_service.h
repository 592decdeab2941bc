// LockService: the MDS's side of flock(2) and fcntl(2) locks for every client at once. It
// owns the cluster-wide lock table (common/locks, LockTable) and the requests waiting in
// it: a waiting request (F_SETLKW, flock without LOCK_NB) is answered when the table
// grants it, when its client cancels it (a signal) or when its session ends. Sessions are
// the MDS's client sessions, numbered by the caller. Volatile: a new active MDS starts
// with an empty table (clients do not re-assert their locks yet). Runs on the MDS's I/O
// thread.
#pragma once

#include <map>
#include <memory>
#include <utility>

#include "common/locks/lock_table.h"
#include "common/proto/mds.pb.h"
#include "common/rpc/asio.h"
#include "common/rpc/completion.h"

namespace dfs::mds {

class LockService {
 public:
  explicit LockService(asio::any_io_executor executor);

  // One kMdsLock request of session `s`. A waiting one returns once it is granted or
  // cancelled; a resend of a waiting one (same wait_id) joins its wait.
  // Errors: kInvalidArgument (bad range, type or op), kUnavailable (failover grace).
  awaitable<Result<proto::LockReply>> lock(locks::SessionId s, const proto::LockRequest& request);
  // Ends the wait `wait_id` of `s` with outcome "cancelled". No-op when it is not waiting
  // (granted meanwhile: the client then holds the lock and unlocks it).
  void cancel(locks::SessionId s, uint64_t wait_id);
  // A close: the owner's locks on the file go (record locks: the lock owner's; flock: the
  // open file's), and what they blocked is woken.
  void release(locks::SessionId s, const proto::LockReleaseRequest& request);
  // The session ended (evicted, expired): its locks and waits go.
  void end_session(locks::SessionId s);

  // This replica became the active MDS: a fresh table, in its re-assertion grace, in
  // which clients re-assert the locks they held (reassert()) and other lock requests
  // are refused with kUnavailable (the client retries).
  void begin_reassert(Duration grace);
  // Every client that held locks under the previous instance re-asserted them (the
  // reconnect phase is over): new lock requests are served from now on.
  void end_reassert();
  // This replica stopped serving: every waiting request ends with kUnavailable, so that
  // its client asks the next active MDS (a failover is not a signal: no EINTR).
  void stop_serving();
  // kMdsLockReassert. Errors: kPermissionDenied (no grace running: the locks are lost).
  Result<proto::LockReassertReply> reassert(locks::SessionId s,
                                            const proto::LockReassertRequest& request);
  size_t waiting() const { return waits_.size(); }

 private:
  struct Wait {
    explicit Wait(asio::any_io_executor ex) : outcome(std::move(ex)) {}
    Completion<uint32_t> outcome;
    locks::SessionId session = 0;
    uint64_t client_id = 0;
  };
  // Answers the requests the table granted since the last call.
  void answer_granted();
  void finish(locks::WaiterId id, uint32_t outcome);

  asio::any_io_executor executor_;
  locks::LockTable table_;
  std::map<locks::WaiterId, std::shared_ptr<Wait>> waits_;
  std::map<std::pair<locks::SessionId, uint64_t>, locks::WaiterId> by_client_id_;
};

}  // namespace dfs::mds
