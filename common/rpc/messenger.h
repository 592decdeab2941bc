// Messenger: the client side of RPC. Keeps one connection per peer address, connects
// on first use, reconnects with exponential backoff after failures, and bounds every
// call by a deadline. Runs on one single-threaded executor.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "common/rpc/connection.h"

namespace dfs::rpc {

struct MessengerOptions {
  ConnectionOptions connection;
  Duration initial_backoff{50};
  Duration max_backoff{2000};
};

class Messenger {
 public:
  Messenger(asio::any_io_executor executor, MessengerOptions options, PushHandler on_push = {});

  // Sends a request to `address` ("host:port") and waits for the reply, connecting
  // first if needed; the whole exchange is bounded by `timeout`.
  // Errors: kTimeout, kUnavailable (peer unreachable or lost), or the peer's error.
  awaitable<Result<Frame>> call(std::string address, uint32_t method, std::string body,
                                std::string data, Duration timeout);

  // Typed form: serializes `request`, parses the reply body as `Resp`; reply data is
  // moved into *data_out when given.
  template <class Resp, class Req>
  awaitable<Result<Resp>> call_proto(std::string address, uint32_t method, const Req& request,
                                     Duration timeout, std::string data = {},
                                     std::string* data_out = nullptr) {
    DFS_CO_AWAIT_TRY(auto frame, call(std::move(address), method, request.SerializeAsString(),
                                          std::move(data), timeout));
    if (data_out) *data_out = std::move(frame.data);
    co_return parse_body<Resp>(frame.body);
  }

  // The live connection to `address`, connecting (once, shared by concurrent callers)
  // if there is none. Errors: as call().
  awaitable<Result<ConnectionPtr>> connection(std::string address, Clock::time_point deadline);

  // Closes the connection to `address`, if any (e.g. when its OSD is marked down).
  void reset(const std::string& address);
  void close_all();
  // Connections made from now on introduce this end as `entity`; existing ones keep
  // the old name until closed (a client that was evicted takes a new name).
  void set_local_entity(std::string entity) { options_.connection.local_entity = std::move(entity); }

 private:
  struct Peer {
    ConnectionPtr conn;
    bool connecting = false;
    Duration backoff{0};
    Clock::time_point retry_at{};
    uint64_t dials = 0;                 // finished dial attempts
    std::optional<Error> last_failure;  // of the latest dial
    std::vector<std::shared_ptr<asio::steady_timer>> waiters;
  };

  awaitable<Result<ConnectionPtr>> dial(std::string address, Peer& peer,
                                        Clock::time_point deadline);

  asio::any_io_executor executor_;
  MessengerOptions options_;
  PushHandler on_push_;
  std::map<std::string, Peer> peers_;
};

}  // namespace dfs::rpc
