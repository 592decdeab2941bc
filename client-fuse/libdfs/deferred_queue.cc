#include "client-fuse/libdfs/deferred_queue.h"

#include <iterator>

namespace dfs::client {

DeferredQueue::DeferredQueue(asio::any_io_executor executor) : answered_(std::move(executor)) {
  answered_.expires_at(asio::steady_timer::time_point::max());
}

void DeferredQueue::predict(DeferredOp op) {
  op.state = DeferredState::kPredicted;
  predicted_.push_back(std::move(op));
}

std::vector<DeferredOp> DeferredQueue::take() {
  std::vector<DeferredOp> ops(std::make_move_iterator(predicted_.begin()),
                              std::make_move_iterator(predicted_.end()));
  predicted_.clear();
  returned_ = 0;
  if (late_source_) {
    for (auto& op : late_source_()) ops.push_back(std::move(op));
  }
  for (auto& op : ops) op.state = DeferredState::kSent;
  return ops;
}

void DeferredQueue::batch_answered() {
  if (--batches_in_flight_ == 0) answered_.cancel();
}

awaitable<void> DeferredQueue::batches_answered() {
  while (batches_in_flight_ > 0) co_await answered_.async_wait(use_awaitable_tuple);
}

void DeferredQueue::returned(std::vector<DeferredOp> ops) {
  for (auto& op : ops) op.state = DeferredState::kPredicted;
  // Ahead of what was predicted since, behind what came back before them.
  predicted_.insert(predicted_.begin() + static_cast<std::ptrdiff_t>(returned_),
                    std::make_move_iterator(ops.begin()), std::make_move_iterator(ops.end()));
  returned_ += ops.size();
}

void DeferredQueue::finish(DeferredOp& op, Result<rpc::Frame> outcome) {
  if (outcome) {
    op.state = DeferredState::kSettled;
    ++settled_;
  } else {
    op.state = DeferredState::kFailed;
    ++failed_;
  }
  auto done = std::move(op.done);
  op.done = nullptr;
  if (done) done(std::move(outcome));
}

size_t DeferredQueue::fail_all(const Error& error) {
  auto ops = take();
  for (auto& op : ops) finish(op, error);
  return ops.size();
}

}  // namespace dfs::client
