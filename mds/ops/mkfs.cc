// The initial state of a rank: written directly by `dfs-mds --mkfs` (a single-replica
// rank), or applied as the FormatFs log entry (a replicated rank's first entry).
#include "common/proto/stable_bytes.h"
#include "mds/ops/inode_rules.h"

namespace dfs::mds {
namespace {

// The root directory (inode 1, mode 0755, owned by root) and the counters.
Status write_initial_state(MetaWriter& w, const FsSettings& fs, const proto::Timespec& now) {
  if (DFS_TRY(w.txn().get(meta_key(kFormatVersion)))) {
    return make_error(ErrorCode::kAlreadyExists, "the metadata store already holds a file system");
  }
  proto::Inode root;
  root.set_ino(kRootIno);
  root.set_mode(S_IFDIR | 0755);
  root.set_nlink(2);
  root.set_parent(kRootIno);
  *root.mutable_atime() = now;
  *root.mutable_mtime() = now;
  *root.mutable_ctime() = now;
  *root.mutable_btime() = now;
  root.set_version(1);
  w.put_inode(root);
  w.set_counter(kFormatVersion, 1);
  w.set_counter(kNextIno, first_ino_of_rank(fs.rank));
  w.set_counter(kInodeCount, 1);
  w.set_counter(kLogIndex, 0);
  return ok_status();
}

}  // namespace

Status format_meta_store(MetaStore& store, const FsSettings& fs, const proto::Timespec& now) {
  GroupTxn txn(store);
  txn.begin_entry();
  MetaWriter w(txn);
  DFS_TRY_STATUS(write_initial_state(w, fs, now));
  txn.commit_entry();
  return store.write(txn.batch(), /*sync=*/true);
}

Result<std::string> apply_format(OpContext& ctx, const proto::FormatFs& /*req*/) {
  DFS_TRY_STATUS(write_initial_state(ctx.w, ctx.fs, ctx.now()));
  return proto::stable_bytes(proto::Empty());
}

}  // namespace dfs::mds
