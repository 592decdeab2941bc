// The real dfs-mds against a real cluster (TestCluster: dfs-mon and three dfs-osd on
// loopback): it boots into the map, serves the protocol over TCP, does its object work
// through the OSDs (uninline, truncate, purge) and keeps every acknowledged change
// across a SIGKILL.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <csignal>
#include <fstream>
#include <thread>

#include "common/proto/mds.pb.h"
#include "common/rpc/messenger.h"
#include "common/rpc/methods.h"
#include "mds/store/keys.h"
#include "tests/support/mds_process.h"
#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace dfs::test {
namespace {

// A minimal MDS client: finds rank 0 in the map and sends typed requests.
class MdsClient {
 public:
  explicit MdsClient(client::ObjectClient& objects)
      : objects_(objects), messenger_(io_.get_executor(), messenger_options()) {}

  // Waits until the map shows an up rank 0 with an instance other than `not_instance`.
  Status wait_for_mds(uint64_t not_instance = 0) {
    for (int i = 0; i < 300; ++i) {
      auto map = objects_.map_snapshot();
      const auto* mds = map.mds_for_rank(0);
      if (mds && mds->up() && mds->instance() != not_instance) {
        addr_ = mds->addr();
        instance_ = mds->instance();
        messenger_.reset(addr_);
        return ok_status();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return make_error(ErrorCode::kTimeout, "no MDS for rank 0 in the map");
  }
  uint64_t instance() const { return instance_; }

  static rpc::MessengerOptions messenger_options() {
    rpc::MessengerOptions options;
    options.connection.local_entity = "client.mdstest";
    options.connection.auth = rpc::make_none_authenticator();
    return options;
  }

  template <class Reply, class Req>
  Result<Reply> call(uint32_t method, Req req) {
    if (req.GetDescriptor()->FindFieldByName("header")) fill_header(req);
    std::optional<Result<Reply>> out;
    asio::co_spawn(io_, messenger_.call_proto<Reply>(addr_, method, req, Duration(10000)),
                   [&](std::exception_ptr, Result<Reply> r) { out = std::move(r); });
    io_.restart();
    while (!out) io_.run_one();
    return std::move(*out);
  }

 private:
  template <class Req>
  void fill_header(Req& req) {
    if constexpr (requires { req.mutable_header(); }) {
      req.mutable_header()->mutable_reqid()->set_client("client.mdstest");
      req.mutable_header()->mutable_reqid()->set_seq(next_seq_++);
    }
  }

  client::ObjectClient& objects_;
  asio::io_context io_;
  rpc::Messenger messenger_;
  std::string addr_;
  uint64_t instance_ = 0;
  uint64_t next_seq_ = 1;
};

bool object_exists(client::ObjectClient& c, const std::string& name) {
  return c.run(c.stat("data", name)).has_value();
}

}  // namespace

TEST_CASE("mds/daemon: serves the protocol, does its object work, survives SIGKILL") {
  TestCluster cluster;
  DFS_REQUIRE_OK(cluster.boot());
  DFS_REQUIRE_OK(cluster.create_pool("data", 3, 2, 16));
  auto objects = cluster.client();
  DFS_REQUIRE_OK(objects);
  MdsProcess mds(cluster);
  DFS_REQUIRE_OK(mds.mkfs());
  DFS_REQUIRE_OK(mds.start());
  MdsClient c(**objects);
  DFS_REQUIRE_OK(c.wait_for_mds());

  proto::SessionRequest session;
  session.set_client("client.mdstest");
  auto s = c.call<proto::SessionReply>(rpc::kMdsSession, session);
  DFS_REQUIRE_OK(s);
  CHECK(s->root().ino() == mds::kRootIno);
  CHECK(s->mds_instance() == c.instance());

  proto::MknodRequest mk;
  mk.set_parent(mds::kRootIno);
  mk.set_name("small");
  mk.set_mode(S_IFREG | 0644);
  mk.set_exclusive(true);
  auto small = c.call<proto::MknodReply>(rpc::kMdsMknod, mk);
  DFS_REQUIRE_OK(small);
  uint64_t ino = small->inode().ino();
  proto::WriteInlineRequest wi;
  wi.set_ino(ino);
  wi.set_data("inline bytes");
  DFS_REQUIRE_OK(c.call<proto::InodeReply>(rpc::kMdsWriteInline, wi));

  // Uninline: the MDS writes object 0 itself.
  proto::UninlineRequest un;
  un.set_ino(ino);
  auto moved = c.call<proto::InodeReply>(rpc::kMdsUninline, un);
  DFS_REQUIRE_OK(moved);
  CHECK_FALSE(moved->inode().inline_());
  auto obj0 = (*objects)->run((*objects)->read("data", mds::object_name(ino, 0), 0, 0));
  DFS_REQUIRE_OK(obj0);
  CHECK(*obj0 == "inline bytes");

  // The client writes objects 1 and 2, commits, then truncates into object 1.
  const uint64_t os = 4u << 20;
  DFS_REQUIRE_OK((*objects)->run(
      (*objects)->write_full("data", mds::object_name(ino, 1), std::string(os, 'b'))));
  DFS_REQUIRE_OK((*objects)->run(
      (*objects)->write_full("data", mds::object_name(ino, 2), std::string(10, 'c'))));
  proto::CommitWriteRequest cw;
  cw.set_ino(ino);
  cw.set_end(2 * os + 10);
  auto committed = c.call<proto::InodeReply>(rpc::kMdsCommitWrite, cw);
  DFS_REQUIRE_OK(committed);
  CHECK(committed->inode().size() == 2 * os + 10);
  proto::SetAttrRequest tr;
  tr.set_ino(ino);
  tr.set_valid(proto::SET_ATTR_SIZE);
  tr.set_size(os + 5);
  auto cut = c.call<proto::InodeReply>(rpc::kMdsSetAttr, tr);
  DFS_REQUIRE_OK(cut);
  CHECK(cut->inode().size() == os + 5);
  CHECK_FALSE(object_exists(**objects, mds::object_name(ino, 2)));
  auto stat1 = (*objects)->run((*objects)->stat("data", mds::object_name(ino, 1)));
  DFS_REQUIRE_OK(stat1);
  CHECK(stat1->size == 5);

  // SIGKILL: everything acknowledged is still there after the restart.
  mk.set_name("dir");
  mk.set_mode(S_IFDIR | 0755);
  auto dir = c.call<proto::MknodReply>(rpc::kMdsMknod, mk);
  DFS_REQUIRE_OK(dir);
  uint64_t old_instance = c.instance();
  mds.kill(SIGKILL);
  DFS_REQUIRE_OK(mds.start());
  DFS_REQUIRE_OK(c.wait_for_mds(old_instance));
  // As a mount does: the new instance serves the sessions of before once they re-opened.
  DFS_REQUIRE_OK(c.call<proto::SessionReply>(rpc::kMdsSession, session));
  proto::LookupRequest lk;
  lk.set_parent(mds::kRootIno);
  lk.set_name("dir");
  auto found = c.call<proto::InodeReply>(rpc::kMdsLookup, lk);
  DFS_REQUIRE_OK(found);
  CHECK(found->inode().ino() == dir->inode().ino());
  proto::GetAttrRequest ga;
  ga.set_ino(ino);
  auto after = c.call<proto::InodeReply>(rpc::kMdsGetAttr, ga);
  DFS_REQUIRE_OK(after);
  CHECK(after->inode().size() == os + 5);

  // Unlink: the purger removes the objects through the OSDs (after the reclaim grace).
  proto::UnlinkRequest ul;
  ul.set_parent(mds::kRootIno);
  ul.set_name("small");
  DFS_REQUIRE_OK(c.call<proto::UnlinkReply>(rpc::kMdsUnlink, ul));
  // The purger removes the objects first and then its backlog record: wait for both.
  bool purged = false;
  proto::StatFsMdsRequest sf;
  Result<proto::StatFsMdsReply> st = make_error(ErrorCode::kInternal, "not asked yet");
  for (int i = 0; i < 150 && !purged; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    st = c.call<proto::StatFsMdsReply>(rpc::kMdsStatFs, sf);
    DFS_REQUIRE_OK(st);
    purged = !object_exists(**objects, mds::object_name(ino, 0)) &&
             !object_exists(**objects, mds::object_name(ino, 1)) &&
             st->purge_backlog_inodes() == 0;
  }
  CHECK(purged);
  CHECK(st->inodes() == 2);  // root and dir
  CHECK(st->purge_backlog_inodes() == 0);
}

}  // namespace dfs::test
