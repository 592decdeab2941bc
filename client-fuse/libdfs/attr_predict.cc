#include "client-fuse/libdfs/attr_predict.h"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <algorithm>

#include "mds/ops/acl.h"
#include "mds/ops/inode_rules.h"
#include "mds/ops/op_context.h"
#include "mds/store/group_txn.h"
#include "mds/store/keys.h"
#include "mds/store/meta_store.h"

namespace dfs::client {

Result<std::string> predict_entry(const proto::MdsLogEntry& entry,
                                  const std::vector<proto::Inode>& inodes,
                                  const std::vector<SeedName>& names,
                                  std::optional<uint32_t> inline_threshold) {
  auto store = mds::make_mem_meta_store();
  {
    mds::GroupTxn seed(*store);
    seed.begin_entry();
    mds::MetaWriter w(seed);
    for (const auto& inode : inodes) w.put_inode(inode);
    for (const auto& n : names) DFS_TRY(w.add_dentry(n.parent, n.name, n.ino, n.mode & S_IFMT));
    // A new inode number lies below the counter once allocated (delegated range).
    w.set_counter(mds::kNextIno, std::max<uint64_t>(entry.new_ino() + 1, 2));
    w.set_counter(mds::kInodeCount, inodes.size() + 1);
    seed.commit_entry();
    DFS_TRY_STATUS(store->write(seed.batch(), false));
  }
  mds::GroupTxn txn(*store);
  txn.begin_entry();
  mds::ApplyEffects effects;
  mds::FsSettings fs = mds::default_fs_settings();
  if (inline_threshold) fs.inline_threshold = *inline_threshold;
  return mds::apply_entry(entry, fs, txn, effects);
}

uint32_t mode_without_setid(uint32_t mode) { return mds::without_setid(mode); }

bool setxattr_only_touches_ctime(const proto::Inode& inode, const proto::SetXattrRequest& request,
                                 const proto::Creds& creds) {
  if (request.name() != mds::kAclAccessXattr || (request.flags() & ~uint32_t(XATTR_CREATE))) {
    return false;
  }
  if (inode.xattrs().contains(request.name())) return false;  // it would be removed
  auto acl = mds::parse_acl(request.value());
  if (!acl) return false;  // the MDS's error
  bool store = false;
  uint32_t mode = mds::mode_after_access_acl(*acl, inode.mode(),
                                             mds::in_group(creds, inode.gid()), store);
  return !store && mode == inode.mode();
}

Result<proto::Inode> predict_setattr(const proto::Inode& current, const proto::SetAttrRequest& req,
                                     const proto::Timespec& now,
                                     std::optional<uint32_t> inline_threshold) {
  if ((req.valid() & proto::SET_ATTR_SIZE) && !req.grow_only()) {
    return make_error(ErrorCode::kInvalidArgument, "a size change cannot be predicted");
  }
  proto::MdsLogEntry entry;
  *entry.mutable_setattr() = req;
  *entry.mutable_now() = now;
  entry.set_index(1);
  auto reply_body = DFS_TRY(predict_entry(entry, {current}, {}, inline_threshold));
  proto::InodeReply reply;
  if (!reply.ParseFromString(reply_body)) {
    return make_error(ErrorCode::kInternal, "the setattr op returned no inode");
  }
  return std::move(*reply.mutable_inode());
}

proto::SetAttrRequest merged_setattr(const proto::Inode& predicted, uint32_t valid) {
  proto::SetAttrRequest req;
  req.set_ino(predicted.ino());
  req.set_valid(valid | proto::SET_ATTR_CTIME);
  req.set_mode(predicted.mode() & 07777);
  req.set_uid(predicted.uid());
  req.set_gid(predicted.gid());
  *req.mutable_atime() = predicted.atime();
  *req.mutable_mtime() = predicted.mtime();
  *req.mutable_ctime() = predicted.ctime();
  return req;
}

}  // namespace dfs::client
