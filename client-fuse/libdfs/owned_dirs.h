// OwnedDirs: the inodes this mount owns (docs/capabilities.md, "Directory rights" and
// "File rights"): directories, the files it created in them, and files it owns
// themselves. The MDS gives a mount the directories it creates (MknodRequest.own) and
// the files it opens while nobody else has them open (OpenRequest.own), until another
// mount touches one; it recalls the inode then (kMdsCacheRights with `dirs`). Nobody
// else can reach what this mount created inside an owned directory without touching
// the directory first, so the mount is alone on it and on those files: it caches and
// defers there as if it were the only mount. A file covered by its directory stops
// counting as covered when it gets a name outside its directory (a link, a rename
// elsewhere) or when the kernel forgets it; a file owned itself stays owned wherever
// its names are, until it is recalled.
//
// It also keeps the inodes this mount shares (docs/capabilities.md, "Read shares";
// OpenRequest.read_share, LookupRequest.share, GetAttrRequest.share): not owned, as
// other mounts may read them too, but nobody changes them without recalling the share
// first, so the kernel may keep their attributes, a directory's names and a file's
// pages. They are given up, bounded and re-asserted as owned inodes are; covers() does
// not count them.
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
  // A file the MDS gave this mount at its open (InodeReply.owned); a share of it
  // becomes the ownership (the MDS's DirRights::claimed_existing does the same).
  void own_file(uint64_t file) {
    shared_.erase(file);
    files_owned_.insert(file);
  }
  bool owns_file(uint64_t file) const { return files_owned_.count(file) > 0; }
  // Whether `ino` is an owned directory, a file created in one, or an owned file.
  bool covers(uint64_t ino) const;
  // An inode the MDS shared with this mount (InodeReply.read_shared); `regular`: a
  // regular file, whose size the kernel trusts while it is shared.
  void share(uint64_t ino, bool regular) { shared_[ino] = regular; }
  bool shares(uint64_t ino) const { return shared_.count(ino) > 0; }
  // `file` was renamed into `dir`: covered there if `dir` is owned, else no longer.
  void file_moved(uint64_t file, uint64_t dir);
  // `file` got another name, lost its last one, or the kernel forgot it.
  void file_left(uint64_t file) { files_.erase(file); }
  // `ino` (a directory, or a file owned by itself or shared) was removed.
  void removed(uint64_t ino);
  // A recall: `inos` (directories, owned files, shared inodes) and the files created in
  // those directories are no longer covered. Returns whether any of `inos` was owned or
  // shared; the files created in the directories that stopped being covered are added
  // to `files_dropped`, the owned and shared regular files of `inos` to
  // `cached_dropped` (when given).
  bool give_up(const std::vector<uint64_t>& inos, std::vector<uint64_t>* files_dropped = nullptr,
               std::vector<uint64_t>* cached_dropped = nullptr);
  // Everything goes (an eviction: the new session owns nothing).
  void clear();

  // What the MDS counts as ours (a session open re-asserts them after a failover): the
  // owned directories, the files owned themselves, and the shared inodes.
  std::vector<uint64_t> dirs() const { return {dirs_.begin(), dirs_.end()}; }
  std::vector<uint64_t> files() const { return {files_owned_.begin(), files_owned_.end()}; }
  std::vector<uint64_t> shared() const;
  // The owned and the shared regular files: the kernel trusts its size of each.
  std::vector<uint64_t> files_cached() const;
  // Owned directories and files, and shared inodes.
  size_t size() const { return dirs_.size() + files_owned_.size() + shared_.size(); }

 private:
  std::unordered_set<uint64_t> dirs_;
  std::unordered_map<uint64_t, uint64_t> files_;  // file -> the owned directory it is in
  std::unordered_set<uint64_t> files_owned_;
  std::unordered_map<uint64_t, bool> shared_;  // inode -> a regular file
};

}  // namespace dfs::client
