// alloc_inos: hands a client a range of fresh inode numbers, so that it can answer a
// create itself and send it later (docs/architecture.md, "Deferred namespace changes").
// The range is logged like any mutation: a replica that becomes leader never hands out
// those numbers again.
#include "common/proto/stable_bytes.h"
#include "mds/ops/op_context.h"

namespace dfs::mds {

Result<std::string> apply_alloc_inos(OpContext& ctx, const proto::AllocInosRequest& req) {
  constexpr uint32_t kMaxCount = 65536;
  if (req.count() == 0 || req.count() > kMaxCount) {
    return make_error(ErrorCode::kInvalidArgument, "an inode range holds 1 to 65536 numbers");
  }
  uint64_t next = DFS_TRY(read_counter(ctx.kv(), kNextIno));
  uint64_t first = std::max(next, first_ino_of_rank(ctx.fs.rank));
  ctx.w.set_counter(kNextIno, first + req.count());
  proto::AllocInosReply reply;
  reply.set_first(first);
  reply.set_count(req.count());
  return proto::stable_bytes(reply);
}

}  // namespace dfs::mds
