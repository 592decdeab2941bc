// StripedLocks: per-object reader/writer locks, striped by key hash. apply() takes the
// stripes of all its objects exclusively, in stripe order (so two transactions cannot
// deadlock); read() and stat() take one stripe shared. Different objects mostly land on
// different stripes and proceed in parallel.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <vector>

#include "osd/store/object_store.h"

namespace dfs::osd {

class StripedLocks {
 public:
  static constexpr size_t kStripes = 256;

  std::shared_lock<std::shared_mutex> lock_shared(const ObjectKey& key) {
    return std::shared_lock(stripes_[stripe(key)]);
  }

  template <class Keys>
  std::vector<std::unique_lock<std::shared_mutex>> lock_exclusive(const Keys& keys) {
    std::vector<size_t> ids;
    for (const ObjectKey& key : keys) ids.push_back(stripe(key));
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::vector<std::unique_lock<std::shared_mutex>> held;
    held.reserve(ids.size());
    for (size_t id : ids) held.emplace_back(stripes_[id]);
    return held;
  }

 private:
  static size_t stripe(const ObjectKey& key) {
    size_t h = std::hash<std::string_view>()(key.name);
    h ^= (size_t{key.pool} << 32 | key.pg) * 0x9e3779b97f4a7c15ull;
    return (h ^ (h >> 29)) % kStripes;
  }

  std::array<std::shared_mutex, kStripes> stripes_;
};

}  // namespace dfs::osd
