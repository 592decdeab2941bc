// Reads, stats and listings. The primary serves them from its store once the PG is
// peered (peering.cc); a block whose checksum fails is served from another replica
// instead, so a client never receives bad bytes, and the object is then repaired
// (scrub.cc).
#include <spdlog/spdlog.h>

#include "common/rpc/methods.h"
#include "osd/service/osd_service.h"

namespace dfs::osd {

awaitable<Result<rpc::Reply>> OsdService::on_read(rpc::ConnectionPtr conn, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::ReadRequest>(frame.body));
  DFS_CO_TRY_STATUS(co_await catch_up_map(request.epoch()));
  DFS_CO_TRY_STATUS(check_not_fenced(conn));
  const proto::Pool* pool = DFS_CO_TRY(locate(request.object()));
  auto acting = map().acting(*pool, request.object().pg());
  bool primary = !acting.empty() && acting.front() == options_.id;
  if (!primary && !request.any_replica()) co_return unexpected(not_primary(request.object()));
  // As the primary, only once the PG's members agree (peering.cc).
  DFS_CO_AWAIT_TRY(auto admitted, admit_unless_replica(request.any_replica(),
                                                       request.object().pool(), request.object().pg()));
  // Under the object's lock: a read never sees a write that is not yet on every replica.
  auto guard = co_await locks_.lock(std::to_string(request.object().pool()) + "/" + request.object().name());
  ObjectKey key = object_key(request.object());
  uint64_t length = request.length() == 0 ? UINT64_MAX : request.length();
  // Named, not a temporary: GCC 12 destroys a closure temporary in a co_await twice.
  auto read = [this, key, offset = request.offset(), length] {
    auto info = store_->stat(key);
    if (!info) return Result<std::pair<ObjectInfo, std::string>>(info.error());
    auto data = store_->read(key, offset, length);
    if (!data) return Result<std::pair<ObjectInfo, std::string>>(data.error());
    return Result<std::pair<ObjectInfo, std::string>>(std::pair{*info, std::move(*data)});
  };
  auto result = co_await run_blocking(blocking_, std::move(read));
  proto::ReadReply reply;
  // A member's own copy (any_replica: scrub, tests) is reported as it is.
  if (!result && result.error().code() == ErrorCode::kCorruption && primary &&
      !request.any_replica()) {
    spdlog::error("{}: {} in object {} of pg {}.{}; reading from a replica", entity_,
                  result.error().to_string(), key.name, key.pool, key.pg);
    DFS_CO_AWAIT_TRY(auto data, read_from_replicas(request));
    repair_after_read(key);  // waits for our object lock
    co_return rpc::make_reply(reply, std::move(data));
  }
  if (!result) co_return unexpected(std::move(result).error());
  reply.set_object_size(result->first.size);
  reply.mutable_version()->set_epoch(result->first.version.epoch);
  reply.mutable_version()->set_seq(result->first.version.seq);
  co_return rpc::make_reply(reply, std::move(result->second));
}

awaitable<Result<std::string>> OsdService::read_from_replicas(proto::ReadRequest request) {
  const proto::Pool* pool = DFS_CO_TRY(locate(request.object()));
  request.set_any_replica(true);
  Error last(ErrorCode::kCorruption, "no replica holds a good copy");
  for (int32_t peer : map().acting(*pool, request.object().pg())) {
    if (peer == options_.id) continue;
    std::string data;
    auto reply = co_await messenger_.call_proto<proto::ReadReply>(
        map().osd(peer)->addr(), rpc::kOsdRead, request, options_.replica_timeout, {}, &data);
    if (reply) co_return data;
    last = std::move(reply).error();
  }
  co_return unexpected(std::move(last));
}

awaitable<Result<rpc::Reply>> OsdService::on_stat(rpc::ConnectionPtr conn, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::StatRequest>(frame.body));
  DFS_CO_TRY_STATUS(co_await catch_up_map(request.epoch()));
  DFS_CO_TRY_STATUS(check_not_fenced(conn));
  const proto::Pool* pool = DFS_CO_TRY(locate(request.object()));
  auto acting = map().acting(*pool, request.object().pg());
  if ((acting.empty() || acting.front() != options_.id) && !request.any_replica()) {
    co_return unexpected(not_primary(request.object()));
  }
  DFS_CO_AWAIT_TRY(auto admitted, admit_unless_replica(request.any_replica(),
                                                       request.object().pool(), request.object().pg()));
  ObjectKey key = object_key(request.object());
  auto stat = [this, key] { return store_->stat(key); };  // named: see on_read
  DFS_CO_AWAIT_TRY(auto info, run_blocking(blocking_, std::move(stat)));
  proto::StatReply reply;
  reply.set_size(info.size);
  reply.mutable_version()->set_epoch(info.version.epoch);
  reply.mutable_version()->set_seq(info.version.seq);
  co_return rpc::make_reply(reply);
}

awaitable<Result<rpc::Reply>> OsdService::on_list(rpc::ConnectionPtr conn, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::ListRequest>(frame.body));
  DFS_CO_TRY_STATUS(co_await catch_up_map(request.epoch()));
  DFS_CO_TRY_STATUS(check_not_fenced(conn));
  DFS_CO_TRY(locate_pg(request.pool(), request.pg()));
  DFS_CO_AWAIT_TRY(auto admitted,
                   admit_unless_replica(request.any_replica(), request.pool(), request.pg()));
  DFS_CO_AWAIT_TRY(PgState * pg, load_pg(request.pool(), request.pg()));
  auto list = [this, pool_id = request.pool(), pg = request.pg(), deep = request.deep()] {
    return scrub_listing_here(pool_id, pg, deep);
  };
  DFS_CO_AWAIT_TRY(auto entries, run_blocking(blocking_, std::move(list)));
  proto::ListReply reply;
  *reply.mutable_last_update() = pg->last_update();
  for (const auto& [name, info] : entries) {
    auto* entry = reply.add_entries();
    entry->set_name(name);
    entry->set_size(info.size);
    entry->mutable_version()->set_epoch(info.version.epoch);
    entry->mutable_version()->set_seq(info.version.seq);
    entry->set_digest(info.digest);
    entry->set_damage(info.damage);
  }
  co_return rpc::make_reply(reply);
}

awaitable<Result<rpc::Reply>> OsdService::on_statfs(rpc::ConnectionPtr, rpc::Frame) {
  DFS_CO_AWAIT_TRY(auto usage, run_blocking(blocking_, [this] { return store_->usage(); }));
  proto::StatFsReply reply;
  reply.set_total_bytes(usage.total_bytes);
  reply.set_used_bytes(usage.used_bytes);
  reply.set_available_bytes(usage.available_bytes);
  reply.set_objects(usage.object_count);
  reply.set_device_id(usage.device.id);
  reply.set_device_name(usage.device.name);
  reply.set_recovered_objects(recovered_objects_);
  reply.set_inconsistent_objects(inconsistent_objects_);
  reply.set_repaired_objects(repaired_objects_);
  reply.set_recovery_pending_objects(recovery_pending_objects_);
  const PrimaryPgCounts pgs = count_primary_pgs();
  reply.set_pgs_primary(pgs.primary);
  reply.set_pgs_active(pgs.active);
  co_return rpc::make_reply(reply);
}

}  // namespace dfs::osd
