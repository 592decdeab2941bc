#include "client-fuse/libdfs/async_sync.h"

namespace dfs::client {
namespace {

std::shared_ptr<asio::steady_timer> parked_timer(asio::any_io_executor executor) {
  auto timer = std::make_shared<asio::steady_timer>(executor);
  timer->expires_at(asio::steady_timer::time_point::max());
  return timer;
}

}  // namespace

void AsyncEvent::set() {
  set_ = true;
  for (auto& w : waiters_) w->cancel();
  waiters_.clear();
}

awaitable<void> AsyncEvent::wait() {
  while (!set_) {
    auto timer = parked_timer(co_await asio::this_coro::executor);
    waiters_.push_back(timer);
    co_await timer->async_wait(use_awaitable_tuple);
  }
}

awaitable<void> AsyncRwLock::lock() {
  if (!exclusive_ && shared_ == 0 && queue_.empty()) {
    exclusive_ = true;
    co_return;
  }
  co_await enqueue(true);
}

awaitable<void> AsyncRwLock::lock_shared() {
  if (!exclusive_ && queue_.empty()) {
    ++shared_;
    co_return;
  }
  co_await enqueue(false);
}

awaitable<void> AsyncRwLock::enqueue(bool exclusive) {
  auto timer = parked_timer(co_await asio::this_coro::executor);
  queue_.push_back(Waiter{exclusive, timer});
  // wake() hands the lock over before cancelling the timer, so when the wait ends the
  // lock is ours.
  co_await timer->async_wait(use_awaitable_tuple);
}

void AsyncRwLock::unlock() {
  exclusive_ = false;
  wake();
}

void AsyncRwLock::unlock_shared() {
  --shared_;
  wake();
}

void AsyncRwLock::wake() {
  while (!queue_.empty() && !exclusive_) {
    Waiter& next = queue_.front();
    if (next.exclusive) {
      if (shared_ > 0) return;
      exclusive_ = true;
    } else {
      ++shared_;
    }
    next.timer->cancel();
    queue_.pop_front();
  }
}

}  // namespace dfs::client
