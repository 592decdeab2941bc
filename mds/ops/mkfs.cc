// format_meta_store: the initial state of rank 0, written by `dfs-mds --mkfs`.
#include "mds/ops/inode_rules.h"

namespace dfs::mds {

Status format_meta_store(MetaStore& store, const FsSettings& fs, const proto::Timespec& now) {
  if (DFS_TRY(store.get(meta_key(kFormatVersion)))) {
    return make_error(ErrorCode::kAlreadyExists, "the metadata store already holds a file system");
  }
  GroupTxn txn(store);
  txn.begin_entry();
  MetaWriter w(txn);
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
  w.set_counter(kNextIno, (uint64_t(fs.rank) << kRankShift) | 2);
  w.set_counter(kInodeCount, 1);
  w.set_counter(kLogIndex, 0);
  txn.commit_entry();
  return store.write(txn.batch(), /*sync=*/true);
}

}  // namespace dfs::mds
