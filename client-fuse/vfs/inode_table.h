// InodeTable: which inodes the kernel holds references to (FUSE lookup counts), and
// the mapping between the kernel's inode numbers and dfs's (the kernel's root is
// always 1; dfs's root, or the mounted subdirectory, may be any number). Owned by the
// Vfs on the client's I/O thread; no locking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace dfs::vfs {

inline constexpr uint64_t kFuseRootIno = 1;

class InodeTable {
 public:
  explicit InodeTable(uint64_t root_ino) : root_(root_ino) {}

  uint64_t root() const { return root_; }
  // Kernel inode number -> dfs inode number and back. Bijective: when the mount's root
  // is not dfs inode 1, dfs inode 1 is shown under the root's dfs number.
  uint64_t to_dfs(uint64_t fuse_ino) const;
  uint64_t to_fuse(uint64_t dfs_ino) const;

  // After a successful entry reply (lookup, create, mknod, readdirplus...).
  void add_lookup(uint64_t fuse_ino, uint64_t n = 1);
  // The kernel dropped `n` references. Returns true when none is left (the entry is
  // gone). A forget of an unknown inode or of more than it holds is counted in
  // `bad_forgets()` and otherwise ignored.
  bool forget(uint64_t fuse_ino, uint64_t n);
  uint64_t lookups(uint64_t fuse_ino) const;
  size_t size() const { return counts_.size(); }
  uint64_t bad_forgets() const { return bad_forgets_; }

 private:
  uint64_t root_;
  std::unordered_map<uint64_t, uint64_t> counts_;
  uint64_t bad_forgets_ = 0;
};

}  // namespace dfs::vfs
