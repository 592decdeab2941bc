#include "mon/service/monitor.h"

#include <spdlog/spdlog.h>

#include "common/rpc/methods.h"

namespace dfs::mon {

Monitor::Monitor(asio::any_io_executor executor, MonitorOptions options,
                 std::unique_ptr<MapStore> store)
    : executor_(executor),
      options_(std::move(options)),
      store_(std::move(store)),
      map_(store_->latest()),
      failures_(options_.failure),
      server_(executor, rpc::ConnectionOptions{options_.entity, rpc::make_none_authenticator()}),
      started_(std::chrono::steady_clock::now()) {}

Result<std::string> Monitor::start() {
  using namespace std::placeholders;
  server_.handle(rpc::kMonGetMap, std::bind(&Monitor::on_get_map, this, _1, _2));
  server_.handle(rpc::kMonSubscribe, std::bind(&Monitor::on_subscribe, this, _1, _2));
  server_.handle(rpc::kMonCommand, std::bind(&Monitor::on_command, this, _1, _2));
  server_.handle(rpc::kMonOsdBeacon, std::bind(&Monitor::on_beacon, this, _1, _2));
  server_.handle(rpc::kMonFailureReport, std::bind(&Monitor::on_failure_report, this, _1, _2));
  server_.handle(rpc::kMonStatus, std::bind(&Monitor::on_status, this, _1, _2));
  auto address = DFS_TRY(server_.listen(options_.listen_addr));
  // Up OSDs get a full grace period after a monitor restart before they count as silent.
  for (const auto& osd : map_.proto().osds()) failures_.reset(osd.id(), started_);
  spawn_checked(executor_, tick_loop());
  spdlog::info("{} serving map epoch {} on {}", options_.entity, map_.epoch(), address);
  return address;
}

Result<uint64_t> Monitor::commit(const proto::MapCommand& command) {
  ClusterMap next = map_;
  DFS_TRY_STATUS(next.apply(command));
  proto::MapIncremental incremental;
  incremental.set_epoch(next.epoch());
  *incremental.mutable_command() = command;
  // Durable before anyone hears of it: a restarted monitor never reuses an epoch.
  DFS_TRY_STATUS(store_->commit(incremental, next.proto()));
  map_ = std::move(next);
  publish(incremental);
  return map_.epoch();
}

void Monitor::publish(const proto::MapIncremental& incremental) {
  proto::MapUpdate update;
  *update.add_incrementals() = incremental;
  std::string body = update.SerializeAsString();
  std::erase_if(subscribers_, [&](const std::weak_ptr<rpc::Connection>& weak) {
    auto conn = weak.lock();
    if (!conn || !conn->is_open()) return true;
    conn->send(rpc::kMonMapUpdate, body);
    return false;
  });
}

proto::MapUpdate Monitor::catch_up(uint64_t have_epoch) const {
  proto::MapUpdate update;
  if (have_epoch >= map_.epoch()) return update;
  auto incs = have_epoch == 0 ? std::nullopt : store_->incrementals(have_epoch, map_.epoch());
  if (incs) {
    for (auto& inc : *incs) *update.add_incrementals() = std::move(inc);
  } else {
    *update.mutable_full() = map_.proto();
  }
  return update;
}

awaitable<Result<rpc::Reply>> Monitor::on_get_map(rpc::ConnectionPtr, rpc::Frame) {
  proto::GetMapReply reply;
  *reply.mutable_map() = map_.proto();
  co_return rpc::make_reply(reply);
}

awaitable<Result<rpc::Reply>> Monitor::on_subscribe(rpc::ConnectionPtr conn, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::SubscribeRequest>(frame.body));
  bool known = std::any_of(subscribers_.begin(), subscribers_.end(),
                           [&](const auto& weak) { return weak.lock() == conn; });
  if (!known) subscribers_.push_back(conn);
  co_return rpc::make_reply(catch_up(request.have_epoch()));
}

awaitable<Result<rpc::Reply>> Monitor::on_command(rpc::ConnectionPtr conn, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::CommandRequest>(frame.body));
  const auto& command = request.command();
  // A resent boot (same process instance, already up there) changes nothing; a
  // restarted OSD gets a new epoch so peers see its new up_from.
  if (command.has_boot_osd()) {
    const auto* osd = map_.osd(command.boot_osd().id());
    failures_.reset(command.boot_osd().id(), std::chrono::steady_clock::now());
    if (osd && osd->up() && osd->instance() == command.boot_osd().instance() &&
        osd->addr() == command.boot_osd().addr() && osd->host() == command.boot_osd().host()) {
      proto::CommandReply reply;
      reply.set_epoch(map_.epoch());
      co_return rpc::make_reply(reply);
    }
  }
  if (command.has_boot_mds()) {
    const auto* mds = map_.mds(command.boot_mds().name());
    if (mds && mds->up() && mds->instance() == command.boot_mds().instance() &&
        mds->addr() == command.boot_mds().addr()) {
      proto::CommandReply reply;
      reply.set_epoch(map_.epoch());
      co_return rpc::make_reply(reply);
    }
  }
  auto epoch = commit(command);
  if (!epoch) {
    spdlog::info("rejected command from {}: {}", conn->peer_entity(), epoch.error().to_string());
    co_return unexpected(std::move(epoch).error());
  }
  spdlog::info("epoch {}: {} from {}", *epoch, command.ShortDebugString(), conn->peer_entity());
  proto::CommandReply reply;
  reply.set_epoch(*epoch);
  co_return rpc::make_reply(reply);
}

awaitable<Result<rpc::Reply>> Monitor::on_beacon(rpc::ConnectionPtr, rpc::Frame frame) {
  auto beacon = DFS_CO_TRY(rpc::parse_body<proto::OsdBeacon>(frame.body));
  failures_.on_beacon(beacon.id(), std::chrono::steady_clock::now());
  proto::OsdBeaconReply reply;
  reply.set_epoch(map_.epoch());
  co_return rpc::make_reply(reply);
}

awaitable<Result<rpc::Reply>> Monitor::on_failure_report(rpc::ConnectionPtr, rpc::Frame frame) {
  auto report = DFS_CO_TRY(rpc::parse_body<proto::FailureReport>(frame.body));
  spdlog::info("osd.{} reports osd.{} failed{}", report.reporter(), report.failed(),
               report.connection_refused() ? " (connection refused)" : "");
  failures_.on_report(report.reporter(), report.failed(), report.connection_refused(),
                      std::chrono::steady_clock::now());
  co_return rpc::make_reply(proto::FailureReportReply());
}

awaitable<Result<rpc::Reply>> Monitor::on_status(rpc::ConnectionPtr, rpc::Frame) {
  auto now = std::chrono::steady_clock::now();
  proto::StatusReply reply;
  *reply.mutable_map() = map_.proto();
  for (const auto& osd : map_.proto().osds()) {
    auto* status = reply.add_osds();
    status->set_id(osd.id());
    auto silent = failures_.since_beacon(osd.id(), now);
    status->set_last_beacon_ms_ago(silent == Millis::max() ? UINT64_MAX : silent.count());
  }
  reply.set_mon_entity(options_.entity);
  reply.set_uptime_s(std::chrono::duration_cast<std::chrono::seconds>(now - started_).count());
  co_return rpc::make_reply(reply);
}

awaitable<void> Monitor::tick_loop() {
  for (;;) {
    co_await sleep_for(options_.tick);
    auto now = std::chrono::steady_clock::now();
    for (const auto& verdict : failures_.overdue(map_, now)) {
      proto::MapCommand command;
      command.mutable_mark_down()->set_id(verdict.osd);
      auto epoch = commit(command);
      if (epoch) {
        spdlog::warn("epoch {}: marked osd.{} down: {}", *epoch, verdict.osd, verdict.reason);
      } else {
        spdlog::error("could not mark osd.{} down: {}", verdict.osd, epoch.error().to_string());
      }
    }
  }
}

}  // namespace dfs::mon
