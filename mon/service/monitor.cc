#include "mon/service/monitor.h"

#include <spdlog/spdlog.h>

#include "common/raft/raft_status_proto.h"
#include "common/raft/rocks_storage.h"
#include "common/rpc/cluster_identity.h"
#include "common/rpc/methods.h"

namespace dfs::mon {
namespace {

constexpr uint64_t kMonGroup = 1;
constexpr char kMonGroupPrefix[] = "raft/0000000000000001/";

rpc::ConnectionOptions connection_options(const MonitorOptions& options) {
  rpc::ConnectionOptions out;
  out.local_entity = options.entity;
  out.auth = rpc::make_none_authenticator();
  out.cluster_fsid = options.cluster_fsid;
  return out;
}

}  // namespace

Monitor::Monitor(asio::any_io_executor executor, MonitorOptions options,
                 std::unique_ptr<MapStore> store)
    : executor_(executor),
      options_(std::move(options)),
      store_(std::move(store)),
      sm_(store_->genesis()),
      failures_(options_.failure),
      flaps_(options_.flap),
      server_(executor, connection_options(options_)),
      router_(server_),
      messenger_(executor, rpc::MessengerOptions{connection_options(options_)}),
      started_(std::chrono::steady_clock::now()) {
  if (options_.members.empty()) {
    options_.members.push_back(MonMember{options_.id, options_.entity, options_.listen_addr});
  }
}

Monitor::~Monitor() {
  // A sync may still run on the pool: it must finish before the group and the DB go.
  pool_.join();
  group_.reset();
}

Result<std::string> Monitor::start() {
  using namespace std::placeholders;
  server_.handle(rpc::kMonGetMap, std::bind(&Monitor::on_get_map, this, _1, _2));
  server_.handle(rpc::kMonSubscribe, std::bind(&Monitor::on_subscribe, this, _1, _2));
  server_.handle(rpc::kMonCommand, std::bind(&Monitor::on_command, this, _1, _2));
  server_.handle(rpc::kMonOsdBeacon, std::bind(&Monitor::on_beacon, this, _1, _2));
  server_.handle(rpc::kMonFailureReport, std::bind(&Monitor::on_failure_report, this, _1, _2));
  server_.handle(rpc::kMonStatus, std::bind(&Monitor::on_status, this, _1, _2));
  server_.handle(rpc::kMonCommittedEpoch, std::bind(&Monitor::on_committed_epoch, this, _1, _2));

  raft::ConfState voters;
  raft::RaftGroupOptions group;
  group.group_id = kMonGroup;
  group.raft.id = options_.id;
  group.tick_interval = options_.raft_tick;
  group.snapshot_every = options_.snapshot_every;
  for (const auto& m : options_.members) {
    voters.voters.push_back(m.id);
    if (m.id != options_.id) group.peers[m.id] = m.addr;
  }
  std::sort(voters.voters.begin(), voters.voters.end());
  auto storage = DFS_TRY(raft::RocksStorage::open(store_->db(), kMonGroupPrefix, voters));
  sm_.set_listener([this](const proto::MapUpdate& update) { publish(update); });
  group_ = std::make_unique<raft::RaftGroup>(executor_, pool_, messenger_, router_,
                                             std::move(storage), sm_, group);

  auto address = DFS_TRY(server_.listen(options_.listen_addr));
  group_->start();
  spawn_checked(executor_, tick_loop());
  spdlog::info("{} (raft node {} of {}) serving map epoch {} on {}", options_.entity, options_.id,
               options_.members.size(), sm_.map().epoch(), address);
  return address;
}

bool Monitor::is_leader() const { return group_->status().role == raft::Role::kLeader; }

const MonMember* Monitor::other_leader() const {
  raft::NodeId leader = group_->status().leader;
  if (leader == options_.id) return nullptr;
  for (const auto& m : options_.members) {
    if (m.id == leader) return &m;
  }
  return nullptr;
}

awaitable<Result<uint64_t>> Monitor::commit(proto::MapCommand command) {
  DFS_CO_AWAIT_TRY(auto applied, group_->propose(command.SerializeAsString()));
  co_return MapStateMachine::decode_result(applied.result);
}

void Monitor::publish(const proto::MapUpdate& update) {
  for (auto& waiter : epoch_waiters_) waiter->cancel();
  epoch_waiters_.clear();
  std::string body = update.SerializeAsString();
  std::erase_if(subscribers_, [&](const std::weak_ptr<rpc::Connection>& weak) {
    auto conn = weak.lock();
    if (!conn || !conn->is_open()) return true;
    conn->send(rpc::kMonMapUpdate, body);
    return false;
  });
}

awaitable<Result<rpc::Reply>> Monitor::forward(rpc::ConnectionPtr conn, rpc::Frame frame) {
  if (conn->peer_entity().rfind("mon.", 0) == 0) {
    co_return make_error(ErrorCode::kUnavailable,
                         options_.entity + " is not the monitor leader either");
  }
  const MonMember* target = other_leader();
  if (!target) {
    co_return make_error(ErrorCode::kUnavailable,
                         "no monitor leader elected yet (asked " + options_.entity + ")");
  }
  auto reply = co_await messenger_.call(target->addr, frame.header.method, std::move(frame.body),
                                        std::move(frame.data), options_.forward_timeout);
  if (!reply) {
    co_return unexpected(std::move(reply).error().with_context(
        "forwarded by " + options_.entity + " to the leader " + target->name));
  }
  co_return rpc::Reply{std::move(reply->body), std::move(reply->data)};
}

awaitable<Result<rpc::Reply>> Monitor::on_get_map(rpc::ConnectionPtr, rpc::Frame) {
  proto::GetMapReply reply;
  *reply.mutable_map() = sm_.map().proto();
  co_return rpc::make_reply(reply);
}

awaitable<Result<rpc::Reply>> Monitor::on_subscribe(rpc::ConnectionPtr conn, rpc::Frame frame) {
  auto request = DFS_CO_TRY(rpc::parse_body<proto::SubscribeRequest>(frame.body));
  // A monitor that restarted, or lost touch with the leader, may hold an old map: one
  // without a pool the subscriber is about to use, or with an OSD up that is down.
  // Served from it, a client just mounted would fail its first read ("no such pool").
  // So a new subscriber (no map yet) is answered only once this monitor has caught up.
  // Resubscriptions and probes of a subscriber that has a map are answered at once, as
  // before: during an election every monitor would refuse them, and the subscriber
  // would hop between monitors and meet one whose history starts later (a full map, a
  // jump in the epochs it sees).
  if (request.have_epoch() == 0) DFS_CO_AWAIT_CHECK(catch_up_with_leader());
  bool known = std::any_of(subscribers_.begin(), subscribers_.end(),
                           [&](const auto& weak) { return weak.lock() == conn; });
  if (!known) subscribers_.push_back(conn);
  // Registered and answered without a suspension in between: the catch-up and every
  // later push leave on this thread in apply order, so the subscriber sees consecutive
  // epochs.
  co_return rpc::make_reply(sm_.catch_up(request.have_epoch()));
}

awaitable<Result<rpc::Reply>> Monitor::on_committed_epoch(rpc::ConnectionPtr, rpc::Frame) {
  if (!is_leader()) {
    co_return make_error(ErrorCode::kUnavailable, options_.entity + " is not the monitor leader");
  }
  DFS_CO_AWAIT_CHECK(group_->linearizable_read());
  proto::CommittedEpochReply reply;
  reply.set_epoch(sm_.map().epoch());
  co_return rpc::make_reply(reply);
}

awaitable<Status> Monitor::catch_up_with_leader() {
  auto deadline = Clock::now() + options_.catch_up_timeout;
  const MonMember* target = nullptr;
  // Just restarted, it learns the leader from the leader's next heartbeat.
  while (!(target = other_leader())) {
    if (is_leader()) co_return co_await group_->linearizable_read();
    if (Clock::now() >= deadline) {
      co_return make_error(ErrorCode::kUnavailable,
                           options_.entity + " knows no monitor leader to catch up with");
    }
    co_await sleep_for(options_.raft_tick);
  }
  auto frame = co_await messenger_.call(target->addr, rpc::kMonCommittedEpoch, {}, {},
                                        left_until(deadline));
  if (!frame) {
    co_return make_error(ErrorCode::kUnavailable,
                         options_.entity + " cannot tell whether its map is current: the leader " +
                             target->name + " did not say (" + frame.error().to_string() + ")");
  }
  auto reply = DFS_CO_TRY(rpc::parse_body<proto::CommittedEpochReply>(frame->body));
  co_return co_await wait_for_epoch(reply.epoch(), deadline);
}

awaitable<Status> Monitor::wait_for_epoch(uint64_t epoch, Clock::time_point deadline) {
  while (sm_.map().epoch() < epoch) {
    if (Clock::now() >= deadline) {
      co_return make_error(ErrorCode::kUnavailable,
                           options_.entity + " has map epoch " + std::to_string(sm_.map().epoch()) +
                               ", behind the committed " + std::to_string(epoch));
    }
    auto waiter = std::make_shared<asio::steady_timer>(executor_, deadline);
    epoch_waiters_.push_back(waiter);
    co_await waiter->async_wait(use_awaitable_tuple);
  }
  co_return ok_status();
}

awaitable<Result<rpc::Reply>> Monitor::on_command(rpc::ConnectionPtr conn, rpc::Frame frame) {
  if (!is_leader()) co_return co_await forward(std::move(conn), std::move(frame));
  auto request = DFS_CO_TRY(rpc::parse_body<proto::CommandRequest>(frame.body));
  DFS_CO_TRY_STATUS(admit_command(request, *conn));
  const auto& command = request.command();
  const ClusterMap& map = sm_.map();
  // A resent boot (same process instance, already up there) changes nothing; a
  // restarted OSD gets a new epoch so peers see its new up_from. Judged only once this
  // leader has applied what earlier leaders committed (leader_ready_): before that its
  // map may still show up an OSD that was marked down since.
  if (command.has_boot_osd()) {
    const auto* osd = map.osd(command.boot_osd().id());
    failures_.reset(command.boot_osd().id(), std::chrono::steady_clock::now());
    if (leader_ready_ && osd && osd->up() && osd->instance() == command.boot_osd().instance() &&
        osd->addr() == command.boot_osd().addr() && osd->host() == command.boot_osd().host()) {
      proto::CommandReply reply;
      reply.set_epoch(map.epoch());
      co_return rpc::make_reply(reply);
    }
    auto now = std::chrono::steady_clock::now();
    if (auto held = flaps_.held_for(command.boot_osd().id(), now)) {
      co_return make_error(
          ErrorCode::kUnavailable,
          fmt::format("osd.{} is flapping: marked down {} times in the last {} s; its boot is "
                      "held back for another {} s",
                      command.boot_osd().id(), flaps_.downs_within_period(command.boot_osd().id(), now),
                      options_.flap.period.count() / 1000, (held->count() + 999) / 1000));
    }
  }
  // For an MDS the role counts too: a leader that stepped down boots again as a standby
  // with the same instance, and that must reach the map.
  if (command.has_boot_mds()) {
    const auto* mds = map.mds(command.boot_mds().name());
    if (leader_ready_ && mds && mds->up() && mds->instance() == command.boot_mds().instance() &&
        mds->addr() == command.boot_mds().addr() &&
        mds->standby() == command.boot_mds().standby()) {
      proto::CommandReply reply;
      reply.set_epoch(map.epoch());
      co_return rpc::make_reply(reply);
    }
  }
  std::string from = conn->peer_entity();
  auto epoch = co_await commit(command);
  if (!epoch) {
    spdlog::info("rejected command from {}: {}", from, epoch.error().to_string());
    co_return unexpected(std::move(epoch).error());
  }
  spdlog::info("epoch {}: {} from {}", *epoch, command.ShortDebugString(), from);
  proto::CommandReply reply;
  reply.set_epoch(*epoch);
  co_return rpc::make_reply(reply);
}

Status Monitor::admit_command(const proto::CommandRequest& request,
                              const rpc::Connection& conn) const {
  const auto& command = request.command();
  const bool boot = command.has_boot_osd() || command.has_boot_mds();
  // Other commands were admitted by the handshake of the monitor they reached first
  // (a forwarded one comes from a monitor, whose entity says nothing of the sender):
  // only an fsid they name is checked.
  if (!boot && request.fsid().empty()) return ok_status();
  rpc::PeerIdentity sender{conn.peer_entity(), conn.peer_address(), request.fsid()};
  if (command.has_boot_osd()) {
    sender.entity = "osd." + std::to_string(command.boot_osd().id());
    sender.address = command.boot_osd().addr();
  } else if (command.has_boot_mds()) {
    sender.entity = command.boot_mds().name();
    sender.address = command.boot_mds().addr();
  }
  auto admitted = rpc::admit_peer(sm_.map().proto().fsid(), sender);
  if (admitted) return ok_status();
  spdlog::warn("{}", rpc::refusal_line(sender, admitted.error()));
  return make_error(ErrorCode::kWrongCluster, options_.entity + " refused " + sender.entity +
                                                  ": " + admitted.error().context());
}

awaitable<Result<rpc::Reply>> Monitor::on_beacon(rpc::ConnectionPtr conn, rpc::Frame frame) {
  if (!is_leader()) co_return co_await forward(std::move(conn), std::move(frame));
  auto beacon = DFS_CO_TRY(rpc::parse_body<proto::OsdBeacon>(frame.body));
  failures_.on_beacon(beacon.id(), std::chrono::steady_clock::now());
  co_await judge_space(beacon);
  proto::OsdBeaconReply reply;
  reply.set_epoch(sm_.map().epoch());
  co_return rpc::make_reply(reply);
}

awaitable<void> Monitor::judge_space(const proto::OsdBeacon& beacon) {
  const auto* osd = sm_.map().osd(beacon.id());
  if (!osd || beacon.total_bytes() == 0) co_return;
  double used = static_cast<double>(beacon.used_bytes()) / static_cast<double>(beacon.total_bytes());
  proto::OsdSpace space = used >= options_.full_ratio       ? proto::SPACE_FULL
                          : used >= options_.nearfull_ratio ? proto::SPACE_NEARFULL
                                                            : proto::SPACE_OK;
  if (space == osd->space()) co_return;
  proto::MapCommand command;
  auto* set = command.mutable_set_space();
  set->set_id(beacon.id());
  set->set_space(space);
  set->set_used_permille(static_cast<uint32_t>(std::min(used, 1.0) * 1000));
  auto epoch = co_await commit(command);
  if (!epoch) {
    spdlog::error("could not record osd.{}'s space: {}", beacon.id(), epoch.error().to_string());
    co_return;  // the next beacon tries again
  }
  spdlog::warn("epoch {}: osd.{} is {} ({:.1f}% of its disk used)", *epoch, beacon.id(),
               space == proto::SPACE_FULL       ? "full: writes to its placement groups are refused"
               : space == proto::SPACE_NEARFULL ? "nearly full"
                                                : "no longer nearly full",
               used * 100);
}

awaitable<Result<rpc::Reply>> Monitor::on_failure_report(rpc::ConnectionPtr conn,
                                                         rpc::Frame frame) {
  if (!is_leader()) co_return co_await forward(std::move(conn), std::move(frame));
  auto report = DFS_CO_TRY(rpc::parse_body<proto::FailureReport>(frame.body));
  spdlog::info("osd.{} reports osd.{} failed{}", report.reporter(), report.failed(),
               report.connection_refused() ? " (connection refused)" : "");
  failures_.on_report(report.reporter(), report.failed(), report.connection_refused(),
                      std::chrono::steady_clock::now());
  co_return rpc::make_reply(proto::FailureReportReply());
}

awaitable<Result<rpc::Reply>> Monitor::on_status(rpc::ConnectionPtr, rpc::Frame) {
  auto now = std::chrono::steady_clock::now();
  const ClusterMap& map = sm_.map();
  proto::StatusReply reply;
  *reply.mutable_map() = map.proto();
  for (const auto& osd : map.proto().osds()) {
    auto* status = reply.add_osds();
    status->set_id(osd.id());
    auto silent = failures_.since_beacon(osd.id(), now);
    status->set_last_beacon_ms_ago(silent == Millis::max() ? UINT64_MAX : silent.count());
  }
  reply.set_mon_entity(options_.entity);
  reply.set_uptime_s(std::chrono::duration_cast<std::chrono::seconds>(now - started_).count());
  *reply.mutable_raft() = raft::to_proto(group_->status());
  for (const auto& m : options_.members) {
    auto* member = reply.add_members();
    member->set_id(m.id);
    member->set_name(m.name);
    member->set_addr(m.addr);
  }
  co_return rpc::make_reply(reply);
}

awaitable<void> Monitor::tick_loop() {
  for (;;) {
    co_await sleep_for(options_.tick);
    if (!is_leader()) {
      leader_ready_ = false;
      continue;
    }
    if (!leader_ready_) {
      // A new leader first applies everything committed before it (a read index), and
      // gives every up OSD a full grace period: their beacons went to the old leader.
      Status caught_up = co_await group_->linearizable_read();
      if (!caught_up) continue;
      leader_ready_ = true;
      auto now = std::chrono::steady_clock::now();
      for (const auto& osd : sm_.map().proto().osds()) failures_.reset(osd.id(), now);
      spdlog::info("{} leads the monitors at map epoch {}; failure detection on",
                   options_.entity, sm_.map().epoch());
    }
    co_await check_failures();
  }
}

awaitable<void> Monitor::check_failures() {
  auto now = std::chrono::steady_clock::now();
  for (const auto& verdict : failures_.overdue(sm_.map(), now)) {
    proto::MapCommand command;
    command.mutable_mark_down()->set_id(verdict.osd);
    command.mutable_mark_down()->set_at_ms(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count()));
    auto epoch = co_await commit(command);
    if (epoch) {
      spdlog::warn("epoch {}: marked osd.{} down: {}", *epoch, verdict.osd, verdict.reason);
      flaps_.on_down(verdict.osd, now);
    } else {
      spdlog::error("could not mark osd.{} down: {}", verdict.osd, epoch.error().to_string());
      co_return;  // e.g. leadership lost; the next tick decides again
    }
  }
  for (const auto& verdict : failures_.out_due(sm_.map(), now)) {
    proto::MapCommand command;
    command.mutable_mark_out()->set_id(verdict.osd);
    auto epoch = co_await commit(command);
    if (epoch) {
      spdlog::warn("epoch {}: marked osd.{} out: {}; its placement groups move to other OSDs",
                   *epoch, verdict.osd, verdict.reason);
    } else {
      spdlog::error("could not mark osd.{} out: {}", verdict.osd, epoch.error().to_string());
      co_return;
    }
  }
}

}  // namespace dfs::mon
