// Read handlers: they run the read ops against committed state, on the I/O thread from
// memory when they can (serve_read).
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
  // Back after a takeover: not evicted when the reconnect phase ends, which it does once
  // what this session re-asserts below is recorded and no other session is missing.
  reconnect_.reconnected(client, req.reasserts_locks());
  // A mount's session is recorded in the replicated state before it is granted anything,
  // so that a later active MDS awaits it (ReconnectPhase), also if it only reads.
  if (auto* session = sessions_.find(client); session && req.renews() && !session->recorded) {
    proto::MdsLogEntry record;
    record.mutable_record_session()->set_client(client);
    auto recorded = co_await committer_.submit(std::move(record));
    if (!recorded) co_return unexpected(std::move(recorded).error());
    if (auto* still = sessions_.find(client)) still->recorded = true;
  }
  // First: a mount that cached alone until now pushes its changes before this session
  // reads anything (the root included).
  auto cache = co_await cache_.open(client, req.wants_cache(), req.holds_exclusive());
  if (!serving_) co_return unexpected(standby_error());
  if (req.wants_cache() &&
      (req.owned_dirs_size() > 0 || req.owned_files_size() > 0 || req.read_files_size() > 0)) {
    dir_rights_.reasserted(client, {req.owned_dirs().begin(), req.owned_dirs().end()},
                           {req.owned_files().begin(), req.owned_files().end()},
                           {req.read_files().begin(), req.read_files().end()});
  }
  end_reconnect_phase_if_due();
  auto root = co_await read_inode(client, kRootIno);
  if (!root) co_return unexpected(std::move(root).error());
  proto::SessionReply reply;
  *reply.mutable_root() = std::move(*root);
  *reply.mutable_default_layout() = options_.fs.default_layout;
  reply.set_inline_threshold(options_.fs.inline_threshold);
  reply.set_fs_name(options_.fs_name);
  reply.set_mds_instance(instance_);
  reply.set_session_timeout_ms(static_cast<uint64_t>(options_.session_timeout.count()));
  reply.set_exclusive(cache.exclusive);
  reply.set_cache_seq(cache.seq);
  reply.set_lease_ms(lease_ms_for(client));
  // The session was registered by handle(); a mount renews it from now on.
  if (auto* session = sessions_.find(client); session && req.renews() && !session->renewing) {
    session->renewing = true;
    session->last_renew = Clock::now();
  }
  co_return rpc::make_reply(reply);
}

awaitable<MdsService::Reply> MdsService::on_lookup(proto::LookupRequest req, std::string client) {
  ReadFn read = [&req](const KvReader& kv) { return to_reply(op_lookup(kv, req)); };
  co_return co_await serve_read(read, client);
}

awaitable<MdsService::Reply> MdsService::on_getattr(proto::GetAttrRequest req, std::string client) {
  ReadFn read = [&req](const KvReader& kv) { return to_reply(op_getattr(kv, req)); };
  co_return co_await serve_read(read, client);
}

awaitable<MdsService::Reply> MdsService::on_readlink(proto::ReadlinkRequest req,
                                                     std::string client) {
  ReadFn read = [&req](const KvReader& kv) { return to_reply(op_readlink(kv, req)); };
  co_return co_await serve_read(read, client);
}

awaitable<MdsService::Reply> MdsService::on_readdir(proto::ReaddirRequest req, std::string client) {
  ReadFn read = [&req](const KvReader& kv) { return to_reply(op_readdir(kv, req)); };
  co_return co_await serve_read(read, client);
}

awaitable<MdsService::Reply> MdsService::on_getxattr(proto::GetXattrRequest req,
                                                     std::string client) {
  ReadFn read = [&req](const KvReader& kv) { return to_reply(op_getxattr(kv, req)); };
  co_return co_await serve_read(read, client);
}

awaitable<MdsService::Reply> MdsService::on_listxattr(proto::ListXattrRequest req,
                                                      std::string client) {
  ReadFn read = [&req](const KvReader& kv) { return to_reply(op_listxattr(kv, req)); };
  co_return co_await serve_read(read, client);
}

awaitable<MdsService::Reply> MdsService::on_statfs(proto::StatFsMdsRequest /*req*/,
                                                   std::string client) {
  ReadFn read = [](const KvReader& kv) { return to_reply(op_statfs(kv)); };
  co_return co_await serve_read(read, client);
}

namespace {

// The inode, with its inline data in the record when asked.
Result<proto::Inode> load_for_reply(const KvReader& kv, uint64_t ino, bool with_data) {
  auto inode = DFS_TRY(load_inode(kv, ino));
  if (with_data) {
    std::string data = DFS_TRY(take_inline_data(kv, inode));
    *inode.mutable_inline_data() = std::move(data);
  }
  return inode;
}

}  // namespace

awaitable<Result<proto::Inode>> MdsService::read_inode(const std::string& client,
                                                       uint64_t ino, bool with_data) {
  // serve_read's choice of view and its fallback to the pool; the inode comes back
  // through `found` (the last attempt's, written on the pool when it went there).
  Result<proto::Inode> found;
  ReadFn read = [&found, ino, with_data](const KvReader& kv) -> Reply {
    found = load_for_reply(kv, ino, with_data);
    if (!found) return unexpected(found.error());
    return rpc::Reply{};
  };
  auto served = co_await serve_read(read, client);
  if (!served) co_return unexpected(std::move(served).error());
  co_return std::move(found);
}

awaitable<MdsService::Reply> MdsService::serve_read(const ReadFn& read,
                                                    const std::string& client) {
  // Most reads find their keys in memory: answering them here saves two thread
  // hand-offs, which cost more than the read. Only a read that needs the disk goes to
  // the pool (the I/O thread never waits for the disk).
  // Groups in flight are seen only when they are this client's own changes, answered
  // early: another's may still be lost with the leader (Committer::unsettled_only_of).
  // Groups decided after the wait for the others are newer than this read.
  const KvReader& memory = store_->memory_reader();
  Reply fast;
  if (committer_.unsettled_only_of(client)) {
    fast = read(committer_.projected_view(memory));
  } else {
    co_await groups_settled();
    fast = read(memory);
  }
  if (fast || fast.error().code() != ErrorCode::kWouldBlock) co_return fast;
  co_await groups_settled();
  const auto* r = &read;  // GCC 12: no closure temporaries in a co_await expression
  auto slow = [this, r] { return (*r)(*store_); };
  co_return co_await run_blocking(blocking_, std::move(slow));
}

awaitable<void> MdsService::groups_settled() {
  // The pool reads the store alone, which holds only what has committed.
  if (!committer_.settled()) {
    ignore_error(co_await committer_.wait_durable(), "a read waits, it does not fail");
  }
}

}  // namespace dfs::mds
