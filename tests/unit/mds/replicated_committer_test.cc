// The Committer of a replicated rank over a real Raft group (one replica, on loopback):
// groups are pipelined, each decided on the writes of the groups still in flight, and
// replies are released once their group committed, in the order groups were decided.
#include <doctest/doctest.h>

#include <algorithm>
#include <future>
#include <set>

#include "common/raft/raft_router.h"
#include "common/rpc/messenger.h"
#include "common/rpc/server.h"
#include "mds/ops/meta_view.h"
#include "mds/service/committer.h"
#include "mds/service/rank_replication.h"
#include "mds_harness.h"

namespace dfs::mds {
namespace {

using test::mkdir_entry;
using test::TempDir;

struct ReplicatedFixture {
  ReplicatedFixture() {
    auto opened_store = open_rocks_meta_store(dir.path + "/store", true, StoreLog::kRaft);
    REQUIRE_MESSAGE(opened_store.has_value(), opened_store.error().to_string());
    store = std::move(*opened_store);
    proto::Timespec epoch;
    epoch.set_sec(1600000000);
    DFS_REQUIRE_OK(format_meta_store(*store, fs, epoch));
    rpc::ConnectionOptions conn;
    conn.local_entity = "mds.a";
    conn.auth = rpc::make_none_authenticator();
    server = std::make_unique<rpc::RpcServer>(io.get_executor(), conn);
    router = std::make_unique<raft::RaftRouter>(*server);
    messenger = std::make_unique<rpc::Messenger>(io.get_executor(), rpc::MessengerOptions{conn});
    auto bound = server->listen("127.0.0.1:0");
    REQUIRE_MESSAGE(bound.has_value(), bound.error().to_string());
    ReplicationOptions options;
    options.id = 1;
    options.replicas = {{1, "mds.a", *bound}};
    options.raft_dir = dir.path + "/raft";
    options.raft_tick = Duration(10);
    auto opened = RankReplication::open(options, *store, fs, /*create=*/true);
    REQUIRE_MESSAGE(opened.has_value(), opened.error().to_string());
    replication = std::move(*opened);
    DFS_REQUIRE_OK(replication->start(io.get_executor(), pool, *messenger, *router, 0));
    CommitterOptions small_groups;
    small_groups.max_group_entries = 4;
    committer = std::make_unique<Committer>(io.get_executor(), pool, *store, fs,
                                            NowFn(realtime_now), small_groups);
    DFS_REQUIRE_OK(committer->load());
    committer->set_raft(&replication->group(),
                        [this] { return replication->last_command_index(); });
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (replication->status().role != raft::Role::kLeader &&
           std::chrono::steady_clock::now() < until) {
      io.run_one_for(std::chrono::milliseconds(5));
    }
    REQUIRE(replication->status().role == raft::Role::kLeader);
    // The new leader's first entry committed and applied: no log sync runs any more.
    auto settled = [this] {
      auto st = replication->status();
      return st.last_index > 0 && st.applied == st.last_index;
    };
    while (!settled() && std::chrono::steady_clock::now() < until) {
      io.run_one_for(std::chrono::milliseconds(5));
    }
    REQUIRE(settled());
  }
  ~ReplicatedFixture() {
    while (!committer->idle()) io.run_one_for(std::chrono::milliseconds(5));
    bool stopped = false;
    asio::co_spawn(io, replication->group().stop(), [&](std::exception_ptr) { stopped = true; });
    while (!stopped) io.run_one_for(std::chrono::milliseconds(5));
    pool.join();
  }

  TempDir dir;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> keep_running =
      asio::make_work_guard(io);
  asio::thread_pool pool{2};
  std::unique_ptr<MetaStore> store;
  FsSettings fs = default_fs_settings();
  std::unique_ptr<rpc::RpcServer> server;
  std::unique_ptr<raft::RaftRouter> router;
  std::unique_ptr<rpc::Messenger> messenger;
  std::unique_ptr<RankReplication> replication;
  std::unique_ptr<Committer> committer;
};

TEST_CASE("mds/replicated committer: groups pipeline on the writes of the groups in flight") {
  ReplicatedFixture f;
  // 64 mkdirs at once, in groups of 4. Each name comes twice, four entries apart: the
  // second mkdir is in the next group, decided while the first one's group is in
  // flight, and must see its directory (exclusive: kAlreadyExists).
  std::vector<std::string> names;
  for (int i = 0; i < 32; ++i) {
    names.push_back("d" + std::to_string(i));
  }
  std::vector<std::string> order;
  for (size_t i = 0; i < names.size(); i += 4) {
    for (int twice = 0; twice < 2; ++twice) {
      for (size_t j = i; j < i + 4; ++j) order.push_back(names[j]);
    }
  }
  std::vector<std::optional<Result<std::string>>> results(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    asio::co_spawn(f.io, f.committer->submit(mkdir_entry(order[i])),
                   [&results, i](std::exception_ptr e, Result<std::string> r) {
                     if (e) std::rethrow_exception(e);
                     results[i] = std::move(r);
                   });
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto all_done = [&] {
    return std::all_of(results.begin(), results.end(), [](const auto& r) { return r.has_value(); });
  };
  while (!all_done() && std::chrono::steady_clock::now() < until) {
    f.io.run_one_for(std::chrono::milliseconds(5));
  }
  REQUIRE(all_done());
  for (size_t i = 0; i < order.size(); ++i) {
    const bool first = (i / 4) % 2 == 0;
    INFO("mkdir #" << i << " of " << order[i]);
    if (first) {
      DFS_CHECK_OK(*results[i]);
    } else {
      REQUIRE_FALSE(results[i]->has_value());
      CHECK(results[i]->error().code() == ErrorCode::kAlreadyExists);
    }
  }
  // Groups were decided while the group before was in flight.
  CHECK(f.committer->stats().pipelined_groups > 0);
  CHECK(f.committer->stats().failed_entries == 32);
  // Every directory is in the store once, with an inode of its own.
  std::set<uint64_t> inos;
  for (const auto& name : names) {
    auto dentry = find_dentry(*f.store, kRootIno, name);
    DFS_REQUIRE_OK(dentry);
    REQUIRE_MESSAGE(dentry->has_value(), name);
    inos.insert((*dentry)->ino);
  }
  CHECK(inos.size() == names.size());
  CHECK(f.committer->last_index() == *read_counter(*f.store, kLogIndex));
}

TEST_CASE("mds/replicated committer: early replies come before the commit, and wait_durable "
          "after it") {
  ReplicatedFixture f;
  std::vector<std::string> lost;
  // Early replies for every entry but the one named "safe".
  f.committer->set_early_replies(
      [](const proto::MdsLogEntry& entry) { return entry.mknod().name() != "safe"; },
      [&lost](const Error& why) { lost.push_back(why.to_string()); });
  // The Raft log syncs on the pool: with its threads held, nothing commits.
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  for (int i = 0; i < 2; ++i) asio::post(f.pool, [open] { open.wait(); });
  struct Opened {  // opens the gate on every way out, so that the fixture can end
    std::promise<void>& gate;
    bool done = false;
    void operator()() {
      if (!done) gate.set_value();
      done = true;
    }
    ~Opened() { (*this)(); }
  } opened{gate};

  // Submitted one after the other: each is a group of its own.
  std::vector<std::string> names = {"early", "safe"};
  std::vector<std::optional<Result<std::string>>> results(names.size());
  auto submit = [&](size_t i) {
    asio::co_spawn(f.io, f.committer->submit(mkdir_entry(names[i])),
                   [&results, i](std::exception_ptr e, Result<std::string> r) {
                     if (e) std::rethrow_exception(e);
                     results[i] = std::move(r);
                   });
  };
  auto run_until = [&](auto done, std::chrono::milliseconds budget) {
    auto until = std::chrono::steady_clock::now() + budget;
    while (!done() && std::chrono::steady_clock::now() < until) {
      f.io.run_one_for(std::chrono::milliseconds(5));
    }
    return done();
  };
  submit(0);
  REQUIRE(run_until([&] { return results[0].has_value(); }, std::chrono::seconds(10)));
  DFS_CHECK_OK(*results[0]);
  CHECK(f.committer->stats().early_replies == 1);
  CHECK_FALSE(f.committer->settled());
  // An entry without an early reply, and a wait for durability, wait for the commit.
  submit(1);
  std::optional<Status> durable;
  asio::co_spawn(f.io, f.committer->wait_durable(), [&](std::exception_ptr e, Status st) {
    if (e) std::rethrow_exception(e);
    durable = std::move(st);
    CHECK(f.committer->settled());
  });
  run_until([] { return false; }, std::chrono::milliseconds(300));
  CHECK_FALSE(results[1].has_value());
  CHECK_FALSE(durable.has_value());
  for (const auto& name : names) {
    auto dentry = find_dentry(*f.store, kRootIno, name);
    DFS_REQUIRE_OK(dentry);
    CHECK_MESSAGE(!dentry->has_value(), name << " is in the store before its commit");
  }

  opened();
  REQUIRE(run_until([&] { return durable && results[1]; }, std::chrono::seconds(10)));
  DFS_CHECK_OK(*durable);
  DFS_CHECK_OK(*results[1]);
  CHECK(lost.empty());
  for (const auto& name : names) {
    auto dentry = find_dentry(*f.store, kRootIno, name);
    DFS_REQUIRE_OK(dentry);
    CHECK_MESSAGE(dentry->has_value(), name);
  }
}

}  // namespace
}  // namespace dfs::mds
