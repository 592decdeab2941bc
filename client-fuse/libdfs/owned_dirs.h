// OwnedDirs: the directories this mount owns (docs/capabilities.md, "Directory rights")
// and the files it created in them. The MDS gives a mount the directories it creates
// (MknodRequest.own) until another mount touches one; it recalls the directory then
// (kMdsCacheRights with `dirs`). Nobody else can reach what this mount created inside
// an owned directory without touching the directory first, so the mount is alone on
// it and on those files: it caches and defers there as if it were the only mount.
// A file stops counting as covered when it gets a name outside its directory (a link,
// a rename elsewhere) or when the kernel forgets it.
//
// Owned by the FileClient on its I/O thread; pure state, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace dfs::client {

class OwnedDirs {
 public:
  // How many this mount owns is bounded by the MDS ([mds] max_dirs_per_client): past
  // it the MDS recalls the least recently used, as it recalls any other. The mount asks
  // for every directory it creates, and the MDS gives every one of them (a deferred
  // mkdir predicts that it does).
  //
  // A directory this mount created and the MDS gave it.
  void own(uint64_t dir) { dirs_.insert(dir); }
  bool owns(uint64_t dir) const { return dirs_.count(dir) > 0; }
  // A file this mount created in `dir` (counted only while `dir` is owned).
  void file_created(uint64_t file, uint64_t dir);
  // Whether `ino` is an owned directory or a file created in one.
  bool covers(uint64_t ino) const;
  // `file` was renamed into `dir`: covered there if `dir` is owned, else no longer.
  void file_moved(uint64_t file, uint64_t dir);
  // `file` got another name, lost its last one, or the kernel forgot it.
  void file_left(uint64_t file) { files_.erase(file); }
  // `dir` was removed.
  void removed(uint64_t dir);
  // A recall: `dirs` and the files created in them are no longer covered. Returns
  // whether any of `dirs` was owned; the files that stopped being covered are added to
  // `files_dropped` (when given).
  bool give_up(const std::vector<uint64_t>& dirs, std::vector<uint64_t>* files_dropped = nullptr);
  // Everything goes (an eviction: the new session owns nothing).
  void clear();

  std::vector<uint64_t> dirs() const { return {dirs_.begin(), dirs_.end()}; }
  size_t size() const { return dirs_.size(); }

 private:
  std::unordered_set<uint64_t> dirs_;
  std::unordered_map<uint64_t, uint64_t> files_;  // file -> the owned directory it is in
};

}  // namespace dfs::client
