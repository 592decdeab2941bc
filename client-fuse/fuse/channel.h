// Serves a mounted FUSE session from the client's I/O thread.
//
// libfuse's own loops read /dev/fuse on worker threads, and every request then hops to
// the I/O thread that owns the client's state; on a small VM that hand-off (a futex
// wake and a context switch each way) cost more CPU than the request's own work. Here
// the I/O thread waits for /dev/fuse to become readable alongside its sockets, reads
// each request and dispatches it in place, so a request meets its handler with no
// thread hand-off, and a reply goes back from the same thread.
//
// Contract: call on the client's executor (FileClient::run) after fuse_session_mount.
// Returns when the file system is unmounted (the kernel answers ENODEV), or on
// SIGINT, SIGTERM or SIGHUP (the session is marked exited; the caller unmounts), after
// calling `on_signal` (if set) on this thread.
// Back-pressure: while the requests being worked on reach the in-flight limit
// (reply.h), /dev/fuse is not read, which holds callers in the kernel's queue.
// Handlers run on this thread and must not block: every later request waits for them.
// Busy polling: for `busy_poll` after each request the thread keeps looking at
// /dev/fuse (between its other ready work) instead of sleeping in epoll. A caller's
// next request usually follows within microseconds, and on a VM whose idle vCPUs halt,
// waking a sleeping thread costs ~20 us each time: measured, a FUSE round trip falls
// from ~50 us to ~20 us (docs/architecture.md, "Busy polling /dev/fuse"). Zero: off.
// Errors: kIoError when /dev/fuse fails other than by unmounting.
#pragma once

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include <chrono>
#include <functional>

#include "common/rpc/asio.h"
#include "common/status/status.h"

namespace dfs::fuse {

awaitable<Status> serve_fuse_channel(fuse_session* session, std::chrono::microseconds busy_poll,
                                     std::function<void()> on_signal = {});

}  // namespace dfs::fuse
