// Hostile bytes on the wire: against a real dfs-osd and dfs-mon, raw TCP connections
// send broken frames (garbage, truncation, bad checksums, oversized lengths, bad
// protobuf, requests before the handshake). Each must cost only its own connection:
// closed, or answered with an error; the daemon stays up and serves everyone else.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>

#include "common/proto/osd.pb.h"
#include "common/proto/rpc.pb.h"
#include "common/rpc/methods.h"
#include "tests/support/object_checks.h"
#include "tests/support/raw_connection.h"
#include "tests/support/test_cluster.h"
#include "tests/support/test_data.h"

namespace dfs::test {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kCloseTimeout{5000};
// Not a protobuf message: field 1, length-delimited, claiming 4 GiB of content.
const std::string kMalformedBody("\x0a\xff\xff\xff\xff\x0f", 6);

struct Target {
  std::string name;  // "osd.0", "mon.a"
  std::string addr;
  std::vector<uint32_t> body_methods;  // methods that parse a request body
  uint32_t probe_method;               // answers an empty body with success
};

// Sets a little-endian field of an encoded frame and re-seals the header crc.
void patch_header(std::string& bytes, size_t offset, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i) bytes[offset + i] = static_cast<char>(value >> (8 * i));
  reseal_header(bytes);
}

std::string hello_bytes() { return encode_frame(hello_frame("client.wiretest")); }

// Connects and completes the handshake. REQUIREs success.
RawConnection handshaken(const Target& target) {
  auto conn = RawConnection::connect(target.addr);
  DFS_REQUIRE_OK(conn);
  REQUIRE(conn->send(hello_bytes()));
  auto reply = conn->read_frame(milliseconds(5000));
  DFS_REQUIRE_OK(reply);
  REQUIRE(reply->header.status == 0);
  return std::move(*conn);
}

void expect_closed(RawConnection& conn) {
  std::string received;
  CHECK_MESSAGE(conn.closed_within(kCloseTimeout, &received),
                "connection still open after " << kCloseTimeout.count() << " ms");
}

// An error response with `code`, then the connection closed.
void expect_error_then_closed(RawConnection& conn, ErrorCode code) {
  auto reply = conn.read_frame(kCloseTimeout);
  DFS_CHECK_OK(reply);
  if (reply) {
    CHECK(reply->header.kind == rpc::FrameKind::kResponse);
    CHECK(reply->header.status == static_cast<int32_t>(code));
  }
  expect_closed(conn);
}

// One request on an established connection; returns the response's status.
int32_t exchange(RawConnection& conn, rpc::Frame request) {
  REQUIRE(conn.send(encode_frame(std::move(request))));
  auto reply = conn.read_frame(milliseconds(10000));
  DFS_REQUIRE_OK(reply);
  REQUIRE(reply->header.kind == rpc::FrameKind::kResponse);
  return reply->header.status;
}

struct WireCase {
  const char* name;
  std::function<void(const Target&)> run;
};

std::vector<WireCase> wire_cases() {
  auto fresh = [](const Target& t) {
    auto conn = RawConnection::connect(t.addr);
    DFS_REQUIRE_OK(conn);
    return std::move(*conn);
  };
  return {
      {"garbage bytes",
       [=](const Target& t) {
         auto conn = fresh(t);
         conn.send(object_bytes(42, 64));
         expect_closed(conn);
       }},
      {"truncated header, then close",
       [=](const Target& t) {
         auto conn = fresh(t);
         conn.send(hello_bytes().substr(0, 20));
         conn.shutdown_write();
         expect_closed(conn);
       }},
      {"valid magic, wrong header crc",
       [=](const Target& t) {
         auto conn = fresh(t);
         std::string bytes = hello_bytes();
         bytes[37] ^= 0x5a;
         conn.send(bytes);
         expect_closed(conn);
       }},
      {"header claiming a 1 GiB body",
       [=](const Target& t) {
         auto conn = fresh(t);
         std::string bytes = hello_bytes();
         patch_header(bytes, 24, 1u << 30, 4);
         conn.send(bytes);
         expect_closed(conn);
       }},
      {"header claiming 1 GiB of data",
       [=](const Target& t) {
         auto conn = fresh(t);
         std::string bytes = hello_bytes();
         patch_header(bytes, 28, 1u << 30, 4);
         conn.send(bytes);
         expect_closed(conn);
       }},
      {"unknown protocol version",
       [=](const Target& t) {
         auto conn = fresh(t);
         std::string bytes = hello_bytes();
         patch_header(bytes, 4, 7, 2);
         conn.send(bytes);
         expect_closed(conn);
       }},
      {"unknown frame kind",
       [=](const Target& t) {
         auto conn = fresh(t);
         std::string bytes = hello_bytes();
         patch_header(bytes, 6, 9, 1);
         conn.send(bytes);
         expect_closed(conn);
       }},
      {"correct header, wrong payload crc",
       [=](const Target& t) {
         auto conn = fresh(t);
         std::string bytes = hello_bytes();
         bytes[rpc::kFrameHeaderBytes + 2] ^= 0x01;  // inside the Hello body
         conn.send(bytes);
         expect_closed(conn);
       }},
      {"request before any handshake",
       [=](const Target& t) {
         auto conn = fresh(t);
         conn.send(encode_frame(request_frame(t.probe_method, {}, 1)));
         expect_closed(conn);
       }},
      {"Hello with a malformed body",
       [=](const Target& t) {
         auto conn = fresh(t);
         conn.send(encode_frame(request_frame(rpc::kHello, kMalformedBody, 1)));
         expect_error_then_closed(conn, ErrorCode::kProtocol);
       }},
      {"Hello with an unknown auth method",
       [=](const Target& t) {
         auto conn = fresh(t);
         rpc::Frame hello = hello_frame("client.wiretest");
         proto::Hello body;
         REQUIRE(body.ParseFromString(hello.body));
         body.set_auth_method("rot13");
         hello.body = body.SerializeAsString();
         conn.send(encode_frame(std::move(hello)));
         expect_error_then_closed(conn, ErrorCode::kAuthFailed);
       }},
      {"handshake, then a frame cut short",
       [=](const Target& t) {
         auto conn = handshaken(t);
         std::string bytes = encode_frame(request_frame(t.probe_method, std::string(100, 'x'), 2));
         conn.send(bytes.substr(0, rpc::kFrameHeaderBytes + 10));
         conn.shutdown_write();
         expect_closed(conn);
       }},
      {"handshake, then malformed protobuf in every method",
       [=](const Target& t) {
         auto conn = handshaken(t);
         uint64_t id = 2;
         for (uint32_t method : t.body_methods) {
           INFO("method " << method);
           CHECK(exchange(conn, request_frame(method, kMalformedBody, id++)) ==
                 static_cast<int32_t>(ErrorCode::kProtocol));
         }
         // The connection itself is still good.
         CHECK(exchange(conn, request_frame(t.probe_method, {}, id++)) == 0);
       }},
      {"handshake, then an unknown method",
       [=](const Target& t) {
         auto conn = handshaken(t);
         CHECK(exchange(conn, request_frame(9999, {}, 2)) ==
               static_cast<int32_t>(ErrorCode::kUnknownMethod));
         CHECK(exchange(conn, request_frame(t.probe_method, {}, 3)) == 0);
       }},
      {"handshake, then a stray response",
       [=](const Target& t) {
         auto conn = handshaken(t);
         rpc::Frame stray = request_frame(t.probe_method, {}, 777);
         stray.header.kind = rpc::FrameKind::kResponse;
         conn.send(encode_frame(std::move(stray)));
         CHECK(exchange(conn, request_frame(t.probe_method, {}, 2)) == 0);
       }},
  };
}

// Well-framed requests whose content is out of range. Each gets an error status.
std::vector<std::pair<const char*, rpc::Frame>> invalid_osd_requests(const ClusterMap& map,
                                                                     const proto::Pool& pool,
                                                                     int32_t osd) {
  // An object whose primary is `osd`, so that requests reach the store.
  std::string name;
  for (int i = 0; name.empty(); ++i) {
    std::string candidate = "hostile-" + std::to_string(i);
    if (map.acting(pool, ClusterMap::pg_of(pool, candidate)).front() == osd) name = candidate;
  }
  auto write = [&](auto edit) {
    proto::WriteRequest w;
    w.mutable_object()->set_pool(static_cast<uint32_t>(pool.id()));
    w.mutable_object()->set_pg(ClusterMap::pg_of(pool, name));
    w.mutable_object()->set_name(name);
    w.set_kind(proto::OP_WRITE);
    w.mutable_reqid()->set_client("client.wiretest");
    w.mutable_reqid()->set_seq(1);
    w.set_epoch(map.epoch());
    edit(w);
    return request_frame(rpc::kOsdWrite, w.SerializeAsString(), 2, "data");
  };
  auto read = [&](auto edit) {
    proto::ReadRequest r;
    r.mutable_object()->set_pool(static_cast<uint32_t>(pool.id()));
    r.mutable_object()->set_pg(ClusterMap::pg_of(pool, name));
    r.mutable_object()->set_name(name);
    r.set_epoch(map.epoch());
    edit(r);
    return request_frame(rpc::kOsdRead, r.SerializeAsString(), 2);
  };
  return {
      {"write to the wrong pg",
       write([](auto& w) { w.mutable_object()->set_pg(w.object().pg() + 1); })},
      {"write of an unknown op kind",
       write([](auto& w) { w.set_kind(static_cast<proto::OpKind>(77)); })},
      {"write at offset 2^62", write([](auto& w) { w.set_offset(uint64_t{1} << 62); })},
      {"write without a request id", write([](auto& w) { w.clear_reqid(); })},
      {"truncate to 1 TiB", write([](auto& w) {
         w.set_kind(proto::OP_TRUNCATE);
         w.set_offset(uint64_t{1} << 40);
       })},
      {"read of a 5000-byte name",
       read([](auto& r) { r.mutable_object()->set_name(std::string(5000, 'n')); })},
      {"read from pool 999", read([](auto& r) { r.mutable_object()->set_pool(999); })},
      {"read of a missing object", read([](auto&) {})},
  };
}

}  // namespace

TEST_SUITE_BEGIN("integration");

TEST_CASE("integration/wire: malformed frames are refused without harm") {
  TestCluster cluster;
  INFO("cluster dir " << cluster.dir());
  DFS_REQUIRE_OK(cluster.boot());
  DFS_REQUIRE_OK(cluster.create_pool("data", 3, 2, 8));
  auto client = cluster.client(Duration(20000));
  DFS_REQUIRE_OK(client);
  auto& c = **client;
  const std::string probe_data = object_bytes(7, 10000);
  DFS_REQUIRE_OK(c.run(c.write_full("data", "probe", probe_data)));

  std::vector<Target> targets = {
      {"osd.0",
       cluster.osd_addr(0),
       {rpc::kOsdWrite, rpc::kOsdRead, rpc::kOsdStat, rpc::kOsdList, rpc::kOsdRepWrite,
        rpc::kOsdPush, rpc::kOsdPgActivate, rpc::kOsdPgScrub},
       rpc::kOsdStatFs},
      {"mon.a",
       cluster.mon_addr(),
       {rpc::kMonSubscribe, rpc::kMonCommand, rpc::kMonOsdBeacon, rpc::kMonFailureReport},
       rpc::kMonGetMap},
  };
  // Connections that never say anything: closed by the handshake deadline.
  std::vector<RawConnection> idle;
  for (const auto& t : targets) {
    auto conn = RawConnection::connect(t.addr);
    DFS_REQUIRE_OK(conn);
    idle.push_back(std::move(*conn));
  }
  auto idle_since = std::chrono::steady_clock::now();

  for (const auto& target : targets) {
    for (const auto& wire_case : wire_cases()) {
      INFO(target.name << ": " << wire_case.name);
      wire_case.run(target);
      REQUIRE_MESSAGE(cluster.is_running(target.name),
                      target.name << " " << cluster.exit_status_of(target.name));
      // The client's own, older connections are unaffected.
      if (target.name == "mon.a") {
        DFS_CHECK_OK(c.run(c.mon_status()));
      } else {
        DFS_CHECK_OK(c.run(c.osd_statfs(0)));
        auto copy = c.run(c.read_from_osd("data", "probe", 0));
        DFS_CHECK_OK(copy);
        if (copy) CHECK(*copy == probe_data);
      }
    }
  }

  // Well-framed but out-of-range requests are answered with errors.
  {
    ClusterMap map = c.map_snapshot();
    const proto::Pool* pool = map.pool_by_name("data");
    REQUIRE(pool != nullptr);
    auto conn = handshaken(targets[0]);
    for (auto& [what, frame] : invalid_osd_requests(map, *pool, 0)) {
      INFO("osd.0: " << what);
      CHECK(exchange(conn, std::move(frame)) != 0);
    }
    CHECK(exchange(conn, request_frame(rpc::kOsdStatFs, {}, 3)) == 0);
    REQUIRE(cluster.is_running("osd.0"));
  }

  for (auto& conn : idle) {
    CHECK_MESSAGE(conn.closed_within(milliseconds(8000)),
                  "an idle connection without a handshake is still open after "
                      << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() -
                                                                  idle_since)
                             .count()
                      << " ms");
  }

  // New clients are served normally.
  auto fresh = cluster.client(Duration(20000));
  DFS_REQUIRE_OK(fresh);
  auto& f = **fresh;
  DFS_CHECK_OK(f.run(f.write_full("data", "after-wire", probe_data)));
  auto read = f.run(f.read("data", "after-wire", 0, 0));
  DFS_CHECK_OK(read);
  if (read) CHECK(*read == probe_data);
  DFS_CHECK_OK(f.run(f.mon_status()));
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_SUITE_END();

}  // namespace dfs::test
