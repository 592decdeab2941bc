#include "common/metrics/http_exporter.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/rpc/connection.h"
#include "common/util/host_port.h"

namespace dfs::metrics {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

struct HttpExporter::State {
  asio::any_io_executor executor;
  Registry& registry;
  std::unique_ptr<tcp::acceptor> acceptor;
};

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

// One scraper's connection: requests answered in turn until it closes or sends junk.
asio::awaitable<void> serve(std::shared_ptr<HttpExporter::State> state, tcp::socket socket) {
  boost::beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::empty_body> parser;
    parser.header_limit(16 * 1024);  // a scrape request is small; anything else is not one
    auto [read_ec, n] = co_await http::async_read(socket, buffer, parser, kTuple);
    if (read_ec) co_return;  // closed, or not HTTP: drop the connection only
    const auto& request = parser.get();
    http::response<http::string_body> response;
    response.version(request.version());
    response.keep_alive(request.keep_alive());
    response.set(http::field::server, "dfs");
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      response.result(http::status::method_not_allowed);
      response.set(http::field::allow, "GET, HEAD");
      response.body() = "only GET /metrics is served here\n";
    } else if (request.target() != "/metrics" && request.target().rfind("/metrics?", 0) != 0) {
      response.result(http::status::not_found);
      response.body() = "metrics are at /metrics\n";
    } else {
      response.result(http::status::ok);
      response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      response.body() = state->registry.render();
    }
    response.prepare_payload();
    if (request.method() == http::verb::head) response.body().clear();
    auto [write_ec, m] = co_await http::async_write(socket, response, kTuple);
    if (write_ec || !response.keep_alive()) co_return;
  }
}

asio::awaitable<void> accept_loop(std::shared_ptr<HttpExporter::State> state) {
  while (state->acceptor && state->acceptor->is_open()) {
    auto [ec, socket] = co_await state->acceptor->async_accept(kTuple);
    if (ec == asio::error::operation_aborted) co_return;
    if (ec) {
      spdlog::warn("metrics: accept failed: {}", ec.message());
      asio::steady_timer pause(state->executor, std::chrono::milliseconds(100));
      co_await pause.async_wait(kTuple);
      continue;
    }
    asio::co_spawn(state->executor, serve(state, std::move(socket)), asio::detached);
  }
}

}  // namespace

HttpExporter::HttpExporter(asio::any_io_executor executor, Registry& registry)
    : state_(std::make_shared<State>(State{std::move(executor), registry, nullptr})) {}

HttpExporter::~HttpExporter() { stop(); }

Result<std::string> HttpExporter::listen(const std::string& address) {
  auto endpoint = DFS_TRY(rpc::parse_endpoint(address));
  boost::system::error_code ec;
  state_->acceptor = std::make_unique<tcp::acceptor>(state_->executor);
  state_->acceptor->open(endpoint.protocol(), ec);
  if (!ec) state_->acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) state_->acceptor->bind(endpoint, ec);
  if (!ec) state_->acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return make_error(ErrorCode::kUnavailable,
                      "cannot serve metrics on " + address + ": " + ec.message());
  }
  auto bound = state_->acceptor->local_endpoint();
  asio::co_spawn(state_->executor, accept_loop(state_), asio::detached);
  return bound.address().to_string() + ":" + std::to_string(bound.port());
}

void HttpExporter::stop() {
  if (!state_->acceptor) return;
  boost::system::error_code ec;
  state_->acceptor->close(ec);
}

Result<std::string> metrics_address(const std::string& configured, const std::string& listen_addr) {
  if (configured == "off") return std::string();
  if (!configured.empty()) return configured;
  auto split = DFS_TRY(split_host_port(listen_addr));
  // Port 0 (pick any) stays 0 for the metrics too.
  int metrics_port = split.port == 0 ? 0 : split.port + 1000;
  if (metrics_port > 65535) {
    return make_error(ErrorCode::kInvalidArgument,
                      "no room for a metrics port above " + listen_addr + ": set metrics_addr");
  }
  return split.host + ":" + std::to_string(metrics_port);
}

}  // namespace dfs::metrics
