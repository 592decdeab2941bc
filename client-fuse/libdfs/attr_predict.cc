#include "client-fuse/libdfs/attr_predict.h"

#include "mds/ops/op_context.h"
#include "mds/store/group_txn.h"
#include "mds/store/keys.h"
#include "mds/store/meta_store.h"

namespace dfs::client {

Result<proto::Inode> predict_setattr(const proto::Inode& current, const proto::SetAttrRequest& req,
                                     const proto::Timespec& now) {
  constexpr uint32_t kSetSize = 8;  // SetAttrRequest.valid bit (FUSE_SET_ATTR_SIZE)
  if (req.valid() & kSetSize) {
    return make_error(ErrorCode::kInvalidArgument, "a size change cannot be predicted");
  }
  auto store = mds::make_mem_meta_store();
  mds::WriteBatch seed;
  seed.put(mds::inode_key(current.ino()), current.SerializeAsString());
  DFS_TRY_STATUS(store->write(seed, false));
  proto::MdsLogEntry entry;
  *entry.mutable_setattr() = req;
  *entry.mutable_now() = now;
  entry.set_index(1);
  mds::GroupTxn txn(*store);
  txn.begin_entry();
  mds::ApplyEffects effects;
  auto reply_body = DFS_TRY(mds::apply_entry(entry, mds::default_fs_settings(), txn, effects));
  proto::InodeReply reply;
  if (!reply.ParseFromString(reply_body)) {
    return make_error(ErrorCode::kInternal, "the setattr op returned no inode");
  }
  return std::move(*reply.mutable_inode());
}

proto::SetAttrRequest merged_setattr(const proto::Inode& predicted, uint32_t valid) {
  constexpr uint32_t kSetCtime = 1024;
  proto::SetAttrRequest req;
  req.set_ino(predicted.ino());
  req.set_valid(valid | kSetCtime);
  req.set_mode(predicted.mode() & 07777);
  req.set_uid(predicted.uid());
  req.set_gid(predicted.gid());
  *req.mutable_atime() = predicted.atime();
  *req.mutable_mtime() = predicted.mtime();
  *req.mutable_ctime() = predicted.ctime();
  return req;
}

}  // namespace dfs::client
