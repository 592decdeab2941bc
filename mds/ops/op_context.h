// What every mutating op sees while it applies one log entry: the entry (with the
// leader's decisions: time, new inode number), the file system's settings, the
// transaction to read and write, and the effects the leader acts on after commit.
// Ops are pure functions of (entry, store state, settings): a replica applying the same
// entries to the same state reaches the same state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/proto/mds.pb.h"
#include "mds/ops/meta_view.h"

namespace dfs::mds {

// File system settings. Every replica of a rank must run with the same values.
struct FsSettings {
  // Files up to this size keep their data at the MDS (FORMAT.md, 'F'). A small file's
  // write is then one MDS request (~150 us); as objects it costs an OSD write on three
  // replicas (three log syncs) and a size commit at the MDS (~800 us)
  // (docs/bench/history.md, "2026-11-30, late morning").
  uint32_t inline_threshold = 64 * 1024;
  proto::Layout default_layout;  // filled by default_fs_settings()
  uint32_t rank = 0;
  uint32_t max_links = 65000;
  uint32_t max_xattr_value = 64 * 1024;
  uint32_t max_xattr_total = 512 * 1024;  // all xattrs of one inode
};
FsSettings default_fs_settings();

// Side effects of an applied entry that the leader acts on once the entry is durable.
struct ApplyEffects {
  std::vector<uint64_t> orphaned;  // inodes whose last link went (kept until unused)
  std::vector<uint64_t> purge_queued;  // files whose objects joined the purge queue
};

struct OpContext {
  const proto::MdsLogEntry& entry;
  const FsSettings& fs;
  MetaWriter& w;
  ApplyEffects& effects;

  const proto::Timespec& now() const { return entry.now(); }
  KvReader& kv() { return w.txn(); }
};

// Applies one entry inside the txn's entry scope and returns the serialized reply.
// Errors: the op's file system errors; kCorruption/kIoError from the store.
Result<std::string> apply_entry(const proto::MdsLogEntry& entry, const FsSettings& fs,
                                GroupTxn& txn, ApplyEffects& effects);

// One function per op family (mds/ops/<family>.cc).
Result<std::string> apply_setattr(OpContext& ctx, const proto::SetAttrRequest& req);
Result<std::string> apply_mknod(OpContext& ctx, const proto::MknodRequest& req);
Result<std::string> apply_symlink(OpContext& ctx, const proto::SymlinkRequest& req);
Result<std::string> apply_link(OpContext& ctx, const proto::LinkRequest& req);
Result<std::string> apply_unlink(OpContext& ctx, const proto::UnlinkRequest& req);
Result<std::string> apply_rename(OpContext& ctx, const proto::RenameRequest& req);
Result<std::string> apply_setxattr(OpContext& ctx, const proto::SetXattrRequest& req);
Result<std::string> apply_removexattr(OpContext& ctx, const proto::RemoveXattrRequest& req);
Result<std::string> apply_open(OpContext& ctx, const proto::OpenRequest& req);
// A `release` entry of an older version: one orphan's apply_release_orphans.
Result<std::string> apply_release(OpContext& ctx, const proto::ReleaseRequest& req);
Result<std::string> apply_release_orphans(OpContext& ctx, const proto::ReleaseOrphans& req);
// A `purge_done` entry of an older version: one file's apply_purged_files.
Result<std::string> apply_purge_done(OpContext& ctx, const proto::PurgeDone& req);
Result<std::string> apply_purged_files(OpContext& ctx, const proto::PurgedFiles& req);
Result<std::string> apply_write_inline(OpContext& ctx, const proto::WriteInlineRequest& req);
Result<std::string> apply_uninline(OpContext& ctx, const proto::UninlineRequest& req);
Result<std::string> apply_commit_write(OpContext& ctx, const proto::CommitWriteRequest& req);
Result<std::string> apply_forget_session(OpContext& ctx, const proto::ForgetSession& req);
Result<std::string> apply_record_session(OpContext& ctx, const proto::RecordSession& req);
Result<std::string> apply_format(OpContext& ctx, const proto::FormatFs& req);
Result<std::string> apply_alloc_inos(OpContext& ctx, const proto::AllocInosRequest& req);

// Replies of a client's last this many requests are kept in the store ('R' keys). A mount
// resends every mutation a replicated rank answered early and it does not yet know to be
// safe (a sync round, up to an election timeout while no majority answers): at the
// fastest, rm -rf's batched unlinks, about 16,000 a second.
inline constexpr uint64_t kRememberedRequests = 32768;

// Writes a new file system into an empty store: the root directory (inode 1, mode
// 0755, owned by root) and the counters. Errors: kAlreadyExists, store errors.
Status format_meta_store(MetaStore& store, const FsSettings& fs, const proto::Timespec& now);

// Whether the entry allocates an inode number (the leader fills entry.new_ino).
bool entry_allocates_ino(const proto::MdsLogEntry& entry);

// The header of the client request inside the entry, if any.
const proto::MdsRequestHeader* request_header(const proto::MdsLogEntry& entry);

// The lowest inode number a rank hands out (1 is the root).
inline uint64_t first_ino_of_rank(uint32_t rank) { return (uint64_t(rank) << kRankShift) | 2; }

}  // namespace dfs::mds
