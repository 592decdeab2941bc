// MdsHarness: an MdsService over a real RocksMetaStore (or the memory store) in a
// fresh temporary directory, with data objects in memory and a deterministic clock.
// Requests go through MdsService::handle() exactly as the RPC server would pass them;
// the test thread drives the I/O context until each finishes.
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/rpc/methods.h"
#include "mds/ops/meta_view.h"
#include "mds/service/mds_service.h"
#include "tests/support/doctest_result.h"

namespace dfs::mds::test {

enum class Backend { kRocks, kMem };

struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
};

// A log entry for the committer: an exclusive mkdir of `name` in the root, by `client`
// when one is named.
proto::MdsLogEntry mkdir_entry(const std::string& name, const std::string& client = "");

// A store's whole content, for equality checks.
std::map<std::string, std::string> dump_store(const KvReader& kv);
// The first key two dumps disagree on, with both values escaped ("" when equal), so
// that a failed comparison says where the stores part.
std::string first_difference(const std::map<std::string, std::string>& a,
                             const std::map<std::string, std::string>& b);

class MdsHarness {
 public:
  explicit MdsHarness(Backend backend = Backend::kRocks, MdsOptions options = default_options());
  ~MdsHarness();

  static MdsOptions default_options();

  // Drops the service (as a crash would: nothing is flushed on the way out) and starts
  // a new one on the same RocksDB store, then re-opens the test client's session as a
  // mount would (`reconnect`), which ends the new instance's reconnect phase.
  // Requires: Backend::kRocks.
  void restart(MdsOptions options = default_options(), bool reconnect = true);

  // Opens (or re-opens) `client`'s session, without a connection (no pushed notices).
  // `renews`: as a mount's (recorded in the store), not a one-shot tool's.
  Result<proto::SessionReply> open_session(const std::string& client, bool wants_cache = false,
                                           bool holds_exclusive = false, bool renews = false);

  // Runs `task` on the I/O context until it finishes.
  template <class T>
  T run(awaitable<T> task) {
    std::optional<T> out;
    asio::co_spawn(io_, std::move(task), [&](std::exception_ptr e, T value) {
      if (e) std::rethrow_exception(e);
      out = std::move(value);
    });
    while (!out) io_.run_one();
    return std::move(*out);
  }
  // Runs the I/O context for about `d` (lets background loops make progress).
  void run_for(Duration d);

  // One request; the reply parsed as `Reply`.
  template <class Reply, class Req>
  Result<Reply> call(uint32_t method, const Req& req) {
    auto raw = run(service_->handle(method, req.SerializeAsString(), nullptr));
    // The reply is early (before the log is durable): let the syncer finish, so that
    // log() and the listeners have seen the entry, as they would a moment later.
    while (!service_->committer().idle()) io_.run_one_for(std::chrono::milliseconds(10));
    if (!raw) return unexpected(std::move(raw).error());
    Reply reply;
    if (!reply.ParseFromString(raw->body)) return make_error(ErrorCode::kProtocol, "bad reply");
    return reply;
  }

  // The credentials every request below carries (root by default).
  proto::Creds creds;
  // Request id client/seq for mutations (a fresh seq each, unless fixed).
  proto::MdsRequestHeader header(bool mutating = true);

  // Convenience wrappers. Errors are those of the MDS.
  Result<proto::Inode> lookup(uint64_t parent, const std::string& name);
  Result<proto::Inode> getattr(uint64_t ino);
  Result<proto::Inode> mknod(uint64_t parent, const std::string& name, uint32_t mode,
                             uint64_t rdev = 0, bool exclusive = true);
  Result<proto::Inode> mkdir(uint64_t parent, const std::string& name, uint32_t mode = 0755) {
    return mknod(parent, name, S_IFDIR | mode);
  }
  Result<proto::Inode> create(uint64_t parent, const std::string& name, uint32_t mode = 0644) {
    return mknod(parent, name, S_IFREG | mode);
  }
  Result<proto::Inode> symlink(uint64_t parent, const std::string& name, const std::string& target);
  Result<proto::Inode> link(uint64_t ino, uint64_t parent, const std::string& name);
  Result<proto::Inode> unlink(uint64_t parent, const std::string& name);
  Result<proto::Inode> rmdir(uint64_t parent, const std::string& name);
  Result<proto::RenameReply> rename(uint64_t parent, const std::string& name, uint64_t new_parent,
                                    const std::string& new_name, uint32_t flags = 0);
  Result<proto::Inode> setattr(proto::SetAttrRequest req);
  Result<proto::Inode> chmod(uint64_t ino, uint32_t mode);
  Result<proto::Inode> chown(uint64_t ino, uint32_t uid, uint32_t gid);
  Result<proto::Inode> truncate(uint64_t ino, uint64_t size);
  Result<proto::ReaddirReply> readdir(uint64_t ino, uint64_t cookie, uint32_t max,
                                      bool plus = false);
  // Every entry name (without "." and ".."), paging with `page` entries.
  std::vector<std::string> list(uint64_t ino, uint32_t page = 1000);
  Status setxattr(uint64_t ino, const std::string& name, const std::string& value,
                  uint32_t flags = 0);
  Result<std::string> getxattr(uint64_t ino, const std::string& name);
  Result<std::vector<std::string>> listxattr(uint64_t ino);
  Status removexattr(uint64_t ino, const std::string& name);
  Result<proto::Inode> open(uint64_t ino, uint32_t flags = 0);
  Status release(uint64_t ino);
  Result<proto::Inode> write_inline(uint64_t ino, uint64_t offset, const std::string& data);
  Result<proto::Inode> uninline(uint64_t ino);
  Result<proto::Inode> commit_write(uint64_t ino, uint64_t end, bool clear_privileges = false);
  Result<proto::StatFsMdsReply> statfs();

  MdsService& service() { return *service_; }
  MetaStore& store() { return service_->store(); }
  MemDataObjects& objects() { return *objects_; }
  asio::io_context& io() { return io_; }
  // Every durable entry, in log order.
  const std::vector<proto::MdsLogEntry>& log() const { return log_; }
  const std::string& client() const { return client_; }
  void set_client(std::string client) { client_ = std::move(client); }

 private:
  TempDir dir_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  MemDataObjects* objects_ = nullptr;
  std::unique_ptr<MemDataObjects> objects_owner_;
  void start_service(std::unique_ptr<MetaStore> store, MdsOptions options);

  std::unique_ptr<MdsService> service_;
  std::vector<proto::MdsLogEntry> log_;
  std::string client_ = "client.test.1";
  uint64_t next_seq_ = 1;
};

// A request started on the harness's I/O context; `reply` is set once it is answered.
struct PendingReply {
  std::optional<Result<rpc::Reply>> reply;
  bool done() const { return reply.has_value(); }
};

// Starts `req` on `h`'s I/O context, as the RPC server would pass it; `out` is
// answered when it finishes (drive the context meanwhile).
template <class Req>
void start_request(MdsHarness& h, uint32_t method, const Req& req, PendingReply* out) {
  asio::co_spawn(
      h.io(),
      [](MdsService* service, uint32_t method, std::string body,
         PendingReply* out) -> awaitable<void> {
        out->reply = co_await service->handle(method, std::move(body), nullptr);
      }(&h.service(), method, req.SerializeAsString(), out),
      asio::detached);
}

// Appends `message` to `batch` as an item of `method`.
void add_batch_item(proto::BatchRequest& batch, uint32_t method,
                    const google::protobuf::Message& message);

// A deterministic clock: each call advances by one millisecond from a fixed start.
NowFn counting_clock();

}  // namespace dfs::mds::test

// Requires `expr` (a Result) to fail with `code`.
#define DFS_REQUIRE_CODE(expr, want)                                    \
  do {                                                                  \
    const auto& dfs_require_code_ = (expr);                             \
    REQUIRE_MESSAGE(!dfs_require_code_.has_value(), "expected " #want); \
    REQUIRE_MESSAGE(dfs_require_code_.error().code() == (want),         \
                    dfs_require_code_.error().to_string());             \
  } while (0)
