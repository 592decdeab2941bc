#include "common/rpc/server.h"

#include <spdlog/spdlog.h>

#include <array>

#include "common/metrics/registry.h"
#include "common/rpc/method_names.h"

namespace dfs::rpc {
namespace {

// The series of one method, made on its first request and kept for the process's life:
// a request costs two atomic adds and a bucket search, not a registry lookup.
struct MethodMetrics {
  metrics::Counter& ok;
  metrics::Counter& failed;
  metrics::Counter& bytes_in;
  metrics::Histogram& seconds;
};

// The series of one method (by its name in the `method` label).
MethodMetrics make_method_metrics(const std::string& name) {
  auto& r = metrics::Registry::process();
  metrics::Labels l{{"method", name}};
  return MethodMetrics{
      r.counter("dfs_rpc_requests_total", "requests served, by method and result",
                {{"method", name}, {"result", "ok"}}),
      r.counter("dfs_rpc_requests_total", "", {{"method", name}, {"result", "error"}}),
      r.counter("dfs_rpc_request_bytes_total", "request bytes received (header excluded)", l),
      r.histogram("dfs_rpc_request_seconds", "time from a request's arrival to its reply", l)};
}

MethodMetrics& metrics_of(uint32_t method) {
  static std::array<std::atomic<MethodMetrics*>, 512> by_method{};
  static MethodMetrics unknown = make_method_metrics("other");
  if (method >= by_method.size()) return unknown;
  if (auto* m = by_method[method].load(std::memory_order_acquire)) return *m;
  // Two threads may race here; the registry returns the same series to both, so the
  // loser's struct is equivalent and simply not kept.
  auto made = std::make_unique<MethodMetrics>(make_method_metrics(method_name(method)));
  MethodMetrics* expected = nullptr;
  if (by_method[method].compare_exchange_strong(expected, made.get())) return *made.release();
  return *expected;
}

}  // namespace

RpcServer::RpcServer(asio::any_io_executor executor, ConnectionOptions options)
    : executor_(std::move(executor)), options_(std::move(options)) {}

void RpcServer::handle(uint32_t method, MethodHandler handler) {
  handlers_[method] = std::move(handler);
}

Result<std::string> RpcServer::listen(const std::string& address) {
  auto endpoint = DFS_TRY(parse_endpoint(address));
  boost::system::error_code ec;
  acceptor_ = std::make_unique<tcp::acceptor>(executor_);
  acceptor_->open(endpoint.protocol(), ec);
  if (!ec) acceptor_->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_->bind(endpoint, ec);
  if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return make_error(ErrorCode::kUnavailable, "cannot listen on " + address + ": " + ec.message());
  }
  auto bound = acceptor_->local_endpoint();
  spawn_checked(executor_, accept_loop());
  return bound.address().to_string() + ":" + std::to_string(bound.port());
}

void RpcServer::stop() {
  if (!acceptor_) return;
  boost::system::error_code ec;
  acceptor_->close(ec);
}

awaitable<void> RpcServer::accept_loop() {
  while (acceptor_ && acceptor_->is_open()) {
    auto [ec, socket] = co_await acceptor_->async_accept(use_awaitable_tuple);
    if (ec == asio::error::operation_aborted) break;
    if (ec) {
      // Out of file descriptors and the like: back off instead of spinning.
      spdlog::warn("accept failed: {}", ec.message());
      co_await sleep_for(Duration(100));
      continue;
    }
    ++connections_;
    auto conn = Connection::accept(std::move(socket), options_,
                                   [this](ConnectionPtr c, Frame f) { return dispatch(c, std::move(f)); });
    conn->on_close([this] { --connections_; });
  }
}

awaitable<Result<Reply>> RpcServer::dispatch(ConnectionPtr conn, Frame frame) {
  auto it = handlers_.find(frame.header.method);
  if (it == handlers_.end()) {
    co_return make_error(ErrorCode::kUnknownMethod,
                         "method " + std::to_string(frame.header.method) + " is not served here");
  }
  // Requests being served right now, every method: the daemon's queue depth.
  static metrics::Gauge& in_flight = metrics::Registry::process().gauge(
      "dfs_rpc_requests_in_flight", "requests received and not yet answered");
  MethodMetrics& m = metrics_of(frame.header.method);
  m.bytes_in.add(frame.body.size() + frame.data.size());
  const auto started = std::chrono::steady_clock::now();
  in_flight.add(1);
  auto reply = co_await it->second(std::move(conn), std::move(frame));
  in_flight.add(-1);
  m.seconds.observe(std::chrono::steady_clock::now() - started);
  (reply ? m.ok : m.failed).add();
  co_return reply;
}

}  // namespace dfs::rpc
