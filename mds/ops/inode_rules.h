// POSIX rules shared by the ops: name checks, timestamps, privilege clearing, link
// accounting and the orphan/purge bookkeeping. Pure functions over protos and the
// transaction; no I/O besides the txn.
#pragma once

#include <sys/stat.h>

#include <string_view>

#include "mds/ops/op_context.h"

namespace dfs::mds {

inline constexpr size_t kMaxNameBytes = 255;
inline constexpr size_t kMaxSymlinkBytes = 4096;
inline constexpr char kCapabilityXattr[] = "security.capability";
inline constexpr char kAclAccessXattr[] = "system.posix_acl_access";
inline constexpr char kAclDefaultXattr[] = "system.posix_acl_default";
inline constexpr char kLayoutXattr[] = "dfs.layout";

inline uint32_t file_type(uint32_t mode) { return mode & S_IFMT; }
inline bool is_dir(const proto::Inode& inode) { return S_ISDIR(inode.mode()); }
inline bool is_reg(const proto::Inode& inode) { return S_ISREG(inode.mode()); }

// A directory entry name: 1..255 bytes, no '/' or NUL, not "." or "..".
// Errors: kInvalidArgument, kNameTooLong.
Status check_name(std::string_view name);

// The caller is root or a member of `gid` (primary or supplementary group).
bool in_group(const proto::Creds& creds, uint32_t gid);

// Records a change of the inode: ctime = now, version + 1.
void changed(proto::Inode& inode, const proto::Timespec& now);
// Records a change of the directory's entries: mtime = ctime = now, version + 1.
void entries_changed(proto::Inode& dir, const proto::Timespec& now);

// `mode` without S_ISUID, and without S_ISGID when group-execute is set (setgid without
// it marks mandatory locking, not a privilege): what a write or truncate by a caller
// without CAP_FSETID, and every chown of a non-directory, leave of the mode (Linux).
uint32_t without_setid(uint32_t mode);

// What a write or truncate by `writer` does to privileges (Linux): clears
// security.capability always, and S_ISUID and S_ISGID (the latter only with
// group-execute) unless the writer is root (CAP_FSETID). Regular files only.
void kill_privileges(proto::Inode& inode, const proto::Creds& writer);

// Sets the size. st_blocks estimates the data actually stored: inline files count
// their bytes; object files count what commits wrote (add_written) and never more
// than the size, so growing a file by truncate allocates nothing.
void set_size(proto::Inode& inode, uint64_t size);
void add_written(proto::Inode& inode, uint64_t bytes);
inline uint64_t blocks_of(uint64_t bytes) { return (bytes + 511) / 512; }

// The directory, checked: exists (kNotFound for a vanished parent) and is a directory
// (kNotDirectory).
Result<proto::Inode> load_dir(OpContext& ctx, uint64_t ino);

// Drops one link of `inode` (all of a directory's). At zero links the inode is kept as
// an orphan ('O' key) and reported in effects.orphaned; the leader purges it once no
// session holds it open. Writes the inode.
Status drop_link(OpContext& ctx, proto::Inode& inode);

// Deletes an orphan's inode and queues its objects for purging. No-op when `ino` is
// not an orphan (it was linked again or is already gone).
Status purge_orphan(OpContext& ctx, uint64_t ino);

}  // namespace dfs::mds
