#include <doctest/doctest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "common/proto/rpc.pb.h"
#include "common/rpc/cluster_identity.h"
#include "common/rpc/messenger.h"
#include "common/rpc/server.h"

namespace dfs::rpc {
namespace {

constexpr uint32_t kEcho = 9000;
constexpr uint32_t kFail = 9001;
constexpr uint32_t kSlow = 9002;
constexpr uint32_t kPushMe = 9003;

// Who each end of a Loopback is: entity names and the clusters they name.
struct Ends {
  std::string server_fsid;
  std::string client_entity = "test.client";
  std::string client_fsid;
};

ConnectionOptions options_of(std::string entity, std::string fsid) {
  ConnectionOptions options{std::move(entity), make_none_authenticator()};
  options.cluster_fsid = std::move(fsid);
  return options;
}

// A server and a messenger on one io_context; tests drive it with run_until().
struct Loopback {
  asio::io_context io;
  RpcServer server;
  std::vector<Frame> pushes;
  Messenger messenger;
  std::string address;

  explicit Loopback(const Ends& ends = {})
      : server(io.get_executor(), options_of("test.server", ends.server_fsid)),
        messenger(io.get_executor(),
                  MessengerOptions{options_of(ends.client_entity, ends.client_fsid)},
                  [this](ConnectionPtr, Frame f) { pushes.push_back(std::move(f)); }) {
    server.handle(kEcho, [](ConnectionPtr, Frame f) -> awaitable<Result<Reply>> {
      co_return Reply{f.body, f.data};
    });
    server.handle(kFail, [](ConnectionPtr, Frame) -> awaitable<Result<Reply>> {
      co_return make_error(ErrorCode::kNoSpace, "disk full on purpose");
    });
    server.handle(kSlow, [](ConnectionPtr, Frame) -> awaitable<Result<Reply>> {
      co_await sleep_for(Duration(300));
      co_return Reply{};
    });
    server.handle(kPushMe, [](ConnectionPtr c, Frame f) -> awaitable<Result<Reply>> {
      c->send(kPushMe, f.body);
      co_return Reply{};
    });
    address = *server.listen("127.0.0.1:0");
  }

  template <class T>
  T run(awaitable<T> task) {
    auto future = asio::co_spawn(io, std::move(task), asio::use_future);
    io.restart();
    while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
    return future.get();
  }
};

}  // namespace

TEST_CASE("common/rpc: request and reply carry body and data") {
  Loopback lb;
  std::string data(3 << 20, 'd');
  data[12345] = 'x';
  auto reply = lb.run(lb.messenger.call(lb.address, kEcho, "body", data, Duration(5000)));
  REQUIRE(reply);
  CHECK(reply->body == "body");
  CHECK(reply->data == data);
}

TEST_CASE("common/rpc: errors travel with code and message") {
  Loopback lb;
  auto reply = lb.run(lb.messenger.call(lb.address, kFail, "", "", Duration(5000)));
  REQUIRE_FALSE(reply);
  CHECK(reply.error().code() == ErrorCode::kNoSpace);
  CHECK(reply.error().context() == "disk full on purpose");
  auto unknown = lb.run(lb.messenger.call(lb.address, 4242, "", "", Duration(5000)));
  CHECK(unknown.error().code() == ErrorCode::kUnknownMethod);
}

TEST_CASE("common/rpc: a deadline fails the call, not the connection") {
  Loopback lb;
  auto slow = lb.run(lb.messenger.call(lb.address, kSlow, "", "", Duration(50)));
  REQUIRE_FALSE(slow);
  CHECK(slow.error().code() == ErrorCode::kTimeout);
  auto next = lb.run(lb.messenger.call(lb.address, kEcho, "again", "", Duration(5000)));
  REQUIRE(next);
  CHECK(next->body == "again");
}

TEST_CASE("common/rpc: many concurrent calls share one connection") {
  Loopback lb;
  auto all = lb.run([](Loopback* l) -> awaitable<bool> {
    std::vector<awaitable<Result<Frame>>> calls;
    for (int i = 0; i < 200; ++i) {
      calls.push_back(l->messenger.call(l->address, kEcho, std::to_string(i), "", Duration(5000)));
    }
    auto results = co_await gather(std::move(calls));
    for (int i = 0; i < 200; ++i) {
      if (!results[i] || results[i]->body != std::to_string(i)) co_return false;
    }
    co_return true;
  }(&lb));
  CHECK(all);
  CHECK(lb.server.connection_count() == 1);
}

TEST_CASE("common/rpc: refused connections are reported as such, then retried with backoff") {
  asio::io_context io;
  Messenger messenger(io.get_executor(),
                      MessengerOptions{ConnectionOptions{"c", make_none_authenticator()}});
  // Find a port nobody listens on.
  tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::string address = "127.0.0.1:" + std::to_string(probe.local_endpoint().port());
  probe.close();
  auto future = asio::co_spawn(io, messenger.call(address, kEcho, "", "", Duration(1000)), asio::use_future);
  io.run();
  auto result = future.get();
  REQUIRE_FALSE(result);
  CHECK((result.error().code() == ErrorCode::kConnectionRefused ||
         result.error().code() == ErrorCode::kUnavailable));
}

TEST_CASE("common/rpc: a bad frame closes only its own connection") {
  Loopback lb;
  REQUIRE(lb.run(lb.messenger.call(lb.address, kEcho, "x", "", Duration(5000))));
  auto endpoint = *parse_endpoint(lb.address);
  tcp::socket raw(lb.io);
  raw.connect(endpoint);
  std::string garbage(64, '\xAB');
  asio::write(raw, asio::buffer(garbage));
  // The server reads the garbage, closes the raw connection, and keeps serving ours.
  auto reply = lb.run(lb.messenger.call(lb.address, kEcho, "still here", "", Duration(5000)));
  REQUIRE(reply);
  CHECK(reply->body == "still here");
  lb.run([](tcp::socket* s) -> awaitable<bool> {
    char byte;
    auto [ec, n] = co_await s->async_read_some(asio::buffer(&byte, 1), use_awaitable_tuple);
    co_return ec == asio::error::eof || ec == asio::error::connection_reset;
  }(&raw));
  CHECK(lb.server.connection_count() == 1);
}

TEST_CASE("common/rpc: servers push one-way frames to clients") {
  Loopback lb;
  REQUIRE(lb.run(lb.messenger.call(lb.address, kPushMe, "news", "", Duration(5000))));
  lb.run([](Loopback* l) -> awaitable<int> {
    for (int i = 0; i < 100 && l->pushes.empty(); ++i) co_await sleep_for(Duration(10));
    co_return 0;
  }(&lb));
  REQUIRE(lb.pushes.size() == 1);
  CHECK(lb.pushes[0].body == "news");
}

namespace {

// Keeps what the default logger writes while it lives.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64)) {
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~LogCapture() { spdlog::default_logger()->sinks().pop_back(); }
  std::string text() const {
    std::string out;
    for (const auto& line : sink_->last_formatted()) out += line;
    return out;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

}  // namespace

TEST_CASE("common/rpc: who may talk to a member of a cluster (admit_peer)") {
  CHECK(admit_peer("A", {"osd.3", "h:1", "A"}));
  CHECK(admit_peer("", {"osd.3", "h:1", "B"}));  // an end with no config checks nothing
  CHECK(admit_peer("A", {"client.admin.7", "h:1", ""}));  // a client without a config
  auto stranger = admit_peer("A", {"osd.3", "127.0.0.1:20010", "B"});
  REQUIRE_FALSE(stranger);
  CHECK(stranger.error().code() == ErrorCode::kWrongCluster);
  CHECK(refusal_line({"osd.3", "127.0.0.1:20010", "B"}, stranger.error()) ==
        "refused osd.3 at 127.0.0.1:20010: it belongs to cluster B, this is cluster A");
  CHECK(admit_peer("A", {"client.admin.7", "h:1", "B"}).error().code() ==
        ErrorCode::kWrongCluster);
  for (const char* daemon : {"mon.b", "osd.0", "mds.a"}) {
    auto silent = admit_peer("A", {daemon, "h:1", ""});
    REQUIRE_FALSE(silent);
    CHECK(silent.error().code() == ErrorCode::kWrongCluster);
    CHECK(silent.error().context().find("names no cluster fsid") != std::string::npos);
  }
}

TEST_CASE("common/rpc: which servers a member of a cluster accepts (check_server)") {
  CHECK(check_server("A", {"mon.a", "h:1", "A"}));
  CHECK(check_server("", {"mon.a", "h:1", "B"}));
  auto other = check_server("A", {"mon.a", "127.0.0.1:20000", "B"});
  REQUIRE_FALSE(other);
  CHECK(other.error().code() == ErrorCode::kWrongCluster);
  CHECK(other.error().context() ==
        "mon.a at 127.0.0.1:20000 belongs to cluster B, we belong to cluster A");
  CHECK(check_server("A", {"mon.a", "h:1", ""}).error().code() == ErrorCode::kWrongCluster);
}

TEST_CASE("common/rpc: the handshake refuses a peer of another cluster, in words, both ends") {
  LogCapture log;
  Loopback lb(Ends{.server_fsid = "fsid-a", .client_entity = "osd.3", .client_fsid = "fsid-b"});
  auto reply = lb.run(lb.messenger.call(lb.address, kEcho, "x", "", Duration(5000)));
  REQUIRE_FALSE(reply);
  CHECK(reply.error().code() == ErrorCode::kWrongCluster);
  CHECK_MESSAGE(reply.error().context().find(
                    "test.server refused osd.3: it belongs to cluster fsid-b, this is cluster "
                    "fsid-a") != std::string::npos,
                reply.error().to_string());
  CHECK_MESSAGE(log.text().find("refused osd.3 at 127.0.0.1:") != std::string::npos, log.text());
  CHECK_MESSAGE(log.text().find(": it belongs to cluster fsid-b, this is cluster fsid-a") !=
                    std::string::npos,
                log.text());
  CHECK(is_retryable(reply.error().code()) == false);
}

TEST_CASE("common/rpc: the handshake refuses a daemon that names no cluster") {
  Loopback lb(Ends{.server_fsid = "fsid-a", .client_entity = "osd.3", .client_fsid = ""});
  auto reply = lb.run(lb.messenger.call(lb.address, kEcho, "x", "", Duration(5000)));
  REQUIRE_FALSE(reply);
  CHECK(reply.error().code() == ErrorCode::kWrongCluster);
  CHECK(reply.error().context().find("names no cluster fsid") != std::string::npos);
}

TEST_CASE("common/rpc: members of one cluster, and clients without a config, are served") {
  Loopback same(Ends{.server_fsid = "fsid-a", .client_entity = "osd.3", .client_fsid = "fsid-a"});
  CHECK(same.run(same.messenger.call(same.address, kEcho, "x", "", Duration(5000))));
  Loopback anonymous(Ends{.server_fsid = "fsid-a", .client_entity = "client.admin.1"});
  CHECK(anonymous.run(anonymous.messenger.call(anonymous.address, kEcho, "x", "", Duration(5000))));
}

TEST_CASE("common/rpc: a client refuses a server that names no cluster") {
  // A server that names none accepts everyone (an older version): the client's own check
  // is what stops it talking to a stranger.
  Loopback lb(Ends{.server_fsid = "", .client_entity = "client.admin.1", .client_fsid = "fsid-a"});
  auto reply = lb.run(lb.messenger.call(lb.address, kEcho, "x", "", Duration(5000)));
  REQUIRE_FALSE(reply);
  CHECK(reply.error().code() == ErrorCode::kWrongCluster);
  CHECK_MESSAGE(reply.error().context().find("test.server at 127.0.0.1:") != std::string::npos,
                reply.error().to_string());
  CHECK(reply.error().context().find("names no cluster fsid") != std::string::npos);
}

TEST_CASE("common/rpc: a client of another cluster is refused by the server") {
  Loopback lb(Ends{.server_fsid = "fsid-b", .client_entity = "client.admin.1",
                   .client_fsid = "fsid-a"});
  auto reply = lb.run(lb.messenger.call(lb.address, kEcho, "x", "", Duration(5000)));
  REQUIRE_FALSE(reply);
  CHECK(reply.error().code() == ErrorCode::kWrongCluster);
  CHECK(reply.error().context().find("test.server refused client.admin.1: it belongs to "
                                     "cluster fsid-a, this is cluster fsid-b") != std::string::npos);
}

}  // namespace dfs::rpc
