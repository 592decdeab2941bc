#include "client-fuse/libdfs/dir_cache.h"

#include <algorithm>

namespace dfs::client {

void DirCache::created(uint64_t dir) {
  forget(dir);
  dirs_[dir];
}

bool DirCache::listed(uint64_t dir, uint64_t cookie, const ListingStamp& stamp,
                      std::vector<ListedName> names, uint64_t next_cookie, bool eof) {
  if (dirs_.count(dir)) {
    partial_.erase(dir);
    return true;
  }
  auto it = partial_.find(dir);
  if (cookie == 0) {
    if (it == partial_.end()) {
      if (partial_.size() >= kMaxPartialListings) {  // readers that stopped early
        partial_.erase(std::min_element(partial_.begin(), partial_.end(),
                                        [](const auto& a, const auto& b) {
                                          return a.second.started < b.second.started;
                                        }));
      }
      it = partial_.emplace(dir, Partial{}).first;
    }
    it->second = Partial{stamp, 0, {}, ++listings_started_};
  } else if (it == partial_.end() || it->second.next_cookie != cookie ||
             !(it->second.stamp == stamp)) {
    if (it != partial_.end()) partial_.erase(it);  // a gap, or something may have changed
    return false;
  }
  Partial& partial = it->second;
  for (auto& n : names) partial.names.insert_or_assign(std::move(n.name), n.ino);
  partial.next_cookie = next_cookie;
  const size_t count = partial.names.size();
  if (names_ + count > max_names_) {  // it would not be kept: stop collecting now
    partial_.erase(it);
    return false;
  }
  if (!eof) return false;
  dirs_[dir] = std::move(partial.names);
  names_ += count;
  partial_.erase(it);
  return true;
}

std::optional<bool> DirCache::contains(uint64_t dir, const std::string& name) const {
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return std::nullopt;
  return it->second.count(name) > 0;
}

std::optional<uint64_t> DirCache::ino_of(uint64_t dir, const std::string& name) const {
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return std::nullopt;
  auto entry = it->second.find(name);
  if (entry == it->second.end() || entry->second == 0) return std::nullopt;
  return entry->second;
}

std::optional<bool> DirCache::empty(uint64_t dir) const {
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return std::nullopt;
  return it->second.empty();
}

void DirCache::added(uint64_t dir, const std::string& name, uint64_t ino) {
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  if (it->second.insert_or_assign(name, ino).second) ++names_;
  if (names_ > max_names_) {
    dirs_.clear();
    names_ = 0;
  }
}

void DirCache::removed(uint64_t dir, const std::string& name) {
  auto it = dirs_.find(dir);
  if (it != dirs_.end() && it->second.erase(name)) --names_;
}

void DirCache::forget(uint64_t dir) {
  partial_.erase(dir);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  names_ -= it->second.size();
  dirs_.erase(it);
}

}  // namespace dfs::client
