#include "client-fuse/libdfs/mds_session.h"

#include <spdlog/spdlog.h>

#include "common/rpc/methods.h"

namespace dfs::client {

MdsSession::MdsSession(ObjectClient& objects) : objects_(objects) {
  // The subscriber outlives us (it belongs to `objects`): the listener checks we live.
  std::weak_ptr<bool> alive = alive_;
  objects_.maps().add_listener([this, alive](const ClusterMap&) {
    if (alive.lock()) follow_rank_move();
  });
}

void MdsSession::follow_rank_move() {
  if (!session_conn_ || !session_conn_->is_open()) return;
  const auto* mds = objects_.maps().map().mds_for_rank(0);
  if (!mds || mds->addr() == session_addr_) return;
  spdlog::info("mds rank 0 moved to {} at {} (map epoch {}); leaving {}", mds->name(), mds->addr(),
               objects_.maps().epoch(), session_addr_);
  session_conn_->close("rank 0 is served by " + mds->name() + " now");
}

awaitable<Result<rpc::ConnectionPtr>> MdsSession::session_connection(Clock::time_point deadline) {
  for (;;) {
    while (opening_) {
      auto opening = opening_;  // another call opens the session: use what it opens
      co_await opening->wait();
    }
    const auto* mds = objects_.maps().map().mds_for_rank(0);
    if (!mds) {
      co_return make_error(ErrorCode::kUnavailable, "no MDS serves rank 0 in map epoch " +
                                                        std::to_string(objects_.maps().epoch()));
    }
    std::string addr = mds->addr();
    std::string name = mds->name();
    auto attempt = std::min(deadline, Clock::now() + objects_.options().attempt_timeout);
    DFS_CO_AWAIT_TRY(auto conn, objects_.messenger().connection(addr, attempt));
    if (conn == session_conn_) co_return conn;
    if (opening_) continue;  // another call began opening while we connected
    auto opening = std::make_shared<Completion<bool>>(objects_.executor());
    opening_ = opening;
    auto opened = co_await open_session(std::move(conn), std::move(addr), name, attempt);
    opening_.reset();
    opening->set(true);
    // After the gate: the hook's own calls (re-opens) go through here.
    if (opened && std::exchange(reopen_needed_, false) && on_new_instance_) {
      co_await on_new_instance_();
    }
    co_return opened;
  }
}

awaitable<Result<rpc::ConnectionPtr>> MdsSession::open_session(rpc::ConnectionPtr conn,
                                                               std::string addr, std::string name,
                                                               Clock::time_point attempt) {
  // A new connection (first use, reconnect, or a new MDS address): (re)open the
  // session on it before anything else; the MDS resumes it by our entity.
  proto::SessionRequest request;
  request.set_client(objects_.entity());
  auto left = std::max(left_until(attempt), Duration(1));
  DFS_CO_AWAIT_TRY(auto frame, conn->call(rpc::kMdsSession, request.SerializeAsString(), {}, left));
  auto reply = DFS_CO_TRY(rpc::parse_body<proto::SessionReply>(frame.body));
  bool restarted = session_conn_ && reply.mds_instance() != session_.mds_instance();
  if (session_conn_) {
    spdlog::info("mds session resumed on {} ({}{})", addr, name,
                 restarted ? ", a new instance" : "");
  }
  session_ = std::move(reply);
  // Both until they have gone through, on this connection or a later one.
  if (restarted) resend_needed_ = reopen_needed_ = true;
  if (resend_needed_) DFS_CO_AWAIT_CHECK(resend_unsafe(conn, attempt));
  session_conn_ = conn;
  session_addr_ = addr;
  co_return conn;
}

namespace {

bool creates_inode(uint32_t method) {
  return method == rpc::kMdsMknod || method == rpc::kMdsSymlink;
}

// The body of a kept create, asking for the inode number its first answer gave.
template <class Req>
std::string with_wanted_ino(const std::string& body, uint64_t ino) {
  Req request;
  if (!request.ParseFromString(body)) return body;
  request.mutable_header()->set_want_ino(ino);
  return request.SerializeAsString();
}

}  // namespace

std::shared_ptr<MdsSession::Unsafe> MdsSession::keep(uint32_t method, const std::string& body) {
  if (method == rpc::kMdsOpen || method == rpc::kMdsRelease) return nullptr;
  auto kept = std::make_shared<Unsafe>();
  kept->method = method;
  kept->body = body;
  kept->seq = next_seq_ - 1;  // stamped just now
  unsafe_bytes_ += body.size();
  unsafe_.push_back(kept);
  maybe_trim();
  return kept;
}

void MdsSession::maybe_trim() {
  // The MDS remembers the replies to a client's last kRememberedReplies request ids; a
  // kept change resent after that would run twice. So a sync once the oldest kept change
  // is 256 ids old (opens and releases take ids too), or 16 MiB are kept.
  constexpr uint64_t kTrimSeqGap = 256;
  constexpr size_t kTrimBytes = 16u << 20;
  if (trimming_ || unsafe_.empty() || answers_ == trimmed_answers_) return;  // nothing new
  if (next_seq_ - unsafe_.front()->seq < kTrimSeqGap && unsafe_bytes_ < kTrimBytes) return;
  trimming_ = true;
  trimmed_ = std::make_shared<Completion<bool>>(objects_.executor());
  spawn_checked(objects_.executor(), trim_unsafe());
}

awaitable<void> MdsSession::wait_for_unsafe_room() {
  while (!unsafe_.empty() && next_seq_ - unsafe_.front()->seq >= kMaxUnsafeSpan) {
    maybe_trim();
    if (!trimming_) {
      // Nothing answered since the last trim: the oldest is still in flight; its answer
      // (or failure) comes without us.
      co_await sleep_for(Duration(1));
      continue;
    }
    auto trimmed = trimmed_;
    co_await trimmed->wait();
  }
}

void MdsSession::settle(const std::shared_ptr<Unsafe>& kept, const Result<rpc::Frame>& result) {
  if (!kept || kept->state != Unsafe::State::kSent) return;
  if (!result) {
    // Refused, or given up on (the caller reported the error): not resent either way.
    kept->state = Unsafe::State::kFailed;
    return;
  }
  kept->state = Unsafe::State::kAnswered;
  kept->answered_at = ++answers_;
  if (creates_inode(kept->method)) {
    proto::InodeReply reply;  // MknodReply and InodeReply both carry the inode as field 1
    if (reply.ParseFromString(result->body)) kept->ino = reply.inode().ino();
  }
  maybe_trim();
}

awaitable<void> MdsSession::trim_unsafe() {
  uint64_t covered = answers_;
  trimmed_answers_ = covered;
  auto synced = co_await call_raw(rpc::kMdsSync, proto::SyncRequest{}.SerializeAsString());
  trimming_ = false;
  // Waiters look again once the drop below is done (they run after this returns).
  auto trimmed = std::exchange(trimmed_, nullptr);
  asio::post(objects_.executor(), [trimmed] { trimmed->set(true); });
  if (!synced) {
    spdlog::debug("sync to release kept MDS changes failed: {}", synced.error().to_string());
    trimmed_answers_ = 0;  // the next trim may try again without a new answer
    co_return;             // kept until a later sync
  }
  std::erase_if(unsafe_, [&](const std::shared_ptr<Unsafe>& u) {
    bool safe = u->state == Unsafe::State::kFailed ||
                (u->state == Unsafe::State::kAnswered && u->answered_at <= covered);
    if (safe) unsafe_bytes_ -= u->body.size();
    return safe;
  });
}

awaitable<Status> MdsSession::resend_unsafe(const rpc::ConnectionPtr& conn,
                                            Clock::time_point deadline) {
  // A copy: deferred changes may be kept meanwhile (they go out after this).
  std::vector<std::shared_ptr<Unsafe>> kept(unsafe_.begin(), unsafe_.end());
  size_t sent = 0;
  for (const auto& u : kept) {
    if (u->state == Unsafe::State::kFailed) continue;
    if (next_seq_ - u->seq >= kRememberedReplies) {
      // Its reply is forgotten: if it did commit, it would run twice. (Trims keep this
      // from happening unless syncs failed for a long time.)
      spdlog::error("an MDS change (request {}) is too old to resend safely; not resent", u->seq);
      continue;
    }
    std::string body = u->body;
    if (u->ino != 0 && u->method == rpc::kMdsMknod) {
      body = with_wanted_ino<proto::MknodRequest>(body, u->ino);
    } else if (u->ino != 0 && u->method == rpc::kMdsSymlink) {
      body = with_wanted_ino<proto::SymlinkRequest>(body, u->ino);
    }
    auto left = std::max(std::min(objects_.options().attempt_timeout, left_until(deadline)),
                         Duration(1));
    auto reply = co_await conn->call(u->method, std::move(body), {}, left);
    ++sent;
    if (!reply) {
      if (is_retryable(reply.error().code())) co_return unexpected(std::move(reply).error());
      // It ran before and its answer is gone (or it clashes with a change made since):
      // what the first answer said stands; nothing to do but say so.
      spdlog::warn("an MDS change answered before the failover failed when resent: {}",
                   reply.error().to_string());
      continue;
    }
    if (u->ino != 0) {
      proto::InodeReply again;
      if (again.ParseFromString(reply->body) && again.inode().ino() != u->ino) {
        spdlog::error("a create answered with inode {:#x} before the failover came back as "
                      "{:#x}: handles to it are stale",
                      u->ino, again.inode().ino());
      }
    }
  }
  resend_needed_ = false;
  unsafe_resent_ += sent;
  if (sent > 0) spdlog::info("resent {} MDS change(s) not yet known safe", sent);
  co_return ok_status();
}

awaitable<Result<proto::SessionReply>> MdsSession::open(Duration timeout) {
  auto deadline = Clock::now() + timeout;
  Error last(ErrorCode::kTimeout, "no attempt made");
  while (left_until(deadline).count() > 0) {
    auto conn = co_await session_connection(deadline);
    if (conn) co_return session_;
    last = std::move(conn).error();
    if (!is_retryable(last.code())) break;
    ignore_error(
        co_await objects_.maps().wait_for_change(std::min(left_until(deadline), Duration(200))),
        "woken by a new map or the timeout alike");
  }
  co_return unexpected(std::move(last).with_context("opening the MDS session"));
}

std::string MdsSession::stats_summary() const {
  std::string out;
  for (const auto& [method, s] : stats_) {
    out += (out.empty() ? "" : ", ") + std::to_string(method) + ": " + std::to_string(s.calls) +
           " x " + std::to_string(s.calls ? s.total.count() / s.calls : 0) + " us";
  }
  return out;
}

awaitable<Result<rpc::Frame>> MdsSession::call_raw(uint32_t method, std::string body) {
  auto started = Clock::now();
  std::vector<Deferred> items;
  if (deferred_source_) items = deferred_source_();
  Result<rpc::Frame> result;
  if (items.empty()) {
    result = co_await call_with_retries(method, std::move(body));
  } else {
    items.push_back(Deferred{method, std::move(body), nullptr});
    result = co_await call_batch(std::move(items));
  }
  auto& s = stats_[method];
  ++s.calls;
  s.total += std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
  co_return result;
}

awaitable<void> MdsSession::flush_deferred() {
  std::vector<Deferred> items;
  if (deferred_source_) items = deferred_source_();
  if (items.empty()) co_return;
  ignore_error(co_await call_batch(std::move(items)), "each item's outcome went to its owner");
}

awaitable<Result<rpc::Frame>> MdsSession::call_batch(std::vector<Deferred> items) {
  // Bounded batches (a frame body is at most 4 MiB), sent one after the other so that
  // the order holds across them.
  constexpr size_t kMaxItems = 1024;
  Result<rpc::Frame> last;
  for (size_t first = 0; first < items.size(); first += kMaxItems) {
    size_t end = std::min(items.size(), first + kMaxItems);
    proto::BatchRequest batch;
    for (size_t i = first; i < end; ++i) {
      auto* out = batch.add_items();
      out->set_method(items[i].method);
      out->set_body(items[i].body);
    }
    auto sent = co_await call_with_retries(rpc::kMdsBatch, batch.SerializeAsString());
    Result<proto::BatchReply> reply = sent ? rpc::parse_body<proto::BatchReply>(sent->body)
                                           : Result<proto::BatchReply>(std::move(sent).error());
    if (reply && static_cast<size_t>(reply->results_size()) != end - first) {
      reply = make_error(ErrorCode::kProtocol, "a batch reply with the wrong number of results");
    }
    for (size_t i = first; i < end; ++i) {
      Result<rpc::Frame> one;
      if (!reply) {
        one = reply.error();
      } else if (auto& r = *reply->mutable_results(static_cast<int>(i - first)); r.code() != 0) {
        one = Error(static_cast<ErrorCode>(r.code()), r.message());
      } else {
        rpc::Frame frame;
        frame.body = std::move(*r.mutable_body());
        one = std::move(frame);
      }
      if (items[i].done) {
        items[i].done(std::move(one));
      } else {
        last = std::move(one);  // the caller's own request (call_raw): its result
      }
    }
  }
  co_return last;
}

awaitable<Result<rpc::Frame>> MdsSession::call_with_retries(uint32_t method, std::string body) {
  auto deadline = Clock::now() + objects_.options().op_timeout;
  Error last(ErrorCode::kTimeout, "no attempt made");
  Duration backoff(20);
  for (int attempt = 1;; ++attempt) {
    if (left_until(deadline).count() <= 0) {
      co_return unexpected(std::move(last).with_context("MDS request " + std::to_string(method) +
                                                        " gave up after " +
                                                        std::to_string(attempt - 1) + " attempts"));
    }
    if (attempt > 1) ++resends_;
    auto conn = co_await session_connection(deadline);
    if (conn) {
      auto left = std::min(objects_.options().attempt_timeout, left_until(deadline));
      auto reply = co_await (*conn)->call(method, body, {}, std::max(left, Duration(1)));
      if (reply) co_return reply;
      last = std::move(reply).error();
    } else {
      last = std::move(conn).error();
    }
    if (!is_retryable(last.code())) co_return unexpected(std::move(last));
    spdlog::debug("MDS request {} attempt {} failed: {}", method, attempt, last.to_string());
    // A new map may name a new MDS address; otherwise back off.
    ignore_error(co_await objects_.maps().wait_for_change(std::min(left_until(deadline), backoff)),
                 "woken by a new map or the backoff alike");
    backoff = std::min(backoff * 2, Duration(1000));
  }
}

}  // namespace dfs::client
