// Wire framing: a fixed 40-byte header (magic, version, kind, method, status, request
// id, lengths, payload crc32c, header crc32c), a Protobuf body and a raw data segment.
// Pure functions; every decoder treats its input as hostile. See common/rpc/FORMAT.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/status/status.h"

namespace dfs::rpc {

constexpr uint32_t kFrameMagic = 0x31534644;  // "DFS1" little-endian
constexpr uint16_t kProtocolVersion = 1;
constexpr size_t kFrameHeaderBytes = 40;

enum class FrameKind : uint8_t { kRequest = 1, kResponse = 2, kOneWay = 3 };

// FrameHeader::flags (FORMAT.md). A request's: the caller keeps the request until it
// learns its effect is durable and resends it after a failover, so the server may
// answer early. A response's: it was answered before that.
constexpr uint8_t kFlagMayReplyEarly = 0x01;
constexpr uint8_t kFlagRepliedEarly = 0x01;
// A request's: sent again to a new server after an earlier one answered it early.
constexpr uint8_t kFlagResent = 0x02;

struct FrameLimits {
  uint32_t max_body_bytes = 4u << 20;
  uint32_t max_data_bytes = 64u << 20;
};

struct FrameHeader {
  uint16_t version = kProtocolVersion;
  FrameKind kind = FrameKind::kRequest;
  uint8_t flags = 0;
  uint32_t method = 0;
  int32_t status = 0;  // ErrorCode of a response; 0 otherwise
  uint64_t request_id = 0;
  uint32_t body_bytes = 0;
  uint32_t data_bytes = 0;
  uint32_t payload_crc = 0;  // crc32c of body then data
};

struct Frame {
  FrameHeader header;
  std::string body;  // serialized Protobuf message
  std::string data;  // raw bytes (object data is never copied through Protobuf)
};

using EncodedHeader = std::array<uint8_t, kFrameHeaderBytes>;

// Fills in lengths and payload crc from `frame` and encodes the header.
EncodedHeader encode_header(Frame& frame);

// Validates magic, header crc, version, kind and lengths against `limits`.
// Errors: kProtocol (with what was wrong), kVersionMismatch.
Result<FrameHeader> decode_header(const EncodedHeader& bytes, const FrameLimits& limits);

// Errors: kProtocol when the payload's crc32c does not match the header.
Status verify_payload(const Frame& frame);

}  // namespace dfs::rpc
