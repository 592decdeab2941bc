// OsdService: one dfs-osd. Serves client object requests as the primary of its PGs
// (replicating writes to the other up OSDs of each PG), applies replica writes from
// other primaries, follows the cluster map, and reports its liveness to the monitors.
// Protocol state lives on the single I/O thread; store calls run on `blocking_`.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/map/map_subscriber.h"
#include "common/proto/osd.pb.h"
#include "common/rpc/messenger.h"
#include "common/rpc/server.h"
#include "osd/pg/pg_state.h"
#include "osd/service/key_locks.h"
#include "osd/store/object_store.h"

namespace dfs::osd {

struct OsdOptions {
  int32_t id = 0;
  std::string listen_addr = "127.0.0.1:0";
  std::string host;
  double weight = 1.0;
  std::vector<std::string> mon_addrs;
  Duration beacon_interval{1000};
  Duration replica_timeout{5000};  // one replica write; then the peer is reported
  Duration map_wait{30000};        // how long a request waits for a newer map
  int blocking_threads = 8;
};

class OsdService {
 public:
  OsdService(asio::any_io_executor executor, OsdOptions options, std::unique_ptr<ObjectStore> store);
  ~OsdService();

  // Listens, subscribes to the map and announces itself to the monitors (in the
  // background). Returns the bound address. Errors: kUnavailable (cannot listen).
  Result<std::string> start();

 private:
  using Handler = awaitable<Result<rpc::Reply>>;
  using PgKey = std::pair<uint32_t, uint32_t>;

  // osd_service.cc: map, boot, beacons
  awaitable<void> boot_loop();
  awaitable<void> beacon_loop();
  void on_map_change(const ClusterMap& previous);
  awaitable<Status> catch_up_map(uint64_t epoch);
  // Resolves the pool and checks the object's PG. Errors: kNoSuchPool, kInvalidArgument.
  Result<const proto::Pool*> locate(const proto::ObjectLocator& object) const;
  awaitable<Result<PgState*>> load_pg(uint32_t pool, uint32_t pg);
  Error not_primary(const proto::ObjectLocator& object) const;

  // write_path.cc
  Handler on_write(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_rep_write(rpc::ConnectionPtr conn, rpc::Frame frame);
  awaitable<Result<uint32_t>> replicate(proto::WriteRequest request, std::string data,
                                        proto::Version version, std::vector<int32_t> acting,
                                        uint32_t min_size);
  awaitable<Status> replica_write(int32_t peer, proto::RepWriteRequest request, std::string data);
  awaitable<Status> apply_local(proto::WriteRequest request, std::string data,
                                proto::Version version);
  awaitable<Status> retry_replica(int32_t peer, uint64_t incarnation,
                                  proto::RepWriteRequest request, std::string data);
  // After a resent request: makes every acting replica hold the object as we do.
  awaitable<Result<uint32_t>> sync_replicas(proto::WriteRequest request, proto::Version seen,
                                            std::vector<int32_t> acting, uint32_t min_size);
  awaitable<Status> push_if_different(int32_t peer, proto::WriteRequest request,
                                      std::optional<std::pair<ObjectInfo, std::string>> local,
                                      proto::Version removed_at);
  void report_failure(int32_t peer, const Error& error);

  // read_path.cc
  Handler on_read(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_stat(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_list(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_statfs(rpc::ConnectionPtr conn, rpc::Frame frame);
  awaitable<Result<std::string>> read_from_replicas(proto::ReadRequest request);

  const ClusterMap& map() const { return maps_.map(); }

  asio::any_io_executor executor_;
  OsdOptions options_;
  std::string entity_;
  std::string address_;
  asio::thread_pool blocking_;
  std::unique_ptr<ObjectStore> store_;
  rpc::Messenger messenger_;
  MapSubscriber maps_;
  rpc::RpcServer server_;
  std::map<PgKey, std::unique_ptr<PgState>> pgs_;
  KeyLocks locks_;
  bool booting_ = false;
  uint64_t instance_;  // this process's boot nonce
};

// The store key of a located object.
ObjectKey object_key(const proto::ObjectLocator& object);

}  // namespace dfs::osd
