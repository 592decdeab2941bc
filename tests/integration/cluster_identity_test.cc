// Clusters cannot be mixed up, against real daemons. A member of another cluster (its
// fsid) is refused at the handshake by monitors and OSDs, each saying so in its log; the
// monitor leader refuses a map command whose message names another cluster even when
// the connection named none (a forwarded request passes only a follower's handshake);
// a client of another cluster cannot connect; and a monitor or an OSD whose store was
// made for another cluster does not start.
#include <doctest/doctest.h>

#include <fstream>
#include <future>
#include <regex>
#include <thread>

#include "common/proto/mon.pb.h"
#include "common/proto/osd.pb.h"
#include "common/rpc/messenger.h"
#include "common/rpc/methods.h"
#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace dfs::test {
namespace {

using std::chrono::milliseconds;

constexpr char kOtherFsid[] = "another-cluster";

// A process of its own on the wire: entity and fsid as given, one request at a time.
class Peer {
 public:
  Peer(const std::string& entity, const std::string& fsid)
      : messenger_(io_.get_executor(), rpc::MessengerOptions{options(entity, fsid)}) {}

  Result<rpc::Frame> call(const std::string& addr, uint32_t method, std::string body = {}) {
    auto future = asio::co_spawn(
        io_, messenger_.call(addr, method, std::move(body), {}, Duration(10000)), asio::use_future);
    io_.restart();
    while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io_.run_one();
    return future.get();
  }

 private:
  static rpc::ConnectionOptions options(const std::string& entity, const std::string& fsid) {
    rpc::ConnectionOptions o{entity, rpc::make_none_authenticator()};
    o.cluster_fsid = fsid;
    return o;
  }

  asio::io_context io_;
  rpc::Messenger messenger_;
};

std::string command_body(const std::string& fsid, const proto::MapCommand& command) {
  proto::CommandRequest request;
  request.set_fsid(fsid);
  *request.mutable_command() = command;
  return request.SerializeAsString();
}

proto::MapCommand stranger_boot() {
  proto::MapCommand command;
  auto* boot = command.mutable_boot_osd();
  boot->set_id(9);
  boot->set_addr("127.0.0.1:1");
  boot->set_host("stranger");
  boot->set_weight(1.0);
  boot->set_instance(42);
  return command;
}

proto::MapCommand create_pool(const std::string& name) {
  proto::MapCommand command;
  auto* pool = command.mutable_create_pool();
  pool->set_name(name);
  pool->set_size(1);
  pool->set_min_size(1);
  pool->set_pg_num(8);
  return command;
}

void check_wrong_cluster(const Result<rpc::Frame>& reply, const std::string& words) {
  REQUIRE_FALSE(reply);
  INFO(reply.error().to_string());
  CHECK(reply.error().code() == ErrorCode::kWrongCluster);
  CHECK(reply.error().context().find(words) != std::string::npos);
}

std::string logs_of(TestCluster& cluster, const std::vector<std::string>& names) {
  std::string all;
  for (const auto& name : names) all += cluster.log_of(name);
  return all;
}

// `path` with its `fsid = ...` line naming `fsid` instead.
std::string conf_with_fsid(const std::string& path, const std::string& fsid) {
  std::string text = read_file(path);
  return std::regex_replace(text, std::regex("\nfsid = [^\n]*\n"), "\nfsid = " + fsid + "\n");
}

}  // namespace

TEST_SUITE_BEGIN("integration");

TEST_CASE("integration/cluster_identity: monitors and OSDs refuse a member of another cluster") {
  TestCluster cluster(ClusterOptions{.osds = 1});
  DFS_REQUIRE_OK(cluster.boot());
  const std::string fsid = cluster.fsid();
  const std::string why = "it belongs to cluster another-cluster, this is cluster " + fsid;

  Peer stranger("osd.9", kOtherFsid);
  check_wrong_cluster(stranger.call(cluster.mon_addr(), rpc::kMonStatus), "refused osd.9: " + why);
  check_wrong_cluster(stranger.call(cluster.osd_addr(0), rpc::kOsdStatFs,
                                    proto::StatFsRequest().SerializeAsString()),
                      "refused osd.9: " + why);
  const std::regex refusal_line("refused osd\\.9 at 127\\.0\\.0\\.1:[0-9]+: " + why);
  CHECK_MESSAGE(std::regex_search(cluster.log_of("mon.a"), refusal_line), cluster.log_of("mon.a"));
  CHECK_MESSAGE(std::regex_search(cluster.log_of("osd.0"), refusal_line), cluster.log_of("osd.0"));

  Peer silent("osd.9", "");
  check_wrong_cluster(silent.call(cluster.mon_addr(), rpc::kMonStatus), "names no cluster fsid");

  // A client whose config names another cluster learns it at once, not by a timeout.
  client::ClientOptions options;
  options.mon_addrs = cluster.mon_addrs();
  options.fsid = kOtherFsid;
  auto client = client::ObjectClient::connect(options);
  REQUIRE_FALSE(client);
  CHECK(client.error().code() == ErrorCode::kWrongCluster);

  // The same peers are served when they name this cluster.
  Peer member("osd.9", fsid);
  CHECK(member.call(cluster.mon_addr(), rpc::kMonStatus));
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_CASE("integration/cluster_identity: the leader refuses a boot of another cluster, forwarded or not") {
  TestCluster cluster(ClusterOptions{.osds = 1, .mons = 3});
  DFS_REQUIRE_OK(cluster.boot());
  const std::string fsid = cluster.fsid();
  // A client naming no cluster passes every handshake: only the message can tell.
  Peer anonymous("client.identitytest", "");
  for (const auto& mon : cluster.mon_addrs()) {
    CAPTURE(mon);
    check_wrong_cluster(
        anonymous.call(mon, rpc::kMonCommand, command_body(kOtherFsid, stranger_boot())),
        "refused osd.9: it belongs to cluster another-cluster, this is cluster " + fsid);
    check_wrong_cluster(anonymous.call(mon, rpc::kMonCommand, command_body("", stranger_boot())),
                        "refused osd.9: it names no cluster fsid");
  }
  check_wrong_cluster(anonymous.call(cluster.mon_addrs()[1], rpc::kMonCommand,
                                     command_body(kOtherFsid, create_pool("strangers"))),
                      "it belongs to cluster another-cluster");
  CHECK_MESSAGE(logs_of(cluster, {"mon.a", "mon.b", "mon.c"})
                        .find("refused osd.9 at 127.0.0.1:1: it belongs to cluster "
                              "another-cluster, this is cluster " + fsid) != std::string::npos,
                "no monitor logged the refusal");

  // The same commands naming this cluster go through: the refusals were for the fsid.
  auto control = anonymous.call(cluster.mon_addrs()[2], rpc::kMonCommand,
                                command_body(fsid, create_pool("members")));
  DFS_REQUIRE_OK(control);
  auto admin = cluster.admin();
  DFS_REQUIRE_OK(admin);
  auto map = (*admin)->map_snapshot();
  for (int i = 0; i < 50 && !map.pool_by_name("members"); ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    map = (*admin)->map_snapshot();
  }
  CHECK(map.pool_by_name("members") != nullptr);
  CHECK(map.pool_by_name("strangers") == nullptr);
  CHECK(map.osd(9) == nullptr);
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_CASE("integration/cluster_identity: a store made for another cluster does not serve this one") {
  TestCluster cluster(ClusterOptions{.osds = 1});
  DFS_REQUIRE_OK(cluster.boot());
  const std::string fsid = cluster.fsid();

  SUBCASE("an OSD's disk") {
    DFS_REQUIRE_OK(cluster.kill("osd.0", SIGTERM));
    const std::string recorded = cluster.dir() + "/osd.0/fsid";
    REQUIRE_MESSAGE(read_file(recorded) == fsid + "\n", "mkfs recorded no fsid in " << recorded);
    std::ofstream(recorded, std::ios::trunc) << kOtherFsid << "\n";
    auto started = cluster.start("osd.0");
    REQUIRE_FALSE(started);
    CHECK_MESSAGE(started.error().context().find(
                      "was made for cluster another-cluster, but dfs.conf names cluster " +
                      fsid) != std::string::npos,
                  started.error().to_string());
  }
  SUBCASE("a monitor's store") {
    DFS_REQUIRE_OK(cluster.kill("mon.a", SIGTERM));
    const std::string other_conf = cluster.dir() + "/other.conf";
    std::ofstream(other_conf) << conf_with_fsid(cluster.conf_path(), kOtherFsid);
    auto ran = run_command({mon_binary(), "-c", other_conf, "-i", "a"}, cluster.dir(),
                           milliseconds(30000));
    DFS_REQUIRE_OK(ran);
    INFO(ran->describe());
    CHECK(ran->exit_code == 1);
    CHECK(ran->err.find("was made for cluster " + fsid + ", but dfs.conf names cluster " +
                        kOtherFsid) != std::string::npos);
  }
}

TEST_SUITE_END();

}  // namespace dfs::test
