#include "common/rpc/server.h"

#include <spdlog/spdlog.h>

namespace dfs::rpc {

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
  co_return co_await it->second(std::move(conn), std::move(frame));
}

}  // namespace dfs::rpc
