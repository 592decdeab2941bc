// MapStore: the monitor's durable copy of the cluster map: every committed
// incremental and the latest full map, in RocksDB, written with sync before the
// monitor acknowledges a change. Blocking; owned by the Monitor.
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

  const proto::ClusterMap& latest() const { return latest_; }

  // Durably records `incremental` and the map it produced. Errors: kIoError.
  Status commit(const proto::MapIncremental& incremental, const proto::ClusterMap& result);

  // Incrementals (from, to], or nullopt when some of them are no longer kept.
  std::optional<std::vector<proto::MapIncremental>> incrementals(uint64_t from, uint64_t to) const;

 private:
  explicit MapStore(std::unique_ptr<rocksdb::DB> db);
  Status load();

  std::unique_ptr<rocksdb::DB> db_;
  proto::ClusterMap latest_;
};

}  // namespace dfs::mon
