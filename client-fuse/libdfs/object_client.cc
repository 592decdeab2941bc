#include "client-fuse/libdfs/object_client.h"

#include <spdlog/spdlog.h>

#include <random>

#include "common/rpc/methods.h"

namespace dfs::client {
namespace {

std::string random_nonce() {
  std::random_device rd;
  return std::to_string((uint64_t(rd()) << 32) | rd());
}

Duration min_duration(Duration a, Duration b) { return a < b ? a : b; }

rpc::ConnectionOptions connection_options(const std::string& entity, const std::string& fsid) {
  rpc::ConnectionOptions options{entity, rpc::make_none_authenticator()};
  options.cluster_fsid = fsid;
  return options;
}

}  // namespace

ObjectClient::ObjectClient(ClientOptions options)
    : options_(std::move(options)),
      entity_("client." + options_.name + "." + random_nonce()),
      work_(io_.get_executor()),
      messenger_(io_.get_executor(),
                 rpc::MessengerOptions{connection_options(entity_, options_.fsid)},
                 [this](rpc::ConnectionPtr, rpc::Frame frame) {
                   if (frame.header.method == rpc::kMdsEvicted ||
                       frame.header.method == rpc::kMdsCacheRights) {
                     if (on_mds_push_) on_mds_push_(frame);
                     return;
                   }
                   maps_.on_push(frame);
                 }),
      maps_(io_.get_executor(), messenger_, options_.mon_addrs) {}

Result<std::unique_ptr<ObjectClient>> ObjectClient::connect(ClientOptions options) {
  if (options.mon_addrs.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "no monitor addresses configured");
  }
  std::unique_ptr<ObjectClient> client(new ObjectClient(std::move(options)));
  client->thread_ = std::thread([c = client.get()] { c->io_.run(); });
  asio::post(client->io_, [c = client.get()] {
    c->maps_.add_listener([c](const ClusterMap& previous) { c->drop_dead_osds(previous); });
    c->maps_.start();
  });
  DFS_TRY_STATUS(client->run(client->wait_for_map()));
  return client;
}

void ObjectClient::drop_dead_osds(const ClusterMap& previous) {
  for (const auto& addr : maps_.map().osd_addrs_gone_since(previous)) messenger_.reset(addr);
}

void ObjectClient::take_new_entity() {
  std::string old = entity_;
  entity_ = "client." + options_.name + "." + random_nonce();
  messenger_.set_local_entity(entity_);
  for (const auto& osd : maps_.map().proto().osds()) messenger_.reset(osd.addr());
  for (const auto& mds : maps_.map().proto().mds()) messenger_.reset(mds.addr());
  spdlog::warn("client session {} ended; continuing as {}", old, entity_);
}

ObjectClient::~ObjectClient() { stop(); }

void ObjectClient::stop() {
  if (thread_.joinable()) {
    asio::post(io_, [this] { messenger_.close_all(); });
    work_.reset();
    io_.stop();
    thread_.join();
  }
  io_.shutdown();  // destroys the handlers and coroutine frames still queued
}

awaitable<Status> ObjectClient::wait_for_map() {
  auto waited = co_await maps_.wait_ready(options_.connect_timeout);
  if (!waited && waited.error().code() == ErrorCode::kWrongCluster) co_return waited;
  if (!waited) {
    std::string mons;
    for (const auto& m : options_.mon_addrs) mons += (mons.empty() ? "" : ",") + m;
    co_return make_error(ErrorCode::kUnavailable,
                         "cluster unreachable: no monitor at " + mons + " answered within " +
                             std::to_string(options_.connect_timeout.count() / 1000) + " s");
  }
  co_return ok_status();
}

ClusterMap ObjectClient::map_snapshot() {
  return run([](ObjectClient* self) -> awaitable<ClusterMap> { co_return self->maps_.map(); }(this));
}

Result<ObjectClient::Target> ObjectClient::target(const std::string& pool,
                                                  const std::string& name) const {
  const auto* p = maps_.map().pool_by_name(pool);
  if (!p) return make_error(ErrorCode::kNoSuchPool, "pool '" + pool + "' does not exist");
  if (name.empty()) return make_error(ErrorCode::kInvalidArgument, "empty object name");
  Target t{p, {}};
  t.object.set_pool(static_cast<uint32_t>(p->id()));
  t.object.set_pg(ClusterMap::pg_of(*p, name));
  t.object.set_name(name);
  return t;
}

awaitable<Result<rpc::Frame>> ObjectClient::to_primary(
    const std::string& pool, const std::string& name, uint32_t method,
    std::function<std::string(const Target&, uint64_t)> body, std::string data) {
  auto deadline = Clock::now() + options_.op_timeout;
  Error last(ErrorCode::kTimeout, "no attempt made");
  Duration backoff(50);
  const std::string entity = entity_;
  for (int attempt = 1;; ++attempt) {
    if (entity != entity_) {
      co_return make_error(ErrorCode::kFenced, "session " + entity +
                                                   " was evicted while this request was in flight");
    }
    deadline = retry_deadline(deadline);
    if (left_until(deadline).count() <= 0) {
      co_return unexpected(std::move(last).with_context("gave up after " + std::to_string(attempt - 1) +
                                                        " attempts"));
    }
    auto t = DFS_CO_TRY(target(pool, name));
    auto acting = maps_.map().acting(*t.pool, t.object.pg());
    if (acting.empty()) {
      last = Error(ErrorCode::kUnavailable, "no OSD of pg " + std::to_string(t.object.pool()) + "." +
                                                std::to_string(t.object.pg()) + " is up");
      ignore_error(co_await maps_.wait_for_change(min_duration(left_until(deadline), Duration(1000))),
                   "woken by a new map or the timeout alike");
      continue;
    }
    const auto* primary = maps_.map().osd(acting.front());
    auto reply = co_await messenger_.call(primary->addr(), method, body(t, maps_.epoch()), data,
                                          min_duration(options_.attempt_timeout, left_until(deadline)));
    if (reply) {
      answered();
      co_return reply;
    }
    if (reply.error().code() == ErrorCode::kFenced && entity == entity_ && on_fenced_) {
      on_fenced_(reply.error());
    }
    if (!is_retryable(reply.error().code())) co_return unexpected(std::move(reply).error());
    last = std::move(reply).error().with_context("osd." + std::to_string(acting.front()));
    spdlog::debug("attempt {} of request {} failed: {}", attempt, method, last.to_string());
    // Wait for the map to move (a primary marked down, a new primary), or back off.
    ignore_error(co_await maps_.wait_for_change(min_duration(left_until(deadline), backoff)),
                 "woken by a new map or the backoff alike");
    backoff = min_duration(backoff * 2, Duration(1000));
  }
}

void ObjectClient::stop_retrying_after(Duration grace) {
  stop_grace_ = grace;
  stop_retrying_at_ = Clock::now() + grace;
}

awaitable<Result<proto::WriteReply>> ObjectClient::mutate(std::string pool, std::string name,
                                                         proto::OpKind kind, uint64_t offset,
                                                         std::string data) {
  proto::RequestId reqid;
  reqid.set_client(entity_);
  reqid.set_seq(next_seq_++);  // one id for every retry of this op
  DFS_CO_AWAIT_TRY(auto frame, to_primary(
      pool, name, rpc::kOsdWrite,
      [&](const Target& t, uint64_t epoch) {
        proto::WriteRequest request;
        *request.mutable_object() = t.object;
        request.set_kind(kind);
        request.set_offset(offset);
        *request.mutable_reqid() = reqid;
        request.set_epoch(epoch);
        return request.SerializeAsString();
      },
      std::move(data)));
  co_return rpc::parse_body<proto::WriteReply>(frame.body);
}

awaitable<Result<proto::WriteReply>> ObjectClient::write(std::string pool, std::string name,
                                                        uint64_t offset, std::string data) {
  co_return co_await mutate(std::move(pool), std::move(name), proto::OP_WRITE, offset, std::move(data));
}

awaitable<Result<proto::WriteReply>> ObjectClient::write_full(std::string pool, std::string name,
                                                             std::string data) {
  co_return co_await mutate(std::move(pool), std::move(name), proto::OP_WRITE_FULL, 0, std::move(data));
}

awaitable<Result<proto::WriteReply>> ObjectClient::truncate(std::string pool, std::string name,
                                                           uint64_t size) {
  co_return co_await mutate(std::move(pool), std::move(name), proto::OP_TRUNCATE, size, {});
}

awaitable<Result<proto::WriteReply>> ObjectClient::remove(std::string pool, std::string name) {
  co_return co_await mutate(std::move(pool), std::move(name), proto::OP_REMOVE, 0, {});
}

awaitable<Result<std::string>> ObjectClient::read(std::string pool, std::string name,
                                                  uint64_t offset, uint64_t length) {
  DFS_CO_AWAIT_TRY(auto frame, to_primary(
      pool, name, rpc::kOsdRead,
      [&](const Target& t, uint64_t epoch) {
        proto::ReadRequest request;
        *request.mutable_object() = t.object;
        request.set_offset(offset);
        request.set_length(length);
        request.set_epoch(epoch);
        return request.SerializeAsString();
      },
      {}));
  co_return std::move(frame.data);
}

awaitable<Result<ObjectStat>> ObjectClient::stat(std::string pool, std::string name) {
  DFS_CO_AWAIT_TRY(auto frame, to_primary(
      pool, name, rpc::kOsdStat,
      [&](const Target& t, uint64_t epoch) {
        proto::StatRequest request;
        *request.mutable_object() = t.object;
        request.set_epoch(epoch);
        return request.SerializeAsString();
      },
      {}));
  auto reply = DFS_CO_TRY(rpc::parse_body<proto::StatReply>(frame.body));
  co_return ObjectStat{reply.size(), reply.version()};
}

awaitable<Result<rpc::Frame>> ObjectClient::to_pg_primary(uint32_t pool, uint32_t pg,
                                                          uint32_t method, std::string body) {
  auto deadline = Clock::now() + options_.op_timeout;
  Error last(ErrorCode::kTimeout, "no attempt made");
  while (left_until(deadline).count() > 0) {
    const auto* p = maps_.map().pool(static_cast<int32_t>(pool));
    if (!p) co_return make_error(ErrorCode::kNoSuchPool, "pool id " + std::to_string(pool));
    auto acting = maps_.map().acting(*p, pg);
    if (!acting.empty()) {
      auto reply = co_await messenger_.call(maps_.map().osd(acting.front())->addr(), method, body, {},
                                            min_duration(options_.attempt_timeout, left_until(deadline)));
      if (reply || !is_retryable(reply.error().code())) co_return reply;
      last = std::move(reply).error();
    } else {
      last = Error(ErrorCode::kUnavailable, "no OSD of pg " + std::to_string(pool) + "." +
                                                std::to_string(pg) + " is up");
    }
    ignore_error(co_await maps_.wait_for_change(min_duration(left_until(deadline), Duration(500))),
                 "woken by a new map or the timeout alike");
  }
  co_return unexpected(std::move(last));
}

awaitable<Result<std::vector<ObjectEntry>>> ObjectClient::list(std::string pool) {
  const auto* p = maps_.map().pool_by_name(pool);
  if (!p) co_return make_error(ErrorCode::kNoSuchPool, "pool '" + pool + "' does not exist");
  std::vector<awaitable<Result<rpc::Frame>>> tasks;
  for (uint32_t pg = 0; pg < p->pg_num(); ++pg) {
    proto::ListRequest request;
    request.set_pool(static_cast<uint32_t>(p->id()));
    request.set_pg(pg);
    request.set_epoch(maps_.epoch());
    tasks.push_back(to_pg_primary(request.pool(), pg, rpc::kOsdList, request.SerializeAsString()));
  }
  std::vector<ObjectEntry> out;
  for (auto& result : co_await gather(std::move(tasks))) {
    if (!result) co_return unexpected(std::move(result).error());
    auto reply = DFS_CO_TRY(rpc::parse_body<proto::ListReply>(result->body));
    for (const auto& e : reply.entries()) out.push_back(ObjectEntry{e.name(), e.size()});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  co_return out;
}

awaitable<Result<proto::PgScrubReply>> ObjectClient::scrub_pg(std::string pool, uint32_t pg,
                                                             bool deep) {
  const auto* p = maps_.map().pool_by_name(pool);
  if (!p) co_return make_error(ErrorCode::kNoSuchPool, "pool '" + pool + "' does not exist");
  if (pg >= p->pg_num()) {
    co_return make_error(ErrorCode::kInvalidArgument,
                         "pool '" + pool + "' has PGs 0.." + std::to_string(p->pg_num() - 1));
  }
  proto::PgScrubRequest request;
  request.set_pool(static_cast<uint32_t>(p->id()));
  request.set_pg(pg);
  request.set_deep(deep);
  request.set_epoch(maps_.epoch());
  DFS_CO_AWAIT_TRY(auto frame, to_pg_primary(request.pool(), pg, rpc::kOsdPgScrub,
                                             request.SerializeAsString()));
  co_return rpc::parse_body<proto::PgScrubReply>(frame.body);
}

awaitable<Result<std::string>> ObjectClient::read_from_osd(std::string pool, std::string name,
                                                           int32_t osd) {
  auto t = DFS_CO_TRY(target(pool, name));
  auto deadline = Clock::now() + options_.op_timeout;
  Error last(ErrorCode::kTimeout, "no attempt made");
  // A connection lost to a map change (the OSD was marked down and booted again) is
  // tried again, as every other request is.
  while (left_until(deadline).count() > 0) {
    const auto* info = maps_.map().osd(osd);
    if (!info) co_return make_error(ErrorCode::kNotFound, "no osd." + std::to_string(osd));
    proto::ReadRequest request;
    *request.mutable_object() = t.object;
    request.set_epoch(maps_.epoch());
    request.set_any_replica(true);
    std::string data;
    auto reply = co_await messenger_.call_proto<proto::ReadReply>(
        info->addr(), rpc::kOsdRead, request,
        min_duration(options_.attempt_timeout, left_until(deadline)), {}, &data);
    if (reply) co_return data;
    if (!is_retryable(reply.error().code())) co_return unexpected(std::move(reply).error());
    last = std::move(reply).error();
    ignore_error(co_await maps_.wait_for_change(min_duration(left_until(deadline), Duration(500))),
                 "woken by a new map or the timeout alike");
  }
  co_return unexpected(std::move(last));
}

awaitable<Result<uint64_t>> ObjectClient::mon_command(proto::MapCommand command) {
  proto::CommandRequest request;
  request.set_fsid(options_.fsid);  // a boot sent for a daemon (tests, tools) needs it
  *request.mutable_command() = std::move(command);
  DFS_CO_AWAIT_TRY(auto frame, maps_.call_mon(rpc::kMonCommand, request.SerializeAsString(),
                                                  options_.op_timeout));
  auto reply = DFS_CO_TRY(rpc::parse_body<proto::CommandReply>(frame.body));
  // Our own next request must see the change.
  DFS_CO_TRY_STATUS(co_await maps_.wait_for_epoch(reply.epoch(), options_.op_timeout));
  co_return reply.epoch();
}

awaitable<Result<proto::StatusReply>> ObjectClient::mon_status() {
  DFS_CO_AWAIT_TRY(auto frame, maps_.call_mon(rpc::kMonStatus, {}, options_.op_timeout));
  co_return rpc::parse_body<proto::StatusReply>(frame.body);
}

awaitable<Result<proto::StatFsReply>> ObjectClient::osd_statfs(int32_t osd) {
  const auto* info = maps_.map().osd(osd);
  if (!info) co_return make_error(ErrorCode::kNotFound, "no osd." + std::to_string(osd));
  co_return co_await messenger_.call_proto<proto::StatFsReply>(info->addr(), rpc::kOsdStatFs,
                                                               proto::StatFsRequest(), Duration(5000));
}

}  // namespace dfs::client
