// The monitor quorum for real: three dfs-mon processes and three OSDs. While a loop
// marks OSDs down (each comes back by booting itself again, so the map keeps moving),
// the monitor leader is SIGKILLed. A new leader must take over, every monitor must end
// with the same map, a subscriber must have seen consecutive epochs across the
// failover, every epoch must have one content on every monitor, every acknowledged
// change must be in the map at the epoch it was acknowledged with, and the killed
// monitor must catch up after its restart.
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/rpc/methods.h"
#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace dfs::test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

awaitable<Result<rpc::Frame>> ask_mon(client::ObjectClient* c, std::string addr, uint32_t method,
                                      std::string body, Duration timeout = Duration(1500)) {
  co_return co_await c->messenger().call(addr, method, std::move(body), {}, timeout);
}

Result<proto::StatusReply> status_of(client::ObjectClient& c, const std::string& addr) {
  auto frame = c.run(ask_mon(&c, addr, rpc::kMonStatus, {}));
  if (!frame) return unexpected(std::move(frame).error());
  return rpc::parse_body<proto::StatusReply>(frame->body);
}

// The monitor every reachable monitor names as leader (and which says it leads).
std::optional<std::string> agreed_leader(TestCluster& cluster, client::ObjectClient& c) {
  std::optional<uint64_t> leader;
  std::string leader_name;
  for (int i = 0; i < 3; ++i) {
    std::string name = TestCluster::mon_name(i);
    if (!cluster.is_running(name)) continue;
    auto s = status_of(c, cluster.mon_addrs()[i]);
    if (!s || s->raft().leader() == 0) return std::nullopt;
    if (leader && *leader != s->raft().leader()) return std::nullopt;
    leader = s->raft().leader();
    if (s->raft().role() == "leader") leader_name = name;
  }
  if (leader_name.empty()) return std::nullopt;
  return leader_name;
}

std::string wait_leader(TestCluster& cluster, client::ObjectClient& c, milliseconds timeout) {
  auto deadline = SteadyClock::now() + timeout;
  while (SteadyClock::now() < deadline) {
    if (auto leader = agreed_leader(cluster, c)) return *leader;
    std::this_thread::sleep_for(milliseconds(50));
  }
  FAIL("the monitors agreed on no leader within " << timeout.count() << " ms");
  return {};
}

// Creates a one-copy, 4-PG pool through the monitors; its map epoch.
Result<uint64_t> create_small_pool(client::ObjectClient& admin, const std::string& name) {
  proto::MapCommand command;
  auto* p = command.mutable_create_pool();
  p->set_name(name);
  p->set_size(1);
  p->set_min_size(1);
  p->set_pg_num(4);
  return admin.run(admin.mon_command(command));
}

// What the subscriber saw: every map it applied, by epoch, and any jump.
struct Recorder {
  std::mutex mu;
  std::map<uint64_t, std::string> maps;  // epoch -> encoded map
  std::vector<std::string> violations;
};

// The map each epoch produced, rebuilt from monitor `addr`'s incrementals after `from`
// applied to `base` (the map at `from`).
Result<std::map<uint64_t, std::string>> history_of(client::ObjectClient& c, const std::string& addr,
                                                   const std::string& base) {
  proto::ClusterMap start;
  REQUIRE(start.ParseFromString(base));
  proto::SubscribeRequest request;
  request.set_have_epoch(start.epoch());
  auto frame = c.run(ask_mon(&c, addr, rpc::kMonSubscribe, request.SerializeAsString()));
  if (!frame) return unexpected(std::move(frame).error());
  auto update = rpc::parse_body<proto::MapUpdate>(frame->body);
  if (!update) return unexpected(std::move(update).error());
  if (update->has_full()) return make_error(ErrorCode::kInternal, addr + " sent a full map");
  ClusterMap map(start);
  std::map<uint64_t, std::string> out;
  for (const auto& inc : update->incrementals()) {
    DFS_TRY_STATUS(map.apply_incremental(inc));
    out[map.epoch()] = map.proto().SerializeAsString();
  }
  return out;
}

}  // namespace

TEST_SUITE_BEGIN("integration");

TEST_CASE("integration/mon quorum: SIGKILL the leader while OSDs flap and lose or reuse no epoch") {
  TestCluster cluster(ClusterOptions{.osds = 3, .mons = 3});
  INFO("cluster dir " << cluster.dir());
  DFS_REQUIRE_OK(cluster.boot());
  auto admin_or = cluster.admin();
  DFS_REQUIRE_OK(admin_or);
  client::ObjectClient& admin = **admin_or;
  std::string first_leader = wait_leader(cluster, admin, milliseconds(10000));

  {  // A follower forwards a change to the leader and relays its answer, errors included.
    std::vector<std::string> followers;
    for (int i = 0; i < 3; ++i) {
      if (TestCluster::mon_name(i) != first_leader) followers.push_back(cluster.mon_addrs()[i]);
    }
    proto::CommandRequest request;
    auto* create = request.mutable_command()->mutable_create_pool();
    create->set_name("via-follower");
    create->set_size(3);
    create->set_min_size(2);
    create->set_pg_num(8);
    auto created = admin.run(ask_mon(&admin, followers[0], rpc::kMonCommand,
                                     request.SerializeAsString()));
    DFS_REQUIRE_OK(created);
    auto again = admin.run(ask_mon(&admin, followers[1], rpc::kMonCommand,
                                   request.SerializeAsString()));
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error().code() == ErrorCode::kAlreadyExists);
  }

  // The subscriber under watch: a client that knows all three monitors and subscribes
  // to the leader first, so the kill below takes its subscription away.
  client::ClientOptions watch_options;
  watch_options.name = "watcher";
  watch_options.op_timeout = Duration(10000);
  watch_options.connect_timeout = Duration(10000);
  for (int i = 0; i < 3; ++i) {
    auto addr = cluster.mon_addrs()[i];
    if (TestCluster::mon_name(i) == first_leader) {
      watch_options.mon_addrs.insert(watch_options.mon_addrs.begin(), addr);
    } else {
      watch_options.mon_addrs.push_back(addr);
    }
  }
  auto watcher_or = client::ObjectClient::connect(watch_options);
  DFS_REQUIRE_OK(watcher_or);
  auto& watcher = **watcher_or;
  Recorder rec;
  watcher.run([](client::ObjectClient* w, Recorder* rec) -> awaitable<void> {
    MapSubscriber* maps = &w->maps();
    {
      std::lock_guard lock(rec->mu);
      rec->maps[maps->epoch()] = maps->map().proto().SerializeAsString();
    }
    maps->add_listener([maps, rec](const ClusterMap& previous) {
      std::lock_guard lock(rec->mu);
      if (maps->epoch() != previous.epoch() + 1) {
        rec->violations.push_back("jump from epoch " + std::to_string(previous.epoch()) + " to " +
                                  std::to_string(maps->epoch()));
      }
      rec->maps[maps->epoch()] = maps->map().proto().SerializeAsString();
    });
    co_return;
  }(&watcher, &rec));

  // The flapping loop: mark an OSD down, acknowledged with an epoch; the OSD boots
  // itself back. Failures while the leader is gone are expected and retried.
  auto flapper_or = cluster.client(Duration(8000));
  DFS_REQUIRE_OK(flapper_or);
  auto& flapper = **flapper_or;
  std::atomic<bool> stop{false};
  std::mutex acked_mu;
  std::vector<std::pair<uint64_t, int32_t>> acked;  // (epoch, osd marked down)
  int failed_commands = 0;
  std::thread loop([&] {
    for (int32_t i = 0; !stop; ++i) {
      proto::MapCommand command;
      command.mutable_mark_down()->set_id(i % 3);
      auto epoch = flapper.run(flapper.mon_command(command));
      std::lock_guard lock(acked_mu);
      if (epoch) {
        acked.emplace_back(*epoch, i % 3);
      } else {
        ++failed_commands;
      }
      std::this_thread::sleep_for(milliseconds(250));
    }
  });

  std::this_thread::sleep_for(milliseconds(2000));
  uint64_t epoch_at_kill = watcher.map_snapshot().epoch();
  auto killed_at = SteadyClock::now();
  DFS_CHECK_OK(cluster.kill(first_leader, SIGKILL));
  std::string new_leader = wait_leader(cluster, admin, milliseconds(8000));
  auto failover = std::chrono::duration_cast<milliseconds>(SteadyClock::now() - killed_at);
  MESSAGE("leader " << first_leader << " killed; " << new_leader << " leads after "
                    << failover.count() << " ms");
  CHECK(new_leader != first_leader);
  CHECK(failover < milliseconds(5000));

  {  // `dfs status --format json` names the new leader and the dead monitor.
    auto r = run_command({cli_binary(), "-c", cluster.conf_path(), "--timeout", "5", "status",
                          "--format", "json"},
                         cluster.dir(), milliseconds(20000));
    DFS_REQUIRE_OK(r);
    INFO(r->describe());
    CHECK(r->exit_code == 0);
    CHECK(r->out.find("\"leader\": \"" + new_leader + "\"") != std::string::npos);
    CHECK(r->out.find("\"name\": \"" + first_leader + "\", \"addr\"") != std::string::npos);
    CHECK(r->out.find("\"reachable\": false") != std::string::npos);
  }

  std::this_thread::sleep_for(milliseconds(2500));  // the map keeps moving under the new leader
  stop = true;
  loop.join();
  DFS_CHECK_OK(cluster.start(first_leader));

  // Converge: every OSD up again and all three monitors on one map.
  auto deadline = SteadyClock::now() + milliseconds(20000);
  std::string final_map;
  uint64_t final_epoch = 0;
  for (;;) {
    std::set<std::string> maps;
    bool all_up = true;
    for (const auto& addr : cluster.mon_addrs()) {
      auto s = status_of(admin, addr);
      if (!s) {
        maps.insert("unreachable " + addr);
        continue;
      }
      maps.insert(s->map().SerializeAsString());
      for (const auto& osd : s->map().osds()) all_up &= osd.up();
      final_epoch = s->map().epoch();
    }
    if (maps.size() == 1 && all_up && watcher.map_snapshot().epoch() == final_epoch) {
      final_map = *maps.begin();
      break;
    }
    REQUIRE_MESSAGE(SteadyClock::now() < deadline, "the monitors did not converge");
    std::this_thread::sleep_for(milliseconds(100));
  }
  std::lock_guard lock(acked_mu);
  MESSAGE("converged at epoch " << final_epoch << "; " << acked.size() << " mark-downs acked, "
                                << failed_commands << " failed during the failover");
  CHECK(acked.size() >= 10);
  CHECK(watcher.map_snapshot().proto().SerializeAsString() == final_map);

  std::lock_guard rlock(rec.mu);
  CHECK_MESSAGE(rec.violations.empty(), rec.violations.front());
  REQUIRE(!rec.maps.empty());
  uint64_t first_seen = rec.maps.begin()->first;
  CHECK(rec.maps.rbegin()->first == final_epoch);
  CHECK(rec.maps.size() == final_epoch - first_seen + 1);  // every epoch, none skipped
  CHECK(first_seen < epoch_at_kill);
  CHECK(epoch_at_kill + 5 < final_epoch);  // it went on through the new leader

  // Every monitor, the restarted one included, has the same content at every epoch the
  // subscriber saw, and each acknowledged mark-down is the change of its epoch.
  auto checker = cluster.client(Duration(10000));
  DFS_REQUIRE_OK(checker);
  for (int i = 0; i < 3; ++i) {
    INFO("monitor " << TestCluster::mon_name(i));
    auto history = history_of(**checker, cluster.mon_addrs()[i], rec.maps.begin()->second);
    DFS_REQUIRE_OK(history);
    REQUIRE(history->size() == final_epoch - first_seen);
    for (const auto& [epoch, encoded] : *history) {
      CHECK_MESSAGE(rec.maps[epoch] == encoded, "epoch " << epoch << " differs");
    }
  }
  for (const auto& [epoch, osd] : acked) {
    if (epoch <= first_seen) continue;
    proto::ClusterMap at;
    REQUIRE(at.ParseFromString(rec.maps[epoch]));
    bool down_here = false;
    for (const auto& o : at.osds()) down_here |= o.id() == osd && !o.up() && o.down_at() == epoch;
    CHECK_MESSAGE(down_here, "acked mark-down of osd." << osd << " is not epoch " << epoch);
  }
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_CASE("integration/mon quorum: a monitor that missed compacted entries catches up") {
  // The log is compacted every 5 commands, so the restarted monitor cannot be sent the
  // entries it missed: it installs the leader's map snapshot, then follows the log.
  TestCluster cluster(ClusterOptions{.osds = 1, .mons = 3, .mon_snapshot_every = 5});
  INFO("cluster dir " << cluster.dir());
  DFS_REQUIRE_OK(cluster.boot());
  auto admin_or = cluster.admin();
  DFS_REQUIRE_OK(admin_or);
  client::ObjectClient& admin = **admin_or;
  std::string leader = wait_leader(cluster, admin, milliseconds(10000));
  std::string behind = leader == "mon.c" ? "mon.b" : "mon.c";
  int behind_index = behind[4] - 'a';
  DFS_REQUIRE_OK(cluster.kill(behind, SIGKILL));

  auto create = [&](const std::string& name) { return create_small_pool(admin, name); };
  for (int i = 0; i < 23; ++i) DFS_REQUIRE_OK(create("missed-" + std::to_string(i)));
  DFS_REQUIRE_OK(cluster.start(behind));
  for (int i = 0; i < 3; ++i) DFS_REQUIRE_OK(create("after-" + std::to_string(i)));

  auto deadline = SteadyClock::now() + milliseconds(15000);
  for (;;) {
    auto mine = status_of(admin, cluster.mon_addrs()[behind_index]);
    auto lead = status_of(admin, cluster.mon_addrs()[leader[4] - 'a']);
    if (mine && lead && mine->map().SerializeAsString() == lead->map().SerializeAsString() &&
        mine->raft().applied() == lead->raft().commit()) {
      CHECK(mine->map().pools_size() == 26);
      break;
    }
    REQUIRE_MESSAGE(SteadyClock::now() < deadline, behind << " did not catch up");
    std::this_thread::sleep_for(milliseconds(100));
  }
  CHECK(cluster.log_of(behind).find("from the raft snapshot") != std::string::npos);
  DFS_CHECK_OK(cluster.check_healthy());
}

// A monitor's answer to a new subscriber (one with no map yet). The monitor may take up
// to its catch_up_timeout (1.5 s) to answer; the call waits longer than that, so an
// error is the monitor's own.
Result<proto::MapUpdate> subscribe_to(client::ObjectClient& c, const std::string& addr) {
  proto::SubscribeRequest request;
  request.set_have_epoch(0);
  auto frame = c.run(
      ask_mon(&c, addr, rpc::kMonSubscribe, request.SerializeAsString(), Duration(4000)));
  if (!frame) return unexpected(std::move(frame).error());
  return rpc::parse_body<proto::MapUpdate>(frame->body);
}

TEST_CASE("integration/mon quorum: a restarted monitor answers subscriptions only once caught up") {
  // A monitor restarted after missing changes must not hand a subscriber (a client just
  // mounting) its old map: the client would find no pool, or an OSD up that is down.
  TestCluster cluster(ClusterOptions{.osds = 1, .mons = 3});
  INFO("cluster dir " << cluster.dir());
  DFS_REQUIRE_OK(cluster.boot());
  auto admin_or = cluster.admin();
  DFS_REQUIRE_OK(admin_or);
  client::ObjectClient& admin = **admin_or;
  std::string leader = wait_leader(cluster, admin, milliseconds(10000));
  std::string behind = leader == "mon.c" ? "mon.b" : "mon.c";
  const std::string behind_addr = cluster.mon_addrs()[behind[4] - 'a'];
  DFS_REQUIRE_OK(cluster.kill(behind, SIGKILL));
  auto create_pool = [&](const std::string& name) { return create_small_pool(admin, name); };
  for (int i = 0; i < 5; ++i) DFS_REQUIRE_OK(create_pool("while-down-" + std::to_string(i)));
  auto committed = create_pool("last");
  DFS_REQUIRE_OK(committed);
  DFS_REQUIRE_OK(cluster.start(behind));
  // At once, before the leader has sent it anything: the answer waits for that.
  auto update = subscribe_to(admin, behind_addr);
  DFS_REQUIRE_OK(update);
  ClusterMap map;
  if (update->has_full()) map = ClusterMap(update->full());
  for (const auto& inc : update->incrementals()) DFS_REQUIRE_OK(map.apply_incremental(inc));
  CHECK(map.epoch() >= *committed);
  CHECK(map.pool_by_name("last") != nullptr);

  // Cut off from both others (stopped, so its connections stay open), it answers no
  // subscription: it cannot know what it missed.
  for (const auto& other : {std::string("mon.a"), std::string("mon.b"), std::string("mon.c")}) {
    if (other != behind) DFS_REQUIRE_OK(cluster.kill(other, SIGSTOP));
  }
  auto refused = subscribe_to(admin, behind_addr);
  for (const auto& other : {std::string("mon.a"), std::string("mon.b"), std::string("mon.c")}) {
    if (other != behind) DFS_REQUIRE_OK(cluster.kill(other, SIGCONT));
  }
  REQUIRE_FALSE(refused);
  MESSAGE("alone: " << refused.error().to_string());
  CHECK(refused.error().code() == ErrorCode::kUnavailable);  // refused, not hung
  // Once the others are back, the subscription is served again.
  auto deadline = SteadyClock::now() + milliseconds(10000);
  while (!subscribe_to(admin, behind_addr)) {
    REQUIRE_MESSAGE(SteadyClock::now() < deadline, behind << " never served a subscription again");
    std::this_thread::sleep_for(milliseconds(100));
  }
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_CASE("integration/mon: an MDS that steps down reaches the map as a standby") {
  // A leader that loses its Raft group boots again as a standby with the same process
  // instance. The monitor skips a resent boot that changes nothing, but this one changes
  // the role: it must be committed, or the map keeps naming a standby as the active.
  TestCluster cluster(ClusterOptions{.osds = 1, .mons = 1});
  INFO("cluster dir " << cluster.dir());
  DFS_REQUIRE_OK(cluster.boot());
  auto admin_or = cluster.admin();
  DFS_REQUIRE_OK(admin_or);
  client::ObjectClient& admin = **admin_or;
  auto boot_mds = [&](bool standby) {
    proto::MapCommand command;
    auto* boot = command.mutable_boot_mds();
    boot->set_name("mds.x");
    boot->set_addr("127.0.0.1:1");
    boot->set_instance(42);
    boot->set_standby(standby);
    boot->set_leader_term(standby ? 0 : 3);
    return admin.run(admin.mon_command(command));
  };
  // mds.x as the map has it. Each committed boot sets its up_from to the boot's epoch;
  // other changes (the OSD booting) may move the map on in between.
  auto mds_x = [&]() -> proto::MdsInfo {
    auto status = status_of(admin, cluster.mon_addrs()[0]);
    REQUIRE(status.has_value());
    for (const auto& mds : status->map().mds()) {
      if (mds.name() == "mds.x") return mds;
    }
    FAIL("mds.x is not in the map");
    return {};
  };
  // The shortcut for a resent boot is only taken once the leader has caught up.
  auto deadline = SteadyClock::now() + milliseconds(10000);
  while (cluster.log_of("mon.a").find("failure detection on") == std::string::npos) {
    REQUIRE_MESSAGE(SteadyClock::now() < deadline, "mon.a never became a ready leader");
    std::this_thread::sleep_for(milliseconds(50));
  }
  auto as_active = boot_mds(false);
  DFS_REQUIRE_OK(as_active);
  CHECK(mds_x().up_from() == *as_active);
  DFS_REQUIRE_OK(boot_mds(false));
  CHECK(mds_x().up_from() == *as_active);  // a resent boot is not committed again
  auto stepped_down = boot_mds(true);
  DFS_REQUIRE_OK(stepped_down);
  auto after = mds_x();
  CHECK(after.up());
  CHECK(after.standby());
  CHECK(after.up_from() == *stepped_down);
  CHECK(*stepped_down > *as_active);
}

TEST_SUITE_END();

}  // namespace dfs::test
