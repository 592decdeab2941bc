#include "mds/ops/inode_rules.h"

#include "common/proto/stable_bytes.h"

#include <algorithm>

namespace dfs::mds {

FsSettings default_fs_settings() {
  FsSettings fs;
  fs.default_layout.set_object_size(4u << 20);
  fs.default_layout.set_pool("data");
  return fs;
}

Status check_name(std::string_view name) {
  if (name.empty()) return make_error(ErrorCode::kInvalidArgument, "empty name");
  if (name.size() > kMaxNameBytes) {
    return make_error(ErrorCode::kNameTooLong, "names are at most 255 bytes");
  }
  if (name == "." || name == "..") {
    return make_error(ErrorCode::kInvalidArgument, "'.' and '..' are not entry names");
  }
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return make_error(ErrorCode::kInvalidArgument, "a name holds no '/' or NUL");
  }
  return ok_status();
}

bool in_group(const proto::Creds& creds, uint32_t gid) {
  if (creds.uid() == 0 || creds.gid() == gid) return true;
  return std::find(creds.groups().begin(), creds.groups().end(), gid) != creds.groups().end();
}

void changed(proto::Inode& inode, const proto::Timespec& now) {
  *inode.mutable_ctime() = now;
  inode.set_version(inode.version() + 1);
}

void entries_changed(proto::Inode& dir, const proto::Timespec& now) {
  *dir.mutable_mtime() = now;
  changed(dir, now);
}

uint32_t without_setid(uint32_t mode) {
  mode &= ~uint32_t(S_ISUID);
  if (mode & S_IXGRP) mode &= ~uint32_t(S_ISGID);
  return mode;
}

void kill_privileges(proto::Inode& inode, const proto::Creds& writer) {
  if (!is_reg(inode)) return;
  inode.mutable_xattrs()->erase(kCapabilityXattr);
  if (writer.uid() == 0) return;
  inode.set_mode(without_setid(inode.mode()));
}

void set_size(proto::Inode& inode, uint64_t size) {
  inode.set_size(size);
  if (inode.inline_()) {
    inode.set_blocks(blocks_of(size));
  } else {
    inode.set_blocks(std::min(inode.blocks(), blocks_of(size)));
  }
}

void add_written(proto::Inode& inode, uint64_t bytes) {
  inode.set_blocks(std::min(inode.blocks() + blocks_of(bytes), blocks_of(inode.size())));
}

Result<proto::Inode> load_dir(OpContext& ctx, uint64_t ino) {
  auto dir = DFS_TRY(load_inode(ctx.kv(), ino, ErrorCode::kNotFound));
  if (!is_dir(dir)) {
    return make_error(ErrorCode::kNotDirectory,
                      "inode " + std::to_string(ino) + " is no directory");
  }
  if (dir.nlink() == 0) {
    return make_error(ErrorCode::kNotFound, "directory " + std::to_string(ino) + " was removed");
  }
  return dir;
}

Status drop_link(OpContext& ctx, proto::Inode& inode) {
  inode.set_nlink(is_dir(inode) || inode.nlink() == 0 ? 0 : inode.nlink() - 1);
  changed(inode, ctx.now());
  ctx.w.put_inode(inode);
  if (inode.nlink() > 0) return ok_status();
  ctx.w.txn().put(orphan_key(inode.ino()), {});
  DFS_TRY_STATUS(ctx.w.add_to_counter(kOrphanCount, 1));
  ctx.effects.orphaned.push_back(inode.ino());
  return ok_status();
}

Status purge_orphan(OpContext& ctx, uint64_t ino) {
  auto mark = DFS_TRY(ctx.kv().get(orphan_key(ino)));
  if (!mark) return ok_status();
  ctx.w.txn().del(orphan_key(ino));
  DFS_TRY_STATUS(ctx.w.add_to_counter(kOrphanCount, -1));
  auto inode = DFS_TRY(find_inode(ctx.kv(), ino));
  if (!inode) return ok_status();
  ctx.w.delete_inode(ino);
  DFS_TRY_STATUS(ctx.w.add_to_counter(kInodeCount, -1));
  if (is_reg(*inode) && !inode->inline_() && inode->size() > 0) {
    proto::PurgeRecord record;
    record.set_size(inode->size());
    *record.mutable_layout() = inode->layout();
    ctx.w.txn().put(purge_key(ino), proto::stable_bytes(record));
    DFS_TRY_STATUS(ctx.w.add_to_counter(kPurgeCount, 1));
    DFS_TRY_STATUS(ctx.w.add_to_counter(kPurgeBytes, static_cast<int64_t>(inode->size())));
    ctx.effects.purge_queued.push_back(ino);
  }
  return ok_status();
}

}  // namespace dfs::mds
