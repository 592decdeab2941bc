// DirCache: the complete list of names of each directory this client created, with the
// inode each names where this client learned it. In
// single-client mode every later change to such a directory passes through this
// client, so a name missing from it does not exist and lookups of it (rsync, tar and
// make probe many) are answered without a round trip to the MDS. A directory whose
// state became uncertain (an operation in it failed) is forgotten, never guessed.
// Owned by the FileClient on its I/O thread; pure state, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace dfs::client {

class DirCache {
 public:
  // `max_names` bounds memory: past it, everything is forgotten.
  explicit DirCache(size_t max_names = 2u << 20) : max_names_(max_names) {}

  // A directory that was just created (empty).
  void created(uint64_t dir);
  // Whether `name` exists in `dir`; nullopt when the directory is not tracked.
  std::optional<bool> contains(uint64_t dir, const std::string& name) const;
  // The inode `name` in `dir` refers to; nullopt when the directory is not tracked, the
  // name is absent, or its inode was not learned (added with ino 0).
  std::optional<uint64_t> ino_of(uint64_t dir, const std::string& name) const;
  void added(uint64_t dir, const std::string& name, uint64_t ino = 0);
  // Whether `dir` has no names; nullopt when it is not tracked.
  std::optional<bool> empty(uint64_t dir) const;
  void removed(uint64_t dir, const std::string& name);
  // Stops tracking `dir` (removed, forgotten by the kernel, or its state uncertain).
  void forget(uint64_t dir);
  // Keeps tracking only the directories `keep` says yes to.
  template <class Pred>
  void retain_if(Pred keep) {
    for (auto it = dirs_.begin(); it != dirs_.end();) {
      if (keep(it->first)) {
        ++it;
      } else {
        names_ -= it->second.size();
        it = dirs_.erase(it);
      }
    }
  }
  // Stops tracking every directory (the session that kept them exact was evicted).
  void clear() {
    dirs_.clear();
    names_ = 0;
  }

  size_t dirs() const { return dirs_.size(); }
  size_t names() const { return names_; }

 private:
  size_t max_names_;
  size_t names_ = 0;
  std::unordered_map<uint64_t, std::unordered_map<std::string, uint64_t>> dirs_;
};

}  // namespace dfs::client
