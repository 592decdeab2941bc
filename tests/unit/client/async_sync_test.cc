#include "client-fuse/libdfs/async_sync.h"

#include <doctest/doctest.h>

#include <string>

namespace dfs::client {
namespace {

awaitable<void> hold_shared(AsyncRwLock* lock, std::string* log, std::string name, Duration d) {
  co_await lock->lock_shared();
  *log += name + "+";
  co_await sleep_for(d);
  *log += name + "-";
  lock->unlock_shared();
}

awaitable<void> hold_exclusive(AsyncRwLock* lock, std::string* log, std::string name, Duration d) {
  co_await lock->lock();
  *log += name + "+";
  co_await sleep_for(d);
  *log += name + "-";
  lock->unlock();
}

}  // namespace

TEST_CASE("client/async_sync: readers share, a writer waits for them and goes before new readers") {
  asio::io_context io;
  AsyncRwLock lock;
  std::string log;
  spawn_checked(io.get_executor(), hold_shared(&lock, &log, "r1", Duration(20)));
  spawn_checked(io.get_executor(), hold_shared(&lock, &log, "r2", Duration(20)));
  spawn_checked(io.get_executor(), hold_exclusive(&lock, &log, "w", Duration(10)));
  spawn_checked(io.get_executor(), hold_shared(&lock, &log, "r3", Duration(1)));
  io.run();
  CHECK(log == "r1+r2+r1-r2-w+w-r3+r3-");
  CHECK(!lock.locked());
}

TEST_CASE("client/async_sync: a mutex serialises") {
  asio::io_context io;
  AsyncMutex mu;
  int inside = 0;
  int max_inside = 0;
  for (int i = 0; i < 5; ++i) {
    spawn_checked(io.get_executor(), [](AsyncMutex* m, int* in, int* max) -> awaitable<void> {
      co_await m->lock();
      MutexGuard guard(*m);
      ++*in;
      *max = std::max(*max, *in);
      co_await sleep_for(Duration(2));
      --*in;
    }(&mu, &inside, &max_inside));
  }
  io.run();
  CHECK(max_inside == 1);
  CHECK(!mu.locked());
}

TEST_CASE("client/async_sync: an event wakes every waiter, later waiters pass at once") {
  asio::io_context io;
  AsyncEvent ev;
  int woken = 0;
  for (int i = 0; i < 3; ++i) {
    spawn_checked(io.get_executor(), [](AsyncEvent* e, int* n) -> awaitable<void> {
      co_await e->wait();
      ++*n;
    }(&ev, &woken));
  }
  spawn_checked(io.get_executor(), [](AsyncEvent* e) -> awaitable<void> {
    co_await sleep_for(Duration(5));
    e->set();
    co_await e->wait();
  }(&ev));
  io.run();
  CHECK(woken == 3);
  CHECK(ev.is_set());
}

}  // namespace dfs::client
