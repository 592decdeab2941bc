// DeferredErrors: the failures of changes this mount answered before the MDS applied
// them (deferred creates, renames, unlinks, attribute changes and size pushes, and
// what an eviction dropped), kept until somebody asks, as the kernel keeps a failed
// writeback: the next fsync of a file or directory a failed change concerned reports
// it, and so does the next sync of the whole mount. Each of those reports an error
// once; an fsync of an unrelated file reports nothing, so that a program that fsyncs
// its own files is told of its own losses and not of somebody else's.
//
// Owned by the FileClient on its I/O thread; pure state, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>

#include "common/status/status.h"

namespace dfs::client {

class DeferredErrors {
 public:
  // At most `max_inodes` inodes keep an error of their own; past that, the next fsync
  // of any inode reports the mount's first error (too much rather than nothing).
  explicit DeferredErrors(size_t max_inodes = 1u << 16) : max_inodes_(max_inodes) {}

  // A deferred change failed with `error`; `concerned`: the inodes it changed (the file
  // or directory itself, and the directories whose entries it changed). The first
  // error for each is kept.
  void note(const Error& error, std::span<const uint64_t> concerned);
  // For an fsync of `ino`: its first error since its last report, which is then cleared.
  Status take_for(uint64_t ino);
  // For a sync of the whole mount: the first error since the last such sync; every
  // error kept is cleared.
  Status take_all();
  bool empty() const { return !first_; }

 private:
  size_t max_inodes_;
  std::optional<Error> first_;
  std::unordered_map<uint64_t, Error> by_inode_;
  bool overflowed_ = false;  // an error found by_inode_ full: every inode reports first_
};

}  // namespace dfs::client
