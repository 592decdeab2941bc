// DeferredQueue: the mutations this mount answered from its own prediction (deferred
// creates, renames, unlinks, attribute changes, data pushes) until the MDS answers them,
// in the order the mount answered them (docs/architecture.md, "Deferred changes").
//
// Each is a value, DeferredOp, in one of four states:
//   kPredicted  answered to the kernel, waiting here to be sent; also one whose batch
//               could not reach the MDS (op_timeout passed), back here ahead of every
//               op predicted after it. The mount answered for it, so the MDS being
//               away never drops it; a resend of one the MDS did apply is deduplicated
//               by its request id;
//   kSent       taken out to go in a batch, not answered yet;
//   kSettled    the MDS applied it: `done` has its reply;
//   kFailed     the MDS refused it, or it was made under a session that got evicted:
//               `done` has the error.
// `done` runs once, when the op settles or fails (an op still queued when the queue is
// destroyed never hears: the mount is going away).
//
// Order: take() hands out everything predicted, oldest first, with what the late source
// holds (changes the owner still merges, e.g. attribute changes, sealed by the take)
// after it. The session sends what one take() returned before it takes again, and
// waits for every batch in flight first (batches_answered()): the MDS answers a batch
// once its items are applied, so it applies the mount's changes in the order they were
// made and a later read sees them all (a read none of them can affect may pass them:
// pending_touches.h).
//
// Owned by the MdsSession on its I/O thread; the owner of the predictions (FileClient)
// adds to it. Pure state but for the wake-up of batches_answered().
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "common/rpc/asio.h"
#include "common/rpc/frame.h"
#include "common/status/status.h"

namespace dfs::client {

enum class DeferredState { kPredicted, kSent, kSettled, kFailed };

struct DeferredOp {
  uint32_t method = 0;
  std::string body;  // the request, stamped with its request id
  std::function<void(Result<rpc::Frame>)> done;
  DeferredState state = DeferredState::kPredicted;
};

class DeferredQueue {
 public:
  explicit DeferredQueue(asio::any_io_executor executor);

  // A change the mount has answered: last in order. Requires: op.done is set.
  void predict(DeferredOp op);
  // Changes the owner keeps merging until they are sent (each take() seals them): their
  // ops come after the queue's own. Returned ops must be kPredicted.
  void set_late_source(std::function<std::vector<DeferredOp>()> source) {
    late_source_ = std::move(source);
  }

  // Every predicted op, in order, now kSent; the caller sends them in that order.
  std::vector<DeferredOp> take();
  // A batch carrying deferred ops goes out / was answered (settled, failed or returned).
  void batch_sent() { ++batches_in_flight_; }
  void batch_answered();
  // Waits until no batch carrying deferred ops is in flight.
  awaitable<void> batches_answered();

  // A batch did not reach the MDS: its ops (`ops`, in order, kSent) are predicted again,
  // ahead of everything predicted since.
  void returned(std::vector<DeferredOp> ops);
  // `op`'s outcome: kSettled with a reply, kFailed with an error; `done` hears it.
  void finish(DeferredOp& op, Result<rpc::Frame> outcome);
  // Every predicted op fails with `error` (the session they were made under was
  // evicted), the late source's included. Returns how many.
  size_t fail_all(const Error& error);

  // Predicted and not sent yet (the late source's not counted).
  size_t predicted() const { return predicted_.size(); }
  // Of them, those that were sent once and came back (the MDS was away).
  size_t returned_count() const { return returned_; }
  // Anything predicted or in flight.
  bool pending() const { return batches_in_flight_ > 0 || !predicted_.empty(); }
  uint64_t settled() const { return settled_; }
  uint64_t failed() const { return failed_; }

 private:
  std::deque<DeferredOp> predicted_;
  size_t returned_ = 0;  // the first returned_ of predicted_ came back from a batch
  std::function<std::vector<DeferredOp>()> late_source_;
  int batches_in_flight_ = 0;
  asio::steady_timer answered_;  // cancelled when batches_in_flight_ drops to 0
  uint64_t settled_ = 0;
  uint64_t failed_ = 0;
};

}  // namespace dfs::client
