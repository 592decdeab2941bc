#include "client-fuse/libdfs/mds_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/rpc/methods.h"

namespace dfs::client {

MdsSession::MdsSession(ObjectClient& objects)
    : objects_(objects),
      renew_wake_(objects.executor()),
      deferred_(objects.executor()),
      calls_(objects.executor()) {
  // The subscriber outlives us (it belongs to `objects`): the listener checks we live.
  std::weak_ptr<bool> alive = alive_;
  objects_.maps().add_listener([this, alive](const ClusterMap&) {
    if (alive.lock()) follow_rank_move();
  });
}

void MdsSession::follow_rank_move() {
  const auto* mds = objects_.maps().map().mds_for_rank(0);
  if (!mds || session_addr_.empty() || mds->addr() == session_addr_) return;
  if (session_conn_ && session_conn_->is_open()) {
    spdlog::info("mds rank 0 moved to {} at {} (map epoch {}); leaving {}", mds->name(),
                 mds->addr(), objects_.maps().epoch(), session_addr_);
    session_conn_->close("rank 0 is served by " + mds->name() + " now");
  }
  // Re-open the session there now (a renewal does), not at the next call or renewal: a
  // new active MDS serves nobody until the mounts of the previous one are back.
  renew_wake_.cancel();
}

awaitable<Result<rpc::ConnectionPtr>> MdsSession::session_connection(Clock::time_point deadline) {
  const auto* mds = objects_.maps().map().mds_for_rank(0);
  if (!mds) {
    co_return make_error(ErrorCode::kUnavailable, "no MDS serves rank 0 in map epoch " +
                                                      std::to_string(objects_.maps().epoch()));
  }
  std::string addr = mds->addr();
  auto attempt = std::min(deadline, Clock::now() + objects_.options().attempt_timeout);
  DFS_CO_AWAIT_TRY(auto conn, objects_.messenger().connection(addr, attempt));
  if (conn == session_conn_) co_return conn;
  // A new connection (first use, reconnect, or a new MDS address): (re)open the
  // session on it before anything else; the MDS resumes it by our entity.
  proto::SessionRequest request;
  request.set_client(objects_.entity());
  request.set_fsid(objects_.options().fsid);
  request.set_renews(true);
  request.set_wants_cache(wants_cache_);
  if (cache_claims_) cache_claims_(request);
  // What an earlier leader answered early goes first, even before the session open: a
  // new leader holds other mounts' requests until this one has opened its session, so
  // these are applied ahead of them. A failure here has the next attempt do it all again.
  Status resent = co_await resend_unsafe(conn, attempt);
  if (!resent) co_return unexpected(std::move(resent).error());
  auto left = std::max(left_until(attempt), Duration(1));
  const auto sent = Clock::now();
  DFS_CO_AWAIT_TRY(auto frame, conn->call(rpc::kMdsSession, request.SerializeAsString(), {}, left,
                                          rpc::kFlagMayReplyEarly));
  auto reply = DFS_CO_TRY(rpc::parse_body<proto::SessionReply>(frame.body));
  bool restarted = session_conn_ && reply.mds_instance() != session_.mds_instance();
  if (session_conn_) {
    spdlog::info("mds session resumed on {} ({}{})", addr, mds->name(),
                 restarted ? ", a new instance" : "");
  }
  session_ = std::move(reply);
  extend_lease(sent, session_.lease_ms() ? session_.lease_ms() : session_.session_timeout_ms());
  session_conn_ = conn;
  session_addr_ = addr;
  if (on_session_reply_) on_session_reply_(session_);
  if (restarted && on_new_instance_) co_await on_new_instance_();
  co_return conn;
}

awaitable<Result<proto::SessionReply>> MdsSession::open(Duration timeout) {
  auto deadline = Clock::now() + timeout;
  Error last(ErrorCode::kTimeout, "no attempt made");
  while (left_until(deadline).count() > 0) {
    auto conn = co_await session_connection(deadline);
    if (conn) {
      if (!renewing_ && session_.session_timeout_ms() > 0) {
        renewing_ = true;
        spawn_checked(objects_.executor(), renew_loop(alive_));
      }
      co_return session_;
    }
    last = std::move(conn).error();
    if (!is_retryable(last.code())) break;
    ignore_error(
        co_await objects_.maps().wait_for_change(std::min(left_until(deadline), Duration(200))),
        "woken by a new map or the timeout alike");
  }
  co_return unexpected(std::move(last).with_context("opening the MDS session"));
}

awaitable<void> MdsSession::renew_loop(std::weak_ptr<bool> alive) {
  for (;;) {
    // session_ may change (a new MDS): read the timeout each round.
    Duration interval(std::max<uint64_t>(250, session_.session_timeout_ms() / 4));
    renew_wake_.expires_after(interval);
    co_await renew_wake_.async_wait(use_awaitable_tuple);  // or woken by follow_rank_move()
    if (!alive.lock()) co_return;
    proto::RenewRequest request;
    request.set_sent_at_ms(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
            .count()));
    // A refusal as fenced reaches the owner through report_fenced().
    const auto sent = Clock::now();
    auto reply = co_await call_with_retries(rpc::kMdsRenew, request.SerializeAsString(), interval);
    if (!alive.lock()) co_return;
    if (!reply) {
      if (reply.error().code() != ErrorCode::kFenced) {
        spdlog::debug("session renewal failed: {}", reply.error().to_string());
      }
      continue;
    }
    auto renewed = rpc::parse_body<proto::RenewReply>(reply->body);
    if (!renewed) continue;
    extend_lease(sent, renewed->lease_ms());
    if (on_renewed_) on_renewed_(*renewed);
  }
}

void MdsSession::extend_lease(Clock::time_point sent, uint64_t lease_ms) {
  if (lease_ms == 0) {
    lease_expires_ = Clock::time_point::max();
    return;
  }
  lease_expires_ = std::max(lease_expires_, sent + std::chrono::milliseconds(lease_ms * 3 / 4));
}

awaitable<void> MdsSession::close(Duration timeout) {
  proto::SessionCloseRequest request;
  stamp(request, Creds{}, false);
  auto reply = co_await call_with_retries(rpc::kMdsSessionClose, request.SerializeAsString(), timeout);
  if (!reply) spdlog::debug("closing the MDS session: {}", reply.error().to_string());
}

void MdsSession::report_fenced(const Error& error) {
  // What the evicted session was answered early is the fenced mount's loss (the owner
  // fails what it had not written), and a new session must not resend it.
  if (!unsafe_.empty()) {
    spdlog::warn("evicted with {} change(s) answered early not known safe", unsafe_.size());
    unsafe_.clear();
  }
  if (on_fenced_) on_fenced_(error);
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
  const uint64_t kept_before = unsafe_numbered_;
  co_await deferred_.batches_answered();
  std::vector<DeferredOp> items = deferred_.take();
  Result<rpc::Frame> result;
  if (items.empty()) {
    result = co_await call_with_retries(method, std::move(body));
  } else {
    items.push_back(DeferredOp{method, body, nullptr});
    result = co_await call_batch(std::move(items));
    if (!result && result.error().code() == ErrorCode::kWouldBlock) {
      // The MDS applied the deferred changes and sent the request back: it waits for
      // another mount to give up a directory, which must not hold up their answer (that
      // mount may be waiting for a recall of ours, whose give-up waits for them).
      result = co_await call_with_retries(method, std::move(body));
    }
  }
  // Everything answered before the sync went out is safe now.
  if (method == rpc::kMdsSync && result) forget_safe(kept_before);
  auto& s = stats_[method];
  ++s.calls;
  s.total += std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
  co_return result;
}

awaitable<void> MdsSession::flush_deferred() {
  co_await deferred_.batches_answered();
  std::vector<DeferredOp> items = deferred_.take();
  if (items.empty()) co_return;
  ignore_error(co_await call_batch(std::move(items)), "each item's outcome went to its owner");
}

awaitable<Result<rpc::Frame>> MdsSession::call_batch(std::vector<DeferredOp> items) {
  // Bounded batches (a frame body is at most 4 MiB; deferred data pushes carry up to
  // the inline threshold each), sent one after the other so that the order holds
  // across them.
  constexpr size_t kMaxItems = 1024;
  constexpr size_t kMaxBatchBytes = 2u << 20;
  Result<rpc::Frame> last;
  for (size_t first = 0, end = 0; first < items.size(); first = end) {
    size_t bytes = 0;
    for (end = first; end < items.size() && end - first < kMaxItems; ++end) {
      if (end > first && bytes + items[end].body.size() > kMaxBatchBytes) break;
      bytes += items[end].body.size();
    }
    proto::BatchRequest batch;
    for (size_t i = first; i < end; ++i) {
      auto* out = batch.add_items();
      out->set_method(items[i].method);
      out->set_body(items[i].body);
    }
    const auto deferred = std::count_if(items.begin() + first, items.begin() + end,
                                        [](const DeferredOp& d) { return d.done != nullptr; });
    const bool carries_deferred = deferred > 0;
    if (carries_deferred) deferred_.batch_sent();
    ++batches_sent_;
    deferred_sent_ += deferred;
    auto sent = co_await call_with_retries(rpc::kMdsBatch, batch.SerializeAsString());
    Result<proto::BatchReply> reply = sent ? rpc::parse_body<proto::BatchReply>(sent->body)
                                           : Result<proto::BatchReply>(std::move(sent).error());
    if (reply && static_cast<size_t>(reply->results_size()) != end - first) {
      reply = make_error(ErrorCode::kProtocol, "a batch reply with the wrong number of results");
    }
    if (reply) {
      Status resent = co_await resend_sent_back(items, first, *reply);
      if (!resent) reply = unexpected(std::move(resent).error());  // all kept, in order
    }
    if (carries_deferred) deferred_.batch_answered();
    if (!reply && is_retryable(reply.error().code())) {
      // The MDS could not be reached: this batch and the ones after it keep their
      // deferred items for the next attempt (in order); the caller's request fails.
      std::vector<DeferredOp> kept;
      for (size_t i = first; i < items.size(); ++i) {
        if (items[i].done) kept.push_back(std::move(items[i]));
      }
      spdlog::warn("MDS unreachable: {} deferred change(s) kept to be sent again ({})",
                   kept.size(), reply.error().to_string());
      deferred_.returned(std::move(kept));
      co_return unexpected(std::move(reply).error());
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
        deferred_.finish(items[i], std::move(one));
      } else {
        last = std::move(one);  // the caller's own request (call_raw): its result
      }
    }
  }
  co_return last;
}

awaitable<Status> MdsSession::resend_sent_back(std::vector<DeferredOp>& items, size_t first,
                                               proto::BatchReply& reply) {
  // The MDS sends an item back, unapplied, and every item after it, when the item would
  // wait inside the batch for another mount to give up a directory or a share (see
  // MdsService::on_batch). A deferred one goes again now, alone, where it may wait: in
  // order, and before the batch counts as answered, so that nothing deferred later
  // passes it. The caller's own request is call_raw's to send again. An MDS that cannot
  // be reached fails the whole batch: its items are kept and sent again as they are
  // (those applied meanwhile are answered from the MDS's remembered replies).
  for (int i = 0; i < reply.results_size(); ++i) {
    auto& result = *reply.mutable_results(i);
    DeferredOp& item = items[first + static_cast<size_t>(i)];
    if (!item.done || result.code() != static_cast<uint32_t>(ErrorCode::kWouldBlock)) continue;
    ++deferred_sent_back_;
    auto alone = co_await call_with_retries(item.method, item.body);
    if (!alone && is_retryable(alone.error().code())) co_return unexpected(alone.error());
    if (alone) {
      result.set_code(0);
      result.set_message("");
      result.set_body(std::move(alone->body));
    } else {
      result.set_code(static_cast<uint32_t>(alone.error().code()));
      result.set_message(alone.error().context());
    }
  }
  co_return ok_status();
}

bool MdsSession::kept_if_early(uint32_t method) {
  switch (method) {
    case rpc::kMdsBatch:
    case rpc::kMdsSetAttr:
    case rpc::kMdsMknod:
    case rpc::kMdsSymlink:
    case rpc::kMdsLink:
    case rpc::kMdsUnlink:
    case rpc::kMdsRename:
    case rpc::kMdsSetXattr:
    case rpc::kMdsRemoveXattr:
    case rpc::kMdsWriteInline:
    case rpc::kMdsCommitWrite:
    case rpc::kMdsUninline:
      return true;
    default:
      return false;
  }
}

void MdsSession::keep_if_early(uint32_t method, const std::string& body, const rpc::Frame& reply) {
  if (!(reply.header.flags & rpc::kFlagRepliedEarly) || !kept_if_early(method)) return;
  ++early_replies_;
  unsafe_.push_back(UnsafeRequest{++unsafe_numbered_, method, body});
  if (!safety_running_) {
    safety_running_ = true;
    spawn_checked(objects_.executor(), safety_loop(alive_));
  }
}

void MdsSession::forget_safe(uint64_t number) {
  while (!unsafe_.empty() && unsafe_.front().number <= number) unsafe_.pop_front();
}

awaitable<void> MdsSession::safety_loop(std::weak_ptr<bool> alive) {
  // Often enough that little is kept (a kept batch holds its inline data), rarely enough
  // that the syncs cost nothing next to the requests they cover.
  constexpr Duration kSafetyInterval(50);
  asio::steady_timer wait(objects_.executor());
  while (!unsafe_.empty()) {
    wait.expires_after(kSafetyInterval);
    co_await wait.async_wait(use_awaitable_tuple);
    if (!alive.lock()) co_return;
    if (unsafe_.empty()) break;
    const uint64_t kept = unsafe_numbered_;
    proto::SyncRequest request;
    stamp(request, Creds{}, false);
    auto synced = co_await call_with_retries(rpc::kMdsSync, request.SerializeAsString());
    if (!alive.lock()) co_return;
    if (synced) forget_safe(kept);  // kFenced: report_fenced() dropped them
  }
  safety_running_ = false;
}

awaitable<Status> MdsSession::resend_unsafe(const rpc::ConnectionPtr& conn,
                                            Clock::time_point deadline) {
  if (unsafe_.empty()) co_return ok_status();
  const std::vector<UnsafeRequest> kept(unsafe_.begin(), unsafe_.end());
  spdlog::info("resending {} change(s) the MDS answered early to {}", kept.size(),
               conn->peer_address());
  constexpr uint8_t kFlags = rpc::kFlagMayReplyEarly | rpc::kFlagResent;
  auto send = [&](uint32_t method, const std::string& body) -> awaitable<Result<rpc::Frame>> {
    auto left = std::max(left_until(deadline), Duration(1));
    co_return co_await conn->call(method, body, {}, left, kFlags);
  };
  for (const UnsafeRequest& r : kept) {
    auto reply = co_await send(r.method, r.body);
    if (!reply && is_retryable(reply.error().code())) co_return unexpected(reply.error());
    ++unsafe_resent_;
    if (!reply) {
      spdlog::error("a change the MDS answered early failed when resent: {}",
                    reply.error().to_string());
      continue;
    }
    if (r.method != rpc::kMdsBatch) continue;
    // Items the MDS sent back unapplied (they would wait for another mount: see
    // resend_sent_back) go alone, in order.
    auto batch = rpc::parse_body<proto::BatchRequest>(r.body);
    auto results = rpc::parse_body<proto::BatchReply>(reply->body);
    if (!batch || !results || results->results_size() != batch->items_size()) continue;
    for (int i = 0; i < results->results_size(); ++i) {
      if (results->results(i).code() != static_cast<uint32_t>(ErrorCode::kWouldBlock)) continue;
      auto alone = co_await send(batch->items(i).method(), batch->items(i).body());
      if (!alone && is_retryable(alone.error().code())) co_return unexpected(alone.error());
    }
  }
  co_return ok_status();
}

awaitable<Result<rpc::Frame>> MdsSession::call_until_answered(uint32_t method, std::string body) {
  constexpr Duration kForever(24ll * 3600 * 1000);
  co_return co_await call_with_retries(method, std::move(body), kForever, kForever);
}

awaitable<Result<rpc::Frame>> MdsSession::call_with_retries(uint32_t method, std::string body,
                                                            std::optional<Duration> timeout,
                                                            std::optional<Duration> attempt_timeout) {
  auto deadline = Clock::now() + timeout.value_or(objects_.options().op_timeout);
  Error last(ErrorCode::kTimeout, "no attempt made");
  Duration backoff(20);
  // A request made under a session that gets evicted never goes out under the next.
  const std::string entity = objects_.entity();
  for (int attempt = 1;; ++attempt) {
    if (entity != objects_.entity()) {
      co_return make_error(ErrorCode::kFenced, "session " + entity +
                                                   " was evicted while this request was in flight");
    }
    deadline = objects_.retry_deadline(deadline);
    if (left_until(deadline).count() <= 0) {
      co_return unexpected(std::move(last).with_context("MDS request " + std::to_string(method) +
                                                        " gave up after " +
                                                        std::to_string(attempt - 1) + " attempts"));
    }
    if (attempt > 1) ++resends_;
    auto conn = co_await session_connection(deadline);
    if (conn) {
      auto left =
          std::min(attempt_timeout.value_or(objects_.options().attempt_timeout), left_until(deadline));
      auto reply = co_await (*conn)->call(method, body, {}, std::max(left, Duration(1)),
                                          rpc::kFlagMayReplyEarly);
      if (reply) {
        objects_.answered();
        keep_if_early(method, body, *reply);
        co_return reply;
      }
      last = std::move(reply).error();
    } else {
      last = std::move(conn).error();
    }
    if (last.code() == ErrorCode::kFenced && entity == objects_.entity()) report_fenced(last);
    if (!is_retryable(last.code())) co_return unexpected(std::move(last));
    spdlog::debug("MDS request {} attempt {} failed: {}", method, attempt, last.to_string());
    // A new map may name a new MDS address; otherwise back off.
    ignore_error(co_await objects_.maps().wait_for_change(std::min(left_until(deadline), backoff)),
                 "woken by a new map or the backoff alike");
    backoff = std::min(backoff * 2, Duration(1000));
  }
}

}  // namespace dfs::client
