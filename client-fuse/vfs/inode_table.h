// InodeTable: which inodes the kernel holds references to (FUSE lookup counts), and
// the mapping between the kernel's inode numbers and dfs's (the kernel's root is
// always 1; dfs's root, or the mounted subdirectory, may be any number). A kernel
// number is the file's number with an incarnation in its top byte: a new incarnation
// makes the kernel, at its next lookup, see a new inode and drop the old one, which is
// how a mount makes its kernel forget a size it trusts over the client's (FUSE's
// writeback cache) after another mount changed the file. Owned by the Vfs on the
// client's I/O thread; no locking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace dfs::vfs {

inline constexpr uint64_t kFuseRootIno = 1;

class InodeTable {
 public:
  explicit InodeTable(uint64_t root_ino) : root_(root_ino) {}

  uint64_t root() const { return root_; }
  // Kernel inode number -> dfs inode number and back. Bijective: when the mount's root
  // is not dfs inode 1, dfs inode 1 is shown under the root's dfs number.
  uint64_t to_dfs(uint64_t fuse_ino) const;
  // The current incarnation's kernel number.
  uint64_t to_fuse(uint64_t dfs_ino) const;
  // What stat shows as st_ino: the same for every incarnation.
  static uint64_t shown_ino(uint64_t fuse_ino) { return fuse_ino & kNumberMask; }
  // Later entries for the file carry a new kernel number (never the root's).
  void new_incarnation(uint64_t dfs_ino);

  // After a successful entry reply (lookup, create, mknod, readdirplus...).
  void add_lookup(uint64_t fuse_ino, uint64_t n = 1);
  // The kernel dropped `n` references. Returns true when none is left to the file, in
  // any incarnation. A forget of an unknown inode or of more than it holds is counted in
  // `bad_forgets()` and otherwise ignored.
  bool forget(uint64_t fuse_ino, uint64_t n);
  uint64_t lookups(uint64_t fuse_ino) const;
  // Whether the kernel holds any incarnation of dfs inode `dfs_ino`.
  bool held(uint64_t dfs_ino) const;
  // Every kernel inode number with references.
  std::vector<uint64_t> all() const;
  // The kernel inode numbers with references of dfs inode `dfs_ino`: its incarnations
  // the kernel still holds.
  std::vector<uint64_t> incarnations_held(uint64_t dfs_ino) const;
  size_t size() const { return counts_.size(); }
  uint64_t bad_forgets() const { return bad_forgets_; }

 private:
  static constexpr int kIncarnationShift = 56;
  static constexpr uint64_t kNumberMask = (uint64_t(1) << kIncarnationShift) - 1;

  uint64_t root_;
  std::unordered_map<uint64_t, uint64_t> counts_;        // kernel number -> references
  std::unordered_map<uint64_t, uint64_t> file_refs_;     // file number -> references, all
  std::unordered_map<uint64_t, uint8_t> incarnations_;  // file number -> current, if not 0
  uint64_t bad_forgets_ = 0;
};

}  // namespace dfs::vfs
