#include "tests/support/raw_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/proto/rpc.pb.h"
#include "common/rpc/methods.h"
#include "common/util/crc32c.h"

namespace dfs::test {

using SteadyClock = std::chrono::steady_clock;

Result<RawConnection> RawConnection::connect(const std::string& address) {
  auto colon = address.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  if (::inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr) != 1) {
    return make_error(ErrorCode::kInvalidArgument, "not an IPv4 address: " + address);
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return make_error(ErrorCode::kUnavailable, std::string("socket: ") + ::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    ::close(fd);
    return make_error(ErrorCode::kUnavailable, "connect " + address + ": " + ::strerror(err));
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return RawConnection(fd);
}

RawConnection::RawConnection(RawConnection&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

RawConnection& RawConnection::operator=(RawConnection&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawConnection::send(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void RawConnection::shutdown_write() { ::shutdown(fd_, SHUT_WR); }

bool RawConnection::closed_within(std::chrono::milliseconds timeout, std::string* received) {
  auto deadline = SteadyClock::now() + timeout;
  char buf[4096];
  for (;;) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return false;
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n == 0) return true;  // EOF
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return true;  // reset
    if (received) received->append(buf, static_cast<size_t>(n));
  }
}

Result<std::string> RawConnection::read_exactly(size_t n, SteadyClock::time_point deadline) {
  std::string out;
  out.reserve(n);
  char buf[65536];
  while (out.size() < n) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) return make_error(ErrorCode::kTimeout, "no frame in time");
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return make_error(ErrorCode::kTimeout, "no frame in time");
    ssize_t got = ::recv(fd_, buf, std::min(sizeof buf, n - out.size()), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return make_error(ErrorCode::kUnavailable, "connection closed by the peer");
    out.append(buf, static_cast<size_t>(got));
  }
  return out;
}

Result<rpc::Frame> RawConnection::read_frame(std::chrono::milliseconds timeout) {
  auto deadline = SteadyClock::now() + timeout;
  auto raw = DFS_TRY(read_exactly(rpc::kFrameHeaderBytes, deadline));
  rpc::EncodedHeader header;
  std::memcpy(header.data(), raw.data(), header.size());
  rpc::Frame frame;
  frame.header = DFS_TRY(rpc::decode_header(header, rpc::FrameLimits{}));
  frame.body = DFS_TRY(read_exactly(frame.header.body_bytes, deadline));
  frame.data = DFS_TRY(read_exactly(frame.header.data_bytes, deadline));
  DFS_TRY_STATUS(rpc::verify_payload(frame));
  return frame;
}

std::string encode_frame(rpc::Frame frame) {
  rpc::EncodedHeader header = rpc::encode_header(frame);
  std::string out(reinterpret_cast<const char*>(header.data()), header.size());
  return out + frame.body + frame.data;
}

rpc::Frame request_frame(uint32_t method, std::string body, uint64_t request_id, std::string data) {
  rpc::Frame frame;
  frame.header.kind = rpc::FrameKind::kRequest;
  frame.header.method = method;
  frame.header.request_id = request_id;
  frame.body = std::move(body);
  frame.data = std::move(data);
  return frame;
}

rpc::Frame hello_frame(const std::string& entity, uint64_t request_id) {
  proto::Hello hello;
  hello.set_entity(entity);
  hello.set_protocol_version(rpc::kProtocolVersion);
  hello.set_auth_method("none");
  return request_frame(rpc::kHello, hello.SerializeAsString(), request_id);
}

void reseal_header(std::string& bytes) {
  uint32_t crc = crc32c(0, bytes.data(), 36);
  for (int i = 0; i < 4; ++i) bytes[36 + i] = static_cast<char>(crc >> (8 * i));
}

}  // namespace dfs::test
