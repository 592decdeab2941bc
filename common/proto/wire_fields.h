// Reads single top-level fields of a serialized message without parsing the rest.
// Parsing a whole request to learn its inode number, or its header through a message
// that knows only field 1, copies every other field (an inline write's data, into the
// unknown fields), and the MDS asks such things of each request several times before
// its handler parses it once for good. Here the other fields are skipped in place.
// Same answers as a parse: a missing scalar reads 0, the last occurrence of a scalar
// wins, occurrences of a message field merge, and a field with an unexpected wire type
// is not that field.
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <cstdint>
#include <optional>
#include <string_view>

namespace dfs::proto {

using WireType = google::protobuf::internal::WireFormatLite::WireType;

// Calls visit(payload) for each occurrence of top-level field `field` with wire type
// `type`, in order: for a length-delimited field its bytes (a view into `message`), for
// a varint its value as visit_varint(value). Returns false when `message` is not
// well-formed (nothing is guaranteed about the calls made before that was found).
template <class OnBytes, class OnVarint>
bool scan_wire_field(std::string_view message, int field, WireType type, OnBytes&& on_bytes,
                     OnVarint&& on_varint) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(message.data()),
                                            static_cast<int>(message.size()));
  while (uint32_t tag = in.ReadTag()) {
    const bool wanted = WireFormatLite::GetTagFieldNumber(tag) == field &&
                        WireFormatLite::GetTagWireType(tag) == type;
    if (wanted && type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) return false;
      const int at = in.CurrentPosition();
      if (!in.Skip(static_cast<int>(length))) return false;
      on_bytes(message.substr(static_cast<size_t>(at), length));
    } else if (wanted && type == WireFormatLite::WIRETYPE_VARINT) {
      uint64_t value = 0;
      if (!in.ReadVarint64(&value)) return false;
      on_varint(value);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  // ReadTag answers 0 at the end and on a malformed tag; only the end is well-formed.
  return in.ConsumedEntireMessage() && in.CurrentPosition() == static_cast<int>(message.size());
}

// A varint field (uint64, uint32, bool, enum) of `message`: 0 when absent, nullopt when
// `message` is malformed.
inline std::optional<uint64_t> wire_varint(std::string_view message, int field) {
  uint64_t value = 0;
  bool ok = scan_wire_field(
      message, field, google::protobuf::internal::WireFormatLite::WIRETYPE_VARINT,
      [](std::string_view) {}, [&](uint64_t v) { value = v; });
  if (!ok) return std::nullopt;
  return value;
}

// A message field of `message` parsed into `out` (left as it is when absent). False
// when `message` or the field is malformed.
template <class Message>
bool wire_message(std::string_view message, int field, Message& out) {
  bool field_ok = true;
  bool ok = scan_wire_field(
      message, field, google::protobuf::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED,
      [&](std::string_view bytes) {
        google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                  static_cast<int>(bytes.size()));
        field_ok = field_ok && out.MergeFromCodedStream(&in) && in.ConsumedEntireMessage();
      },
      [](uint64_t) {});
  return ok && field_ok;
}

}  // namespace dfs::proto
