// proto::wire_varint and proto::wire_message must answer what a parse of the whole
// message answers, without parsing it: randomized against the parse (seed printed),
// and the parse's rules for repeated and missing fields by hand.
#include "common/proto/wire_fields.h"

#include <doctest/doctest.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include <random>

#include "common/proto/mds.pb.h"

namespace dfs::proto {
namespace {

constexpr int kIno = WriteInlineRequest::kInoFieldNumber;
constexpr int kHeader = WriteInlineRequest::kHeaderFieldNumber;

MdsRequestHeader random_header(std::mt19937_64& rng) {
  MdsRequestHeader header;
  header.mutable_reqid()->set_client("client-" + std::to_string(rng() % 100));
  header.mutable_reqid()->set_seq(rng() % 1000);
  header.set_want_ino(rng() % 3 ? 0 : rng());
  return header;
}

// A request, sometimes followed by fields a sender may add: a field this build does not
// know, the header or the inode once more, or the inode with another wire type.
std::string random_request(std::mt19937_64& rng) {
  using google::protobuf::internal::WireFormatLite;
  WriteInlineRequest req;
  *req.mutable_header() = random_header(rng);
  if (rng() % 4) req.set_ino(rng() >> (rng() % 64));
  req.set_offset(rng() % 65536);
  req.set_data(std::string(rng() % 70000, static_cast<char>(rng())));
  std::string bytes = req.SerializeAsString();
  google::protobuf::io::StringOutputStream stream(&bytes);  // appends
  google::protobuf::io::CodedOutputStream out(&stream);
  for (int extra = rng() % 3; extra > 0; --extra) {
    switch (rng() % 5) {
      case 0:
        WireFormatLite::WriteBytes(15, std::string(rng() % 100, 'u'), &out);
        break;
      case 1:
        WireFormatLite::WriteUInt64(16, rng(), &out);
        break;
      case 2: {
        MdsRequestHeader more = random_header(rng);
        more.ByteSizeLong();  // WriteMessage writes the cached size
        WireFormatLite::WriteMessage(kHeader, more, &out);
        break;
      }
      case 3:
        WireFormatLite::WriteUInt64(kIno, rng(), &out);
        break;
      default:
        WireFormatLite::WriteFixed64(kIno, rng(), &out);
    }
  }
  out.Trim();
  return std::string(bytes);  // a copy: the streams still refer to `bytes` as they go
}

// Damages `bytes` the ways a bad frame can: cut short, a byte changed, bytes appended.
void damage(std::string& bytes, std::mt19937_64& rng) {
  switch (rng() % 3) {
    case 0:
      bytes.resize(rng() % (bytes.size() + 1));
      break;
    case 1:
      if (!bytes.empty()) {
        bytes[rng() % std::min<size_t>(bytes.size(), 64)] = static_cast<char>(rng());
      }
      break;
    default:
      bytes.push_back(static_cast<char>(rng()));
  }
}

TEST_CASE("proto/wire_fields: reads what a parse reads, on random and damaged requests") {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  google::protobuf::LogSilencer quiet;  // damaged strings: a log line per failed parse
  for (int i = 0; i < 2000; ++i) {
    std::string bytes = random_request(rng);
    if (i % 2) damage(bytes, rng);
    WriteInlineRequest parsed;
    const bool parses = parsed.ParseFromString(bytes);
    auto ino = wire_varint(bytes, kIno);
    MdsRequestHeader header;
    const bool header_read = wire_message(bytes, kHeader, header);
    if (parses) {
      REQUIRE(ino.has_value());
      CHECK(*ino == parsed.ino());
      REQUIRE(header_read);
      CHECK(header.SerializeAsString() == parsed.header().SerializeAsString());
    }
    // What the scan refuses, the parse refuses too (not the other way round: the scan
    // does not look inside the fields it skips).
    if (!ino) CHECK_FALSE(parses);
    if (!header_read) CHECK_FALSE(parses);
  }
}

TEST_CASE("proto/wire_fields: a missing or repeated field reads as in a parse") {
  using google::protobuf::internal::WireFormatLite;
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    MdsRequestHeader first, second;
    first.mutable_reqid()->set_client("a");
    second.mutable_reqid()->set_seq(7);
    first.ByteSizeLong();  // WriteMessage writes the cached sizes
    second.ByteSizeLong();
    WireFormatLite::WriteMessage(kHeader, first, &out);
    WireFormatLite::WriteUInt64(kIno, 5, &out);
    WireFormatLite::WriteMessage(kHeader, second, &out);
    WireFormatLite::WriteUInt64(kIno, 9, &out);
  }
  WriteInlineRequest parsed;
  REQUIRE(parsed.ParseFromString(bytes));
  CHECK(wire_varint(bytes, kIno) == parsed.ino());
  CHECK(wire_varint(bytes, WriteInlineRequest::kOffsetFieldNumber) == 0);
  MdsRequestHeader header;
  REQUIRE(wire_message(bytes, kHeader, header));
  CHECK(header.reqid().client() == "a");  // occurrences merge
  CHECK(header.reqid().seq() == 7);
  CHECK(header.SerializeAsString() == parsed.header().SerializeAsString());
  CHECK(wire_varint(std::string("\x10"), kIno) == std::nullopt);  // a tag without a value
  // The inode's number with another wire type is not the field.
  std::string mistyped;
  {
    google::protobuf::io::StringOutputStream stream(&mistyped);
    google::protobuf::io::CodedOutputStream out(&stream);
    WireFormatLite::WriteFixed64(kIno, 11, &out);
  }
  CHECK(wire_varint(mistyped, kIno) == 0);
}

}  // namespace
}  // namespace dfs::proto
