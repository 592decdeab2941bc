#include "common/rpc/messenger.h"

#include <spdlog/spdlog.h>

namespace dfs::rpc {

Messenger::Messenger(asio::any_io_executor executor, MessengerOptions options, PushHandler on_push)
    : executor_(std::move(executor)), options_(std::move(options)), on_push_(std::move(on_push)) {}

awaitable<Result<Frame>> Messenger::call(std::string address, uint32_t method, std::string body,
                                         std::string data, Duration timeout) {
  auto deadline = Clock::now() + timeout;
  DFS_CO_AWAIT_TRY(auto conn, connection(address, deadline));
  auto left = std::chrono::duration_cast<Duration>(deadline - Clock::now());
  co_return co_await conn->call(method, std::move(body), std::move(data),
                                std::max(left, Duration(1)));
}

awaitable<Result<ConnectionPtr>> Messenger::connection(std::string address,
                                                       Clock::time_point deadline) {
  for (;;) {
    Peer& peer = peers_[address];  // std::map: references stay valid across awaits
    if (peer.conn && peer.conn->is_open()) co_return peer.conn;
    if (Clock::now() >= deadline) {
      co_return make_error(ErrorCode::kTimeout, "no connection to " + address + " in time");
    }
    if (!peer.connecting) co_return co_await dial(address, peer, deadline);
    // Someone else is dialling this peer: wait for them (they cancel our timer) and
    // share their outcome, so that N callers of a dead peer cost one dial, not N.
    uint64_t dials_before = peer.dials;
    auto waiter = std::make_shared<asio::steady_timer>(executor_, deadline);
    peer.waiters.push_back(waiter);
    co_await waiter->async_wait(use_awaitable_tuple);
    Peer& after = peers_[address];
    bool dial_failed = after.dials != dials_before && !(after.conn && after.conn->is_open());
    if (dial_failed && after.last_failure) co_return unexpected(*after.last_failure);
  }
}

awaitable<Result<ConnectionPtr>> Messenger::dial(std::string address, Peer& peer,
                                                 Clock::time_point deadline) {
  peer.connecting = true;
  auto wake_waiters = [&peer] {
    peer.connecting = false;
    for (auto& w : peer.waiters) w->cancel();
    peer.waiters.clear();
  };
  if (peer.retry_at > Clock::now()) {
    if (peer.retry_at >= deadline) {
      // Too soon to dial again: fail with what the last attempt said (callers such as
      // the OSD tell "refused" from "unreachable").
      ++peer.dials;
      if (!peer.last_failure) peer.last_failure = Error(ErrorCode::kUnavailable, address);
      Error error = peer.last_failure->with_context("retrying with backoff");
      wake_waiters();
      co_return unexpected(std::move(error));
    }
    asio::steady_timer backoff(executor_, peer.retry_at);
    co_await backoff.async_wait(use_awaitable_tuple);
  }
  Result<ConnectionPtr> result = make_error(ErrorCode::kInvalidArgument, address);
  auto endpoint = parse_endpoint(address);
  if (!endpoint) {
    result = endpoint.error();
  } else {
    auto timeout = std::chrono::duration_cast<Duration>(deadline - Clock::now());
    result = co_await Connection::connect(*endpoint, options_.connection, on_push_,
                                          std::max(timeout, Duration(1)));
  }
  ++peer.dials;
  if (result) {
    peer.conn = *result;
    peer.backoff = Duration(0);
    peer.retry_at = {};
    peer.last_failure.reset();
  } else {
    peer.last_failure = result.error();
    peer.backoff = peer.backoff.count() == 0
                       ? options_.initial_backoff
                       : std::min(peer.backoff * 2, options_.max_backoff);
    peer.retry_at = Clock::now() + peer.backoff;
    spdlog::debug("connect to {} failed: {}; next try in {} ms", address,
                  result.error().to_string(), peer.backoff.count());
  }
  wake_waiters();
  co_return result;
}

void Messenger::reset(const std::string& address) {
  auto it = peers_.find(address);
  if (it != peers_.end() && it->second.conn) it->second.conn->close("reset by owner");
}

void Messenger::close_all() {
  for (auto& [address, peer] : peers_) {
    if (peer.conn) peer.conn->close("messenger shutting down");
  }
}

}  // namespace dfs::rpc
