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

awaitable<Result<rpc::Reply>> OsdService::on_write(rpc::ConnectionPtr, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::WriteRequest>(frame.body));
  DFS_CO_TRY_STATUS(validate_write(request, frame.data));
  DFS_CO_TRY_STATUS(co_await catch_up_map(request.epoch()));
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
    // A resend of a request we already applied: answer it again, apply nothing.
    *reply.mutable_version() = *seen;
    reply.set_copies(static_cast<uint32_t>(acting.size()));
    co_return rpc::make_reply(reply);
  }
  proto::Version version;
  version.set_epoch(map().epoch());
  version.set_seq(pg->next_seq());
  DFS_CO_AWAIT_TRY(auto copies, replicate(request, std::move(frame.data), version, acting,
                                              pool->min_size()));
  pg->remember(request.reqid(), version);
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
  for (size_t i = 1; i < acting.size(); ++i) tasks.push_back(replica_write(acting[i], rep, data));
  tasks.push_back(apply_local(request, std::move(data), version));
  auto results = co_await gather(std::move(tasks));

  const Status& local = results.back();
  if (!local) co_return unexpected(local.error().with_context("applying on the primary"));
  uint32_t copies = 1;
  std::vector<int32_t> failed;
  for (size_t i = 0; i + 1 < results.size(); ++i) {
    if (results[i]) {
      ++copies;
      continue;
    }
    int32_t peer = acting[i + 1];
    if (!is_retryable(results[i].error().code())) {
      // The replica answered with a real failure (no space, I/O error): not durable there.
      co_return unexpected(results[i].error().with_context("replica osd." + std::to_string(peer)));
    }
    report_failure(peer, results[i].error());
    failed.push_back(peer);
  }
  if (failed.empty()) co_return copies;
  // Acknowledging with fewer copies is only safe once the map says the missing replicas
  // are down: then no one reads from them, and recovery brings them back up to date.
  if (!co_await wait_until_down(failed) || copies < min_size) {
    co_return make_error(ErrorCode::kUnavailable,
                         "write reached " + std::to_string(copies) + " replicas; waiting for the "
                         "map to mark the others down");
  }
  co_return copies;
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

awaitable<bool> OsdService::wait_until_down(std::vector<int32_t> peers) {
  auto deadline = Clock::now() + options_.map_wait;
  for (;;) {
    bool all_down = std::none_of(peers.begin(), peers.end(), [&](int32_t p) { return map().is_up(p); });
    if (all_down) co_return true;
    auto left = std::chrono::duration_cast<Duration>(deadline - Clock::now());
    if (left.count() <= 0) co_return false;
    if (!co_await maps_.wait_for_change(left)) co_return false;
  }
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

awaitable<Result<rpc::Reply>> OsdService::on_rep_write(rpc::ConnectionPtr, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::RepWriteRequest>(frame.body));
  DFS_CO_TRY_STATUS(validate_write(request.op(), frame.data));
  auto guard = co_await locks_.lock(lock_key(request.op().object()));
  DFS_CO_TRY_STATUS(co_await catch_up_map(request.epoch()));
  DFS_CO_TRY(locate(request.op().object()));
  DFS_CO_AWAIT_TRY(PgState* pg, load_pg(request.op().object().pool(), request.op().object().pg()));
  DFS_CO_TRY_STATUS(co_await apply_local(request.op(), std::move(frame.data), request.version()));
  pg->observe_seq(request.version().seq());
  pg->remember(request.op().reqid(), request.version());
  co_return rpc::make_reply(proto::RepWriteReply());
}

}  // namespace dfs::osd
