// MapStore: the monitor's RocksDB. It holds the genesis map (written by --mkfs: epoch 0
// and the fsid; on a store made before the monitors used Raft, the last map that
// monitor committed) and, under the prefix "raft/<group>/", the Raft log whose entries
// are the map commands since (common/map/FORMAT.md). Blocking; owned by the Monitor.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/proto/map.pb.h"
#include "common/status/status.h"

namespace rocksdb {
class DB;
}

namespace dfs::mon {

class MapStore {
 public:
  // Creates a store holding an empty map (epoch 0) with `fsid`.
  // Errors: kAlreadyExists (a store is there), kIoError.
  static Status create(const std::string& path, const std::string& fsid);
  // Errors: kNotFound (run dfs-mon --mkfs first), kCorruption, kIoError.
  static Result<std::unique_ptr<MapStore>> open(const std::string& path);
  ~MapStore();

  // The map the Raft log starts from.
  const proto::ClusterMap& genesis() const { return latest_; }
  // The database, for the Raft log storage (raft::RocksStorage). Lives as long as the store.
  rocksdb::DB* db() { return db_.get(); }

 private:
  explicit MapStore(std::unique_ptr<rocksdb::DB> db);
  Status load();

  std::unique_ptr<rocksdb::DB> db_;
  proto::ClusterMap latest_;
};

}  // namespace dfs::mon
