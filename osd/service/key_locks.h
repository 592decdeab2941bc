// KeyLocks: asynchronous exclusive locks by key for coroutines on one single-threaded
// executor. The OSD holds an object's lock from the moment a write is accepted until
// every replica has answered, so writes to one object apply in one order everywhere.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>

#include "common/rpc/asio.h"

namespace dfs::osd {

class KeyLocks {
 public:
  class Guard {
   public:
    Guard() = default;
    Guard(KeyLocks* owner, std::string key) : owner_(owner), key_(std::move(key)) {}
    Guard(Guard&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), key_(std::move(other.key_)) {}
    Guard& operator=(Guard&& other) noexcept;
    ~Guard() { release(); }
    void release();

   private:
    KeyLocks* owner_ = nullptr;
    std::string key_;
  };

  // Waits until `key` is free, then holds it until the guard is destroyed. FIFO.
  awaitable<Guard> lock(std::string key);

 private:
  void unlock(const std::string& key);

  // key -> waiters in arrival order; a key is present while held.
  std::map<std::string, std::deque<std::shared_ptr<asio::steady_timer>>> held_;
};

}  // namespace dfs::osd
