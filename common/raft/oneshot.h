// OneShot<T>: a value that one party sets once and any number of coroutines await.
// Held by shared_ptr so that a waiter survives the object that was going to set it
// (a RaftGroup destroyed with operations pending sets them all before it goes).
// Executor-bound: set and wait only on the executor it was made with.
// TODO(#4): share with mds/service/completion.h once common/ has a home for it.
#pragma once

#include <optional>

#include "common/rpc/asio.h"

namespace dfs::raft {

template <class T>
class OneShot {
 public:
  explicit OneShot(asio::any_io_executor executor) : timer_(std::move(executor)) {
    timer_.expires_at(asio::steady_timer::time_point::max());
  }

  // The first value wins; later calls are ignored (an operation can be failed by
  // shutdown and completed by a late apply in the same turn).
  void set(T value) {
    if (value_) return;
    value_ = std::move(value);
    // An expired timer also releases waits that start after this point.
    timer_.expires_at(asio::steady_timer::time_point::min());
  }
  bool ready() const { return value_.has_value(); }

  awaitable<T> wait() {
    while (!value_) co_await timer_.async_wait(use_awaitable_tuple);
    co_return *value_;
  }

 private:
  asio::steady_timer timer_;
  std::optional<T> value_;
};

}  // namespace dfs::raft
