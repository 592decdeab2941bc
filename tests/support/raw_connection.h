// RawConnection: a plain blocking TCP socket for wire tests, which send hand-made
// (often deliberately broken) frames to a daemon and watch how it reacts. Every read
// takes a deadline. Not thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "common/rpc/frame.h"
#include "common/status/status.h"

namespace dfs::test {

class RawConnection {
 public:
  // Connects to "127.0.0.1:port". Errors: kUnavailable.
  static Result<RawConnection> connect(const std::string& address);
  RawConnection(RawConnection&& other) noexcept;
  RawConnection& operator=(RawConnection&& other) noexcept;
  ~RawConnection();

  // False when the peer has already gone away (EPIPE, ECONNRESET).
  bool send(const std::string& bytes);
  // Half-closes: the peer reads EOF, we can still read its answer.
  void shutdown_write();

  // True when the peer closes the connection (EOF or reset) within `timeout`;
  // anything it sends before that is appended to *received.
  bool closed_within(std::chrono::milliseconds timeout, std::string* received = nullptr);

  // Reads one frame within `timeout`. Errors: kTimeout, kUnavailable (closed),
  // kProtocol (what arrived is not a valid frame).
  Result<rpc::Frame> read_frame(std::chrono::milliseconds timeout);

 private:
  explicit RawConnection(int fd) : fd_(fd) {}
  // Reads exactly n bytes. Errors: kTimeout, kUnavailable.
  Result<std::string> read_exactly(size_t n, std::chrono::steady_clock::time_point deadline);

  int fd_ = -1;
};

// Encodes a whole frame (header, body, data) as bytes on the wire.
std::string encode_frame(rpc::Frame frame);

// A request frame for `method` with `body` and `data`.
rpc::Frame request_frame(uint32_t method, std::string body, uint64_t request_id,
                         std::string data = {});

// A valid Hello request announcing `entity` with auth method "none".
rpc::Frame hello_frame(const std::string& entity, uint64_t request_id = 1);

// Re-seals an encoded header after its bytes were edited: recomputes the header crc.
void reseal_header(std::string& frame_bytes);

}  // namespace dfs::test
