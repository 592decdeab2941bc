#include "mds/service/data_objects.h"

#include "client-fuse/libdfs/object_client.h"
#include "mds/store/keys.h"

namespace dfs::mds {
namespace {

constexpr size_t kParallelObjectOps = 32;
constexpr uint64_t kDefaultObjectSize = 4u << 20;

class ClusterDataObjects final : public DataObjects {
 public:
  explicit ClusterDataObjects(client::ObjectClient& client) : client_(client) {}

  // Results of co_await get names: GCC 12 mishandles non-trivial temporaries in a
  // full-expression that suspends.
  awaitable<Status> write_full(std::string pool, std::string name, std::string data) override {
    auto r = co_await asio::co_spawn(
        client_.executor(), client_.write_full(std::move(pool), std::move(name), std::move(data)),
        asio::use_awaitable);
    co_return status_of(r);
  }

  awaitable<Result<std::optional<uint64_t>>> stat(std::string pool, std::string name) override {
    auto r = co_await asio::co_spawn(
        client_.executor(), client_.stat(std::move(pool), std::move(name)), asio::use_awaitable);
    if (r) co_return std::optional<uint64_t>(r->size);
    if (r.error().code() == ErrorCode::kNotFound) co_return std::optional<uint64_t>();
    co_return unexpected(std::move(r).error());
  }

  awaitable<Status> truncate(std::string pool, std::string name, uint64_t size) override {
    auto r = co_await asio::co_spawn(client_.executor(),
                                     client_.truncate(std::move(pool), std::move(name), size),
                                     asio::use_awaitable);
    co_return status_of(r);
  }

  awaitable<Status> remove(std::string pool, std::string name) override {
    auto r = co_await asio::co_spawn(
        client_.executor(), client_.remove(std::move(pool), std::move(name)), asio::use_awaitable);
    co_return status_of(r);
  }

 private:
  static Status status_of(const Result<proto::WriteReply>& r) {
    if (r) return ok_status();
    return r.error();
  }

  client::ObjectClient& client_;
};

std::string mem_key(const std::string& pool, const std::string& name) { return pool + "/" + name; }

uint64_t object_size_of(const proto::Layout& layout) {
  return layout.object_size() ? layout.object_size() : kDefaultObjectSize;
}

// Removes objects [first, end) of `ino`, kParallelObjectOps at a time.
awaitable<Status> remove_range(DataObjects& data, uint64_t ino, std::string pool, uint64_t first,
                               uint64_t end) {
  for (uint64_t at = first; at < end;) {
    std::vector<awaitable<Status>> batch;
    for (; at < end && batch.size() < kParallelObjectOps; ++at) {
      batch.push_back(data.remove(pool, object_name(ino, at)));
    }
    auto results = co_await gather(std::move(batch));
    for (auto& s : results) {
      if (!s) co_return std::move(s).error().with_context("while removing file objects");
    }
  }
  co_return ok_status();
}

}  // namespace

std::string data_pool(const proto::Layout& layout) {
  return layout.pool().empty() ? std::string("data") : layout.pool();
}

std::unique_ptr<DataObjects> make_cluster_data_objects(client::ObjectClient& client) {
  return std::make_unique<ClusterDataObjects>(client);
}

awaitable<Status> MemDataObjects::write_full(std::string pool, std::string name, std::string data) {
  objects_[mem_key(pool, name)] = std::move(data);
  co_return ok_status();
}

awaitable<Result<std::optional<uint64_t>>> MemDataObjects::stat(std::string pool,
                                                                std::string name) {
  auto it = objects_.find(mem_key(pool, name));
  if (it == objects_.end()) co_return std::optional<uint64_t>();
  co_return std::optional<uint64_t>(it->second.size());
}

awaitable<Status> MemDataObjects::truncate(std::string pool, std::string name, uint64_t size) {
  objects_[mem_key(pool, name)].resize(size, '\0');
  co_return ok_status();
}

awaitable<Status> MemDataObjects::remove(std::string pool, std::string name) {
  if (fail_removes_) co_return make_error(ErrorCode::kUnavailable, "removes fail (test)");
  ++removes_;
  objects_.erase(mem_key(pool, name));
  co_return ok_status();
}

awaitable<Status> truncate_file_objects(DataObjects& data, uint64_t ino, proto::Layout layout,
                                        uint64_t old_size, uint64_t new_size) {
  if (new_size >= old_size) co_return ok_status();
  uint64_t os = object_size_of(layout);
  std::string pool = data_pool(layout);
  uint64_t end = (old_size + os - 1) / os;
  uint64_t first_whole = (new_size + os - 1) / os;
  DFS_CO_AWAIT_CHECK(remove_range(data, ino, pool, first_whole, end));
  if (new_size % os != 0) {
    std::string name = object_name(ino, new_size / os);
    DFS_CO_AWAIT_TRY(auto size, data.stat(pool, name));
    if (size && *size > new_size % os) DFS_CO_AWAIT_CHECK(data.truncate(pool, name, new_size % os));
  }
  co_return ok_status();
}

awaitable<Status> remove_file_objects(DataObjects& data, uint64_t ino, proto::Layout layout,
                                      uint64_t size) {
  uint64_t os = object_size_of(layout);
  auto removed = co_await remove_range(data, ino, data_pool(layout), 0, (size + os - 1) / os);
  co_return removed;
}

}  // namespace dfs::mds
