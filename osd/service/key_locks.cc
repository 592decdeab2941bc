#include "osd/service/key_locks.h"

namespace dfs::osd {

KeyLocks::Guard& KeyLocks::Guard::operator=(Guard&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
    key_ = std::move(other.key_);
  }
  return *this;
}

void KeyLocks::Guard::release() {
  if (owner_) std::exchange(owner_, nullptr)->unlock(key_);
}

awaitable<KeyLocks::Guard> KeyLocks::lock(std::string key) {
  auto it = held_.find(key);
  if (it == held_.end()) {
    held_.emplace(key, std::deque<std::shared_ptr<asio::steady_timer>>{});
    co_return Guard(this, std::move(key));
  }
  auto waiter = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor,
                                                     asio::steady_timer::time_point::max());
  it->second.push_back(waiter);
  // unlock() hands the lock over by expiring our timer: we own it when we wake.
  while (waiter->expiry() != asio::steady_timer::time_point::min()) {
    co_await waiter->async_wait(use_awaitable_tuple);
  }
  co_return Guard(this, std::move(key));
}

void KeyLocks::unlock(const std::string& key) {
  auto it = held_.find(key);
  if (it == held_.end()) return;
  if (it->second.empty()) {
    held_.erase(it);
    return;
  }
  auto next = std::move(it->second.front());
  it->second.pop_front();
  next->expires_at(asio::steady_timer::time_point::min());
}

}  // namespace dfs::osd
