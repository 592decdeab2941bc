// Monitor: serves the cluster map. It orders map commands (admin changes, OSD boots,
// failure verdicts), makes each durable in its MapStore before acknowledging it, and
// pushes every committed incremental to subscribers. One instance per dfs-mon; all
// state lives on its single I/O thread. The Raft issue replicates the same commands.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/map/cluster_map.h"
#include "common/proto/mon.pb.h"
#include "common/rpc/server.h"
#include "mon/service/failure_detector.h"
#include "mon/service/map_store.h"

namespace dfs::mon {

struct MonitorOptions {
  std::string entity = "mon.a";
  std::string listen_addr = "127.0.0.1:6789";
  FailureDetectorOptions failure;
  Millis tick{500};
};

class Monitor {
 public:
  Monitor(asio::any_io_executor executor, MonitorOptions options, std::unique_ptr<MapStore> store);

  // Listens and starts the failure checks. Returns the bound address.
  Result<std::string> start();

 private:
  using Handler = awaitable<Result<rpc::Reply>>;
  Handler on_get_map(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_subscribe(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_command(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_beacon(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_failure_report(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_status(rpc::ConnectionPtr conn, rpc::Frame frame);

  // Applies, persists and publishes one command. Returns the new epoch.
  Result<uint64_t> commit(const proto::MapCommand& command);
  void publish(const proto::MapIncremental& incremental);
  proto::MapUpdate catch_up(uint64_t have_epoch) const;
  awaitable<void> tick_loop();

  asio::any_io_executor executor_;
  MonitorOptions options_;
  std::unique_ptr<MapStore> store_;
  ClusterMap map_;
  FailureDetector failures_;
  rpc::RpcServer server_;
  std::vector<std::weak_ptr<rpc::Connection>> subscribers_;
  TimePoint started_;
};

}  // namespace dfs::mon
