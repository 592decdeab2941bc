#include "tools/bench/objbench/cluster_bench.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "client-fuse/libdfs/client_config.h"
#include "common/rpc/asio.h"

namespace dfs::bench {
namespace {

using client::ObjectClient;

// Shared by the `depth` workers of one parallel phase; they all run on the client's
// single I/O thread, so plain fields need no lock.
struct WorkQueue {
  std::string pool;
  std::vector<std::string> names;
  std::string payload;
  bool write = true;
  size_t next = 0;
  Status failed = ok_status();
};

awaitable<Status> one_large(ObjectClient* client, std::shared_ptr<WorkQueue> q, size_t i) {
  if (q->write) {
    DFS_CO_AWAIT_CHECK(client->write_full(q->pool, q->names[i], q->payload));
    co_return ok_status();
  }
  DFS_CO_AWAIT_TRY(auto data, client->read(q->pool, q->names[i], 0, 0));
  if (data.size() != kLargeBytes) {
    co_return make_error(ErrorCode::kCorruption,
                         fmt::format("object {} read back {} bytes, wrote {}", q->names[i],
                                     data.size(), kLargeBytes));
  }
  co_return ok_status();
}

awaitable<int> large_worker(ObjectClient* client, std::shared_ptr<WorkQueue> q) {
  while (q->failed && q->next < q->names.size()) {
    size_t i = q->next++;
    auto done = co_await one_large(client, q, i);
    if (!done && q->failed) q->failed = std::move(done);
  }
  co_return 0;
}

awaitable<Status> run_workers(ObjectClient* client, std::shared_ptr<WorkQueue> q, int depth) {
  std::vector<awaitable<int>> workers;
  for (int w = 0; w < depth; ++w) workers.push_back(large_worker(client, q));
  co_await gather(std::move(workers));
  co_return q->failed;
}

awaitable<Result<std::vector<double>>> small_writes(ObjectClient* client, std::string pool,
                                                    std::string name, std::string data, int count) {
  std::vector<double> latencies_us;
  latencies_us.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    auto start = Clock::now();
    DFS_CO_AWAIT_CHECK(client->write(pool, name, uint64_t(i) * data.size(), data));
    latencies_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  co_return latencies_us;
}

awaitable<Status> remove_all(ObjectClient* client, std::string pool,
                             std::vector<std::string> names) {
  Status first_error = ok_status();
  for (auto& name : names) {
    auto removed = co_await client->remove(pool, name);
    if (!removed && first_error)
      first_error = unexpected(removed.error().with_context("removing " + name));
  }
  co_return first_error;
}

}  // namespace

Result<std::unique_ptr<ClusterBench>> ClusterBench::connect(const BenchOptions& options,
                                                            std::string payload) {
  auto client_options = DFS_TRY(client::client_options_from_config(options.conf));
  client_options.connect_timeout = Duration(int64_t(options.timeout_s) * 1000);
  auto client = DFS_TRY(ObjectClient::connect(client_options));
  if (!client->map_snapshot().pool_by_name(options.pool)) {
    return make_error(ErrorCode::kNoSuchPool,
                      fmt::format("pool '{}' does not exist (create it with `dfs pool create {}`)",
                                  options.pool, options.pool));
  }
  return std::unique_ptr<ClusterBench>(
      new ClusterBench(std::move(client), options, std::move(payload)));
}

ClusterBench::ClusterBench(std::unique_ptr<ObjectClient> client, const BenchOptions& options,
                           std::string payload)
    : client_(std::move(client)),
      pool_(options.pool),
      depth_(options.depth),
      payload_(std::move(payload)),
      prefix_(fmt::format("objbench.{}.", ::getpid())) {}

std::string ClusterBench::large_name(int index) const {
  return fmt::format("{}large.{}", prefix_, index);
}
std::string ClusterBench::small_name(int small) const {
  return fmt::format("{}small.{}", prefix_, small);
}

Status ClusterBench::warm_up() {
  constexpr int kObjects = 16;  // spread over PGs, so very likely over every OSD
  std::vector<std::string> names;
  for (int i = 0; i < kObjects; ++i) {
    names.push_back(fmt::format("{}warm.{}", prefix_, i));
    DFS_TRY_STATUS(
        client_->run(client_->write_full(pool_, names.back(), payload_.substr(0, kSmallBytes))));
  }
  return client_->run(remove_all(client_.get(), pool_, std::move(names)));
}

Result<Throughput> ClusterBench::run_parallel(int first, int count, bool write) {
  auto q = std::make_shared<WorkQueue>();
  q->pool = pool_;
  q->write = write;
  if (write) q->payload = payload_;
  for (int i = first; i < first + count; ++i) q->names.push_back(large_name(i));
  if (write) large_written_ = std::max(large_written_, first + count);
  auto start = Clock::now();
  DFS_TRY_STATUS(client_->run(run_workers(client_.get(), q, depth_)));
  return Throughput{uint64_t(count) * kLargeBytes, Clock::now() - start};
}

Result<Throughput> ClusterBench::write_large(int first, int count) {
  return run_parallel(first, count, true);
}
Result<Throughput> ClusterBench::read_large(int first, int count) {
  return run_parallel(first, count, false);
}

Result<std::vector<double>> ClusterBench::write_small(int small, int count) {
  small_written_ = std::max(small_written_, small + 1);
  return client_->run(small_writes(client_.get(), pool_, small_name(small),
                                   payload_.substr(0, kSmallBytes), count));
}

Status ClusterBench::cleanup() {
  std::vector<std::string> names;
  for (int i = 0; i < large_written_; ++i) names.push_back(large_name(i));
  for (int i = 0; i < small_written_; ++i) names.push_back(small_name(i));
  return client_->run(remove_all(client_.get(), pool_, std::move(names)));
}

}  // namespace dfs::bench
