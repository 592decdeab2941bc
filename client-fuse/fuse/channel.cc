#include "client-fuse/fuse/channel.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "client-fuse/fuse/reply.h"

namespace dfs::fuse {
namespace {

// How often a reader held back by the in-flight limit looks again. Replies free slots
// on this same thread, so the limit is only ever reached under a flood of requests.
constexpr auto kFullRetry = std::chrono::microseconds(200);

Status set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return make_error(ErrorCode::kIoError, std::string("fcntl(/dev/fuse): ") + std::strerror(errno));
  }
  return ok_status();
}

}  // namespace

awaitable<Status> serve_fuse_channel(fuse_session* session, std::chrono::microseconds busy_poll,
                                     std::function<void()> on_signal) {
  auto executor = co_await asio::this_coro::executor;
  int fd = fuse_session_fd(session);
  DFS_CO_TRY_STATUS(set_nonblocking(fd));
  // The descriptor object owns (and closes) a duplicate; libfuse keeps its own fd.
  int watched = ::dup(fd);
  if (watched < 0) {
    co_return make_error(ErrorCode::kIoError, std::string("dup(/dev/fuse): ") + std::strerror(errno));
  }
  asio::posix::stream_descriptor device(executor, watched);
  asio::steady_timer full_wait(executor);

  asio::signal_set signals(executor, SIGINT, SIGTERM, SIGHUP);
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("signal {}: unmounting", signal);
    if (on_signal) on_signal();
    fuse_session_exit(session);
    device.cancel();
    full_wait.cancel();
  });

  Status status = ok_status();
  fuse_buf buf{};
  auto last_request = std::chrono::steady_clock::now();
  while (!fuse_session_exited(session)) {
    if (inflight_full()) {
      full_wait.expires_after(kFullRetry);
      co_await full_wait.async_wait(use_awaitable_tuple);
      continue;
    }
    int got = fuse_session_receive_buf(session, &buf);
    if (got == -EAGAIN) {
      if (std::chrono::steady_clock::now() - last_request < busy_poll) {
        // Still polling: yield to whatever else is ready (the reactor is polled without
        // blocking while handlers are queued), then read again.
        co_await asio::post(executor, asio::use_awaitable);
        continue;
      }
      auto [ec] = co_await device.async_wait(asio::posix::descriptor::wait_read,
                                             use_awaitable_tuple);
      if (ec && ec != asio::error::operation_aborted) {
        status = make_error(ErrorCode::kIoError, "waiting for /dev/fuse: " + ec.message());
        break;
      }
      continue;
    }
    if (got == -EINTR) continue;
    if (got <= 0) {
      // 0: unmounted (libfuse saw ENODEV and marked the session exited).
      if (got < 0) {
        status = make_error(ErrorCode::kIoError,
                            std::string("reading /dev/fuse: ") + std::strerror(-got));
      }
      break;
    }
    last_request = std::chrono::steady_clock::now();
    fuse_session_process_buf(session, &buf);
    // Let the handler just spawned start (send its request) before reading the next.
    co_await asio::post(executor, asio::use_awaitable);
  }
  std::free(buf.mem);
  signals.cancel();
  co_return status;
}

}  // namespace dfs::fuse
