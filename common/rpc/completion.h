// Completion<T>: a value that one party sets and any number of coroutines await, and
// Signal, a wake-up for a background loop. Both live on, and must only be touched
// from, the executor they were made with (a daemon's single I/O thread). Used by the
// MDS's committer and sessions and by raft::RaftGroup (held by shared_ptr there, so a
// waiter outlives a group destroyed with operations pending).
#pragma once

#include <optional>

#include "common/rpc/asio.h"

namespace dfs {

template <class T>
class Completion {
 public:
  explicit Completion(asio::any_io_executor executor) : timer_(std::move(executor)) {
    timer_.expires_at(asio::steady_timer::time_point::max());
  }

  // The first value wins; later calls are ignored (an operation can be failed by a
  // shutdown and completed by a late apply in the same turn).
  void set(T value) {
    if (value_) return;
    value_ = std::move(value);
    // An expired timer also releases waits that start after this point.
    timer_.expires_at(asio::steady_timer::time_point::min());
  }
  bool ready() const { return value_.has_value(); }
  const T& value() const { return *value_; }

  awaitable<T> wait() {
    while (!value_) co_await timer_.async_wait(use_awaitable_tuple);
    co_return *value_;
  }

 private:
  asio::steady_timer timer_;
  std::optional<T> value_;
};

// A wake-up signal for a background loop: notify() ends the current or next wait.
class Signal {
 public:
  explicit Signal(asio::any_io_executor executor) : timer_(std::move(executor)) {}

  void notify() {
    pending_ = true;
    timer_.cancel();
  }
  // Waits for notify() or `timeout`, whichever comes first.
  awaitable<void> wait(Duration timeout) {
    if (!pending_) {
      timer_.expires_after(timeout);
      co_await timer_.async_wait(use_awaitable_tuple);
    }
    pending_ = false;
  }

 private:
  asio::steady_timer timer_;
  bool pending_ = false;
};

}  // namespace dfs
