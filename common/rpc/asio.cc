#include "common/rpc/asio.h"

#include <spdlog/spdlog.h>

#include <cstdlib>

namespace dfs {

void on_escaped_exception(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    spdlog::critical("bug: exception escaped a coroutine: {}", ex.what());
  } catch (...) {
    spdlog::critical("bug: unknown exception escaped a coroutine");
  }
  spdlog::default_logger()->flush();
  std::abort();
}

awaitable<void> sleep_for(Duration d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(use_awaitable_tuple);
}

}  // namespace dfs
