// Coroutine synchronisation for state owned by one single-threaded executor (the
// client's I/O thread): an event, a mutex and a reader/writer lock. They never block a
// thread; a waiter suspends on a timer that the releasing side cancels. Not
// thread-safe: every call must run on the owning executor.
#pragma once

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "common/rpc/asio.h"

namespace dfs::client {

// A one-shot event: wait() returns once set() was called (at once if it already was).
class AsyncEvent {
 public:
  bool is_set() const { return set_; }
  void set();
  awaitable<void> wait();

 private:
  bool set_ = false;
  std::vector<std::shared_ptr<asio::steady_timer>> waiters_;
};

// A reader/writer lock with writer preference: once a writer waits, new readers queue
// behind it. Ownership passes directly to the woken waiter, so nobody barges in.
class AsyncRwLock {
 public:
  awaitable<void> lock();
  void unlock();
  awaitable<void> lock_shared();
  void unlock_shared();
  bool locked() const { return exclusive_ || shared_ > 0; }

 private:
  struct Waiter {
    bool exclusive;
    std::shared_ptr<asio::steady_timer> timer;
  };
  awaitable<void> enqueue(bool exclusive);
  void wake();

  bool exclusive_ = false;
  int shared_ = 0;
  std::deque<Waiter> queue_;
};

// A mutex is a reader/writer lock used only exclusively.
class AsyncMutex {
 public:
  awaitable<void> lock() { co_await rw_.lock(); }
  void unlock() { rw_.unlock(); }
  bool locked() const { return rw_.locked(); }

 private:
  AsyncRwLock rw_;
};

// Releases a held lock when it goes out of scope (on the owning executor).
template <class Lock, void (Lock::*Unlock)()>
class [[nodiscard]] AsyncGuard {
 public:
  explicit AsyncGuard(Lock& lock) : lock_(&lock) {}
  AsyncGuard(AsyncGuard&& other) noexcept : lock_(std::exchange(other.lock_, nullptr)) {}
  AsyncGuard& operator=(AsyncGuard&&) = delete;
  ~AsyncGuard() {
    if (lock_) (lock_->*Unlock)();
  }

 private:
  Lock* lock_;
};

using MutexGuard = AsyncGuard<AsyncMutex, &AsyncMutex::unlock>;
using WriteGuard = AsyncGuard<AsyncRwLock, &AsyncRwLock::unlock>;
using ReadGuard = AsyncGuard<AsyncRwLock, &AsyncRwLock::unlock_shared>;

}  // namespace dfs::client
