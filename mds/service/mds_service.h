// MdsService: one dfs-mds serving metadata rank 0, alone or as one replica of a
// replicated rank (RankReplication). Handlers validate and parse requests, run reads
// against committed state and send mutations through the Committer (group commit); the
// object work the MDS owns (truncation, uninlining, purging deleted files) goes through
// DataObjects. A replica serves clients only while it leads its rank and has applied
// everything committed before its term (active); otherwise (standby) it refuses them
// with kUnavailable and the map sends clients to the active one. Everything here runs
// on the single I/O thread; store access that may block runs on `blocking_`.
#pragma once

#include <unordered_map>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/metrics/registry.h"
#include "common/map/map_subscriber.h"
#include "common/proto/mds.pb.h"
#include "common/rpc/messenger.h"
#include "common/rpc/server.h"
#include "mds/service/changes_in_flight.h"
#include "mds/service/committer.h"
#include "mds/service/data_objects.h"
#include "mds/service/dir_rights.h"
#include "mds/service/exclusive_cache.h"
#include "mds/service/lock_service.h"
#include "mds/service/rank_replication.h"
#include "mds/service/reconnect_phase.h"
#include "mds/service/request_names.h"
#include "mds/service/sessions.h"

namespace dfs::mds {

struct MdsOptions {
  std::string name = "a";  // entity "mds.<name>"
  std::string listen_addr = "127.0.0.1:0";
  std::vector<std::string> mon_addrs;
  // The cluster this MDS belongs to ([global] fsid): proved in every connection's
  // handshake and in its boot; peers and client sessions of another cluster are refused.
  // Empty (tests): names none and accepts everyone.
  std::string cluster_fsid;
  // Called once when the monitors refuse this MDS as a member of another cluster:
  // retrying cannot help, so the owner stops the daemon with a non-zero status.
  std::function<void(const Error&)> on_wrong_cluster;
  FsSettings fs = default_fs_settings();
  std::string fs_name = "dfs";
  NowFn now;                         // default: the real-time clock
  Duration reclaim_grace{30000};  // after start: orphans wait this long for reopens
  // A client that renews its session and stops for this long is evicted and fenced
  // (docs/architecture.md, "Client sessions and eviction").
  Duration session_timeout{30000};
  // After a takeover or restart: how long the new active MDS waits for the client
  // sessions of the previous instance to re-open and re-assert their locks and caching
  // rights before it serves anyone else (those still missing are evicted).
  Duration reconnect_grace{10000};
  // Most directories one client session owns; past it the least recently used are
  // recalled (docs/capabilities.md, "Directory rights").
  size_t max_dirs_per_client = DirRights::kDefaultMaxPerSession;
  Duration idle_session_expiry{300000};  // a session without connection ends after this
  Duration housekeeping_interval{5000};
  int blocking_threads = 4;
  CommitterOptions committer;
};

class MdsService {
 public:
  // `replication` (null: a single-replica rank) must have been opened on `store`.
  MdsService(asio::any_io_executor executor, MdsOptions options, std::unique_ptr<MetaStore> store,
             std::unique_ptr<DataObjects> data,
             std::unique_ptr<RankReplication> replication = nullptr);
  ~MdsService();

  // Loads the committed state (log index, orphans). Blocking: call before serving.
  // Errors: kNotFound (no file system: run --mkfs), store errors.
  Status load();

  // Listens, starts the background work and boots into the cluster map (retrying in
  // the background until a monitor accepts). Returns the bound address.
  // Errors: kUnavailable (cannot listen).
  Result<std::string> start();

  // Its own figures for Prometheus (Raft, map, PGs...), written at scrape time. Call on
  // the I/O thread: the exporter runs there.
  void collect_metrics(metrics::SampleWriter& w) const;
  // Starts only the background work (purger, orphan reclaim, session expiry): tests
  // that call handle() directly.
  void start_background();

  // Stops accepting connections and ends the background loops (they finish their
  // current step); the owner then runs the executor until idle() before destroying.
  void stop();
  // No background loop or commit is running any more (after stop()).
  bool idle() const { return background_running_ == 0 && committer_.idle(); }

  // Serves one request (what the RPC server calls). `conn` may be null (tests). `flags`:
  // the request frame's; with kFlagMayReplyEarly the client keeps its mutations until
  // it learns they are safe, so a replicated rank answers them early, and a reply given
  // while groups are in flight carries kFlagRepliedEarly.
  awaitable<Result<rpc::Reply>> handle(uint32_t method, std::string body, rpc::ConnectionPtr conn,
                                       uint8_t flags = 0);

  // Serving clients: always for a single replica; for a replicated rank's replica,
  // while it is the active one.
  bool serving() const { return serving_; }
  RankReplication* replication() { return replication_.get(); }
  Committer& committer() { return committer_; }
  MetaStore& store() { return *store_; }
  SessionTable& sessions() { return sessions_; }
  uint64_t instance() const { return instance_; }
  size_t orphans_in_memory() const { return orphans_.size(); }

 private:
  using Reply = Result<rpc::Reply>;

  // What serve() does about owned directories of other sessions that a request touches
  // (dir_claims.cc).
  enum class Claims {
    kWait,      // a request on its own: recall them and wait
    kSendBack,  // an item of a batch: answer kWouldBlock instead of waiting
    kChecked,   // an item of a batch's group, claimed before the group started
  };
  // handle(), also for each item of a batch.
  // `flags`: the request frame's. kFlagMayReplyEarly marks its session; kFlagResent (a
  // mutation answered early by an earlier instance) passes the reconnect phase.
  awaitable<Reply> serve(uint32_t method, std::string body, rpc::ConnectionPtr conn,
                         Claims claims, uint8_t flags = 0);
  // mds_service.cc: dispatch (dedup is in serve())
  awaitable<Reply> dispatch(uint32_t method, std::string body, std::string client);
  std::string client_of(const proto::MdsRequestHeader& header,
                        const rpc::ConnectionPtr& conn) const;
  awaitable<Reply> submit(proto::MdsLogEntry entry);
  // A kMdsSession naming another cluster is refused (and logged) before it is
  // registered. Errors: kWrongCluster.
  Status admit_session(const proto::SessionRequest& request, const rpc::ConnectionPtr& conn) const;
  // dir_claims.cc: what a request of `client` touches that other sessions hold: the
  // owned directories and files it names (its named entries resolved), and the shared
  // inodes it changes. The inodes of its entries are counted in `change` from here on
  // (ChangesInFlight; the caller counted RequestNames::changed_inos()).
  struct Touched {
    std::vector<uint64_t> owned;    // by others
    std::vector<uint64_t> shared;   // by others
    std::vector<uint64_t> entries;  // what the named entries held when resolved
    bool any() const { return !owned.empty() || !shared.empty(); }
  };
  awaitable<Touched> touched(const std::string& client, RequestNames& names,
                             ChangesInFlight::Counted& change);
  // Recalls what touched() finds and waits until its holders gave it up (DirRights);
  // again if the named entries hold other inodes by then.
  awaitable<void> claim_touched(const std::string& client, RequestNames& names,
                                ChangesInFlight::Counted& change);
  // The inodes a request's named entries hold now.
  awaitable<std::vector<uint64_t>> entry_inos(RequestNames& names);
  // The directories and files of its own a request of `client` names become its most
  // recently used (DirRights' bound recalls the least recently used).
  void note_dirs_used(const std::string& client, RequestNames& names);
  // A writing open of `ino` by `client` (an open, or an O_CREAT open of an existing
  // file): its own read share ends, and the other sessions' shares are recalled.
  awaitable<void> claim_for_writer(const std::string& client, uint64_t ino);
  // A lookup or getattr that asked to share its answer (LookupRequest.share,
  // GetAttrRequest.share), read when ChangesInFlight::finished() was `changes_before`:
  // sets InodeReply.read_shared when `client` shares the inode from now on ("Read
  // shares").
  void grant_share(const std::string& client, Reply& reply, uint64_t changes_before);
  // A lookup or listing, read again after recalling the owned directories its answer
  // shows; `in_batch`: kWouldBlock instead of recalling (see serve()).
  awaitable<Reply> read_claimed(const std::string& client, uint32_t method, std::string body,
                                bool in_batch);
  // kMdsBatch: the items through handle(), one after the other.
  awaitable<Reply> on_batch(std::string body, rpc::ConnectionPtr conn);

  // handlers_read.cc
  awaitable<Reply> on_session(proto::SessionRequest req, std::string client);
  awaitable<Reply> on_lookup(proto::LookupRequest req, std::string client);
  awaitable<Reply> on_getattr(proto::GetAttrRequest req, std::string client);
  awaitable<Reply> on_readlink(proto::ReadlinkRequest req, std::string client);
  awaitable<Reply> on_readdir(proto::ReaddirRequest req, std::string client);
  awaitable<Reply> on_getxattr(proto::GetXattrRequest req, std::string client);
  awaitable<Reply> on_listxattr(proto::ListXattrRequest req, std::string client);
  awaitable<Reply> on_statfs(proto::StatFsMdsRequest req, std::string client);
  // Runs `read` for `client` on the I/O thread against memory_reader(), with the groups
  // in flight on top when they hold only that client's changes answered early
  // (Committer::projected_view, unsettled_only_of: it reads its writes), else once the
  // groups in flight have settled (another client's may still be lost); and again on
  // the pool when that needs the disk, once those groups have settled. `read` is the
  // caller's local: it outlives the await (and GCC 12 mishandles closure temporaries in
  // a co_await expression).
  using ReadFn = std::function<Reply(const KvReader&)>;
  awaitable<Reply> serve_read(const ReadFn& read, const std::string& client);
  // load_inode the same way: from memory on the I/O thread, else on the pool. With
  // `with_data`, an inline file's data is filled into the inode (for an open's reply or
  // a copy into object 0).
  awaitable<Result<proto::Inode>> read_inode(const std::string& client, uint64_t ino,
                                             bool with_data = false);
  // Returns once the groups decided so far have settled (at once when none is in
  // flight): before a read on the pool, which sees the store without them.
  awaitable<void> groups_settled();

  // handlers_file.cc: requests that touch data objects or open counts
  awaitable<Reply> on_mknod(proto::MknodRequest req, std::string client);
  awaitable<Reply> on_setattr(proto::SetAttrRequest req, std::string client);
  awaitable<Reply> on_open(proto::OpenRequest req, std::string client);
  awaitable<Reply> on_release(proto::ReleaseRequest req, std::string client);
  // Whether every session but `client`'s that holds `ino` open shares it for reading.
  bool others_only_read(const std::string& client, uint64_t ino) const;
  // Whether `client` may share `ino` now ("Read shares"), read while
  // ChangesInFlight::finished() was `changes_before`: nothing changes it (no change in
  // flight, none finished since the read), every other session holding it open shares
  // it (a writer's open keeps shares from being given), and `client` holds no open of
  // it that may write: none (`opening`: besides the open being served), or it shares it
  // already.
  bool may_share(const std::string& client, uint64_t ino, uint64_t changes_before,
                 bool opening) const;
  awaitable<Reply> on_uninline(proto::UninlineRequest req, std::string client);
  // Object work, then the entry with expect_version; retried while the inode changes.
  awaitable<Reply> truncating_op(proto::MdsLogEntry entry, uint64_t ino, uint64_t new_size,
                                 std::string client);

  // evictions.cc: leases, eviction and fencing of client sessions
  awaitable<Reply> on_renew(proto::RenewRequest req, std::string client);
  awaitable<Reply> on_client_list();
  awaitable<Reply> on_client_evict(proto::ClientEvictRequest req);
  // Refuses a client that was evicted (here or by an earlier active MDS: the map).
  // Errors: kFenced.
  Status check_not_fenced(const std::string& client) const;
  // Evicts sessions that stopped renewing; every second.
  awaitable<void> lease_loop();
  // Fences `client` in the map (retrying until the monitors commit it or this replica
  // stops serving), then ends its session: its opens are dropped and its connection is
  // told and closed. Returns the map epoch of the fence (0 without monitors).
  awaitable<Result<uint64_t>> evict(std::string client, std::string reason);
  awaitable<void> evict_in_background(std::string client, std::string reason);
  // Sends a one-way message (a pushed notice) on the connection of `client`'s session;
  // false when it has no session or no open connection.
  bool push_to_session(const std::string& client, uint32_t method, const std::string& body);
  // What the rights tables (cache_, dir_rights_) send recalls and grants with, and evict
  // a session that does not answer with.
  ExclusiveCache::SendFn send_cache_notice();
  ExclusiveCache::EvictFn evict_soon();

  // kMdsSessionClose: the client leaves; its opens, locks and caching right go now.
  awaitable<Reply> on_session_close(std::string client);
  // Ends sessions (closed, expired, evicted): their locks, caching rights and the
  // unlinked files only they held.
  void sessions_ended(const SessionTable::Expired& ended);
  // After a start or a takeover: the sessions the store remembers re-open and re-assert
  // what they cached (exclusive caching, owned directories) in a reconnect phase, before
  // anyone else's request is served (ReconnectPhase).
  void begin_reconnect_phase();
  // Ends the phase once it is due: evicts the sessions still missing, then lets the
  // waiting requests go on.
  void end_reconnect_phase_if_due();
  awaitable<void> end_reconnect_phase();
  // Whether a request of `client` must wait while rights of the previous instance may
  // still cover what it reads or changes: during the reconnect phase (except for the
  // mount that caches alone, and for session, lock and operator requests), and while
  // another mount that re-asserted exclusive caching after the takeover pushes what it
  // deferred. wait_for_previous_rights() waits until that is over. A `resent` mutation
  // (answered early by an earlier instance) does not wait for the reconnect phase.
  bool held_back_by_previous_rights(uint32_t method, const std::string& client,
                                    bool resent) const;
  awaitable<void> wait_for_previous_rights(const std::string& client, bool resent);
  // The lease a renewal or session open grants `client` (RenewReply.lease_ms): the
  // session timeout, cut short so that it ends before a recall of the client's rights
  // is due. A client that never got the recall (its connection broke) and is evicted
  // for not answering it has stopped caching by the time others are served.
  uint64_t lease_ms_for(const std::string& client) const;
  // How long a reconnect phase waits for the sessions of the previous instance: the
  // grace, or longer, the longest lease that instance may have granted just before it
  // stopped (three quarters of the session timeout, as the client counts it). A session
  // evicted earlier could still be caching under that lease when others are served.
  Duration reconnect_wait() const;
  // kMdsLock (kMdsLockCancel and kMdsLockRelease are answered in dispatch)
  awaitable<Reply> on_lock(proto::LockRequest req, std::string client);

  // purger.cc: orphans and the purge queue
  void on_entry_durable(const proto::MdsLogEntry& entry, const ApplyEffects& effects);
  void purge_if_unused(uint64_t ino);
  // Called by the Committer after a group's replies: the group's new orphans join
  // orphans_ and are weighed for purging once those replies have run.
  void weigh_orphans();
  awaitable<void> weigh_after_replies(std::vector<uint64_t> inos, raft::Term term);
  // Logs orphans_to_release_ as ReleaseOrphans entries, a batch at a time, until none
  // is left or this replica stops serving `term`; one runs at a time
  // (releasing_orphans_), counted in background_running_. A batch the op refuses as
  // damaged is sent again a file at a time.
  awaitable<void> release_orphans(raft::Term term);
  awaitable<Status> submit_release(std::vector<uint64_t> inos);
  // An orphan nobody holds open (still to be released).
  bool still_unused(uint64_t ino) const;
  // Still the active replica, in `term`, and not stopping.
  bool serving_in(raft::Term term) const;
  awaitable<void> forget_session(std::string client);
  awaitable<void> purge_loop();
  awaitable<void> housekeeping_loop();
  awaitable<Status> purge_batch();
  // A file of the purge queue, its record read from the store.
  struct QueuedPurge {
    uint64_t ino = 0;
    bool found = false;  // false: no record (its PurgedFiles is in already)
    proto::PurgeRecord record;
  };
  std::vector<uint64_t> next_purge_batch() const;  // the first files of purge_queue_
  // The files the store's purge queue holds; blocking (read_volatile_state).
  Result<std::set<uint64_t>> read_purge_queue() const;
  // The records of `inos`; blocking, run on blocking_.
  Result<std::vector<QueuedPurge>> read_purge_records(const std::vector<uint64_t>& inos) const;

  // What a replica reads from its store before it serves (a start, a takeover): read on
  // any thread by read_volatile_state (blocking; it touches nothing of this object),
  // then adopted on the I/O executor, the one thread that touches what it fills (the
  // apply path changes orphans_ and purge_queue_ there, also on a standby). A takeover
  // reads once it has applied everything committed before its term, and nothing more
  // applies before it serves: the adopted state misses no entry.
  struct VolatileState {
    uint64_t log_index = 0;
    std::set<uint64_t> orphans;
    struct Remembered {
      std::string client;
      uint64_t seq = 0;
      std::string reply;
    };
    std::vector<Remembered> remembered;  // replies to recent requests, by session
    std::set<uint64_t> purge_queue;
  };
  Result<VolatileState> read_volatile_state() const;
  void adopt_volatile_state(VolatileState state);

  // replication (mds_service.cc): following the rank's Raft role
  awaitable<void> leadership_loop();
  awaitable<void> become_active(raft::Term term);
  void become_standby();
  // A group answered early was not replicated while this replica serves: it stops
  // serving (it lost its leadership: become_standby), so that its clients resend what
  // they were answered to the next leader; one that still leads stops the process.
  void lose_early_replies(const Error& why);
  Error standby_error() const;
  awaitable<Reply> on_raft_status();  // kMdsRaftStatus

  // boot: announces this MDS (active or standby) until the map shows it as it is
  awaitable<void> boot_loop();
  void on_map_change(const ClusterMap& previous);

  asio::any_io_executor executor_;
  MdsOptions options_;
  std::string entity_;
  std::string address_;
  asio::thread_pool blocking_;
  std::unique_ptr<MetaStore> store_;
  std::unique_ptr<DataObjects> data_;
  Committer committer_;
  SessionTable sessions_{kRememberedRequests};
  LockService locks_;
  ExclusiveCache cache_;
  DirRights dir_rights_;  // after cache_, whose sequence numbers it uses
  ReconnectPhase reconnect_;
  bool reconnect_ending_ = false;  // end_reconnect_phase() runs
  std::set<std::string> fenced_here_;   // evicted by this replica (the map has them too)
  std::set<uint64_t> orphans_;          // unlinked inodes kept for their openers
  std::vector<uint64_t> unweighed_orphans_;  // of the group being told (on_entry_durable)
  std::set<uint64_t> purging_orphans_;  // to release, or their entry is in flight
  std::vector<uint64_t> orphans_to_release_;  // unused orphans awaiting their entry
  bool releasing_orphans_ = false;            // release_orphans() runs
  std::set<uint64_t> purge_queue_;      // files whose objects await purging (purger.cc)
  Signal purge_wake_;
  Signal housekeeping_wake_;
  bool stopping_ = false;
  int background_running_ = 0;
  Clock::time_point started_at_;
  // Files are given to opens (OpenRequest.own) only from then on (after a takeover).
  Clock::time_point file_grants_from_{};
  // Requests being served that change an inode without an open of it (setattr, xattrs,
  // links, writes): no file is given while one of its own is under way (a grant would
  // read the inode before the change lands). Counted by ino.
  ChangesInFlight changes_in_flight_;
  bool background_started_ = false;
  uint64_t instance_;
  std::unique_ptr<rpc::Messenger> messenger_;
  std::unique_ptr<MapSubscriber> maps_;
  std::unique_ptr<rpc::RpcServer> server_;
  std::unique_ptr<raft::RaftRouter> router_;
  std::unique_ptr<RankReplication> replication_;  // after the messenger and server it uses
  bool serving_ = true;
  raft::Term serving_term_ = 0;  // the Raft term this replica became active in
  bool booting_ = false;
};

}  // namespace dfs::mds
