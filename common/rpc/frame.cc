#include "common/rpc/frame.h"

#include <cstring>

#include "common/util/crc32c.h"

namespace dfs::rpc {
namespace {

// Little-endian field access; the layout is fixed by FORMAT.md, not by struct packing.
template <class T>
void put(uint8_t* at, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) at[i] = static_cast<uint8_t>(uint64_t(value) >> (8 * i));
}

template <class T>
T get(const uint8_t* at) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t(at[i]) << (8 * i);
  return static_cast<T>(v);
}

uint32_t payload_crc_of(const Frame& frame) {
  uint32_t crc = crc32c(0, frame.body.data(), frame.body.size());
  return crc32c(crc, frame.data.data(), frame.data.size());
}

}  // namespace

EncodedHeader encode_header(Frame& frame) {
  FrameHeader& h = frame.header;
  h.body_bytes = static_cast<uint32_t>(frame.body.size());
  h.data_bytes = static_cast<uint32_t>(frame.data.size());
  h.payload_crc = payload_crc_of(frame);
  EncodedHeader out{};
  uint8_t* p = out.data();
  put<uint32_t>(p + 0, kFrameMagic);
  put<uint16_t>(p + 4, h.version);
  put<uint8_t>(p + 6, static_cast<uint8_t>(h.kind));
  put<uint8_t>(p + 7, h.flags);
  put<uint32_t>(p + 8, h.method);
  put<int32_t>(p + 12, h.status);
  put<uint64_t>(p + 16, h.request_id);
  put<uint32_t>(p + 24, h.body_bytes);
  put<uint32_t>(p + 28, h.data_bytes);
  put<uint32_t>(p + 32, h.payload_crc);
  put<uint32_t>(p + 36, crc32c(0, p, 36));
  return out;
}

Result<FrameHeader> decode_header(const EncodedHeader& bytes, const FrameLimits& limits) {
  const uint8_t* p = bytes.data();
  if (get<uint32_t>(p) != kFrameMagic) return make_error(ErrorCode::kProtocol, "bad frame magic");
  if (get<uint32_t>(p + 36) != crc32c(0, p, 36)) {
    return make_error(ErrorCode::kProtocol, "frame header checksum mismatch");
  }
  FrameHeader h;
  h.version = get<uint16_t>(p + 4);
  if (h.version != kProtocolVersion) {
    return make_error(ErrorCode::kVersionMismatch,
                      "peer speaks protocol " + std::to_string(h.version));
  }
  uint8_t kind = get<uint8_t>(p + 6);
  if (kind < 1 || kind > 3) return make_error(ErrorCode::kProtocol, "bad frame kind");
  h.kind = static_cast<FrameKind>(kind);
  h.flags = get<uint8_t>(p + 7);
  h.method = get<uint32_t>(p + 8);
  h.status = get<int32_t>(p + 12);
  h.request_id = get<uint64_t>(p + 16);
  h.body_bytes = get<uint32_t>(p + 24);
  h.data_bytes = get<uint32_t>(p + 28);
  h.payload_crc = get<uint32_t>(p + 32);
  if (h.body_bytes > limits.max_body_bytes) {
    return make_error(ErrorCode::kProtocol, "frame body of " + std::to_string(h.body_bytes) +
                                                " bytes exceeds the limit");
  }
  if (h.data_bytes > limits.max_data_bytes) {
    return make_error(ErrorCode::kProtocol, "frame data of " + std::to_string(h.data_bytes) +
                                                " bytes exceeds the limit");
  }
  return h;
}

Status verify_payload(const Frame& frame) {
  if (payload_crc_of(frame) != frame.header.payload_crc) {
    return make_error(ErrorCode::kProtocol, "frame payload checksum mismatch");
  }
  return ok_status();
}

}  // namespace dfs::rpc
