#include "common/daemon/run_until_signal.h"

#include <spdlog/spdlog.h>

#include <boost/asio/signal_set.hpp>
#include <csignal>

namespace dfs {

void run_until_signal(boost::asio::io_context& io, std::function<void()> shut_down) {
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](auto, int sig) {
    spdlog::info("signal {}: shutting down", sig);
    shut_down();
  });
  io.run();
}

}  // namespace dfs
