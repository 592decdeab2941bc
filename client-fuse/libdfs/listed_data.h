// ListedData: the data of inline files that directory listings brought along
// (readdirplus with inline data, FileClientOptions::readdir_inline_max), kept by inode
// with the inode version it belongs to until the first read-only open of the file takes
// it (file_open.cc, "Opens answered locally"). Bounded in bytes: past the bound the
// oldest go first; rsync and tar list a whole subtree before they read it, and what is
// not opened in time is simply asked for again.
//
// Whether the data may be used at all is not decided here: the open checks the mount's
// rights and what it knows of the inode. Pure state, owned by the FileClient on its I/O
// thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace dfs::client {

class ListedData {
 public:
  static constexpr size_t kDefaultMaxBytes = 64u << 20;
  explicit ListedData(size_t max_bytes = kDefaultMaxBytes) : max_bytes_(max_bytes) {}

  // Keeps `data` of `ino` at inode version `version` (replacing what was kept of it),
  // dropping the oldest kept data while the bound would be exceeded.
  void remember(uint64_t ino, uint64_t version, std::string data);
  // The data of `ino` if it was listed at `version`. What was kept of `ino` goes either
  // way: an open takes it once, and data of another version is stale.
  std::optional<std::string> take(uint64_t ino, uint64_t version);
  void drop(uint64_t ino);

  size_t files() const { return kept_.size(); }
  size_t bytes() const { return bytes_; }

 private:
  struct Kept {
    uint64_t version = 0;
    uint64_t order = 0;  // its place in order_
    std::string data;
  };
  size_t max_bytes_;
  std::unordered_map<uint64_t, Kept> kept_;
  // (ino, order) oldest first; pairs whose order no longer matches are stale, skipped.
  std::deque<std::pair<uint64_t, uint64_t>> order_;
  uint64_t next_order_ = 0;
  size_t bytes_ = 0;
};

}  // namespace dfs::client
