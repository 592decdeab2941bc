#include "mds/ops/read_ops.h"

#include <algorithm>

#include "mds/ops/inode_rules.h"
#include "mds/ops/layout_xattr.h"
#include "mds/ops/meta_view.h"
#include "mds/ops/xattr_names.h"

namespace dfs::mds {
namespace {

Result<proto::Inode> load_directory(const KvReader& kv, uint64_t ino) {
  auto dir = DFS_TRY(load_inode(kv, ino));
  if (!is_dir(dir)) {
    return make_error(ErrorCode::kNotDirectory,
                      "inode " + std::to_string(ino) + " is no directory");
  }
  return dir;
}

proto::DirEntry dot_entry(const char* name, uint64_t ino, uint64_t cookie) {
  proto::DirEntry e;
  e.set_name(name);
  e.set_ino(ino);
  e.set_type(S_IFDIR);
  e.set_cookie(cookie);
  return e;
}

}  // namespace

Result<proto::InodeReply> op_lookup(const KvReader& kv, const proto::LookupRequest& req) {
  if (req.name().size() > kMaxNameBytes) {
    return make_error(ErrorCode::kNameTooLong, "names are at most 255 bytes");
  }
  auto dir = DFS_TRY(load_directory(kv, req.parent()));
  proto::InodeReply reply;
  if (req.name() == "." || req.name() == "..") {
    uint64_t ino = req.name() == "." ? dir.ino() : (dir.parent() ? dir.parent() : dir.ino());
    *reply.mutable_inode() = DFS_TRY(load_inode(kv, ino, ErrorCode::kNotFound));
    return reply;
  }
  DFS_TRY_STATUS(check_name(req.name()));
  auto dentry = DFS_TRY(find_dentry(kv, dir.ino(), req.name()));
  if (!dentry) return make_error(ErrorCode::kNotFound, "no entry '" + req.name() + "'");
  *reply.mutable_inode() = DFS_TRY(load_inode(kv, dentry->ino, ErrorCode::kNotFound));
  reply.mutable_inode()->clear_inline_data();
  return reply;
}

Result<proto::InodeReply> op_getattr(const KvReader& kv, const proto::GetAttrRequest& req) {
  proto::InodeReply reply;
  *reply.mutable_inode() = DFS_TRY(load_inode(kv, req.ino()));
  reply.mutable_inode()->clear_inline_data();
  return reply;
}

Result<proto::ReadlinkReply> op_readlink(const KvReader& kv, const proto::ReadlinkRequest& req) {
  auto inode = DFS_TRY(load_inode(kv, req.ino()));
  if (!S_ISLNK(inode.mode())) return make_error(ErrorCode::kInvalidArgument, "not a symlink");
  proto::ReadlinkReply reply;
  reply.set_target(inode.symlink());
  return reply;
}

Result<proto::ReaddirReply> op_readdir(const KvReader& kv, const proto::ReaddirRequest& req,
                                       size_t max_reply_bytes) {
  auto dir = DFS_TRY(load_directory(kv, req.ino()));
  size_t max = req.max_entries() == 0 ? 512 : std::min<size_t>(req.max_entries(), 4096);
  proto::ReaddirReply reply;
  if (req.cookie() < kDotCookie) *reply.add_entries() = dot_entry(".", dir.ino(), kDotCookie);
  if (req.cookie() < kDotDotCookie && reply.entries_size() < static_cast<int>(max)) {
    *reply.add_entries() = dot_entry("..", dir.parent() ? dir.parent() : dir.ino(), kDotDotCookie);
  }
  size_t want = max - reply.entries_size();
  auto entries = DFS_TRY(list_dentries(kv, dir.ino(), req.cookie(), want + 1));
  size_t bytes = 0;
  size_t taken = 0;
  for (; taken < entries.size() && taken < want; ++taken) {
    const auto& d = entries[taken];
    proto::DirEntry e;
    e.set_name(d.name);
    e.set_ino(d.ino);
    e.set_type(d.type);
    e.set_cookie(d.slot);
    if (req.plus()) {
      auto inode = DFS_TRY(find_inode(kv, d.ino));
      if (inode) {
        if (req.inline_max() > 0 && inode->inline_() && inode->size() <= req.inline_max()) {
          std::string data = DFS_TRY(take_inline_data(kv, *inode));
          inode->set_inline_data(std::move(data));
          e.set_inline_data_included(true);
        } else {
          inode->clear_inline_data();
        }
        *e.mutable_inode() = std::move(*inode);
      }
    }
    bytes += e.ByteSizeLong();
    if (taken > 0 && bytes > max_reply_bytes) break;
    *reply.add_entries() = std::move(e);
  }
  reply.set_eof(taken == entries.size());
  return reply;
}

Result<proto::GetXattrReply> op_getxattr(const KvReader& kv, const proto::GetXattrRequest& req) {
  DFS_TRY_STATUS(check_xattr_name(req.name()));
  auto inode = DFS_TRY(load_inode(kv, req.ino()));
  if (!is_utf8(req.name())) return make_error(ErrorCode::kNoAttribute, "no such xattr");
  proto::GetXattrReply reply;
  if (req.name() == kLayoutXattr && is_reg(inode)) {
    reply.set_value(format_layout(inode.layout()));
    return reply;
  }
  auto it = inode.xattrs().find(req.name());
  if (it == inode.xattrs().end())
    return make_error(ErrorCode::kNoAttribute, "no xattr " + req.name());
  reply.set_value(it->second);
  return reply;
}

Result<proto::ListXattrReply> op_listxattr(const KvReader& kv, const proto::ListXattrRequest& req) {
  auto inode = DFS_TRY(load_inode(kv, req.ino()));
  proto::ListXattrReply reply;
  for (const auto& [name, value] : inode.xattrs()) {
    if (is_listed_xattr(name)) reply.add_names(name);
  }
  std::sort(reply.mutable_names()->begin(), reply.mutable_names()->end());
  return reply;
}

Result<proto::StatFsMdsReply> op_statfs(const KvReader& kv) {
  proto::StatFsMdsReply reply;
  reply.set_inodes(DFS_TRY(read_counter(kv, kInodeCount)));
  reply.set_purge_backlog_bytes(DFS_TRY(read_counter(kv, kPurgeBytes)));
  reply.set_purge_backlog_inodes(DFS_TRY(read_counter(kv, kPurgeCount)));
  reply.set_orphans(DFS_TRY(read_counter(kv, kOrphanCount)));
  return reply;
}

}  // namespace dfs::mds
