// The Committer's early replies: a mutation is answered once applied and logged, its
// listeners hear of it only once the log is durable, wait_durable() waits for that, and
// a failed log sync fails the waiters instead of pretending.
#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "mds/service/committer.h"
#include "mds/ops/meta_view.h"
#include "mds_harness.h"

namespace dfs::mds {
namespace {

using test::mkdir_entry;

// A memory store whose sync() blocks until the test opens the gate, and can fail.
class GatedStore final : public MetaStore {
 public:
  GatedStore() : inner_(make_mem_meta_store()) {}

  Result<std::optional<std::string>> get(std::string_view key) const override {
    return inner_->get(key);
  }
  Result<std::vector<KeyValue>> scan(std::string_view begin, std::string_view end,
                                     size_t limit) const override {
    return inner_->scan(begin, end, limit);
  }
  Status write(const WriteBatch& batch, bool sync) override {
    if (sync && armed) return make_error(ErrorCode::kInternal, "the committer synced a write");
    return inner_->write(batch, sync);
  }
  const KvReader& memory_reader() const override { return *this; }
  Status sync() override {
    std::unique_lock lock(mu_);
    ++syncs_started;
    cv_.wait(lock, [&] { return open_; });
    if (fail_) return make_error(ErrorCode::kIoError, "injected: the disk failed the fsync");
    return ok_status();
  }

  void open(bool fail = false) {
    std::lock_guard lock(mu_);
    open_ = true;
    fail_ = fail;
    cv_.notify_all();
  }
  std::atomic<int> syncs_started{0};
  bool armed = false;  // set once the store is formatted: from then on, writes are early

 private:
  std::unique_ptr<MetaStore> inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  bool fail_ = false;
};

struct Fixture {
  explicit Fixture(CommitterOptions options = {})
      : committer(io.get_executor(), pool, store, fs, NowFn(realtime_now), options) {
    proto::Timespec epoch;
    epoch.set_sec(1600000000);
    DFS_REQUIRE_OK(format_meta_store(store, fs, epoch));
    store.armed = true;
    DFS_REQUIRE_OK(committer.load());
    committer.add_listener(
        [this](const proto::MdsLogEntry& e, const ApplyEffects&) { durable.push_back(e.index()); });
  }
  ~Fixture() {
    store.open();
    while (!committer.idle()) io.run_one_for(std::chrono::milliseconds(10));
    pool.join();
  }

  template <class T>
  std::optional<T> run_until(awaitable<T> task, std::chrono::milliseconds budget) {
    auto out = std::make_shared<std::optional<T>>();
    asio::co_spawn(io, std::move(task), [out](std::exception_ptr e, T value) {
      if (e) std::rethrow_exception(e);
      *out = std::move(value);
    });
    auto until = std::chrono::steady_clock::now() + budget;
    while (!*out && std::chrono::steady_clock::now() < until)
      io.run_one_for(std::chrono::milliseconds(5));
    return *out;
  }

  asio::io_context io;
  // Keeps io from stopping when it runs out of work between the steps of a test.
  asio::executor_work_guard<asio::io_context::executor_type> keep_running =
      asio::make_work_guard(io);
  asio::thread_pool pool{2};
  GatedStore store;
  FsSettings fs = default_fs_settings();
  Committer committer;
  std::vector<uint64_t> durable;
};

TEST_CASE("mds/committer: every kind of log entry has a counter") {
  // entries_by_kind is indexed by the entry's op field number; a new op numbered past
  // its end would go uncounted.
  const auto* op = proto::MdsLogEntry::descriptor()->FindOneofByName("op");
  REQUIRE(op != nullptr);
  for (int i = 0; i < op->field_count(); ++i) {
    CAPTURE(op->field(i)->name());
    CHECK(static_cast<size_t>(op->field(i)->number()) < CommitterStats::kEntryKinds);
  }
}

TEST_CASE("mds/committer: replies are early, listeners and wait_durable wait for the sync") {
  Fixture f;
  // The reply comes although the log sync is held back.
  auto reply = f.run_until(f.committer.submit(mkdir_entry("a")), std::chrono::seconds(5));
  REQUIRE(reply.has_value());
  DFS_REQUIRE_OK(*reply);
  CHECK(f.committer.last_index() == 1);
  CHECK(f.committer.durable_index() == 0);
  CHECK(f.durable.empty());
  // The applied entry is visible to readers at once.
  auto dentry = find_dentry(f.store, kRootIno, "a");
  REQUIRE(dentry.has_value());
  CHECK(dentry->has_value());

  // wait_durable() does not return while the sync is held back...
  auto waiting = f.run_until(f.committer.wait_durable(), std::chrono::milliseconds(200));
  CHECK_FALSE(waiting.has_value());
  CHECK(f.store.syncs_started.load() >= 1);
  // ...and returns once it is done; only then have the listeners heard of the entry.
  f.store.open();
  auto synced = f.run_until(f.committer.wait_durable(), std::chrono::seconds(5));
  REQUIRE(synced.has_value());
  DFS_REQUIRE_OK(*synced);
  CHECK(f.committer.durable_index() == 1);
  CHECK(f.durable == std::vector<uint64_t>{1});
}

TEST_CASE("mds/committer: a failed log sync fails wait_durable and keeps failing it") {
  Fixture f;
  auto reply = f.run_until(f.committer.submit(mkdir_entry("a")), std::chrono::seconds(5));
  REQUIRE(reply.has_value());
  f.store.open(/*fail=*/true);
  auto synced = f.run_until(f.committer.wait_durable(), std::chrono::seconds(5));
  REQUIRE(synced.has_value());
  REQUIRE_FALSE(synced->has_value());
  CHECK(synced->error().code() == ErrorCode::kIoError);
  CHECK(f.durable.empty());  // never durable: nothing acts on it (no object deletion)
  auto again = f.run_until(f.committer.wait_durable(), std::chrono::seconds(5));
  REQUIRE(again.has_value());
  CHECK_FALSE(again->has_value());
}

// A committer with replies after the sync, on a formatted memory store.
struct SyncedReplies {
  SyncedReplies() {
    proto::Timespec epoch;
    epoch.set_sec(1600000000);
    DFS_REQUIRE_OK(format_meta_store(*store, fs, epoch));
    DFS_REQUIRE_OK(committer.load());
  }
  ~SyncedReplies() { pool.join(); }  // no sync may still run on the pool
  static CommitterOptions options() {
    CommitterOptions o;
    o.reply_after_sync = true;
    return o;
  }

  asio::io_context io;
  asio::thread_pool pool{2};
  std::unique_ptr<MetaStore> store = make_mem_meta_store();
  FsSettings fs = default_fs_settings();
  Committer committer{io.get_executor(), pool, *store, fs, NowFn(realtime_now), options()};
};

TEST_CASE("mds/committer: a failed log sync fails the replies held for it") {
  CommitterOptions options;
  options.reply_after_sync = true;
  Fixture f(options);
  f.store.open(/*fail=*/true);
  // Held until durable, the reply must come with the sync's failure, not never.
  auto reply = f.run_until(f.committer.submit(mkdir_entry("a")), std::chrono::seconds(5));
  REQUIRE(reply.has_value());
  REQUIRE_FALSE(reply->has_value());
  CHECK(reply->error().code() == ErrorCode::kIoError);
}

TEST_CASE("mds/committer: reply_after_sync holds replies until the log is durable") {
  SyncedReplies f;
  auto& io = f.io;
  auto& committer = f.committer;
  std::optional<Result<std::string>> reply;
  asio::co_spawn(io, committer.submit(mkdir_entry("a")),
                 [&](std::exception_ptr, Result<std::string> r) { reply = std::move(r); });
  while (!reply) io.run_one();
  DFS_REQUIRE_OK(*reply);
  CHECK(committer.durable_index() == committer.last_index());
}

TEST_CASE("mds/committer: what a group listener posts runs after the group's replies") {
  // The MDS weighs a group's new orphans for purging this way: an entry of the group
  // that opens the file counts the open when its reply resumes it.
  SyncedReplies f;  // replies released with the listeners, as on a replicated rank
  auto& io = f.io;
  auto& committer = f.committer;
  std::vector<std::string> order;
  committer.add_listener([&](const proto::MdsLogEntry& e, const ApplyEffects&) {
    order.push_back("durable " + e.mknod().name());
  });
  committer.add_group_listener([&] {
    order.push_back("group");
    asio::post(io, [&] { order.push_back("posted by the group listener"); });
  });
  int replies = 0;
  for (const char* name : {"a", "b"}) {
    asio::co_spawn(
        io,
        [&, name]() -> awaitable<void> {
          auto reply = co_await committer.submit(mkdir_entry(name));
          if (reply) order.push_back(std::string("reply ") + name);
          ++replies;
        },
        asio::detached);
  }
  while (replies < 2 || order.back() != "posted by the group listener") {
    if (io.run_one() == 0) break;  // out of work: the CHECK says what happened
  }
  CHECK(order == std::vector<std::string>{"durable a", "durable b", "group", "reply a",
                                          "reply b", "posted by the group listener"});
}

}  // namespace
}  // namespace dfs::mds
