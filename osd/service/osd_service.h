// OsdService: one dfs-osd. Serves client object requests as the primary of its PGs
// (replicating writes to the other up OSDs of each PG), applies replica writes from
// other primaries, follows the cluster map, and reports its liveness to the monitors.
// Protocol state lives on the single I/O thread; store calls run on `blocking_`.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "common/metrics/registry.h"
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
  // The cluster this OSD belongs to ([global] fsid): proved in every connection's
  // handshake and in its boot; peers of another cluster are refused.
  std::string cluster_fsid;
  // Called once when the monitors refuse this OSD as a member of another cluster:
  // retrying cannot help, so the owner stops the daemon with a non-zero status.
  std::function<void(const Error&)> on_wrong_cluster;
  Duration beacon_interval{1000};
  Duration replica_timeout{5000};  // one replica write; then the peer is reported
  Duration map_wait{30000};        // how long a request waits for a newer map
  // Scheduled scrubs of each PG this OSD is primary of (scrub.cc); 0: never.
  Duration scrub_interval{24 * 3600 * 1000};
  Duration deep_scrub_interval{7 * 24 * 3600 * 1000};
  int blocking_threads = 8;
};

// One object as a scrub listing shows it: `digest` (crc32c of the data) only from a
// deep scrub; `damage` says why the data could not be read.
struct ScrubEntry {
  ObjectVersion version;
  uint64_t size = 0;
  uint32_t digest = 0;
  std::string damage;
};

// What repair_object found in one object, in words, and whether every member now
// holds the good copy.
struct RepairFinding {
  std::string text;
  bool repaired = false;
};

// One object's whole state as recovery copies it.
struct ObjectCopy {
  ObjectVersion version;
  std::string data;
};

class OsdService {
 public:
  OsdService(asio::any_io_executor executor, OsdOptions options, std::unique_ptr<ObjectStore> store);
  ~OsdService();

  // Listens, subscribes to the map and announces itself to the monitors (in the
  // background). Returns the bound address. Errors: kUnavailable (cannot listen).
  Result<std::string> start();

  // Its own figures for Prometheus (Raft, map, PGs...), written at scrape time. Call on
  // the I/O thread: the exporter runs there.
  void collect_metrics(metrics::SampleWriter& w) const;

 private:
  using Handler = awaitable<Result<rpc::Reply>>;
  using PgKey = std::pair<uint32_t, uint32_t>;

  // osd_service.cc: map, boot, beacons
  awaitable<void> boot_loop();
  awaitable<void> beacon_loop();
  void on_map_change(const ClusterMap& previous);
  awaitable<Status> catch_up_map(uint64_t epoch);
  // Refuses a client the MDS evicted (its fence is in the map): a client that was paused
  // past its session timeout must not write over what others changed since.
  // Errors: kFenced.
  Status check_not_fenced(const rpc::ConnectionPtr& conn) const;
  // Resolves the pool and checks the object's PG. Errors: kNoSuchPool, kInvalidArgument.
  Result<const proto::Pool*> locate(const proto::ObjectLocator& object) const;
  // The pool of a PG request. Errors: kNoSuchPool, kInvalidArgument (no such PG).
  Result<const proto::Pool*> locate_pg(uint32_t pool, uint32_t pg) const;
  awaitable<Result<PgState*>> load_pg(uint32_t pool, uint32_t pg);
  Error not_primary(const proto::ObjectLocator& object) const;

  // write_path.cc
  Handler on_write(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_rep_write(rpc::ConnectionPtr conn, rpc::Frame frame);
  // A replica write is taken only from the PG's primary in this OSD's map, sent by the
  // incarnation that is up now (its epoch not older than the primary's up_from). A
  // primary cut off from the network and marked down meanwhile may still have the write
  // in its socket, delivered when the link heals: applied, it would overwrite what the
  // new primary wrote since. Errors: kNotPrimary.
  Status check_replica_sender(const proto::RepWriteRequest& request,
                              const std::string& sender) const;
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
  // kNoSpace for a write (not a removal or truncate) to a PG with a full member.
  Status check_space(const proto::WriteRequest& request, const std::vector<int32_t>& acting) const;

  // peering.cc
  struct MemberListing {
    int32_t osd = 0;
    proto::Version last_update;
    std::map<std::string, ObjectVersion> objects;
  };
  std::vector<PgMember> acting_members(const proto::Pool& pool, uint32_t pg) const;
  // The PGs this OSD is primary of in the current map (a copy: the map may change while
  // the caller works through them).
  std::vector<PgKey> primary_pgs() const;
  // PGs this OSD is primary of in the current map, and how many of them are active.
  struct PrimaryPgCounts {
    uint32_t primary = 0;
    uint32_t active = 0;
  };
  PrimaryPgCounts count_primary_pgs() const;
  Result<std::string> member_addr(int32_t osd) const;  // kUnavailable when not in the map
  // Admits one op on a PG this OSD is primary of, peering it first when its acting set
  // changed. Errors: kNotPrimary, kNoSuchPool, kUnavailable (a member did not answer).
  awaitable<Result<PgState::OpGuard>> admit(uint32_t pool, uint32_t pg);
  // For reads: a member's own copy (any_replica, as peering and replica checks read it)
  // is served as it is, without admission; otherwise as admit().
  awaitable<Result<std::optional<PgState::OpGuard>>> admit_unless_replica(bool any_replica,
                                                                          uint32_t pool, uint32_t pg);
  awaitable<Status> peer(uint32_t pool, uint32_t pg, PgState* state);
  awaitable<Result<MemberListing>> list_member(int32_t osd, uint32_t pool, uint32_t pg);
  // nullopt: the object does not exist there.
  awaitable<Result<std::optional<ObjectCopy>>> fetch_copy(int32_t osd, const ObjectKey& key);
  awaitable<Status> push_copy(int32_t osd, const ObjectKey& key, std::optional<ObjectCopy> copy);
  // `last_update` must outlive the call (the caller awaits it at once).
  awaitable<Status> activate_member(int32_t osd, uint32_t pool, uint32_t pg,
                                    const proto::Version& last_update);
  void schedule_peering();
  awaitable<void> peering_loop();
  Handler on_push(rpc::ConnectionPtr conn, rpc::Frame frame);
  Handler on_pg_activate(rpc::ConnectionPtr conn, rpc::Frame frame);

  // scrub.cc
  // Compares the PG's members and repairs what differs. Errors: those of admit(), a
  // member that did not answer its listing.
  awaitable<Result<proto::PgScrubReply>> scrub_pg(uint32_t pool, uint32_t pg, bool deep);
  Result<std::map<std::string, ScrubEntry>> scrub_listing_here(uint32_t pool, uint32_t pg, bool deep);
  awaitable<Result<std::map<std::string, ScrubEntry>>> scrub_list_member(int32_t osd, uint32_t pool,
                                                                         uint32_t pg, bool deep);
  // Under the object's lock: reads every member's copy and pushes the good one to each
  // member that differs. Returns what was found and done, nullopt when all agreed.
  // Errors: kNotPrimary, kNoSuchPool.
  awaitable<Result<std::optional<RepairFinding>>> repair_object(ObjectKey key);
  // After a read met a bad checksum in this primary's copy: repair in the background.
  void repair_after_read(ObjectKey key);
  awaitable<void> scrub_loop();
  Handler on_pg_scrub(rpc::ConnectionPtr conn, rpc::Frame frame);

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
  bool peering_wanted_ = false;   // a pass over this OSD's PGs is due
  bool peering_running_ = false;
  uint64_t recovered_objects_ = 0;  // copied or removed onto members by peering
  uint64_t recovery_pending_objects_ = 0;  // still to copy or remove by running peerings
  uint64_t inconsistent_objects_ = 0;  // found by scrub or a bad read (scrub.cc)
  uint64_t repaired_objects_ = 0;
  StoreUsage last_usage_;  // the disk's use as of the last beacon (for metrics)
  uint64_t instance_;  // this process's boot nonce
};

// The store key of a located object.
ObjectKey object_key(const proto::ObjectLocator& object);

}  // namespace dfs::osd
