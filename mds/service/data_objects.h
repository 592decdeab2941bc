// DataObjects: the object operations the MDS itself performs on file data (truncation,
// uninlining, purging deleted files), so that tests can substitute memory for the
// cluster. Awaitable on the MDS's I/O executor.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/proto/mds.pb.h"
#include "common/rpc/asio.h"

namespace dfs::client {
class ObjectClient;
}

namespace dfs::mds {

class DataObjects {
 public:
  virtual ~DataObjects() = default;
  // Errors of all: kNoSuchPool, kTimeout, kUnavailable, kNoSpace.
  virtual awaitable<Status> write_full(std::string pool, std::string name, std::string data) = 0;
  // The object's size, or nullopt when it does not exist.
  virtual awaitable<Result<std::optional<uint64_t>>> stat(std::string pool, std::string name) = 0;
  virtual awaitable<Status> truncate(std::string pool, std::string name, uint64_t size) = 0;
  // Removing a missing object succeeds.
  virtual awaitable<Status> remove(std::string pool, std::string name) = 0;
};

// Over libdfs's ObjectClient (which runs its own I/O thread); `client` outlives it.
std::unique_ptr<DataObjects> make_cluster_data_objects(client::ObjectClient& client);

// Objects in memory (tests). Single-threaded like its callers.
class MemDataObjects final : public DataObjects {
 public:
  awaitable<Status> write_full(std::string pool, std::string name, std::string data) override;
  awaitable<Result<std::optional<uint64_t>>> stat(std::string pool, std::string name) override;
  awaitable<Status> truncate(std::string pool, std::string name, uint64_t size) override;
  awaitable<Status> remove(std::string pool, std::string name) override;

  // pool/name -> content
  std::map<std::string, std::string>& objects() { return objects_; }
  uint64_t removes() const { return removes_; }
  // While set, every remove fails with kUnavailable (as with the OSDs out of reach).
  void fail_removes(bool fail) { fail_removes_ = fail; }

 private:
  std::map<std::string, std::string> objects_;
  uint64_t removes_ = 0;
  bool fail_removes_ = false;
};

// Object work on a file's data; objects are named object_name(ino, index) in the
// layout's pool, object i holding bytes [i * object_size, (i + 1) * object_size).

// The layout's pool ("data" when unset).
std::string data_pool(const proto::Layout& layout);

// Cuts the file's data from `old_size` down to `new_size`: removes whole objects past
// it and truncates the one it ends in. A no-op when new_size >= old_size.
awaitable<Status> truncate_file_objects(DataObjects& data, uint64_t ino, proto::Layout layout,
                                        uint64_t old_size, uint64_t new_size);
// Removes every object of a file of `size` bytes.
awaitable<Status> remove_file_objects(DataObjects& data, uint64_t ino, proto::Layout layout,
                                      uint64_t size);

}  // namespace dfs::mds
