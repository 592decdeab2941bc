// Monitor: one member of the monitor quorum. The cluster map is the state machine of a
// Raft group of all monitors (MapStateMachine): a map change is a Raft proposal, and it
// is acknowledged once committed on a majority and applied here, so an acknowledged
// epoch survives the loss of any minority and no epoch is ever produced twice with
// different content. Any monitor serves map reads, subscriptions and status from the
// map it has applied (a new subscriber's first subscription only once that map is known
// to hold every epoch committed before the request); map changes, OSD beacons and failure reports are handled by the
// leader, and a follower forwards them to it (docs/architecture.md says why forwarding
// rather than redirecting). Failure detection runs on the leader only.
// One instance per dfs-mon; all state lives on its single I/O thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/metrics/registry.h"
#include "common/map/cluster_map.h"
#include "common/proto/mon.pb.h"
#include "common/raft/raft_group.h"
#include "common/rpc/messenger.h"
#include "common/raft/members_config.h"
#include "common/rpc/server.h"
#include "mon/service/failure_detector.h"
#include "mon/service/flap_damper.h"
#include "mon/service/map_state_machine.h"
#include "mon/service/map_store.h"

namespace dfs::mon {

using MonMember = raft::RaftMember;

struct MonitorOptions {
  std::string entity = "mon.a";
  std::string listen_addr = "127.0.0.1:6789";
  // The cluster this monitor belongs to ([global] fsid, the same as its map's): proved
  // in every connection's handshake; peers of another cluster are refused.
  std::string cluster_fsid;
  raft::NodeId id = 1;              // this monitor's Raft node id
  std::vector<MonMember> members;   // every monitor, this one included; empty: alone
  FailureDetectorOptions failure;
  FlapDamperOptions flap;
  // An OSD whose disk is this full is marked full (writes to its PGs refused with
  // kNoSpace) or nearly full (a health warning), from its beacons.
  double full_ratio = 0.95;
  double nearfull_ratio = 0.85;
  Millis tick{500};
  Duration forward_timeout{3000};   // a follower's forward of one request to the leader
  // How long a subscription may wait for this monitor to catch up with the leader; below
  // the subscribers' 2 s probe timeout, so a lagging monitor fails the probe cleanly.
  Duration catch_up_timeout{1500};
  uint64_t snapshot_every = 1000;   // map commands between Raft log compactions
  Duration raft_tick{50};
};

class Monitor {
 public:
  // Requires: `executor` is single-threaded (the daemon's I/O thread).
  Monitor(asio::any_io_executor executor, MonitorOptions options, std::unique_ptr<MapStore> store);
  // After the executor stopped: joins the sync pool before the store closes.
  ~Monitor();

  // Listens, opens the Raft log and starts the group and the failure checks.
  // Returns the bound address. Errors: kIoError/kCorruption (the log), listen errors.
  Result<std::string> start();

  // Its own figures for Prometheus (Raft, map, PGs...), written at scrape time. Call on
  // the I/O thread: the exporter runs there.
  void collect_metrics(metrics::SampleWriter& w) const;

 private:
  using Handler = awaitable<Result<rpc::Reply>>;
  Handler on_get_map(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_subscribe(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_command(rpc::ConnectionPtr conn, rpc::Frame frame);
  // A command naming another cluster, or a daemon's boot naming none, is refused (and
  // logged): it may come forwarded, past only a follower's handshake, and a boot names
  // the daemon itself. Errors: kWrongCluster.
  Status admit_command(const proto::CommandRequest& request, const rpc::Connection& conn) const;
  Handler on_beacon(rpc::ConnectionPtr conn, rpc::Frame frame);
  // Commits the OSD's space state (full_ratio, nearfull_ratio) when its beacon changes it.
  awaitable<void> judge_space(const proto::OsdBeacon& beacon);
  Handler on_failure_report(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_status(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_committed_epoch(rpc::ConnectionPtr conn, rpc::Frame frame);

  bool is_leader() const;
  // The member this monitor knows as leader, unless that is itself or none is known.
  const MonMember* other_leader() const;
  // Sends a leader-only request on to the leader and relays its answer. A request that
  // was itself forwarded (from a mon.* peer) is never forwarded again: it fails with
  // kUnavailable and the original caller tries another monitor.
  Handler forward(rpc::ConnectionPtr conn, rpc::Frame frame);
  // Proposes one command through Raft; the epoch it produced once applied here.
  awaitable<Result<uint64_t>> commit(proto::MapCommand command);
  void publish(const proto::MapUpdate& update);
  // Completes once this monitor has applied every epoch committed before the call: the
  // leader by a read index, a follower by asking the leader for that epoch and waiting
  // for it to arrive. Errors: kUnavailable (no leader known, it did not answer, or the
  // epoch did not arrive within catch_up_timeout), and those of a read index.
  awaitable<Status> catch_up_with_leader();
  // Errors: kUnavailable when `epoch` has not been applied by `deadline`.
  awaitable<Status> wait_for_epoch(uint64_t epoch, Clock::time_point deadline);
  awaitable<void> tick_loop();
  awaitable<void> check_failures();

  asio::any_io_executor executor_;
  MonitorOptions options_;
  std::unique_ptr<MapStore> store_;  // first: the Raft log's DB closes last
  asio::thread_pool pool_{1};        // Raft log syncs
  MapStateMachine sm_;
  FailureDetector failures_;
  FlapDamper flaps_;  // OSDs marked down too often have their boots held back
  rpc::RpcServer server_;
  raft::RaftRouter router_;
  rpc::Messenger messenger_;
  std::unique_ptr<raft::RaftGroup> group_;
  std::vector<std::weak_ptr<rpc::Connection>> subscribers_;
  std::vector<std::shared_ptr<asio::steady_timer>> epoch_waiters_;  // woken by each apply
  TimePoint started_;
  bool leader_ready_ = false;  // leader, and has applied everything committed before
};

}  // namespace dfs::mon
