// File data bookkeeping: writes into inline files, the move of inline data to objects
// (uninline; the service wrote object 0 first) and the commit of object writes (new end
// of file, mtime, privilege clearing).
#include "common/proto/stable_bytes.h"
#include "mds/ops/inode_rules.h"

namespace dfs::mds {
namespace {

Result<proto::Inode> load_file(OpContext& ctx, uint64_t ino) {
  auto inode = DFS_TRY(load_inode(ctx.kv(), ino));
  if (is_dir(inode)) return make_error(ErrorCode::kIsDirectory, "data ops on a directory");
  if (!is_reg(inode)) return make_error(ErrorCode::kInvalidArgument, "data ops on a special file");
  return inode;
}

std::string inode_reply(proto::Inode inode) {
  proto::InodeReply reply;
  *reply.mutable_inode() = std::move(inode);
  return proto::stable_bytes(reply);
}

bool is_set(const proto::Timespec& t) { return t.sec() != 0 || t.nsec() != 0; }

}  // namespace

Result<std::string> apply_write_inline(OpContext& ctx, const proto::WriteInlineRequest& req) {
  auto inode = DFS_TRY(load_file(ctx, req.ino()));
  if (!inode.inline_()) {
    return make_error(ErrorCode::kFileTooBig, "the file's data is in objects");
  }
  uint64_t end = req.offset() + req.data().size();
  if (req.offset() > ctx.fs.inline_threshold || end > ctx.fs.inline_threshold) {
    return make_error(ErrorCode::kFileTooBig, "the write passes the inline threshold");
  }
  if (req.data().empty()) return inode_reply(std::move(inode));
  std::string data = DFS_TRY(take_inline_data(ctx.kv(), inode));
  if (data.size() < end) data.resize(end, '\0');
  data.replace(req.offset(), req.data().size(), req.data());
  set_size(inode, data.size());
  *inode.mutable_mtime() = is_set(req.mtime()) ? req.mtime() : ctx.now();
  kill_privileges(inode, req.header().creds());
  changed(inode, ctx.now());
  ctx.w.put_inode(inode);
  ctx.w.put_inline_data(inode.ino(), data);
  return inode_reply(std::move(inode));  // without the data: the writer has it
}

Result<std::string> apply_uninline(OpContext& ctx, const proto::UninlineRequest& req) {
  auto inode = DFS_TRY(load_file(ctx, req.ino()));
  if (!inode.inline_()) return inode_reply(std::move(inode));
  if (ctx.entry.expect_version() && inode.version() != ctx.entry.expect_version()) {
    return make_error(ErrorCode::kBusy, "inline data changed while it was copied");
  }
  (void)DFS_TRY(take_inline_data(ctx.kv(), inode));  // now in object 0
  inode.set_inline_(false);
  inode.set_version(inode.version() + 1);  // no ctime change: the file is the same
  ctx.w.put_inode(inode);
  ctx.w.put_inline_data(inode.ino(), "");
  return inode_reply(std::move(inode));
}

Result<std::string> apply_commit_write(OpContext& ctx, const proto::CommitWriteRequest& req) {
  auto inode = DFS_TRY(load_file(ctx, req.ino()));
  if (inode.inline_()) {
    if (inode.size() != 0) {  // inline data is exactly the size
      return make_error(ErrorCode::kInvalidArgument,
                        "commit of object writes to an inline file (uninline it first)");
    }
    inode.set_inline_(false);  // an empty inline file simply starts using objects
  }
  uint64_t old_size = inode.size();
  uint64_t end = req.append_bytes() > 0 ? old_size + req.append_bytes() : req.end();
  if (end > old_size) set_size(inode, end);
  // Blocks: what the client says it wrote, else (older clients) the growth.
  add_written(inode, req.written_bytes() ? req.written_bytes()
                                         : (end > old_size ? end - old_size : 0));
  *inode.mutable_mtime() = is_set(req.mtime()) ? req.mtime() : ctx.now();
  if (req.clear_privileges()) kill_privileges(inode, req.header().creds());
  changed(inode, ctx.now());
  ctx.w.put_inode(inode);
  return inode_reply(std::move(inode));
}

}  // namespace dfs::mds
