#include "client-fuse/libdfs/deferred_errors.h"

namespace dfs::client {

void DeferredErrors::note(const Error& error, std::span<const uint64_t> concerned) {
  if (!first_) first_ = error;
  for (uint64_t ino : concerned) {
    if (by_inode_.count(ino)) continue;
    if (by_inode_.size() >= max_inodes_) {
      overflowed_ = true;
      continue;
    }
    by_inode_.emplace(ino, error);
  }
}

Status DeferredErrors::take_for(uint64_t ino) {
  if (auto it = by_inode_.find(ino); it != by_inode_.end()) {
    Error e = std::move(it->second);
    by_inode_.erase(it);
    return e.with_context("applying a deferred change");
  }
  if (overflowed_ && first_) {
    overflowed_ = false;
    return Error(*first_).with_context("applying a deferred change");
  }
  return ok_status();
}

Status DeferredErrors::take_all() {
  by_inode_.clear();
  overflowed_ = false;
  if (!first_) return ok_status();
  Error e = std::move(*first_);
  first_.reset();
  return e.with_context("applying a deferred change");
}

}  // namespace dfs::client
