#include <doctest/doctest.h>

#include "common/rpc/frame.h"

namespace dfs::rpc {

TEST_CASE("common/rpc/frame: header round-trips") {
  Frame frame;
  frame.header.kind = FrameKind::kResponse;
  frame.header.method = 204;
  frame.header.status = 10;
  frame.header.request_id = 0x0123456789abcdefULL;
  frame.body = "body";
  frame.data = std::string(1000, 'x');
  EncodedHeader raw = encode_header(frame);
  auto decoded = decode_header(raw, FrameLimits{});
  REQUIRE(decoded);
  CHECK(decoded->kind == FrameKind::kResponse);
  CHECK(decoded->method == 204);
  CHECK(decoded->status == 10);
  CHECK(decoded->request_id == 0x0123456789abcdefULL);
  CHECK(decoded->body_bytes == 4);
  CHECK(decoded->data_bytes == 1000);
  Frame received{*decoded, frame.body, frame.data};
  CHECK(verify_payload(received));
}

TEST_CASE("common/rpc/frame: hostile headers are refused") {
  Frame frame;
  frame.body = "hello";
  EncodedHeader good = encode_header(frame);

  SUBCASE("bad magic") {
    EncodedHeader raw = good;
    raw[0] ^= 1;
    auto r = decode_header(raw, FrameLimits{});
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == ErrorCode::kProtocol);
  }
  SUBCASE("any flipped header bit fails the header checksum") {
    for (size_t byte = 4; byte < kFrameHeaderBytes; ++byte) {
      EncodedHeader raw = good;
      raw[byte] ^= 0x10;
      CHECK_FALSE(decode_header(raw, FrameLimits{}));
    }
  }
  SUBCASE("oversized body and data") {
    Frame big;
    big.body = std::string(100, 'b');
    big.data = std::string(100, 'd');
    EncodedHeader raw = encode_header(big);
    CHECK_FALSE(decode_header(raw, FrameLimits{.max_body_bytes = 99, .max_data_bytes = 1000}));
    CHECK_FALSE(decode_header(raw, FrameLimits{.max_body_bytes = 1000, .max_data_bytes = 99}));
    CHECK(decode_header(raw, FrameLimits{.max_body_bytes = 100, .max_data_bytes = 100}));
  }
  SUBCASE("corrupted payload") {
    auto header = decode_header(good, FrameLimits{});
    REQUIRE(header);
    Frame received{*header, "hellO", ""};
    auto v = verify_payload(received);
    REQUIRE_FALSE(v);
    CHECK(v.error().code() == ErrorCode::kProtocol);
  }
}

}  // namespace dfs::rpc
