// The Committer of a replicated rank over a real Raft group (one replica, on loopback):
// groups are pipelined, each decided on the writes of the groups still in flight, and
// replies are released once their group committed, in the order groups were decided;
// early replies come at the append, to one client at a time.
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

// One replica of the rank: its store, RPC server, Raft log and pool (where its log
// syncs), all on the fixture's I/O loop.
struct Replica {
  std::unique_ptr<MetaStore> store;
  std::unique_ptr<rpc::RpcServer> server;
  std::unique_ptr<raft::RaftRouter> router;
  std::unique_ptr<rpc::Messenger> messenger;
  std::unique_ptr<RankReplication> replication;
  std::unique_ptr<asio::thread_pool> pool;
};

// A rank of `replicas` replicas on loopback, with the committer on the one that leads;
// an election timeout is 10 to 20 ticks.
struct ReplicatedFixture {
  explicit ReplicatedFixture(size_t replicas = 1, Duration tick = Duration(10)) {
    std::vector<RankReplica> members;
    for (size_t i = 0; i < replicas; ++i) {
      Replica r;
      const std::string name = "mds." + std::string(1, static_cast<char>('a' + i));
      auto opened_store = open_rocks_meta_store(dir.path + "/store." + name, true,
                                                StoreLog::kRaft);
      REQUIRE_MESSAGE(opened_store.has_value(), opened_store.error().to_string());
      r.store = std::move(*opened_store);
      proto::Timespec epoch;
      epoch.set_sec(1600000000);
      DFS_REQUIRE_OK(format_meta_store(*r.store, fs, epoch));
      rpc::ConnectionOptions conn;
      conn.local_entity = name;
      conn.auth = rpc::make_none_authenticator();
      r.server = std::make_unique<rpc::RpcServer>(io.get_executor(), conn);
      r.router = std::make_unique<raft::RaftRouter>(*r.server);
      r.messenger =
          std::make_unique<rpc::Messenger>(io.get_executor(), rpc::MessengerOptions{conn});
      auto bound = r.server->listen("127.0.0.1:0");
      REQUIRE_MESSAGE(bound.has_value(), bound.error().to_string());
      members.push_back({static_cast<raft::NodeId>(i + 1), name, *bound});
      r.pool = std::make_unique<asio::thread_pool>(2);
      all.push_back(std::move(r));
    }
    for (size_t i = 0; i < replicas; ++i) {
      ReplicationOptions options;
      options.id = static_cast<raft::NodeId>(i + 1);
      options.replicas = members;
      options.raft_dir = dir.path + "/raft." + members[i].name;
      options.raft_tick = tick;
      auto opened = RankReplication::open(options, *all[i].store, fs, /*create=*/true);
      REQUIRE_MESSAGE(opened.has_value(), opened.error().to_string());
      all[i].replication = std::move(*opened);
      DFS_REQUIRE_OK(all[i].replication->start(io.get_executor(), *all[i].pool,
                                               *all[i].messenger, *all[i].router, 0));
    }
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto leader = [this]() -> Replica* {
      for (auto& r : all) {
        if (r.replication->status().role == raft::Role::kLeader) return &r;
      }
      return nullptr;
    };
    while (!leader() && std::chrono::steady_clock::now() < until) {
      io.run_one_for(std::chrono::milliseconds(5));
    }
    REQUIRE(leader() != nullptr);
    lead = leader();
    store = lead->store.get();
    pool = lead->pool.get();
    CommitterOptions small_groups;
    small_groups.max_group_entries = 4;
    committer = std::make_unique<Committer>(io.get_executor(), *pool, *store, fs,
                                            NowFn(realtime_now), small_groups);
    DFS_REQUIRE_OK(committer->load());
    committer->set_raft(&lead->replication->group(),
                        [this] { return lead->replication->last_command_index(); });
    // The new leader's first entry committed and applied everywhere (no log sync runs),
    // and its lease held.
    auto settled = [this] {
      auto st = lead->replication->status();
      return st.last_index > 0 && lead->replication->group().holds_lease() &&
             std::all_of(all.begin(), all.end(), [&](const Replica& r) {
               return r.replication->status().applied == st.last_index;
             });
    };
    while (!settled() && std::chrono::steady_clock::now() < until) {
      io.run_one_for(std::chrono::milliseconds(5));
    }
    REQUIRE(settled());
  }
  // Runs the I/O loop until `done()` or `budget` has passed; returns done().
  template <class Done>
  bool run_until(Done done, std::chrono::milliseconds budget) {
    auto until = std::chrono::steady_clock::now() + budget;
    while (!done() && std::chrono::steady_clock::now() < until) {
      io.run_one_for(std::chrono::milliseconds(5));
    }
    return done();
  }
  // Submits `entry`; its result lands in `*result`.
  void submit(proto::MdsLogEntry entry, std::optional<Result<std::string>>* result) {
    asio::co_spawn(io, committer->submit(std::move(entry)),
                   [result](std::exception_ptr e, Result<std::string> r) {
                     if (e) std::rethrow_exception(e);
                     *result = std::move(r);
                   });
  }
  ~ReplicatedFixture() {
    while (!committer->idle()) io.run_one_for(std::chrono::milliseconds(5));
    for (auto& r : all) {
      bool stopped = false;
      asio::co_spawn(io, r.replication->group().stop(),
                     [&](std::exception_ptr) { stopped = true; });
      while (!stopped) io.run_one_for(std::chrono::milliseconds(5));
      r.pool->join();
    }
  }

  TempDir dir;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> keep_running =
      asio::make_work_guard(io);
  FsSettings fs = default_fs_settings();
  std::vector<Replica> all;
  Replica* lead = nullptr;
  MetaStore* store = nullptr;        // the leader's
  asio::thread_pool* pool = nullptr;  // the leader's
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

// Holds both threads of the fixture's pool, where the Raft log syncs: nothing commits
// until open() (or the end of the scope, so that the fixture can end).
class SyncsHeld {
 public:
  explicit SyncsHeld(asio::thread_pool& pool) {
    std::shared_future<void> opened = gate_.get_future().share();
    for (int i = 0; i < 2; ++i) asio::post(pool, [opened] { opened.wait(); });
  }
  ~SyncsHeld() { open(); }
  void open() {
    if (!open_) gate_.set_value();
    open_ = true;
  }

 private:
  std::promise<void> gate_;
  bool open_ = false;
};

// SyncsHeld on every replica but the leader: none of them answers the leader once it
// has a group to sync, so nothing commits.
std::vector<std::unique_ptr<SyncsHeld>> hold_followers_syncs(ReplicatedFixture& f) {
  std::vector<std::unique_ptr<SyncsHeld>> held;
  for (auto& r : f.all) {
    if (&r != f.lead) held.push_back(std::make_unique<SyncsHeld>(*r.pool));
  }
  return held;
}

TEST_CASE("mds/replicated committer: early replies come before the commit, and wait_durable "
          "after it") {
  ReplicatedFixture f;
  std::vector<std::string> lost;
  // Early replies for every entry but the one named "safe".
  f.committer->set_early_replies(
      [](const proto::MdsLogEntry& entry) { return entry.mknod().name() != "safe"; },
      [&lost](const Error& why) { lost.push_back(why.to_string()); });
  SyncsHeld held(*f.pool);

  // Submitted one after the other: each is a group of its own.
  std::vector<std::string> names = {"early", "safe"};
  std::vector<std::optional<Result<std::string>>> results(names.size());
  auto submit = [&](size_t i) { f.submit(mkdir_entry(names[i], "client.a"), &results[i]); };
  auto run_until = [&](auto done, auto budget) { return f.run_until(done, budget); };
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

  held.open();
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

TEST_CASE("mds/replicated committer: early replies go to one client at a time, and others "
          "read committed state") {
  // A new leader applies the resends of several clients in the order they arrive: a
  // client's change decided on another's group in flight waits for the commit.
  // Three replicas, the followers' log syncs held: the leader appends group after group
  // and none commits. Ticks of 200 ms: the leader keeps its lease (1.6 s) while they
  // are appended, and leads (check-quorum: 2 s at least) until they commit.
  ReplicatedFixture f(3, Duration(200));
  f.committer->set_early_replies([](const proto::MdsLogEntry&) { return true; },
                                 [](const Error&) {});
  auto held = hold_followers_syncs(f);
  const std::vector<std::pair<std::string, std::string>> changes = {
      {"a1", "client.a"}, {"b1", "client.b"}, {"a2", "client.a"}};
  std::vector<std::optional<Result<std::string>>> results(changes.size());
  auto submit = [&](size_t i) {
    f.submit(mkdir_entry(changes[i].first, changes[i].second), &results[i]);
  };
  submit(0);
  REQUIRE(f.run_until([&] { return results[0].has_value(); }, std::chrono::seconds(10)));
  DFS_CHECK_OK(*results[0]);
  CHECK(f.committer->unsettled_only_of("client.a"));
  CHECK_FALSE(f.committer->unsettled_only_of("client.b"));
  // b1 is decided on a1 in flight, and a2 on b1: neither is answered before its commit.
  submit(1);
  f.run_until([] { return false; }, std::chrono::milliseconds(200));
  submit(2);
  f.run_until([] { return false; }, std::chrono::milliseconds(300));
  CHECK_FALSE(results[1].has_value());
  CHECK_FALSE(results[2].has_value());
  CHECK(f.committer->stats().early_replies == 1);
  CHECK_FALSE(f.committer->unsettled_only_of("client.a"));

  for (auto& h : held) h->open();
  REQUIRE(f.run_until([&] { return results[1] && results[2]; }, std::chrono::seconds(10)));
  DFS_CHECK_OK(*results[1]);
  DFS_CHECK_OK(*results[2]);
  CHECK(f.run_until([&] { return f.committer->settled(); }, std::chrono::seconds(10)));
  CHECK(f.committer->unsettled_only_of("client.b"));
}

TEST_CASE("mds/replicated committer: no early reply once the leader's Raft lease has lapsed") {
  // The followers' log syncs held: once the first group reaches them they answer no
  // heartbeat, and the lease (8 ticks) lapses before check-quorum deposes the leader
  // (after 10 to 20 ticks).
  ReplicatedFixture f(3, Duration(200));
  f.committer->set_early_replies([](const proto::MdsLogEntry&) { return true; },
                                 [](const Error&) {});
  auto held = hold_followers_syncs(f);
  raft::RaftGroup& group = f.lead->replication->group();
  std::vector<std::optional<Result<std::string>>> results(2);
  f.submit(mkdir_entry("a1", "client.a"), &results[0]);
  REQUIRE(f.run_until([&] { return results[0].has_value(); }, std::chrono::seconds(10)));
  DFS_CHECK_OK(*results[0]);
  REQUIRE(f.run_until([&] { return !group.holds_lease(); }, std::chrono::seconds(5)));
  REQUIRE(f.lead->replication->status().role == raft::Role::kLeader);
  f.submit(mkdir_entry("a2", "client.a"), &results[1]);
  f.run_until([] { return false; }, std::chrono::milliseconds(200));
  // Unanswered, or failed once the leader stepped down: never answered early.
  CHECK((!results[1].has_value() || !results[1]->has_value()));
  CHECK(f.committer->stats().early_replies == 1);
  for (auto& h : held) h->open();
  f.run_until([&] { return results[1].has_value(); }, std::chrono::seconds(10));
}

}  // namespace
}  // namespace dfs::mds
