// Serves the process's metrics registry over HTTP for Prometheus: GET /metrics answers
// the text exposition format; anything else gets 404 (or 405 for another method). Runs
// on the daemon's own executor, so collectors read the daemon's state on its thread.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string>

#include "common/metrics/registry.h"
#include "common/status/status.h"

namespace dfs::metrics {

class HttpExporter {
 public:
  HttpExporter(boost::asio::any_io_executor executor, Registry& registry);
  ~HttpExporter();

  // Binds `address` (host:port; port 0 picks one) and starts serving. Returns the bound
  // address. Errors: kInvalidArgument (bad address), kUnavailable (in use).
  Result<std::string> listen(const std::string& address);
  void stop();

  // What the acceptor and the connections share; opaque, and alive while any of them is.
  struct State;

 private:
  std::shared_ptr<State> state_;
};

// The metrics address of daemon `section`: its `metrics_addr` setting, else the host of
// `listen_addr` with its port + 1000 ("off": none). Errors: kInvalidArgument.
Result<std::string> metrics_address(const std::string& configured, const std::string& listen_addr);

}  // namespace dfs::metrics
