#include "osd/service/osd_service.h"

#include <spdlog/spdlog.h>

#include <random>

#include "common/proto/mon.pb.h"
#include "common/rpc/methods.h"

namespace dfs::osd {

ObjectKey object_key(const proto::ObjectLocator& object) {
  return ObjectKey{object.pool(), object.pg(), object.name()};
}

namespace {

rpc::ConnectionOptions connection_options(const std::string& entity, const std::string& fsid) {
  rpc::ConnectionOptions options{entity, rpc::make_none_authenticator()};
  options.cluster_fsid = fsid;
  return options;
}

}  // namespace

OsdService::OsdService(asio::any_io_executor executor, OsdOptions options,
                       std::unique_ptr<ObjectStore> store)
    : executor_(executor),
      options_(std::move(options)),
      entity_("osd." + std::to_string(options_.id)),
      blocking_(options_.blocking_threads),
      store_(std::move(store)),
      messenger_(executor,
                 rpc::MessengerOptions{connection_options(entity_, options_.cluster_fsid)},
                 [this](rpc::ConnectionPtr, rpc::Frame frame) { maps_.on_push(frame); }),
      maps_(executor, messenger_, options_.mon_addrs),
      server_(executor, connection_options(entity_, options_.cluster_fsid)),
      instance_((uint64_t(std::random_device{}()) << 32) | std::random_device{}()) {}

OsdService::~OsdService() {
  server_.stop();
  messenger_.close_all();
  blocking_.join();
}

Result<std::string> OsdService::start() {
  using namespace std::placeholders;
  server_.handle(rpc::kOsdWrite, std::bind(&OsdService::on_write, this, _1, _2));
  server_.handle(rpc::kOsdRepWrite, std::bind(&OsdService::on_rep_write, this, _1, _2));
  server_.handle(rpc::kOsdRead, std::bind(&OsdService::on_read, this, _1, _2));
  server_.handle(rpc::kOsdStat, std::bind(&OsdService::on_stat, this, _1, _2));
  server_.handle(rpc::kOsdList, std::bind(&OsdService::on_list, this, _1, _2));
  server_.handle(rpc::kOsdStatFs, std::bind(&OsdService::on_statfs, this, _1, _2));
  server_.handle(rpc::kOsdPush, std::bind(&OsdService::on_push, this, _1, _2));
  server_.handle(rpc::kOsdPgActivate, std::bind(&OsdService::on_pg_activate, this, _1, _2));
  server_.handle(rpc::kOsdPgScrub, std::bind(&OsdService::on_pg_scrub, this, _1, _2));
  address_ = DFS_TRY(server_.listen(options_.listen_addr));
  maps_.add_listener([this](const ClusterMap& previous) { on_map_change(previous); });
  maps_.start();
  spawn_checked(executor_, boot_loop());
  spawn_checked(executor_, beacon_loop());
  spawn_checked(executor_, scrub_loop());
  spdlog::info("{} listening on {} (host {}, weight {})", entity_, address_, options_.host,
               options_.weight);
  return address_;
}

awaitable<void> OsdService::boot_loop() {
  if (booting_) co_return;
  booting_ = true;
  proto::CommandRequest request;
  request.set_fsid(options_.cluster_fsid);
  auto* boot = request.mutable_command()->mutable_boot_osd();
  boot->set_id(options_.id);
  boot->set_addr(address_);
  boot->set_host(options_.host);
  boot->set_weight(options_.weight);
  boot->set_instance(instance_);
  for (;;) {
    auto reply = co_await maps_.call_mon(rpc::kMonCommand, request.SerializeAsString(), Duration(5000));
    if (reply) {
      auto parsed = rpc::parse_body<proto::CommandReply>(reply->body);
      spdlog::info("{} booted at map epoch {}", entity_, parsed ? parsed->epoch() : 0);
      break;
    }
    if (reply.error().code() == ErrorCode::kWrongCluster) {
      spdlog::error("{} cannot join: the monitors belong to another cluster: {}", entity_,
                    reply.error().context());
      if (options_.on_wrong_cluster) options_.on_wrong_cluster(reply.error());
      break;
    }
    spdlog::warn("{} boot not accepted yet: {}", entity_, reply.error().to_string());
    co_await sleep_for(Duration(1000));
  }
  booting_ = false;
}

awaitable<void> OsdService::beacon_loop() {
  proto::OsdBeacon beacon;
  beacon.set_id(options_.id);
  for (;;) {
    co_await sleep_for(options_.beacon_interval);
    beacon.set_epoch(maps_.epoch());
    // The disk's use, counted as what its file system no longer has free.
    auto usage = co_await run_blocking(blocking_, [this] { return store_->usage(); });
    if (usage && usage->total_bytes > 0) {
      last_usage_ = *usage;
      beacon.set_total_bytes(usage->total_bytes);
      beacon.set_used_bytes(usage->total_bytes - std::min(usage->available_bytes, usage->total_bytes));
    }
    auto reply = co_await maps_.call_mon(rpc::kMonOsdBeacon, beacon.SerializeAsString(),
                                         options_.beacon_interval * 2);
    if (!reply) spdlog::debug("beacon not delivered: {}", reply.error().to_string());
  }
}

void OsdService::on_map_change(const ClusterMap& previous) {
  const auto* me = map().osd(options_.id);
  // Marked down while alive (a false report or a long stall): announce ourselves again.
  if (me && !me->up() && previous.is_up(options_.id)) {
    spdlog::warn("{} was marked down in epoch {}; rebooting into the map", entity_, map().epoch());
    spawn_checked(executor_, boot_loop());
  }
  // A peer that went down or restarted: its old connection is useless.
  for (const auto& addr : map().osd_addrs_gone_since(previous)) messenger_.reset(addr);
  // PGs whose acting set changed peer (and recover) before they serve again.
  schedule_peering();
}

awaitable<Status> OsdService::catch_up_map(uint64_t epoch) {
  if (epoch <= maps_.epoch()) co_return ok_status();
  co_return co_await maps_.wait_for_epoch(epoch, options_.map_wait);
}

Status OsdService::check_not_fenced(const rpc::ConnectionPtr& conn) const {
  if (!conn) return ok_status();
  const auto* fence = map().client_fence(conn->peer_entity());
  if (!fence) return ok_status();
  return make_error(ErrorCode::kFenced, conn->peer_entity() + " was evicted at map epoch " +
                                            std::to_string(fence->epoch()) + " (" +
                                            fence->reason() + ")");
}

Result<const proto::Pool*> OsdService::locate(const proto::ObjectLocator& object) const {
  const auto* pool = map().pool(static_cast<int32_t>(object.pool()));
  if (!pool) return make_error(ErrorCode::kNoSuchPool, "pool id " + std::to_string(object.pool()));
  if (object.name().empty() || object.name().size() > 4096) {
    return make_error(ErrorCode::kInvalidArgument, "object names are 1..4096 bytes");
  }
  if (object.pg() != ClusterMap::pg_of(*pool, object.name())) {
    return make_error(ErrorCode::kInvalidArgument, "object '" + object.name() + "' is not in pg " +
                                                       std::to_string(object.pg()));
  }
  return pool;
}

Result<const proto::Pool*> OsdService::locate_pg(uint32_t pool_id, uint32_t pg) const {
  const auto* pool = map().pool(static_cast<int32_t>(pool_id));
  if (!pool) return make_error(ErrorCode::kNoSuchPool, "pool id " + std::to_string(pool_id));
  if (pg >= pool->pg_num()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "pool " + std::to_string(pool_id) + " has no pg " + std::to_string(pg));
  }
  return pool;
}

Error OsdService::not_primary(const proto::ObjectLocator& object) const {
  return Error(ErrorCode::kNotPrimary, entity_ + " is not the primary of pg " +
                                           std::to_string(object.pool()) + "." +
                                           std::to_string(object.pg()) + " at epoch " +
                                           std::to_string(map().epoch()));
}

awaitable<Result<PgState*>> OsdService::load_pg(uint32_t pool, uint32_t pg) {
  PgKey key{pool, pg};
  if (auto it = pgs_.find(key); it != pgs_.end()) co_return it->second.get();
  // One loader per PG: others wait on the PG's lock and then find it loaded.
  auto guard = co_await locks_.lock("pg/" + std::to_string(pool) + "." + std::to_string(pg));
  if (auto it = pgs_.find(key); it != pgs_.end()) co_return it->second.get();
  auto loaded = co_await run_blocking(blocking_, [this, pool, pg] {
    return PgState::load(*store_, pool, pg);
  });
  if (!loaded) co_return unexpected(std::move(loaded).error());
  auto& slot = pgs_[key];
  slot = std::make_unique<PgState>(std::move(*loaded));
  co_return slot.get();
}

}  // namespace dfs::osd
