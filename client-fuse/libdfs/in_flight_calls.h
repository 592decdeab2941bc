// InFlightCalls: the MDS calls running, numbered in the order they started, so that a
// caller can wait until every call started before a given moment has ended. A right
// granted in one reply holds for the answers the MDS computed after granting it, which
// are the answers to the calls started after that reply arrived; answers to calls
// started earlier may predate it and must not be cached under it.
// Owned by the MdsSession on the I/O thread; no locking.
#pragma once

#include <cstdint>
#include <set>

#include "common/rpc/asio.h"

namespace dfs::client {

class InFlightCalls {
 public:
  explicit InFlightCalls(asio::any_io_executor executor) : ended_(std::move(executor)) {
    ended_.expires_at(asio::steady_timer::time_point::max());
  }

  // One call, from its start to its end (the scope of the guard).
  class Running {
   public:
    explicit Running(InFlightCalls& calls) : calls_(calls), id_(calls.begin()) {}
    ~Running() { calls_.end(id_); }
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;

   private:
    InFlightCalls& calls_;
    uint64_t id_;
  };

  // The moment now: calls started from here on are numbered at or above it.
  uint64_t mark() const { return next_; }
  // Ends once no call started before `mark` is running.
  awaitable<void> settled(uint64_t mark) {
    while (!running_.empty() && *running_.begin() < mark) {
      co_await ended_.async_wait(use_awaitable_tuple);
    }
  }
  size_t running() const { return running_.size(); }

 private:
  uint64_t begin() {
    running_.insert(next_);
    return next_++;
  }
  void end(uint64_t id) {
    running_.erase(id);
    ended_.cancel();  // wakes every settled(); each checks again
  }

  uint64_t next_ = 1;
  std::set<uint64_t> running_;
  asio::steady_timer ended_;
};

}  // namespace dfs::client
