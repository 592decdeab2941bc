#include "client-fuse/libdfs/owned_dirs.h"

namespace dfs::client {

void OwnedDirs::file_created(uint64_t file, uint64_t dir) {
  if (owns(dir)) files_[file] = dir;
}

bool OwnedDirs::covers(uint64_t ino) const {
  if (owns(ino) || owns_file(ino)) return true;
  auto it = files_.find(ino);
  return it != files_.end() && owns(it->second);
}

void OwnedDirs::file_moved(uint64_t file, uint64_t dir) {
  auto it = files_.find(file);
  if (it == files_.end()) return;
  if (owns(dir)) {
    it->second = dir;
  } else {
    files_.erase(it);
  }
}

void OwnedDirs::removed(uint64_t ino) {
  dirs_.erase(ino);
  files_owned_.erase(ino);
  shared_.erase(ino);
}

std::vector<uint64_t> OwnedDirs::shared() const {
  std::vector<uint64_t> inos;
  inos.reserve(shared_.size());
  for (const auto& [ino, regular] : shared_) inos.push_back(ino);
  return inos;
}

std::vector<uint64_t> OwnedDirs::files_cached() const {
  std::vector<uint64_t> files(files_owned_.begin(), files_owned_.end());
  for (const auto& [ino, regular] : shared_) {
    if (regular) files.push_back(ino);
  }
  return files;
}

bool OwnedDirs::give_up(const std::vector<uint64_t>& inos, std::vector<uint64_t>* files_dropped,
                        std::vector<uint64_t>* cached_dropped) {
  bool owned = false, dir_owned = false;
  for (uint64_t ino : inos) {
    dir_owned |= dirs_.erase(ino) > 0;
    bool regular = files_owned_.erase(ino) > 0;
    bool held = regular;
    if (auto share = shared_.find(ino); share != shared_.end()) {
      held = true;
      regular = regular || share->second;
      shared_.erase(share);
    }
    owned = owned || held;
    if (regular && cached_dropped) cached_dropped->push_back(ino);
  }
  owned |= dir_owned;
  if (!dir_owned) return owned;
  for (auto it = files_.begin(); it != files_.end();) {
    if (dirs_.count(it->second)) {
      ++it;
      continue;
    }
    if (files_dropped) files_dropped->push_back(it->first);
    it = files_.erase(it);
  }
  return true;
}

void OwnedDirs::clear() {
  dirs_.clear();
  files_.clear();
  files_owned_.clear();
  shared_.clear();
}

}  // namespace dfs::client
