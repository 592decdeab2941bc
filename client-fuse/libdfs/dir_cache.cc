#include "client-fuse/libdfs/dir_cache.h"

namespace dfs::client {

void DirCache::created(uint64_t dir) {
  forget(dir);
  dirs_[dir];
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
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  names_ -= it->second.size();
  dirs_.erase(it);
}

}  // namespace dfs::client
