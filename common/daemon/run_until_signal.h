// The end of every daemon's main(): run the I/O context until SIGINT or SIGTERM, then
// let the daemon shut itself down. The calling thread (the main thread) becomes the
// daemon's one I/O thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>

namespace dfs {

// Runs `io` on the calling thread until it stops. The first SIGINT or SIGTERM is logged
// and calls `shut_down` on that thread; `shut_down` must end with io.stop(), at once or
// once the daemon has finished the work in flight.
void run_until_signal(boost::asio::io_context& io, std::function<void()> shut_down);

}  // namespace dfs
