#include "common/map/map_subscriber.h"

#include <spdlog/spdlog.h>

#include "common/rpc/methods.h"

namespace dfs {

MapSubscriber::MapSubscriber(asio::any_io_executor executor, rpc::Messenger& messenger,
                             std::vector<std::string> mon_addrs)
    : executor_(std::move(executor)), messenger_(messenger), mon_addrs_(std::move(mon_addrs)) {}

void MapSubscriber::start() { spawn_checked(executor_, subscribe_loop()); }

namespace {

// A subscription is probed this often, and a monitor that does not answer a probe within
// kProbeTimeout is given up for the next one: a stale map lasts at most about 3 s.
constexpr Duration kProbeInterval{1000};
constexpr Duration kProbeTimeout{2000};

}  // namespace

awaitable<void> MapSubscriber::subscribe_loop() {
  // (Re)subscribes whenever the subscription's connection is gone or its monitor falls
  // silent; the monitor then sends what we missed, so no epoch is ever skipped.
  auto last_probe = Clock::now();
  for (;;) {
    if (subscribed_on_ && subscribed_on_->is_open()) {
      co_await sleep_for(Duration(200));
      if (subscribed_on_ && Clock::now() - last_probe >= kProbeInterval) {
        co_await probe_subscription();
        last_probe = Clock::now();
      }
      continue;
    }
    const std::string& mon = mon_addrs_[current_mon_ % mon_addrs_.size()];
    auto deadline = Clock::now() + Duration(3000);
    auto conn = co_await messenger_.connection(mon, deadline);
    if (!conn) {
      if (conn.error().code() == ErrorCode::kWrongCluster) note_wrong_cluster(conn.error());
      ++current_mon_;
      co_await sleep_for(Duration(200));
      continue;
    }
    proto::SubscribeRequest request;
    request.set_have_epoch(map_.epoch());
    auto reply = co_await (*conn)->call(rpc::kMonSubscribe, request.SerializeAsString(), {},
                                        Duration(3000));
    if (!reply) {
      spdlog::debug("subscribing to {} failed: {}", mon, reply.error().to_string());
      ++current_mon_;
      co_await sleep_for(Duration(200));
      continue;
    }
    auto update = rpc::parse_body<proto::MapUpdate>(reply->body);
    if (update) apply(*update);
    subscribed_on_ = *conn;
    if (!ready_) {
      ready_ = true;
      for (auto& waiter : waiters_) waiter->cancel();
      waiters_.clear();
    }
  }
}

awaitable<void> MapSubscriber::probe_subscription() {
  // A monitor cut off from the network leaves our connection to it open: we send
  // nothing on it, so nothing fails, and its pushes just stop. Subscribing again on the
  // same connection is idempotent at the monitor and answers with what we lack
  // (usually nothing), so it doubles as a liveness check.
  rpc::ConnectionPtr conn = subscribed_on_;
  proto::SubscribeRequest request;
  request.set_have_epoch(map_.epoch());
  auto reply =
      co_await conn->call(rpc::kMonSubscribe, request.SerializeAsString(), {}, kProbeTimeout);
  if (reply) {
    auto update = rpc::parse_body<proto::MapUpdate>(reply->body);
    if (update) apply(*update);
    co_return;
  }
  spdlog::warn("monitor {} did not answer a subscription probe ({}); subscribing to another",
               conn->peer_address(), reply.error().to_string());
  // Closed, not just dropped: the Messenger shares this connection, and calls waiting on
  // it fail over to another monitor now instead of at their deadlines.
  conn->close("the monitor did not answer a subscription probe");
  if (subscribed_on_ == conn) {
    subscribed_on_.reset();
    ++current_mon_;
  }
}

void MapSubscriber::on_push(const rpc::Frame& frame) {
  if (frame.header.method != rpc::kMonMapUpdate) return;
  auto update = rpc::parse_body<proto::MapUpdate>(frame.body);
  if (!update) {
    spdlog::warn("ignoring undecodable map update: {}", update.error().to_string());
    return;
  }
  apply(*update);
}

void MapSubscriber::apply(const proto::MapUpdate& update) {
  ClusterMap previous = map_;
  if (update.has_full() && update.full().epoch() > map_.epoch()) {
    map_ = ClusterMap(update.full());
  }
  for (const auto& inc : update.incrementals()) {
    if (inc.epoch() <= map_.epoch()) continue;  // already have it
    auto applied = map_.apply_incremental(inc);
    if (!applied) {
      // A gap: drop the subscription so the loop resubscribes from our epoch.
      spdlog::warn("map update does not apply ({}); resubscribing", applied.error().to_string());
      if (subscribed_on_) subscribed_on_.reset();
      break;
    }
  }
  if (map_.epoch() != previous.epoch()) notify(previous);
}

void MapSubscriber::notify(const ClusterMap& previous) {
  for (auto& waiter : waiters_) waiter->cancel();
  waiters_.clear();
  for (auto& listener : listeners_) listener(previous);
}

void MapSubscriber::add_listener(std::function<void(const ClusterMap&)> listener) {
  listeners_.push_back(std::move(listener));
}

awaitable<Status> MapSubscriber::wait_for_epoch(uint64_t epoch, Duration timeout) {
  auto deadline = Clock::now() + timeout;
  while (map_.epoch() < epoch) {
    if (Clock::now() >= deadline) {
      co_return make_error(ErrorCode::kTimeout, "map epoch " + std::to_string(epoch) +
                                                    " did not arrive (have " +
                                                    std::to_string(map_.epoch()) + ")");
    }
    auto waiter = std::make_shared<asio::steady_timer>(executor_, deadline);
    waiters_.push_back(waiter);
    co_await waiter->async_wait(use_awaitable_tuple);
  }
  co_return ok_status();
}

void MapSubscriber::note_wrong_cluster(const Error& error) {
  if (ready_ || wrong_cluster_) return;
  spdlog::info("monitor refused: {}", error.to_string());  // the owner reports it
  wrong_cluster_ = error;
  for (auto& waiter : waiters_) waiter->cancel();
  waiters_.clear();
}

awaitable<Status> MapSubscriber::wait_ready(Duration timeout) {
  auto deadline = Clock::now() + timeout;
  while (!ready_) {
    if (wrong_cluster_) co_return unexpected(*wrong_cluster_);
    if (Clock::now() >= deadline) co_return make_error(ErrorCode::kTimeout, "no monitor answered");
    auto waiter = std::make_shared<asio::steady_timer>(executor_, deadline);
    waiters_.push_back(waiter);
    co_await waiter->async_wait(use_awaitable_tuple);
  }
  co_return ok_status();
}

awaitable<Status> MapSubscriber::wait_for_change(Duration timeout) {
  co_return co_await wait_for_epoch(map_.epoch() + 1, timeout);
}

awaitable<Result<rpc::Frame>> MapSubscriber::call_mon(uint32_t method, std::string body,
                                                      Duration timeout) {
  auto deadline = Clock::now() + timeout;
  Error last(ErrorCode::kUnavailable, "no monitor configured");
  const size_t first = current_mon_;
  for (size_t attempt = 0; Clock::now() < deadline; ++attempt) {
    size_t index = (first + attempt) % mon_addrs_.size();
    const std::string& mon = mon_addrs_[index];
    auto left = std::chrono::duration_cast<Duration>(deadline - Clock::now());
    // One monitor may hang (stopped, partitioned) rather than refuse: with others to
    // try, give it only part of the time. A follower forwards a leader-only request and
    // waits up to 3 s for the leader itself, so an attempt gets a little more than that.
    if (mon_addrs_.size() > 1) left = std::min(left, Duration(4000));
    auto reply = co_await messenger_.call(mon, method, body, {}, left);
    if (reply) current_mon_ = index;  // the next request starts where this one succeeded
    if (reply || !is_retryable(reply.error().code())) co_return reply;
    // And elsewhere after a failure: a hanging monitor would otherwise take the whole
    // budget of every short call (a beacon has 2 s, a failure report 3 s) that starts
    // with it, and such calls never reach the second monitor.
    current_mon_ = index + 1;
    last = std::move(reply).error().with_context("monitor " + mon);
    if (attempt % mon_addrs_.size() == mon_addrs_.size() - 1) co_await sleep_for(Duration(200));
  }
  co_return unexpected(std::move(last));
}

}  // namespace dfs
