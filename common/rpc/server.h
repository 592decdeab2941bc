// RpcServer: accepts connections on one address and dispatches each request to the
// handler registered for its method. Owned by a daemon; runs on its I/O executor.
#pragma once

#include <map>
#include <string>

#include "common/rpc/connection.h"

namespace dfs::rpc {

using MethodHandler = std::function<awaitable<Result<Reply>>(ConnectionPtr, Frame)>;

class RpcServer {
 public:
  RpcServer(asio::any_io_executor executor, ConnectionOptions options);

  // Registers the handler of `method`. Requires: before listen().
  void handle(uint32_t method, MethodHandler handler);

  // Binds and starts accepting. Port 0 picks a free port. Returns the bound address.
  // Errors: kInvalidArgument (bad address), kUnavailable (address in use).
  Result<std::string> listen(const std::string& address);

  void stop();

  // Current connections; handlers use it to push one-way frames (map updates).
  size_t connection_count() const { return connections_; }

 private:
  awaitable<void> accept_loop();
  awaitable<Result<Reply>> dispatch(ConnectionPtr conn, Frame frame);

  asio::any_io_executor executor_;
  ConnectionOptions options_;
  std::map<uint32_t, MethodHandler> handlers_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  size_t connections_ = 0;
};

}  // namespace dfs::rpc
