// The replicated write path: a client's write arrives at the PG's primary, which
// versions it, applies it locally and on every other up OSD of the PG in parallel, and
// acknowledges once all of them (or min_size, when the rest are marked down) have it
// durable. Replicas apply exactly the op and version the primary chose.
#include <spdlog/spdlog.h>

#include "common/proto/mon.pb.h"
#include "common/rpc/methods.h"
#include "osd/service/osd_service.h"

namespace dfs::osd {
namespace {

Status validate_write(const proto::WriteRequest& request, const std::string& data) {
  switch (request.kind()) {
    case proto::OP_WRITE:
    case proto::OP_WRITE_FULL:
      break;
    case proto::OP_TRUNCATE:
    case proto::OP_REMOVE:
      if (!data.empty()) return make_error(ErrorCode::kInvalidArgument, "data with a data-less op");
      break;
    default:
      return make_error(ErrorCode::kInvalidArgument, "unknown write op");
  }
  constexpr uint64_t kMaxObjectBytes = 1ull << 40;
  if (request.offset() > kMaxObjectBytes || request.offset() + data.size() > kMaxObjectBytes) {
    return make_error(ErrorCode::kInvalidArgument, "write past the 1 TiB object size limit");
  }
  if (!request.has_reqid() || request.reqid().client().empty()) {
    return make_error(ErrorCode::kInvalidArgument, "write without a request id");
  }
  return ok_status();
}

// The store transaction of one versioned op; identical on primary and replicas.
Transaction build_transaction(const proto::WriteRequest& request, std::string data,
                              const proto::Version& version, const PgState& pg) {
  Transaction txn;
  ObjectKey key = object_key(request.object());
  uint64_t length = data.size();
  switch (request.kind()) {
    case proto::OP_WRITE:
      txn.write(key, request.offset(), std::move(data));
      break;
    case proto::OP_WRITE_FULL:
      txn.truncate(key, 0);
      if (length > 0) txn.write(key, 0, std::move(data));
      break;
    case proto::OP_TRUNCATE:
      txn.truncate(key, request.offset());
      break;
    default:
      txn.remove(key);
      break;
  }
  if (request.kind() != proto::OP_REMOVE) {
    txn.set_version(key, ObjectVersion{version.epoch(), version.seq()});
  }
  proto::PgLogEntry entry;
  *entry.mutable_version() = version;
  *entry.mutable_reqid() = request.reqid();
  entry.set_kind(request.kind());
  entry.set_name(request.object().name());
  entry.set_offset(request.offset());
  entry.set_length(length);
  pg.log_to(txn, request.object().pool(), request.object().pg(), entry);
  return txn;
}

std::string lock_key(const proto::ObjectLocator& object) {
  return std::to_string(object.pool()) + "/" + object.name();
}

}  // namespace

Status OsdService::check_space(const proto::WriteRequest& request,
                               const std::vector<int32_t>& acting) const {
  // Removals and truncates free space (a truncate up allocates nothing): always allowed,
  // so that a full cluster can be emptied.
  if (request.kind() != proto::OP_WRITE && request.kind() != proto::OP_WRITE_FULL) return ok_status();
  for (int32_t id : acting) {
    const auto* osd = map().osd(id);
    if (osd && osd->space() == proto::SPACE_FULL) {
      return make_error(ErrorCode::kNoSpace,
                        "osd." + std::to_string(id) + " is full (" +
                            std::to_string(osd->used_permille() / 10) + "% of its disk used): " +
                            "writes to pg " + std::to_string(request.object().pool()) + "." +
                            std::to_string(request.object().pg()) + " are refused until space is freed");
    }
  }
  return ok_status();
}

awaitable<Result<rpc::Reply>> OsdService::on_write(rpc::ConnectionPtr conn, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::WriteRequest>(frame.body));
  DFS_CO_TRY_STATUS(validate_write(request, frame.data));
  DFS_CO_TRY_STATUS(co_await catch_up_map(request.epoch()));
  DFS_CO_TRY_STATUS(check_not_fenced(conn));
  DFS_CO_TRY(locate(request.object()));
  // Before the object's lock: peering waits for admitted ops, which may hold locks.
  DFS_CO_AWAIT_TRY(auto admitted, admit(request.object().pool(), request.object().pg()));
  auto guard = co_await locks_.lock(lock_key(request.object()));
  // Checked under the lock: the map may have moved while we waited for it.
  const proto::Pool* pool = DFS_CO_TRY(locate(request.object()));
  auto acting = map().acting(*pool, request.object().pg());
  if (acting.empty() || acting.front() != options_.id) co_return unexpected(not_primary(request.object()));
  if (acting.size() < pool->min_size()) {
    co_return make_error(ErrorCode::kUnavailable,
                         "pg " + std::to_string(pool->id()) + "." + std::to_string(request.object().pg()) +
                             " has " + std::to_string(acting.size()) + " of min_size " +
                             std::to_string(pool->min_size()) + " OSDs up");
  }
  DFS_CO_AWAIT_TRY(PgState* pg, load_pg(request.object().pool(), request.object().pg()));

  proto::WriteReply reply;
  if (auto seen = pg->find(request.reqid())) {
    // A resend of a request we already applied. We may have crashed before every
    // replica had it, so make the replicas hold this object as we do before answering
    // again; the op itself is not applied twice.
    DFS_CO_AWAIT_TRY(auto copies, sync_replicas(request, *seen, acting, pool->min_size()));
    *reply.mutable_version() = *seen;
    reply.set_copies(copies);
    co_return rpc::make_reply(reply);
  }
  DFS_CO_TRY_STATUS(check_space(request, acting));  // a resend above was applied already
  proto::Version version;
  version.set_epoch(map().epoch());
  version.set_seq(pg->next_seq());
  DFS_CO_AWAIT_TRY(auto copies, replicate(request, std::move(frame.data), version, acting,
                                              pool->min_size()));
  pg->remember(request.reqid(), version);
  pg->observe(version);
  *reply.mutable_version() = version;
  reply.set_copies(copies);
  co_return rpc::make_reply(reply);
}

awaitable<Result<uint32_t>> OsdService::replicate(proto::WriteRequest request, std::string data,
                                                  proto::Version version,
                                                  std::vector<int32_t> acting, uint32_t min_size) {
  std::vector<awaitable<Status>> tasks;
  proto::RepWriteRequest rep;
  *rep.mutable_op() = request;
  *rep.mutable_version() = version;
  rep.set_epoch(map().epoch());
  std::vector<uint64_t> incarnations;  // each replica's up_from when we sent to it
  for (size_t i = 1; i < acting.size(); ++i) {
    incarnations.push_back(map().osd(acting[i])->up_from());
    tasks.push_back(replica_write(acting[i], rep, data));
  }
  // Kept for a replica that restarts mid-write and needs the op again.
  std::string retry_data = acting.size() > 1 ? data : std::string();
  tasks.push_back(apply_local(request, std::move(data), version));
  auto results = co_await gather(std::move(tasks));

  const Status& local = results.back();
  if (!local) co_return unexpected(local.error().with_context("applying on the primary"));
  uint32_t copies = 1;
  for (size_t i = 0; i + 1 < results.size(); ++i) {
    int32_t peer = acting[i + 1];
    Status result = results[i];
    if (!result && result.error().code() == ErrorCode::kNotPrimary) {
      // The replica's map (caught up to ours or newer) no longer has us as this PG's
      // primary: the write belongs to the new primary; the client retries there.
      co_return unexpected(std::move(result).error());
    }
    if (!result && is_retryable(result.error().code())) {
      report_failure(peer, result.error());
      result = co_await retry_replica(peer, incarnations[i], rep, retry_data);
    }
    if (result) {
      ++copies;
    } else if (result.error().code() != ErrorCode::kNotFound) {
      // A real failure (no space, I/O error), or a peer neither marked down nor back.
      co_return unexpected(std::move(result).error().with_context("replica osd." + std::to_string(peer)));
    }
  }
  if (copies < min_size) {
    co_return make_error(ErrorCode::kUnavailable, "write reached " + std::to_string(copies) +
                                                      " replicas, fewer than min_size");
  }
  co_return copies;
}

awaitable<Status> OsdService::retry_replica(int32_t peer, uint64_t incarnation,
                                            proto::RepWriteRequest request, std::string data) {
  // Acknowledging without this replica is only safe once the map says it is down: then
  // no one reads from it, and recovery brings it up to date. If instead it restarted
  // (a new up_from), it is up again and simply needs the op.
  auto deadline = Clock::now() + options_.map_wait;
  for (;;) {
    const auto* info = map().osd(peer);
    if (!info || !info->up()) co_return make_error(ErrorCode::kNotFound, "marked down");
    if (info->up_from() != incarnation) {
      request.set_epoch(map().epoch());
      co_return co_await replica_write(peer, request, std::move(data));
    }
    auto left = std::chrono::duration_cast<Duration>(deadline - Clock::now());
    if (left.count() <= 0 || !co_await maps_.wait_for_change(left)) {
      co_return make_error(ErrorCode::kUnavailable, "osd." + std::to_string(peer) +
                                                        " failed a write but is not marked down");
    }
  }
}

awaitable<Result<uint32_t>> OsdService::sync_replicas(proto::WriteRequest request,
                                                      proto::Version seen,
                                                      std::vector<int32_t> acting,
                                                      uint32_t min_size) {
  ObjectKey key = object_key(request.object());
  auto read_local = [this, key] {
    using Copy = std::pair<ObjectInfo, std::string>;
    auto info = store_->stat(key);
    if (!info) return Result<std::optional<Copy>>(info.error().code() == ErrorCode::kNotFound
                                                      ? Result<std::optional<Copy>>(std::nullopt)
                                                      : Result<std::optional<Copy>>(info.error()));
    auto data = store_->read(key, 0, info->size);
    if (!data) return Result<std::optional<Copy>>(data.error());
    return Result<std::optional<Copy>>(Copy{*info, std::move(*data)});
  };
  DFS_CO_AWAIT_TRY(auto local, run_blocking(blocking_, std::move(read_local)));
  uint32_t copies = 1;
  for (size_t i = 1; i < acting.size(); ++i) {
    auto synced = co_await push_if_different(acting[i], request, local, seen);
    if (synced) ++copies;
  }
  if (copies < min_size) {
    co_return make_error(ErrorCode::kUnavailable, "only " + std::to_string(copies) +
                                                      " replicas hold the object");
  }
  co_return copies;
}

awaitable<Status> OsdService::push_if_different(
    int32_t peer, proto::WriteRequest request,
    std::optional<std::pair<ObjectInfo, std::string>> local, proto::Version removed_at) {
  const auto* info = map().osd(peer);
  if (!info) co_return make_error(ErrorCode::kUnavailable, "unknown osd");
  proto::StatRequest stat;
  *stat.mutable_object() = request.object();
  stat.set_epoch(map().epoch());
  stat.set_any_replica(true);
  auto theirs = co_await messenger_.call_proto<proto::StatReply>(info->addr(), rpc::kOsdStat, stat,
                                                                  options_.replica_timeout);
  bool they_have = theirs.has_value();
  if (!theirs && theirs.error().code() != ErrorCode::kNotFound) co_return unexpected(theirs.error());
  if (!local && !they_have) co_return ok_status();
  if (local && they_have && theirs->version().epoch() == local->first.version.epoch &&
      theirs->version().seq() == local->first.version.seq && theirs->size() == local->first.size) {
    co_return ok_status();
  }
  // Make theirs identical to ours: the whole object at our version, or its removal.
  proto::RepWriteRequest push;
  *push.mutable_op() = request;
  push.mutable_op()->set_kind(local ? proto::OP_WRITE_FULL : proto::OP_REMOVE);
  push.mutable_op()->set_offset(0);
  push.set_epoch(map().epoch());
  std::string data;
  if (local) {
    push.mutable_version()->set_epoch(local->first.version.epoch);
    push.mutable_version()->set_seq(local->first.version.seq);
    data = std::move(local->second);
  } else {
    *push.mutable_version() = removed_at;
  }
  spdlog::info("{}: osd.{} lacks the latest {} of pg {}.{}; pushing it", entity_, peer,
               request.object().name(), request.object().pool(), request.object().pg());
  co_return co_await replica_write(peer, std::move(push), std::move(data));
}

awaitable<Status> OsdService::apply_local(proto::WriteRequest request, std::string data,
                                          proto::Version version) {
  DFS_CO_AWAIT_TRY(PgState* pg, load_pg(request.object().pool(), request.object().pg()));
  Transaction txn = build_transaction(request, std::move(data), version, *pg);
  // Named, not a temporary: GCC 12 destroys a closure temporary in a co_await twice.
  auto apply = [this, txn = std::move(txn)]() mutable { return store_->apply(std::move(txn)); };
  co_return co_await run_blocking(blocking_, std::move(apply));
}

awaitable<Status> OsdService::replica_write(int32_t peer, proto::RepWriteRequest request,
                                            std::string data) {
  const auto* info = map().osd(peer);
  if (!info) co_return make_error(ErrorCode::kUnavailable, "osd." + std::to_string(peer) + " unknown");
  auto reply = co_await messenger_.call(info->addr(), rpc::kOsdRepWrite, request.SerializeAsString(),
                                        std::move(data), options_.replica_timeout);
  if (!reply) co_return unexpected(std::move(reply).error());
  co_return ok_status();
}

void OsdService::report_failure(int32_t peer, const Error& error) {
  spdlog::warn("{}: replica write to osd.{} failed: {}", entity_, peer, error.to_string());
  proto::FailureReport report;
  report.set_reporter(options_.id);
  report.set_failed(peer);
  report.set_epoch(map().epoch());
  report.set_connection_refused(error.code() == ErrorCode::kConnectionRefused);
  spawn_checked(executor_, [](OsdService* self, std::string body) -> awaitable<void> {
    auto sent = co_await self->maps_.call_mon(rpc::kMonFailureReport, std::move(body), Duration(3000));
    if (!sent) spdlog::warn("failure report not delivered: {}", sent.error().to_string());
  }(this, report.SerializeAsString()));
}

Status OsdService::check_replica_sender(const proto::RepWriteRequest& request,
                                        const std::string& sender) const {
  const auto& object = request.op().object();
  const proto::Pool* pool = DFS_TRY(locate(object));
  auto acting = map().acting(*pool, object.pg());
  const auto* primary = acting.empty() ? nullptr : map().osd(acting.front());
  if (primary && sender == "osd." + std::to_string(acting.front()) &&
      request.epoch() >= primary->up_from()) {
    return ok_status();
  }
  return Error(ErrorCode::kNotPrimary,
               "a replica write from " + sender + " sent at epoch " +
                   std::to_string(request.epoch()) + ", which is not the primary of pg " +
                   std::to_string(object.pool()) + "." + std::to_string(object.pg()) +
                   " in this incarnation at epoch " + std::to_string(map().epoch()));
}

awaitable<Result<rpc::Reply>> OsdService::on_rep_write(rpc::ConnectionPtr conn, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::RepWriteRequest>(frame.body));
  DFS_CO_TRY_STATUS(validate_write(request.op(), frame.data));
  auto guard = co_await locks_.lock(lock_key(request.op().object()));
  DFS_CO_TRY_STATUS(co_await catch_up_map(request.epoch()));
  DFS_CO_TRY_STATUS(check_replica_sender(request, conn ? conn->peer_entity() : std::string()));
  DFS_CO_AWAIT_TRY(PgState* pg, load_pg(request.op().object().pool(), request.op().object().pg()));
  DFS_CO_TRY_STATUS(co_await apply_local(request.op(), std::move(frame.data), request.version()));
  pg->observe(request.version());
  pg->remember(request.op().reqid(), request.version());
  co_return rpc::make_reply(proto::RepWriteReply());
}

}  // namespace dfs::osd
