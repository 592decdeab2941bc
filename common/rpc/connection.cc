#include "common/rpc/connection.h"

#include <spdlog/spdlog.h>

#include "common/rpc/cluster_identity.h"
#include "common/rpc/methods.h"
#include "common/util/host_port.h"

namespace dfs::rpc {

using namespace asio::experimental::awaitable_operators;

struct Connection::PendingCall {
  explicit PendingCall(asio::any_io_executor ex) : timer(ex) {}
  asio::steady_timer timer;
  std::optional<Result<Frame>> result;
};

Connection::Connection(tcp::socket socket, ConnectionOptions options)
    : socket_(std::move(socket)), options_(std::move(options)) {
  boost::system::error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
  auto remote = socket_.remote_endpoint(ec);
  if (!ec) peer_address_ = remote.address().to_string() + ":" + std::to_string(remote.port());
}

ConnectionPtr Connection::accept(tcp::socket socket, ConnectionOptions options,
                                 RequestHandler on_request) {
  auto conn = std::make_shared<Connection>(std::move(socket), std::move(options));
  conn->server_side_ = true;
  conn->on_request_ = std::move(on_request);
  spawn_checked(conn->executor(), conn->read_loop());
  spawn_checked(conn->executor(), conn->handshake_deadline());
  return conn;
}

awaitable<Result<ConnectionPtr>> Connection::connect(tcp::endpoint endpoint,
                                                     ConnectionOptions options,
                                                     PushHandler on_push, Duration timeout) {
  auto executor = co_await asio::this_coro::executor;
  tcp::socket socket(executor);
  asio::steady_timer timer(executor, timeout);
  auto outcome = co_await (socket.async_connect(endpoint, use_awaitable_tuple) ||
                           timer.async_wait(use_awaitable_tuple));
  std::string where = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  if (outcome.index() == 1) {
    co_return make_error(ErrorCode::kTimeout, "connecting to " + where);
  }
  if (auto [ec] = std::get<0>(outcome); ec) {
    auto code = ec == asio::error::connection_refused ? ErrorCode::kConnectionRefused
                                                      : ErrorCode::kUnavailable;
    co_return make_error(code, "connecting to " + where + ": " + ec.message());
  }

  auto auth = options.auth;
  auto conn = std::make_shared<Connection>(std::move(socket), std::move(options));
  conn->on_push_ = std::move(on_push);
  conn->handshake_done_ = true;  // client side sends Hello as its first call
  spawn_checked(executor, conn->read_loop());

  proto::Hello hello;
  hello.set_entity(conn->options_.local_entity);
  hello.set_protocol_version(kProtocolVersion);
  hello.set_auth_method(auth->method());
  hello.set_auth_payload(DFS_CO_TRY(auth->client_payload(conn->options_.local_entity)));
  hello.set_fsid(conn->options_.cluster_fsid);
  auto reply = co_await conn->call(kHello, hello.SerializeAsString(), {}, timeout);
  if (!reply) {
    conn->close("handshake failed");
    co_return unexpected(std::move(reply).error().with_context("handshake with " + where));
  }
  auto hello_reply = DFS_CO_TRY(parse_body<proto::HelloReply>(reply->body));
  conn->peer_entity_ = hello_reply.entity();
  auto same_cluster = check_server(conn->options_.cluster_fsid,
                                   PeerIdentity{hello_reply.entity(), where, hello_reply.fsid()});
  if (!same_cluster) {
    conn->close("the server belongs to another cluster");
    co_return unexpected(std::move(same_cluster).error());
  }
  co_return conn;
}

awaitable<Result<Frame>> Connection::call(uint32_t method, std::string body, std::string data,
                                          Duration timeout, uint8_t flags) {
  if (!open_) co_return make_error(ErrorCode::kUnavailable, "connection to " + peer_address_ + " is closed");
  uint64_t id = next_request_id_++;
  auto pending = std::make_shared<PendingCall>(executor());
  pending->timer.expires_after(timeout);
  pending_[id] = pending;

  Frame frame;
  frame.header.kind = FrameKind::kRequest;
  frame.header.flags = flags;
  frame.header.method = method;
  frame.header.request_id = id;
  frame.body = std::move(body);
  frame.data = std::move(data);
  enqueue(std::move(frame));

  co_await pending->timer.async_wait(use_awaitable_tuple);
  pending_.erase(id);
  if (!pending->result) {
    co_return make_error(ErrorCode::kTimeout, "request " + std::to_string(method) + " to " +
                                                  peer_address_ + " got no reply in " +
                                                  std::to_string(timeout.count()) + " ms");
  }
  co_return std::move(*pending->result);
}

void Connection::send(uint32_t method, std::string body, std::string data) {
  if (!open_) return;
  Frame frame;
  frame.header.kind = FrameKind::kOneWay;
  frame.header.method = method;
  frame.body = std::move(body);
  frame.data = std::move(data);
  enqueue(std::move(frame));
}

void Connection::close(const std::string& reason) {
  if (!open_) return;
  open_ = false;
  spdlog::debug("closing connection {} ({}): {}", peer_address_, peer_entity_, reason);
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  for (auto& [id, pending] : pending_) {
    pending->result = make_error(ErrorCode::kUnavailable,
                                 "connection to " + peer_address_ + " lost: " + reason);
    pending->timer.cancel();
  }
  // A write in flight still points into the outbox; write_loop drops it when it ends.
  if (!writing_) outbox_.clear();
  if (on_close_) std::exchange(on_close_, nullptr)();
}

awaitable<void> Connection::handshake_deadline() {
  auto self = shared_from_this();
  asio::steady_timer timer(executor(), options_.handshake_timeout);
  co_await timer.async_wait(use_awaitable_tuple);
  if (open_ && !handshake_done_) {
    spdlog::warn("closing connection from {}: no handshake within {} ms", peer_address_,
                 options_.handshake_timeout.count());
    close("handshake timeout");
  }
}

awaitable<void> Connection::read_loop() {
  auto self = shared_from_this();
  while (open_) {
    auto frame = co_await read_frame();
    if (!frame) {
      if (open_ && frame.error().code() != ErrorCode::kUnavailable) {
        spdlog::warn("closing connection from {} ({}): {}", peer_address_, peer_entity_,
                     frame.error().to_string());
      }
      close(frame.error().to_string());
      break;
    }
    dispatch(std::move(*frame));
  }
}

awaitable<Result<Frame>> Connection::read_frame() {
  EncodedHeader raw;
  auto [ec, n] = co_await asio::async_read(socket_, asio::buffer(raw), use_awaitable_tuple);
  if (ec) co_return make_error(ErrorCode::kUnavailable, "peer closed: " + ec.message());
  Frame frame;
  frame.header = DFS_CO_TRY(decode_header(raw, options_.limits));
  frame.body.resize(frame.header.body_bytes);
  frame.data.resize(frame.header.data_bytes);
  std::array<asio::mutable_buffer, 2> payload{asio::buffer(frame.body), asio::buffer(frame.data)};
  std::tie(ec, n) = co_await asio::async_read(socket_, payload, use_awaitable_tuple);
  if (ec) co_return make_error(ErrorCode::kProtocol, "truncated frame: " + ec.message());
  DFS_CO_TRY_STATUS(verify_payload(frame));
  co_return frame;
}

void Connection::dispatch(Frame frame) {
  if (!handshake_done_) {
    handle_hello(std::move(frame));
    return;
  }
  switch (frame.header.kind) {
    case FrameKind::kResponse:
      complete_call(std::move(frame));
      break;
    case FrameKind::kRequest:
      if (!server_side_ || !on_request_) {
        close("unexpected request from a server");
        break;
      }
      spawn_checked(executor(), serve_request(std::move(frame)));
      break;
    case FrameKind::kOneWay:
      if (on_push_) {
        on_push_(shared_from_this(), std::move(frame));
      } else if (on_request_) {
        spawn_checked(executor(), serve_request(std::move(frame)));
      }
      break;
  }
}

void Connection::handle_hello(Frame frame) {
  if (frame.header.kind != FrameKind::kRequest || frame.header.method != kHello) {
    spdlog::warn("closing connection from {}: first frame is not a handshake", peer_address_);
    close("no handshake");
    return;
  }
  auto hello = parse_body<proto::Hello>(frame.body);
  Result<std::string> accepted =
      hello ? options_.auth->verify(*hello) : Result<std::string>(hello.error());
  if (hello && hello->protocol_version() != kProtocolVersion) {
    accepted = make_error(ErrorCode::kVersionMismatch, "peer speaks protocol " +
                                                           std::to_string(hello->protocol_version()));
  }
  if (accepted) {
    PeerIdentity peer{hello->entity(), peer_address_, hello->fsid()};
    if (auto admitted = admit_peer(options_.cluster_fsid, peer); !admitted) {
      // Both ends say it in words: this end logs the refusal, the peer gets the reason.
      spdlog::warn("{}", refusal_line(peer, admitted.error()));
      respond(frame.header, Error(ErrorCode::kWrongCluster, options_.local_entity + " refused " +
                                                                peer.entity + ": " +
                                                                admitted.error().context()));
      close("peer of another cluster");
      return;
    }
  }
  if (!accepted) {
    spdlog::warn("rejecting connection from {}: {}", peer_address_, accepted.error().to_string());
    respond(frame.header, accepted.error());
    close("handshake rejected");
    return;
  }
  handshake_done_ = true;
  peer_entity_ = hello->entity();
  proto::HelloReply reply;
  reply.set_entity(options_.local_entity);
  reply.set_protocol_version(kProtocolVersion);
  reply.set_auth_payload(*accepted);
  reply.set_fsid(options_.cluster_fsid);
  respond(frame.header, make_reply(reply));
}

void Connection::complete_call(Frame frame) {
  auto it = pending_.find(frame.header.request_id);
  if (it == pending_.end()) return;  // the caller gave up (deadline) before the reply came
  auto& pending = it->second;
  if (frame.header.status != 0) {
    auto message = parse_body<proto::ErrorReply>(frame.body);
    pending->result = Error(static_cast<ErrorCode>(frame.header.status),
                            message ? message->message() : std::string());
  } else {
    pending->result = std::move(frame);
  }
  pending->timer.cancel();
}

awaitable<void> Connection::serve_request(Frame frame) {
  auto self = shared_from_this();
  FrameHeader header = frame.header;
  auto result = co_await on_request_(self, std::move(frame));
  if (header.kind == FrameKind::kRequest) respond(header, std::move(result));
}

void Connection::respond(const FrameHeader& request, Result<Reply> result) {
  Frame frame;
  frame.header.kind = FrameKind::kResponse;
  frame.header.method = request.method;
  frame.header.request_id = request.request_id;
  if (result) {
    frame.header.flags = result->flags;
    frame.body = std::move(result->body);
    frame.data = std::move(result->data);
  } else {
    frame.header.status = static_cast<int32_t>(result.error().code());
    proto::ErrorReply error;
    error.set_message(result.error().context());
    frame.body = error.SerializeAsString();
  }
  enqueue(std::move(frame));
}

void Connection::enqueue(Frame frame) {
  if (!open_) return;
  EncodedHeader header = encode_header(frame);
  outbox_.push_back(OutFrame{header, std::move(frame)});
  if (!writing_) {
    writing_ = true;
    spawn_checked(executor(), write_loop());
  }
}

awaitable<void> Connection::write_loop() {
  auto self = shared_from_this();
  // Gathers queued frames into one write so small requests share a syscall.
  constexpr size_t kMaxFramesPerWrite = 64;
  std::vector<asio::const_buffer> buffers;
  while (open_ && !outbox_.empty()) {
    size_t count = std::min(outbox_.size(), kMaxFramesPerWrite);
    buffers.clear();
    for (size_t i = 0; i < count; ++i) {
      OutFrame& out = outbox_[i];
      buffers.push_back(asio::buffer(out.header));
      if (!out.frame.body.empty()) buffers.push_back(asio::buffer(out.frame.body));
      if (!out.frame.data.empty()) buffers.push_back(asio::buffer(out.frame.data));
    }
    auto [ec, n] = co_await asio::async_write(socket_, buffers, use_awaitable_tuple);
    if (ec) {
      close("write failed: " + ec.message());
      break;
    }
    for (size_t i = 0; i < count && !outbox_.empty(); ++i) outbox_.pop_front();
  }
  writing_ = false;
  if (!open_) outbox_.clear();
}

Result<tcp::endpoint> parse_endpoint(const std::string& address) {
  auto split = DFS_TRY(split_host_port(address));
  std::string host = std::move(split.host);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  // Port 0 is valid for listening (the kernel picks one).
  const uint16_t port = split.port;
  boost::system::error_code ec;
  auto ip = asio::ip::make_address(host, ec);
  if (!ec) return tcp::endpoint(ip, static_cast<uint16_t>(port));
  asio::io_context resolver_context;
  tcp::resolver resolver(resolver_context);
  auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec || results.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "cannot resolve host '" + host + "'");
  }
  return results.begin()->endpoint();
}

}  // namespace dfs::rpc
