// One framed, multiplexed TCP connection between two entities. Many requests share it;
// replies are matched by request id; every call has a deadline. A frame that fails
// validation closes this connection only. All methods run on the connection's
// executor, which must be single-threaded (each daemon runs one I/O thread).
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "common/rpc/asio.h"
#include "common/rpc/auth.h"
#include "common/rpc/frame.h"

namespace dfs::rpc {

struct ConnectionOptions {
  std::string local_entity;  // "osd.3", "client.admin.<nonce>"
  std::shared_ptr<Authenticator> auth;
  FrameLimits limits;
  Duration handshake_timeout{5000};
  // The cluster this end belongs to ([global] fsid), sent and checked in the handshake
  // (common/rpc/cluster_identity.h); empty: names none and accepts any peer.
  std::string cluster_fsid;
};

// What a request handler answers with: a serialized Protobuf body and raw data.
struct Reply {
  std::string body;
  std::string data;
  uint8_t flags = 0;  // the response frame's (kFlagRepliedEarly)
};

class Connection;
using ConnectionPtr = std::shared_ptr<Connection>;
using RequestHandler = std::function<awaitable<Result<Reply>>(ConnectionPtr, Frame)>;
using PushHandler = std::function<void(ConnectionPtr, Frame)>;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Server side: runs the handshake on an accepted socket, then serves requests with
  // `on_request` until the peer goes away or misbehaves.
  static ConnectionPtr accept(tcp::socket socket, ConnectionOptions options,
                              RequestHandler on_request);

  // Client side: connects to `endpoint` and completes the handshake within `timeout`.
  // One-way frames from the server go to `on_push`.
  // Errors: kUnavailable (refused, reset), kTimeout, kAuthFailed, kVersionMismatch,
  // kWrongCluster (the server refused our fsid, or names another cluster or none).
  static awaitable<Result<ConnectionPtr>> connect(tcp::endpoint endpoint,
                                                  ConnectionOptions options, PushHandler on_push,
                                                  Duration timeout);

  // Sends a request (with frame `flags`) and waits for its reply. A reply carrying an
  // error status is returned as that error. Errors: kTimeout, kUnavailable (connection
  // lost), or the peer's error.
  awaitable<Result<Frame>> call(uint32_t method, std::string body, std::string data,
                                Duration timeout, uint8_t flags = 0);

  // Queues a one-way frame (no reply). Dropped silently if the connection is closed.
  void send(uint32_t method, std::string body, std::string data = {});

  // Closes the socket and fails every pending call with kUnavailable.
  void close(const std::string& reason);

  bool is_open() const { return open_; }
  const std::string& peer_entity() const { return peer_entity_; }
  const std::string& peer_address() const { return peer_address_; }
  asio::any_io_executor executor() { return socket_.get_executor(); }

  // Called once when the connection closes (the server uses it to forget the peer).
  void on_close(std::function<void()> fn) { on_close_ = std::move(fn); }

  Connection(tcp::socket socket, ConnectionOptions options);

 private:
  struct PendingCall;
  struct OutFrame {
    EncodedHeader header;
    Frame frame;
  };

  awaitable<void> read_loop();
  awaitable<Result<Frame>> read_frame();
  awaitable<void> write_loop();
  awaitable<void> serve_request(Frame frame);
  awaitable<void> handshake_deadline();
  void dispatch(Frame frame);
  void handle_hello(Frame frame);
  void complete_call(Frame frame);
  void enqueue(Frame frame);
  void respond(const FrameHeader& request, Result<Reply> result);

  tcp::socket socket_;
  ConnectionOptions options_;
  RequestHandler on_request_;
  PushHandler on_push_;
  std::function<void()> on_close_;
  bool server_side_ = false;
  bool open_ = true;
  bool handshake_done_ = false;
  bool writing_ = false;
  uint64_t next_request_id_ = 1;
  std::string peer_entity_;
  std::string peer_address_;
  std::deque<OutFrame> outbox_;
  std::unordered_map<uint64_t, std::shared_ptr<PendingCall>> pending_;
};

// Parses a Protobuf body. Errors: kProtocol naming the message type.
template <class M>
Result<M> parse_body(const std::string& body) {
  M message;
  if (!message.ParseFromString(body)) {
    return make_error(ErrorCode::kProtocol, "malformed " + std::string(M::descriptor()->name()));
  }
  return message;
}

template <class M>
Reply make_reply(const M& message, std::string data = {}) {
  return Reply{message.SerializeAsString(), std::move(data)};
}

// Parses "host:port" (IPv4, IPv6 in brackets, or a resolvable name).
// Errors: kInvalidArgument.
Result<tcp::endpoint> parse_endpoint(const std::string& address);

}  // namespace dfs::rpc
