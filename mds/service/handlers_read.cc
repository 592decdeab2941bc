// Read handlers: they run the read ops on the blocking pool against committed state.
// Replies: kMdsLookup/kMdsGetAttr InodeReply, kMdsReadlink ReadlinkReply, kMdsReaddir
// ReaddirReply, kMdsGetXattr GetXattrReply, kMdsListXattr ListXattrReply, kMdsStatFs
// StatFsMdsReply, kMdsSession SessionReply.
#include "mds/ops/meta_view.h"
#include "mds/ops/read_ops.h"
#include "mds/service/mds_service.h"

namespace dfs::mds {
namespace {

template <class M>
Result<rpc::Reply> to_reply(Result<M> result) {
  if (!result) return unexpected(std::move(result).error());
  return rpc::make_reply(*result);
}

}  // namespace

awaitable<MdsService::Reply> MdsService::on_session(proto::SessionRequest req, std::string client) {
  auto root = co_await run_blocking(blocking_, [this] { return load_inode(*store_, kRootIno); });
  if (!root) co_return unexpected(std::move(root).error());
  proto::SessionReply reply;
  *reply.mutable_root() = std::move(*root);
  *reply.mutable_default_layout() = options_.fs.default_layout;
  reply.set_inline_threshold(options_.fs.inline_threshold);
  reply.set_fs_name(options_.fs_name);
  reply.set_mds_instance(instance_);
  (void)req;
  (void)client;  // the session was registered by handle()
  co_return rpc::make_reply(reply);
}

awaitable<MdsService::Reply> MdsService::on_lookup(proto::LookupRequest req) {
  // GCC 12 destroys non-trivial temporaries of a co_await full-expression twice:
  // the lambda captures a pointer and the result gets a name.
  const auto* r = &req;
  auto result = co_await run_blocking(blocking_, [this, r] { return op_lookup(*store_, *r); });
  co_return to_reply(std::move(result));
}

awaitable<MdsService::Reply> MdsService::on_getattr(proto::GetAttrRequest req) {
  // GCC 12 destroys non-trivial temporaries of a co_await full-expression twice:
  // the lambda captures a pointer and the result gets a name.
  const auto* r = &req;
  auto result = co_await run_blocking(blocking_, [this, r] { return op_getattr(*store_, *r); });
  co_return to_reply(std::move(result));
}

awaitable<MdsService::Reply> MdsService::on_readlink(proto::ReadlinkRequest req) {
  // GCC 12 destroys non-trivial temporaries of a co_await full-expression twice:
  // the lambda captures a pointer and the result gets a name.
  const auto* r = &req;
  auto result = co_await run_blocking(blocking_, [this, r] { return op_readlink(*store_, *r); });
  co_return to_reply(std::move(result));
}

awaitable<MdsService::Reply> MdsService::on_readdir(proto::ReaddirRequest req) {
  // GCC 12 destroys non-trivial temporaries of a co_await full-expression twice:
  // the lambda captures a pointer and the result gets a name.
  const auto* r = &req;
  auto result = co_await run_blocking(blocking_, [this, r] { return op_readdir(*store_, *r); });
  co_return to_reply(std::move(result));
}

awaitable<MdsService::Reply> MdsService::on_getxattr(proto::GetXattrRequest req) {
  // GCC 12 destroys non-trivial temporaries of a co_await full-expression twice:
  // the lambda captures a pointer and the result gets a name.
  const auto* r = &req;
  auto result = co_await run_blocking(blocking_, [this, r] { return op_getxattr(*store_, *r); });
  co_return to_reply(std::move(result));
}

awaitable<MdsService::Reply> MdsService::on_listxattr(proto::ListXattrRequest req) {
  // GCC 12 destroys non-trivial temporaries of a co_await full-expression twice:
  // the lambda captures a pointer and the result gets a name.
  const auto* r = &req;
  auto result = co_await run_blocking(blocking_, [this, r] { return op_listxattr(*store_, *r); });
  co_return to_reply(std::move(result));
}

awaitable<MdsService::Reply> MdsService::on_statfs(proto::StatFsMdsRequest /*req*/) {
  auto result = co_await run_blocking(blocking_, [this] { return op_statfs(*store_); });
  co_return to_reply(std::move(result));
}

}  // namespace dfs::mds
