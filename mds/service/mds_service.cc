#include "mds/service/mds_service.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <random>

#include "common/proto/mon.pb.h"
#include "common/proto/wire_fields.h"
#include "common/raft/raft_status_proto.h"
#include "common/rpc/cluster_identity.h"
#include "common/rpc/methods.h"
#include "mds/ops/meta_view.h"
#include "mds/service/lease_rules.h"

namespace dfs::mds {
namespace {

constexpr uint32_t kMdsMethods[] = {
    rpc::kMdsSession,     rpc::kMdsLookup,      rpc::kMdsGetAttr,  rpc::kMdsSetAttr,
    rpc::kMdsMknod,       rpc::kMdsSymlink,     rpc::kMdsLink,     rpc::kMdsUnlink,
    rpc::kMdsRename,      rpc::kMdsReaddir,     rpc::kMdsGetXattr, rpc::kMdsSetXattr,
    rpc::kMdsListXattr,   rpc::kMdsRemoveXattr, rpc::kMdsOpen,     rpc::kMdsRelease,
    rpc::kMdsWriteInline, rpc::kMdsCommitWrite, rpc::kMdsUninline, rpc::kMdsStatFs,
    rpc::kMdsReadlink,    rpc::kMdsSync,        rpc::kMdsBatch,    rpc::kMdsAllocInos,
    rpc::kMdsRenew,       rpc::kMdsClientList,  rpc::kMdsClientEvict, rpc::kMdsLock,
    rpc::kMdsLockCancel,  rpc::kMdsLockRelease, rpc::kMdsLockReassert, rpc::kMdsCacheAck,
    rpc::kMdsSessionClose,
};

// Requests that never wait for the reconnect phase: the session's own (a re-open is what
// ends the phase), the answers to recalls, locks (which have their own re-assertion
// grace) and the operators' view of the sessions.
bool waits_for_reconnects(uint32_t method) {
  switch (method) {
    case rpc::kMdsSession:
    case rpc::kMdsRenew:
    case rpc::kMdsSessionClose:
    case rpc::kMdsCacheAck:
    case rpc::kMdsLock:
    case rpc::kMdsLockCancel:
    case rpc::kMdsLockRelease:
    case rpc::kMdsLockReassert:
    case rpc::kMdsClientList:
    case rpc::kMdsClientEvict:
    case rpc::kMdsStatFs:
      return false;
    default:
      return true;
  }
}

uint64_t random_instance() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) | rd();
}

}  // namespace

MdsService::MdsService(asio::any_io_executor executor, MdsOptions options,
                       std::unique_ptr<MetaStore> store, std::unique_ptr<DataObjects> data,
                       std::unique_ptr<RankReplication> replication)
    : executor_(executor),
      options_(std::move(options)),
      entity_("mds." + options_.name),
      blocking_(options_.blocking_threads),
      store_(std::move(store)),
      data_(std::move(data)),
      committer_(executor, blocking_, *store_, options_.fs, options_.now, options_.committer),
      locks_(executor),
      cache_(executor, options_.session_timeout, send_cache_notice(), evict_soon()),
      dir_rights_(executor, options_.session_timeout, options_.max_dirs_per_client,
                  send_cache_notice(), evict_soon(),
                  [this] { return cache_.issue_seq(); }),
      reconnect_(executor),
      purge_wake_(executor),
      housekeeping_wake_(executor),
      started_at_(Clock::now()),
      instance_(random_instance()),
      replication_(std::move(replication)),
      serving_(!replication_) {
  committer_.add_listener([this](const proto::MdsLogEntry& entry, const ApplyEffects& effects) {
    on_entry_durable(entry, effects);
  });
  committer_.add_group_listener([this] { weigh_orphans(); });
}

ExclusiveCache::SendFn MdsService::send_cache_notice() {
  return [this](const std::string& client, const proto::CacheRightsNotice& notice) {
    return push_to_session(client, rpc::kMdsCacheRights, notice.SerializeAsString());
  };
}

ExclusiveCache::EvictFn MdsService::evict_soon() {
  return [this](const std::string& client, const std::string& reason) {
    spawn_checked(executor_, evict_in_background(client, reason));
  };
}

void MdsService::stop() {
  stopping_ = true;
  if (server_) server_->stop();
  if (messenger_) messenger_->close_all();
  purge_wake_.notify();
  housekeeping_wake_.notify();
}

MdsService::~MdsService() {
  if (server_) server_->stop();
  if (messenger_) messenger_->close_all();
  blocking_.join();
}

Status MdsService::load() {
  auto root = DFS_TRY(find_inode(*store_, kRootIno));
  // A replicated rank's file system is created by its first log entry (become_active).
  if (!root && options_.fs.rank == 0 && !replication_) {
    return make_error(ErrorCode::kNotFound, "the metadata store holds no file system (run --mkfs)");
  }
  if (replication_) {
    spdlog::info("{}: replica {} of rank {} ({} replicas), standby until it leads", entity_,
                 replication_->options().id, options_.fs.rank,
                 replication_->options().replicas.size());
    return ok_status();  // the active replica loads the rest when it takes over
  }
  locks_.begin_reassert(reconnect_wait());  // clients held locks before a restart
  adopt_volatile_state(DFS_TRY(read_volatile_state()));  // load() runs before start()
  begin_reconnect_phase();
  return ok_status();
}

void MdsService::begin_reconnect_phase() {
  cache_.clear();
  dir_rights_.clear();
  reconnect_.clear();
  std::set<std::string> awaited;
  for (const auto& [client, session] : sessions_.all()) {
    if (check_not_fenced(client)) awaited.insert(client);  // an evicted one never comes back
  }
  if (awaited.empty()) {
    // Every mount that could hold a lock has its session recorded: nobody to wait for.
    locks_.end_reassert();
    return;
  }
  auto now = Clock::now();
  cache_.begin_grace(now, reconnect_wait());
  // Mounts of the previous instance count their open files again with ordinary opens
  // once they are back, after the reconnect phase: until each has done so or been
  // evicted for silence, "nobody else has it open" cannot be known, and no file is given.
  file_grants_from_ = now + reconnect_wait() + options_.session_timeout + Duration(1000);
  spdlog::info("{}: waiting up to {} ms for {} client session(s) of the previous instance to "
               "reconnect before serving their requests",
               entity_, reconnect_wait().count(), awaited.size());
  reconnect_.begin(std::move(awaited), now + reconnect_wait());
}

void MdsService::end_reconnect_phase_if_due() {
  if (reconnect_ending_ || !reconnect_.due(Clock::now())) return;
  reconnect_ending_ = true;
  spawn_checked(executor_, end_reconnect_phase());
}

awaitable<void> MdsService::end_reconnect_phase() {
  auto started = reconnect_.deadline() - reconnect_wait();
  const raft::Term term = serving_term_;  // a later term's phase is not this one's to end
  std::set<std::string> missing = reconnect_.awaited();
  // What a missing session deferred must never land over what others change next: it is
  // fenced before anyone else's request is served.
  size_t evictions = 0;
  for (const auto& client : missing) {
    if (reconnect_.awaited().count(client) == 0) continue;  // came back meanwhile
    ++evictions;
    auto evicted = co_await evict(client, "did not reconnect within " +
                                              std::to_string(reconnect_wait().count()) +
                                              " ms of the takeover");
    if (!evicted && evicted.error().code() == ErrorCode::kUnavailable) break;  // standby now
  }
  reconnect_ending_ = false;
  if (!serving_ || serving_term_ != term || !reconnect_.running()) co_return;
  reconnect_.end();
  cache_.end_grace(Clock::now());
  locks_.end_reassert();
  auto took = std::chrono::duration_cast<Duration>(Clock::now() - started);
  spdlog::info("{}: reconnect phase over after {} ms ({} session(s) evicted for not "
               "reconnecting); serving every request",
               entity_, took.count(), evictions);
}

Duration MdsService::reconnect_wait() const {
  return lease_rules::reconnect_wait(options_.reconnect_grace, options_.session_timeout);
}

bool MdsService::held_back_by_previous_rights(uint32_t method, const std::string& client,
                                               bool resent) const {
  if (!waits_for_reconnects(method)) return false;
  return (!resent && reconnect_.running() && cache_.holder() != client) ||
         cache_.held_by_other_than(client);
}

awaitable<void> MdsService::wait_for_previous_rights(const std::string& client, bool resent) {
  if (!resent && reconnect_.running() && cache_.holder() != client) co_await reconnect_.wait();
  if (serving_) co_await cache_.given_up_for(client);
}

Result<MdsService::VolatileState> MdsService::read_volatile_state() const {
  VolatileState state;
  state.log_index = DFS_TRY(committer_.read_last_index());
  auto orphans = DFS_TRY(store_->scan(orphan_prefix(), prefix_end(orphan_prefix()), SIZE_MAX));
  for (const auto& kv : orphans) state.orphans.insert(get_be64(std::string_view(kv.key).substr(1)));
  auto remembered = DFS_TRY(store_->scan(request_prefix(), prefix_end(request_prefix()), SIZE_MAX));
  for (auto& kv : remembered) {
    auto key = DFS_TRY(decode_request_key(kv.key));
    state.remembered.push_back({std::move(key.client), key.seq, std::move(kv.value)});
  }
  state.purge_queue = DFS_TRY(read_purge_queue());
  return state;
}

void MdsService::adopt_volatile_state(VolatileState state) {
  committer_.adopt_last_index(state.log_index);
  orphans_ = std::move(state.orphans);
  purge_queue_ = std::move(state.purge_queue);
  started_at_ = Clock::now();
  // Replies to recent requests: a client resending one after our restart (or to a new
  // leader) gets it instead of a second execution.
  sessions_.clear();
  for (auto& r : state.remembered) {
    sessions_.preload(r.client, r.seq, std::move(r.reply), executor_, started_at_);
  }
  spdlog::info(
      "{}: metadata store at log index {}, {} orphan(s) awaiting reclaim, {} file(s) queued "
      "for purge, {} client session(s) with {} remembered replies",
      entity_, committer_.last_index(), orphans_.size(), purge_queue_.size(), sessions_.size(),
      state.remembered.size());
}

Result<std::string> MdsService::start() {
  rpc::ConnectionOptions conn_options;
  conn_options.local_entity = entity_;
  conn_options.auth = rpc::make_none_authenticator();
  conn_options.cluster_fsid = options_.cluster_fsid;
  server_ = std::make_unique<rpc::RpcServer>(executor_, conn_options);
  for (uint32_t method : kMdsMethods) {
    server_->handle(method, [this, method](rpc::ConnectionPtr conn, rpc::Frame frame) {
      return handle(method, std::move(frame.body), std::move(conn), frame.header.flags);
    });
  }
  if (replication_) {
    router_ = std::make_unique<raft::RaftRouter>(*server_);
    // Answered by standbys too (not through handle()): `dfs status` shows every replica.
    server_->handle(rpc::kMdsRaftStatus,
                    [this](rpc::ConnectionPtr, rpc::Frame) { return on_raft_status(); });
  }
  address_ = DFS_TRY(server_->listen(options_.listen_addr));
  start_background();
  if (!options_.mon_addrs.empty() || replication_) {
    messenger_ = std::make_unique<rpc::Messenger>(
        executor_, rpc::MessengerOptions{conn_options},
        [this](rpc::ConnectionPtr, rpc::Frame frame) {
          if (maps_) maps_->on_push(frame);
        });
  }
  if (replication_) {
    DFS_TRY_STATUS(
        replication_->start(executor_, blocking_, *messenger_, *router_, options_.fs.rank));
    committer_.set_raft(&replication_->group(),
                        [r = replication_.get()] { return r->last_command_index(); });
    if (!options_.committer.reply_after_sync) {
      committer_.set_early_replies(
          [this](const proto::MdsLogEntry& entry) {
            const proto::MdsRequestHeader* header = request_header(entry);
            if (!header || header->reqid().client().empty()) return false;
            // Only what a resend to the next leader answers the same: not the inode
            // numbers this leader picks (a create without a delegated number, a range
            // delegated to the client).
            if (entry.has_alloc_inos()) return false;
            if (entry_allocates_ino(entry) && header->want_ino() == 0) return false;
            // Nor opens, which mounts do not keep (they open their files again at a new
            // instance), and an open may truncate.
            if (entry.has_open()) return false;
            const Session* session = sessions_.find(header->reqid().client());
            return session && session->keeps_early_replies;
          },
          [this](const Error& why) { lose_early_replies(why); });
    }
    ++background_running_;
    spawn_checked(executor_, leadership_loop());
  }
  if (!options_.mon_addrs.empty()) {
    maps_ = std::make_unique<MapSubscriber>(executor_, *messenger_, options_.mon_addrs);
    maps_->add_listener([this](const ClusterMap& previous) { on_map_change(previous); });
    maps_->start();
    spawn_checked(executor_, boot_loop());
  }
  spdlog::info("{} listening on {} (rank {}, inline threshold {} bytes)", entity_, address_,
               options_.fs.rank, options_.fs.inline_threshold);
  return address_;
}

awaitable<void> MdsService::boot_loop() {
  if (booting_ || !maps_) co_return;
  booting_ = true;
  for (;;) {
    // What we are now: a takeover or a step-down while a boot was in flight is
    // announced by the next round.
    proto::CommandRequest request;
    request.set_fsid(options_.cluster_fsid);
    auto* boot = request.mutable_command()->mutable_boot_mds();
    boot->set_name(entity_);
    boot->set_addr(address_);
    boot->set_rank(options_.fs.rank);
    boot->set_instance(instance_);
    boot->set_standby(!serving_);
    boot->set_leader_term(serving_term_);
    auto reply =
        co_await maps_->call_mon(rpc::kMonCommand, request.SerializeAsString(), Duration(5000));
    if (stopping_) break;
    if (reply) {
      auto parsed = rpc::parse_body<proto::CommandReply>(reply->body);
      spdlog::info("{} booted into the map at epoch {} as {}", entity_,
                   parsed ? parsed->epoch() : 0, boot->standby() ? "standby" : "active");
      if (boot->standby() == !serving_ && boot->instance() == instance_) break;
      continue;
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

void MdsService::on_map_change(const ClusterMap& /*previous*/) {
  const auto* me = maps_->map().mds(entity_);
  // Marked down, another process took our name, or the map has us in the wrong role
  // (a newer leader's boot made us standby while we still lead): announce again.
  if (me && (!me->up() || me->instance() != instance_ || me->addr() != address_ ||
             me->standby() == serving_) &&
      !booting_) {
    spdlog::warn("{} is not up as itself in map epoch {}; booting again", entity_, maps_->epoch());
    spawn_checked(executor_, boot_loop());
  }
}

awaitable<void> MdsService::leadership_loop() {
  // Polled rather than signalled: a role change is rare, and 10 ms of polling is small
  // beside the election timeout that precedes every takeover.
  while (!stopping_) {
    auto status = replication_->status();
    bool leads = status.role == raft::Role::kLeader && !status.failed;
    if (serving_ && (!leads || status.term != serving_term_)) {
      become_standby();
    } else if (!serving_ && leads) {
      co_await become_active(status.term);
    }
    co_await sleep_for(Duration(10));
  }
  --background_running_;
}

awaitable<void> MdsService::become_active(raft::Term term) {
  // A read index round: returns once this replica has applied everything committed
  // before its term, which is what the state it serves from must hold.
  auto caught_up = co_await replication_->group().linearizable_read();
  auto status = replication_->status();
  if (!caught_up || status.role != raft::Role::kLeader || status.term != term || stopping_) {
    co_return;  // not yet (the term's first entry is not committed) or not any more
  }
  auto loaded = co_await run_blocking(blocking_, [this] { return read_volatile_state(); });
  if (!loaded) {
    spdlog::error("{}: cannot take over rank {}: {}", entity_, options_.fs.rank,
                  loaded.error().to_string());
    co_return;
  }
  adopt_volatile_state(std::move(*loaded));
  // Clients must re-open their files with us (our open counts start empty).
  instance_ = random_instance();
  // Evictions this replica began in an earlier term and did not commit are void: the
  // map's fences are the truth.
  fenced_here_.clear();
  // Locks are volatile: clients re-assert the ones they held under the previous active
  // MDS before anyone may take new ones.
  locks_.begin_reassert(reconnect_wait());
  begin_reconnect_phase();
  serving_ = true;
  serving_term_ = term;
  spdlog::info("{}: active for rank {} at raft term {} (log index {})", entity_, options_.fs.rank,
               term, committer_.last_index());
  auto root = co_await run_blocking(blocking_, [this] { return find_inode(*store_, kRootIno); });
  if (root && !*root) {
    proto::MdsLogEntry format;
    format.mutable_format();
    auto formatted = co_await committer_.submit(std::move(format));
    if (formatted) spdlog::info("{}: created the file system of rank {}", entity_, options_.fs.rank);
  }
  spawn_checked(executor_, boot_loop());
}

void MdsService::become_standby() {
  spdlog::info("{}: no longer active for rank {} (was at raft term {})", entity_,
               options_.fs.rank, serving_term_);
  serving_ = false;
  // Clients open their sessions again wherever the rank is served next, this replica
  // included should it lead again, and resend there what they were answered early.
  for (const auto& [client, session] : sessions_.all()) {
    if (auto conn = session.connection.lock()) conn->close(entity_ + " stopped serving");
  }
  locks_.stop_serving();  // waiting lock requests ask the next active MDS
  cache_.clear();         // waiting session opens go to the next active MDS
  dir_rights_.clear();    // and so do requests waiting for a recall
  reconnect_.clear();     // and those waiting for the reconnect phase
  sessions_.clear();
  orphans_.clear();
  purge_queue_.clear();
  spawn_checked(executor_, boot_loop());
}

void MdsService::lose_early_replies(const Error& why) {
  if (!serving_ || stopping_) return;  // a stop cancels the groups in flight
  auto status = replication_->status();
  if (status.role == raft::Role::kLeader && status.term == serving_term_ && !status.failed) {
    // Not a lost leadership (the usual way a group fails, and then clients resend to the
    // next leader): the group was refused while this replica leads on. Its clients were
    // answered and must resend, so this replica must not serve them on as if it had
    // logged it: it stops, and the next leader takes their resends.
    spdlog::critical("{}: a metadata group answered early was not replicated while this "
                     "replica leads ({}); stopping",
                     entity_, why.to_string());
    spdlog::default_logger()->flush();
    std::abort();
  }
  spdlog::warn("{}: a metadata group answered early was not replicated ({}); clients resend "
               "it to the next leader",
               entity_, why.to_string());
  become_standby();
}

awaitable<MdsService::Reply> MdsService::on_raft_status() {
  co_return rpc::make_reply(raft::to_proto(replication_->status()));
}

Error MdsService::standby_error() const {
  std::string leader = "none elected yet";
  if (replication_) {
    if (const auto* r = replication_->replica(replication_->status().leader)) leader = r->name;
  }
  return Error(ErrorCode::kUnavailable, entity_ + " is a standby replica of rank " +
                                            std::to_string(options_.fs.rank) +
                                            " (leader: " + leader + ")");
}

std::string MdsService::client_of(const proto::MdsRequestHeader& header,
                                  const rpc::ConnectionPtr& conn) const {
  if (!header.reqid().client().empty()) return header.reqid().client();
  if (conn) return conn->peer_entity();
  return "anonymous";
}

Status MdsService::admit_session(const proto::SessionRequest& request,
                                 const rpc::ConnectionPtr& conn) const {
  rpc::PeerIdentity client{request.client(), conn ? conn->peer_address() : "?", request.fsid()};
  auto admitted = rpc::admit_peer(options_.cluster_fsid, client);
  if (admitted) return ok_status();
  spdlog::warn("{}", rpc::refusal_line(client, admitted.error()));
  return make_error(ErrorCode::kWrongCluster,
                    entity_ + " refused the session of " + client.entity + ": " +
                        admitted.error().context());
}

awaitable<MdsService::Reply> MdsService::submit(proto::MdsLogEntry entry) {
  auto body = co_await committer_.submit(std::move(entry));
  if (!body) co_return unexpected(std::move(body).error());
  co_return rpc::Reply{std::move(*body), {}};
}

awaitable<MdsService::Reply> MdsService::handle(uint32_t method, std::string body,
                                                rpc::ConnectionPtr conn, uint8_t flags) {
  Reply reply = co_await serve(method, std::move(body), std::move(conn), Claims::kWait, flags);
  // Answered while groups are in flight: it may reflect changes a failover still loses
  // (this request's own, answered early, or others' that reads see).
  if (reply && !committer_.settled()) reply->flags |= rpc::kFlagRepliedEarly;
  co_return reply;
}

namespace {

// The header of an MDS request (field 1 of every request but kMdsSession), read without
// copying the rest of the body. False when the body is malformed.
bool read_request_header(const std::string& body, proto::MdsRequestHeader& header) {
  return proto::wire_message(body, proto::StatFsMdsRequest::kHeaderFieldNumber, header);
}

// Whether a lookup or getattr asks to share the inode it answers.
bool asks_to_share(uint32_t method, const std::string& body) {
  if (method == rpc::kMdsLookup) {
    proto::LookupRequest req;
    return req.ParseFromString(body) && req.share();
  }
  proto::GetAttrRequest req;
  return req.ParseFromString(body) && req.share();
}

}  // namespace

awaitable<MdsService::Reply> MdsService::serve(uint32_t method, std::string body,
                                               rpc::ConnectionPtr conn, Claims claims,
                                               uint8_t flags) {
  // Reads carry seq 0 and run at once; mutations go through the dedup table.
  // Every MDS request but kMdsSession has the header as field 1.
  proto::MdsRequestHeader header;
  if (method != rpc::kMdsSession && !read_request_header(body, header)) {
    co_return make_error(ErrorCode::kProtocol, "malformed MDS request");
  }
  if (!serving_) co_return unexpected(standby_error());
  std::string client = client_of(header, conn);
  // Checked before awaiting anything: outside a takeover's aftermath there is nothing to
  // wait for, and the request goes on without a coroutine of its own.
  // A mutation answered early by an earlier instance does not wait for the reconnect
  // phase: its client answered the application already, and others may have read it.
  const bool resent = (flags & rpc::kFlagResent) != 0;
  if (claims == Claims::kWait && held_back_by_previous_rights(method, client, resent)) {
    co_await wait_for_previous_rights(client, resent);
    if (!serving_) co_return unexpected(standby_error());
  }
  if (method == rpc::kMdsBatch) co_return co_await on_batch(std::move(body), std::move(conn));
  if (method == rpc::kMdsSession) {
    proto::SessionRequest hello;
    if (hello.ParseFromString(body) && !hello.client().empty()) client = hello.client();
    if (auto admitted = admit_session(hello, conn); !admitted) {
      co_return unexpected(std::move(admitted).error());
    }
  }
  if (auto fenced = check_not_fenced(client); !fenced) co_return unexpected(std::move(fenced).error());
  RequestNames names(method, body);  // asked only before `body` moves on below
  note_dirs_used(client, names);
  // Counted before any claim: an inode given to or shared with another session while
  // this waits would otherwise be read for the grant before this change lands.
  auto change = changes_in_flight_.count(names.changed_inos());
  // Directories another mount owns are recalled from it before anything here reads them.
  // Not inside a batch: the deferred changes ahead of the item are answered with the
  // batch, and the owner's give-up may itself wait for a batch of its own that waits
  // for this client's recall. The item goes back to be sent alone.
  // A group's items must reach the committer in order, with nothing awaited before:
  // they were claimed before the group started.
  if (claims == Claims::kSendBack) {
    if ((co_await touched(client, names, change)).any()) co_return make_error(
        ErrorCode::kWouldBlock, "waits for a recall of directory rights: send it alone");
  } else if (claims == Claims::kWait) {
    co_await claim_touched(client, names, change);
    if (!serving_) co_return unexpected(standby_error());
  }
  Session& session = sessions_.touch(client, conn, Clock::now());
  if (flags & rpc::kFlagMayReplyEarly) session.keeps_early_replies = true;
  uint64_t seq = header.reqid().seq();
  bool mutating =
      method == rpc::kMdsSetAttr || method == rpc::kMdsMknod || method == rpc::kMdsSymlink ||
      method == rpc::kMdsLink || method == rpc::kMdsUnlink || method == rpc::kMdsRename ||
      method == rpc::kMdsSetXattr || method == rpc::kMdsRemoveXattr || method == rpc::kMdsOpen ||
      method == rpc::kMdsRelease || method == rpc::kMdsWriteInline ||
      method == rpc::kMdsCommitWrite || method == rpc::kMdsUninline ||
      method == rpc::kMdsAllocInos;
  if (method == rpc::kMdsLookup || method == rpc::kMdsGetAttr) {
    const bool share = asks_to_share(method, body);
    const uint64_t changes_before = changes_in_flight_.finished();
    Reply reply;
    if (method == rpc::kMdsLookup) {
      reply = co_await read_claimed(client, method, std::move(body), claims != Claims::kWait);
    } else {
      reply = co_await dispatch(method, std::move(body), client);
    }
    if (share) grant_share(client, reply, changes_before);
    co_return reply;
  }
  if (method == rpc::kMdsReaddir) {
    co_return co_await read_claimed(client, method, std::move(body),
                                    claims != Claims::kWait);
  }
  if (!mutating || seq == 0)
    co_return co_await dispatch(method, std::move(body), std::move(client));
  bool fresh = false;
  auto slot = sessions_.remember(session, seq, executor_, fresh);
  if (!fresh) co_return co_await slot->reply.wait();
  auto reply = co_await dispatch(method, std::move(body), client);
  if (reply && header.durable()) {
    auto durable = co_await committer_.wait_durable();
    if (!durable) reply = unexpected(std::move(durable).error());
  }
  // A passing failure: nothing was logged here (the objects were unreachable), or this
  // replica lost its leadership (then the next leader answers a resend from its store).
  // A resend must run it again, not get this answer back; waiters on the slot still do.
  if (!reply && is_retryable(reply.error().code())) sessions_.forget(client, seq);
  slot->reply.set(reply);
  co_return reply;
}

namespace {

// Whether a batch item goes straight to the committer's queue when its handler starts,
// with nothing awaited before (handle() -> dispatch -> submit): a setattr without a
// size change that moves data and the ops that only log an entry. A client's deferred
// changes (setattrs, growing truncates, creates, renames) are such items.
bool queues_at_once(const proto::BatchItem& item) {
  switch (item.method()) {
    case rpc::kMdsSetAttr: {
      proto::SetAttrRequest req;
      return req.ParseFromString(item.body()) &&
             (!(req.valid() & proto::SET_ATTR_SIZE) || req.grow_only());
    }
    case rpc::kMdsMknod:
    case rpc::kMdsSymlink:
    case rpc::kMdsLink:
    case rpc::kMdsUnlink:
    case rpc::kMdsRename:
    case rpc::kMdsSetXattr:
    case rpc::kMdsRemoveXattr:
    case rpc::kMdsWriteInline:
    case rpc::kMdsCommitWrite:
    case rpc::kMdsAllocInos:
      return true;
    default:
      return false;
  }
}

}  // namespace

awaitable<MdsService::Reply> MdsService::on_batch(std::string body, rpc::ConnectionPtr conn) {
  auto batch = DFS_CO_TRY(rpc::parse_body<proto::BatchRequest>(body));
  const int n = batch.items_size();
  for (const auto& item : batch.items()) {
    if (item.method() == rpc::kMdsSession || item.method() == rpc::kMdsBatch) {
      co_return make_error(ErrorCode::kInvalidArgument,
                           "a batch item cannot be a session or a batch");
    }
  }
  // Items apply in order. A client's deferred changes (items that queue at the
  // committer at once) start together, in order, so they commit as one group; the item
  // after them starts once they are applied (a read must see them). Releases among them
  // (a mount lets go of each file it unlinks) join the run and are served once its group
  // has applied and answered: a release logs nothing and only ends an open, which may
  // always end later, but never before an item ahead of it has counted that open (a
  // deferred create opens its file in its reply). Ending the run at a release instead
  // made every item after it a group of its own: a Raft round per unlink of an rm -rf.
  auto is_release = [&batch](int i) { return batch.items(i).method() == rpc::kMdsRelease; };
  int together = 0;
  while (together < n && (queues_at_once(batch.items(together)) || is_release(together))) {
    ++together;
  }
  // A run of fewer than two changes is served item by item as any other request (the
  // claims of one change are made as it is served, not ahead of a group).
  int changes = 0;
  for (int i = 0; i < together; ++i) changes += is_release(i) ? 0 : 1;
  if (changes < 2) together = 0;
  // Owned directories the items touch, and shares of what they change, are recalled
  // first: an item waiting for a recall inside the group would let the items after it
  // commit ahead of it. The inodes of the entries they name count as changing until the
  // group has applied.
  auto group_change = changes_in_flight_.counter();
  if (together > 0) {
    for (int i = 0; i < together; ++i) {
      if (is_release(i)) continue;
      const auto& item = batch.items(i);
      proto::MdsRequestHeader header;
      if (!read_request_header(item.body(), header)) continue;  // serve() refuses it
      RequestNames names(item.method(), item.body());
      for (uint64_t ino : names.changed_inos()) group_change.add(ino);
      co_await claim_touched(client_of(header, conn), names, group_change);
    }
    if (!serving_) co_return unexpected(standby_error());
  }
  std::vector<Reply> results;
  if (together > 0) {
    std::vector<awaitable<Reply>> tasks;
    for (int i = 0; i < together; ++i) {
      if (is_release(i)) continue;
      auto& item = *batch.mutable_items(i);
      tasks.push_back(
          serve(item.method(), std::move(*item.mutable_body()), conn, Claims::kChecked));
    }
    std::vector<Reply> applied = co_await gather(std::move(tasks));
    size_t next_applied = 0;
    for (int i = 0; i < together; ++i) {
      if (!is_release(i)) {
        results.push_back(std::move(applied[next_applied++]));
        continue;
      }
      auto& item = *batch.mutable_items(i);
      results.push_back(
          co_await serve(item.method(), std::move(*item.mutable_body()), conn, Claims::kChecked));
    }
  }
  for (int i = together; i < n; ++i) {
    auto& item = *batch.mutable_items(i);
    if (!results.empty() && !results.back() &&
        results.back().error().code() == ErrorCode::kWouldBlock) {
      results.push_back(results.back());  // nothing runs ahead of an item sent back
      continue;
    }
    results.push_back(
        co_await serve(item.method(), std::move(*item.mutable_body()), conn, Claims::kSendBack));
  }
  // An item refused for a passing reason (this replica stopped leading mid-batch) fails
  // the whole batch, which the client resends as it is: items that committed are answered
  // from the remembered replies, the rest apply then. Answered item by item instead, the
  // client would take it as that item's final outcome and a deferred change (one it has
  // already answered the kernel for) would be lost.
  for (auto& one : results) {
    if (!one && is_retryable(one.error().code())) co_return unexpected(std::move(one).error());
  }
  proto::BatchReply reply;
  for (auto& one : results) {
    auto* result = reply.add_results();
    if (one) {
      result->set_body(std::move(one->body));
    } else {
      result->set_code(static_cast<uint32_t>(one.error().code()));
      result->set_message(one.error().context());
    }
  }
  co_return rpc::make_reply(reply);
}

awaitable<MdsService::Reply> MdsService::dispatch(uint32_t method, std::string body,
                                                  std::string client) {
#define DFS_MDS_PARSE(Type, var)                                            \
  auto var##_parsed = rpc::parse_body<proto::Type>(body);                   \
  if (!var##_parsed) co_return unexpected(std::move(var##_parsed).error()); \
  proto::Type var = std::move(*var##_parsed)
#define DFS_MDS_LOG(field, Type)                 \
  {                                              \
    DFS_MDS_PARSE(Type, req);                    \
    proto::MdsLogEntry entry;                    \
    *entry.mutable_##field() = std::move(req);   \
    co_return co_await submit(std::move(entry)); \
  }
  switch (method) {
    case rpc::kMdsSession: {
      DFS_MDS_PARSE(SessionRequest, req);
      co_return co_await on_session(std::move(req), std::move(client));
    }
    case rpc::kMdsCacheAck: {
      DFS_MDS_PARSE(CacheAckRequest, req);
      req.add_seqs(req.seq());
      for (uint64_t seq : req.seqs()) {
        cache_.acknowledged(client, seq);
        dir_rights_.acknowledged(client, seq);
      }
      co_return rpc::make_reply(proto::CacheAckReply{});
    }
    case rpc::kMdsSessionClose:
      co_return co_await on_session_close(std::move(client));
    case rpc::kMdsLookup: {
      DFS_MDS_PARSE(LookupRequest, req);
      co_return co_await on_lookup(std::move(req), std::move(client));
    }
    case rpc::kMdsGetAttr: {
      DFS_MDS_PARSE(GetAttrRequest, req);
      co_return co_await on_getattr(std::move(req), std::move(client));
    }
    case rpc::kMdsReadlink: {
      DFS_MDS_PARSE(ReadlinkRequest, req);
      co_return co_await on_readlink(std::move(req), std::move(client));
    }
    case rpc::kMdsReaddir: {
      DFS_MDS_PARSE(ReaddirRequest, req);
      co_return co_await on_readdir(std::move(req), std::move(client));
    }
    case rpc::kMdsGetXattr: {
      DFS_MDS_PARSE(GetXattrRequest, req);
      co_return co_await on_getxattr(std::move(req), std::move(client));
    }
    case rpc::kMdsListXattr: {
      DFS_MDS_PARSE(ListXattrRequest, req);
      co_return co_await on_listxattr(std::move(req), std::move(client));
    }
    case rpc::kMdsStatFs: {
      DFS_MDS_PARSE(StatFsMdsRequest, req);
      co_return co_await on_statfs(std::move(req), std::move(client));
    }
    case rpc::kMdsRenew: {
      DFS_MDS_PARSE(RenewRequest, req);
      co_return co_await on_renew(std::move(req), std::move(client));
    }
    case rpc::kMdsClientList:
      co_return co_await on_client_list();
    case rpc::kMdsClientEvict: {
      DFS_MDS_PARSE(ClientEvictRequest, req);
      co_return co_await on_client_evict(std::move(req));
    }
    case rpc::kMdsLock: {
      DFS_MDS_PARSE(LockRequest, req);
      co_return co_await on_lock(std::move(req), std::move(client));
    }
    case rpc::kMdsLockCancel: {
      DFS_MDS_PARSE(LockCancelRequest, req);
      if (auto* s = sessions_.find(client)) locks_.cancel(s->id, req.wait_id());
      co_return rpc::Reply{proto::Empty().SerializeAsString(), {}};
    }
    case rpc::kMdsLockReassert: {
      DFS_MDS_PARSE(LockReassertRequest, req);
      auto* s = sessions_.find(client);
      if (!s) co_return make_error(ErrorCode::kNotFound, "no session for " + client);
      auto reply = locks_.reassert(s->id, req);
      reconnect_.locks_reasserted(client);
      end_reconnect_phase_if_due();
      if (!reply) co_return unexpected(std::move(reply).error());
      co_return rpc::make_reply(*reply);
    }
    case rpc::kMdsLockRelease: {
      DFS_MDS_PARSE(LockReleaseRequest, req);
      if (auto* s = sessions_.find(client)) locks_.release(s->id, req);
      co_return rpc::Reply{proto::Empty().SerializeAsString(), {}};
    }
    case rpc::kMdsSync: {
      DFS_CO_AWAIT_CHECK(committer_.wait_durable());
      co_return rpc::Reply{proto::Empty().SerializeAsString(), {}};
    }
    case rpc::kMdsSetAttr: {
      DFS_MDS_PARSE(SetAttrRequest, req);
      co_return co_await on_setattr(std::move(req), std::move(client));
    }
    case rpc::kMdsMknod: {
      DFS_MDS_PARSE(MknodRequest, req);
      co_return co_await on_mknod(std::move(req), std::move(client));
    }
    case rpc::kMdsOpen: {
      DFS_MDS_PARSE(OpenRequest, req);
      co_return co_await on_open(std::move(req), std::move(client));
    }
    case rpc::kMdsRelease: {
      DFS_MDS_PARSE(ReleaseRequest, req);
      co_return co_await on_release(std::move(req), std::move(client));
    }
    case rpc::kMdsUninline: {
      DFS_MDS_PARSE(UninlineRequest, req);
      co_return co_await on_uninline(std::move(req), std::move(client));
    }
    case rpc::kMdsSymlink:
      DFS_MDS_LOG(symlink, SymlinkRequest)
    case rpc::kMdsLink:
      DFS_MDS_LOG(link, LinkRequest)
    case rpc::kMdsUnlink: {
      DFS_MDS_PARSE(UnlinkRequest, req);
      bool directory = req.directory();
      proto::MdsLogEntry entry;
      *entry.mutable_unlink() = std::move(req);
      auto reply = co_await submit(std::move(entry));
      // A removed directory, or a file nobody can reach any more, is owned no more.
      proto::UnlinkReply removed;
      if (reply && removed.ParseFromString(reply->body) &&
          (directory || (removed.inode().nlink() == 0 &&
                         sessions_.open_count(removed.inode().ino()) == 0))) {
        dir_rights_.removed(removed.inode().ino());
      }
      co_return reply;
    }
    case rpc::kMdsRename:
      DFS_MDS_LOG(rename, RenameRequest)
    case rpc::kMdsSetXattr:
      DFS_MDS_LOG(setxattr, SetXattrRequest)
    case rpc::kMdsRemoveXattr:
      DFS_MDS_LOG(removexattr, RemoveXattrRequest)
    case rpc::kMdsWriteInline:
      DFS_MDS_LOG(write_inline, WriteInlineRequest)
    case rpc::kMdsCommitWrite:
      DFS_MDS_LOG(commit_write, CommitWriteRequest)
    case rpc::kMdsAllocInos:
      DFS_MDS_LOG(alloc_inos, AllocInosRequest)
    default:
      break;
  }
#undef DFS_MDS_LOG
#undef DFS_MDS_PARSE
  co_return make_error(ErrorCode::kUnknownMethod,
                       "method " + std::to_string(method) + " is not served by the MDS");
}

awaitable<MdsService::Reply> MdsService::on_lock(proto::LockRequest req, std::string client) {
  auto* session = sessions_.find(client);
  if (!session) co_return make_error(ErrorCode::kNotFound, "no session for " + client);
  auto reply = co_await locks_.lock(session->id, req);
  if (!reply) co_return unexpected(std::move(reply).error());
  co_return rpc::make_reply(*reply);
}

}  // namespace dfs::mds
