// Client sessions with leases. A mount opens its session saying it renews it
// (SessionRequest.renews) and sends kMdsRenew well within the session timeout. One that
// stops (dead, paused, cut off) is evicted: the monitors record its entity in the map's
// fenced_clients, after which this MDS and every OSD refuse its requests with kFenced,
// so a client that wakes up from a pause can never write over what others changed in
// the meantime. Only then does its session end here: its opens and locks are dropped (an
// unlinked file it held may be purged) and its connection, if any, is told. The
// client, once it learns, fails what it had not written and starts a new session under
// a new entity. Operators list and evict sessions with `dfs client ls|evict`.
#include <spdlog/spdlog.h>

#include "common/proto/mon.pb.h"
#include "common/rpc/methods.h"
#include "common/util/wall_clock.h"
#include "mds/service/lease_rules.h"
#include "mds/service/mds_service.h"

namespace dfs::mds {
namespace {

constexpr Duration kLeaseCheckInterval{1000};
constexpr Duration kFenceRetryWait{1000};
constexpr Duration kStallForgiven{2000};

}  // namespace

Status MdsService::check_not_fenced(const std::string& client) const {
  if (fenced_here_.count(client)) {
    return make_error(ErrorCode::kFenced, client + " was evicted: open a new session");
  }
  if (maps_) {
    if (const auto* fence = maps_->map().client_fence(client)) {
      return make_error(ErrorCode::kFenced, client + " was evicted at map epoch " +
                                                std::to_string(fence->epoch()) + " (" +
                                                fence->reason() + "): open a new session");
    }
  }
  return ok_status();
}

uint64_t MdsService::lease_ms_for(const std::string& client) const {
  auto due = lease_rules::earliest(cache_.recall_due(client), dir_rights_.recall_due(client));
  return static_cast<uint64_t>(
      lease_rules::granted(options_.session_timeout, due, Clock::now()).count());
}

awaitable<MdsService::Reply> MdsService::on_renew(proto::RenewRequest req, std::string client) {
  auto* session = sessions_.find(client);
  if (!session) co_return make_error(ErrorCode::kNotFound, "no session for " + client);
  session->renewing = true;
  session->last_renew = Clock::now();
  proto::RenewReply reply;
  reply.set_sent_at_ms(req.sent_at_ms());
  reply.set_lease_ms(lease_ms_for(client));
  reply.set_exclusive(cache_.holder() == client && !cache_.recalling());
  reply.set_cache_seq(cache_.seq());
  reply.set_dirs_recall(dir_rights_.pending_recall(client));
  co_return rpc::make_reply(reply);
}

awaitable<void> MdsService::lease_loop() {
  auto last_check = Clock::now();
  while (!stopping_) {
    co_await sleep_for(kLeaseCheckInterval);
    if (stopping_) break;
    auto now = Clock::now();
    // This thread was held up (a stalled disk, a paused process): the renewals of that
    // time wait unread in the sockets. Their sessions are not to blame.
    auto stalled = now - last_check - kLeaseCheckInterval;
    last_check = now;
    if (stalled > kStallForgiven) {
      sessions_.extend_leases(std::chrono::duration_cast<Duration>(stalled));
      spdlog::warn("{}: the lease check ran {} ms late; client leases extended by as much",
                   entity_, std::chrono::duration_cast<Duration>(stalled).count());
    }
    if (!serving_) continue;
    end_reconnect_phase_if_due();
    cache_.tick(now);
    dir_rights_.tick(now);
    for (auto& client : sessions_.overdue(now, options_.session_timeout)) {
      auto* session = sessions_.find(client);
      auto silent_s = std::chrono::duration_cast<std::chrono::seconds>(now - session->last_renew);
      std::string reason = "did not renew its session for " + std::to_string(silent_s.count()) +
                           " s (session timeout " +
                           std::to_string(options_.session_timeout.count() / 1000) + " s)";
      spawn_checked(executor_, evict_in_background(client, reason));
    }
  }
  --background_running_;
}

awaitable<void> MdsService::evict_in_background(std::string client, std::string reason) {
  (void)co_await evict(std::move(client), std::move(reason));
}

awaitable<Result<uint64_t>> MdsService::evict(std::string client, std::string reason) {
  auto* session = sessions_.find(client);
  if (!session) co_return make_error(ErrorCode::kNotFound, "no session for " + client);
  if (session->evicting) co_return make_error(ErrorCode::kBusy, client + " is being evicted");
  session->evicting = true;
  std::string address;
  if (auto conn = session->connection.lock()) address = conn->peer_address();
  // From here on this MDS refuses the client; the map makes the OSDs (and any later
  // active MDS) refuse it too.
  fenced_here_.insert(client);
  spdlog::warn("{}: evicting {}{}: {}", entity_, client,
               address.empty() ? "" : " (at " + address + ")", reason);
  uint64_t epoch = 0;
  while (maps_ && !stopping_ && serving_) {
    proto::CommandRequest request;
    request.set_fsid(options_.cluster_fsid);
    auto* fence = request.mutable_command()->mutable_fence_client();
    fence->set_entity(client);
    fence->set_at_ms(wall_clock_ms());
    fence->set_reason(reason);
    auto reply =
        co_await maps_->call_mon(rpc::kMonCommand, request.SerializeAsString(), Duration(5000));
    if (reply) {
      auto parsed = rpc::parse_body<proto::CommandReply>(reply->body);
      epoch = parsed ? parsed->epoch() : 0;
      break;
    }
    spdlog::warn("{}: fencing {} not committed yet: {}", entity_, client,
                 reply.error().to_string());
    co_await sleep_for(kFenceRetryWait);
  }
  if (stopping_ || !serving_) {
    // Not fenced in the map: the next active MDS judges the client afresh.
    fenced_here_.erase(client);
    if (auto* left = sessions_.find(client)) left->evicting = false;
    co_return make_error(ErrorCode::kUnavailable, entity_ + " stopped serving before the fence of " +
                                                      client + " was committed");
  }
  // The session may have been evicted meanwhile by another path; end what is left.
  session = sessions_.find(client);
  if (session) {
    proto::EvictedNotice notice;
    notice.set_client(client);
    notice.set_reason(reason);
    notice.set_epoch(epoch);
    push_to_session(client, rpc::kMdsEvicted, notice.SerializeAsString());
    sessions_ended(sessions_.end(client));  // a killed holder's locks go
  }
  spdlog::warn("{}: evicted {}: fenced at map epoch {}; its requests are refused from now on",
               entity_, client, epoch);
  co_return epoch;
}

void MdsService::sessions_ended(const SessionTable::Expired& ended) {
  for (uint64_t id : ended.ids) locks_.end_session(id);
  for (uint64_t ino : ended.unused) purge_if_unused(ino);
  for (const auto& client : ended.clients) {
    cache_.ended(client);
    dir_rights_.ended(client);
    spawn_checked(executor_, forget_session(client));
  }
}

awaitable<MdsService::Reply> MdsService::on_session_close(std::string client) {
  if (sessions_.find(client)) {
    spdlog::info("{}: {} closed its session", entity_, client);
    sessions_ended(sessions_.end(client));
  }
  co_return rpc::make_reply(proto::SessionCloseReply{});
}

bool MdsService::push_to_session(const std::string& client, uint32_t method,
                                 const std::string& body) {
  auto* session = sessions_.find(client);
  auto conn = session ? session->connection.lock() : nullptr;
  if (!conn || !conn->is_open()) return false;
  conn->send(method, body);
  return true;
}

awaitable<MdsService::Reply> MdsService::on_client_list() {
  auto now = Clock::now();
  proto::ClientListReply reply;
  reply.set_session_timeout_ms(static_cast<uint64_t>(options_.session_timeout.count()));
  for (const auto& [client, s] : sessions_.all()) {
    if (s.evicting) continue;
    auto* out = reply.add_sessions();
    out->set_client(client);
    if (auto conn = s.connection.lock(); conn && conn->is_open()) {
      out->set_address(conn->peer_address());
    }
    auto since = std::max(Duration(0), std::chrono::duration_cast<Duration>(now - s.last_renew));
    out->set_since_renew_ms(static_cast<uint64_t>(since.count()));
    out->set_open_files(static_cast<uint32_t>(s.opens.size()));
    out->set_renewing(s.renewing);
    const size_t files = dir_rights_.files_owned_by(client);
    out->set_owned_dirs(dir_rights_.owned_by(client) - files);
    out->set_owned_files(files);
    out->set_read_files(dir_rights_.shared_by(client));
  }
  co_return rpc::make_reply(reply);
}

awaitable<MdsService::Reply> MdsService::on_client_evict(proto::ClientEvictRequest req) {
  std::string reason = req.reason().empty() ? "evicted by an operator" : req.reason();
  auto epoch = co_await evict(req.client(), reason);
  if (!epoch) co_return unexpected(std::move(epoch).error());
  proto::ClientEvictReply reply;
  reply.set_epoch(*epoch);
  co_return rpc::make_reply(reply);
}

}  // namespace dfs::mds
