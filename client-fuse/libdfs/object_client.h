// ObjectClient: libdfs's object API. It computes placement itself from the cluster
// map it keeps current, sends each request to the PG's primary, and retries through
// map changes, primary failover and lost connections until the op's deadline. Mutating
// requests carry a request id that the OSDs deduplicate, so a retry is never applied
// twice. Owns one I/O thread; the awaitable API runs on it, the blocking API from any
// other thread.
#pragma once

#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/map/map_subscriber.h"
#include "common/proto/mon.pb.h"
#include "common/proto/osd.pb.h"
#include "common/rpc/messenger.h"

namespace dfs::client {

struct ClientOptions {
  std::vector<std::string> mon_addrs;
  // The cluster to talk to ([global] fsid): every daemon reached must belong to it.
  // Empty: any cluster at mon_addrs (a config without an fsid).
  std::string fsid;
  std::string name = "admin";       // entity "client.<name>"
  Duration op_timeout{60000};        // a whole operation, retries included
  Duration attempt_timeout{20000};   // one request to one OSD
  Duration connect_timeout{10000};   // first map from the monitors
};

struct ObjectStat {
  uint64_t size = 0;
  proto::Version version;
};

struct ObjectEntry {
  std::string name;
  uint64_t size = 0;
};

class ObjectClient {
 public:
  // Starts the I/O thread and waits for the first map.
  // Errors: kUnavailable (no monitor answered within connect_timeout), kInvalidArgument,
  // kWrongCluster (a monitor belongs to another cluster than options.fsid).
  static Result<std::unique_ptr<ObjectClient>> connect(ClientOptions options);
  // stop(), then the I/O context goes.
  ~ObjectClient();
  // Stops the I/O thread and destroys what waited on it (queued handlers, suspended
  // coroutine frames), whose locals may refer to the owner's state: call it while that
  // state exists. The I/O context itself lives on until the ObjectClient goes, so the
  // owner's timers and sockets, tied to it, can still be destroyed after. Idempotent.
  // Not from the I/O thread.
  void stop();

  asio::any_io_executor executor() { return io_.get_executor(); }

  // --- awaitable API (call on executor()) ---
  // Writes `data` at `offset`, creating the object if needed.
  // Errors: kNoSuchPool, kTimeout, kUnavailable, kNoSpace, kInvalidArgument.
  awaitable<Result<proto::WriteReply>> write(std::string pool, std::string name, uint64_t offset,
                                             std::string data);
  // Replaces the whole object with `data`.
  awaitable<Result<proto::WriteReply>> write_full(std::string pool, std::string name,
                                                  std::string data);
  awaitable<Result<proto::WriteReply>> truncate(std::string pool, std::string name, uint64_t size);
  // Errors: as write; removing a missing object succeeds.
  awaitable<Result<proto::WriteReply>> remove(std::string pool, std::string name);
  // Reads [offset, offset+length); length 0 reads to the end. Errors: kNotFound, ...
  awaitable<Result<std::string>> read(std::string pool, std::string name, uint64_t offset,
                                      uint64_t length);
  awaitable<Result<ObjectStat>> stat(std::string pool, std::string name);
  // Every object of the pool, sorted by name.
  awaitable<Result<std::vector<ObjectEntry>>> list(std::string pool);
  // Reads the object from one specific OSD, bypassing the primary (replica comparison).
  // Retries a lost connection or an unreachable OSD up to the op timeout.
  awaitable<Result<std::string>> read_from_osd(std::string pool, std::string name, int32_t osd);

  // Monitor requests.
  awaitable<Result<uint64_t>> mon_command(proto::MapCommand command);
  awaitable<Result<proto::StatusReply>> mon_status();
  awaitable<Result<proto::StatFsReply>> osd_statfs(int32_t osd);
  // Scrubs (deep: also reads and compares the data) PG `pg` of `pool` through its
  // primary, which repairs what differs. Errors: kNoSuchPool, kInvalidArgument (no
  // such PG), kTimeout, those of the primary.
  awaitable<Result<proto::PgScrubReply>> scrub_pg(std::string pool, uint32_t pg, bool deep);

  // A copy of the current map (thread-safe).
  ClusterMap map_snapshot();

  // The pieces other libdfs services (the MDS session) share with the object API: they
  // run on the same I/O thread, follow the same map and reuse the same connections.
  // Use only on executor().
  MapSubscriber& maps() { return maps_; }
  rpc::Messenger& messenger() { return messenger_; }
  // "client.<name>.<nonce>": unique per session, the client half of every request id.
  const std::string& entity() const { return entity_; }
  // After an eviction: a new nonce, and the connections to OSDs and MDSs made under the
  // old name are closed. A request begun under the old name never goes out under the
  // new one: it fails with kFenced (what it carried was written before the eviction).
  void take_new_entity();
  // Called (on the I/O thread) when an OSD refuses this client as fenced.
  void on_fenced(std::function<void(const Error&)> hook) { on_fenced_ = std::move(hook); }
  // Called for one-way frames from an MDS (the messenger routes map updates itself).
  void on_mds_push(std::function<void(const rpc::Frame&)> hook) { on_mds_push_ = std::move(hook); }
  const ClientOptions& options() const { return options_; }

  // A stopping mount must not wait on a cluster that has gone, nor drop what a live one
  // still takes: from this call on, requests (here and the MDS session's) are retried
  // only while the cluster answered something within the last `grace`, and no wait
  // outlasts that. Use on executor().
  void stop_retrying_after(Duration grace);
  // The end of an operation that would otherwise end at `op_deadline`: earlier once
  // stop_retrying_after() was called and the cluster has been silent for its grace.
  Clock::time_point retry_deadline(Clock::time_point op_deadline) const {
    return std::min(op_deadline, stop_retrying_at_);
  }
  // A request was answered: the cluster is alive (keeps a stopping mount pushing).
  void answered() {
    if (stop_grace_) stop_retrying_at_ = std::max(stop_retrying_at_, Clock::now() + *stop_grace_);
  }

  // --- blocking API: runs `task` on the I/O thread and waits for it ---
  template <class T>
  T run(awaitable<T> task) {
    return asio::co_spawn(io_, std::move(task), asio::use_future).get();
  }
  // True on the I/O thread, where run() would wait for itself.
  bool on_io_thread() { return io_.get_executor().running_in_this_thread(); }

 private:
  explicit ObjectClient(ClientOptions options);
  awaitable<Status> wait_for_map();
  // A map listener: closes the connection to every OSD that went down or restarted, so
  // that requests waiting on it fail at once and are retried at the PG's new primary
  // (an OSD cut off from the network never answers, and its socket may not notice for
  // minutes; waiting out attempt_timeout held write-behind data for 20 s).
  void drop_dead_osds(const ClusterMap& previous);
  struct Target {
    const proto::Pool* pool;
    proto::ObjectLocator object;
  };
  Result<Target> target(const std::string& pool, const std::string& name) const;
  awaitable<Result<proto::WriteReply>> mutate(std::string pool, std::string name,
                                              proto::OpKind kind, uint64_t offset, std::string data);
  // Sends one request to the PG's current primary, retrying retryable failures.
  awaitable<Result<rpc::Frame>> to_primary(const std::string& pool, const std::string& name,
                                           uint32_t method,
                                           std::function<std::string(const Target&, uint64_t epoch)> body,
                                           std::string data);
  awaitable<Result<rpc::Frame>> to_pg_primary(uint32_t pool, uint32_t pg, uint32_t method,
                                              std::string body);

  ClientOptions options_;
  std::string entity_;
  std::optional<Duration> stop_grace_;  // set by stop_retrying_after()
  Clock::time_point stop_retrying_at_ = Clock::time_point::max();
  // An io_context whose pending work can be destroyed before the context itself (stop()).
  class IoContext : public asio::io_context {
   public:
    using asio::execution_context::shutdown;
  };
  IoContext io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  rpc::Messenger messenger_;
  MapSubscriber maps_;
  uint64_t next_seq_ = 1;
  std::function<void(const Error&)> on_fenced_;
  std::function<void(const rpc::Frame&)> on_mds_push_;
  std::thread thread_;
};

}  // namespace dfs::client
