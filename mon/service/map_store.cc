#include "mon/service/map_store.h"

#include <rocksdb/db.h>

#include <filesystem>

namespace dfs::mon {
namespace {

constexpr char kLatestKey[] = "map/latest";

Error from_rocks(const rocksdb::Status& s, const std::string& what) {
  auto code = s.IsCorruption() ? ErrorCode::kCorruption
              : s.IsNoSpace()  ? ErrorCode::kNoSpace
                               : ErrorCode::kIoError;
  return Error(code, what + ": " + s.ToString());
}

Result<std::unique_ptr<rocksdb::DB>> open_db(const std::string& path, bool create) {
  rocksdb::Options options;
  options.create_if_missing = create;
  options.error_if_exists = create;
  options.keep_log_file_num = 3;
  rocksdb::DB* raw = nullptr;
  auto s = rocksdb::DB::Open(options, path, &raw);
  if (!s.ok()) {
    if (!create && (s.IsInvalidArgument() || s.IsPathNotFound())) {
      return make_error(ErrorCode::kNotFound,
                        "no monitor store at " + path + " (run dfs-mon --mkfs first)");
    }
    return unexpected(from_rocks(s, "opening monitor store " + path));
  }
  return std::unique_ptr<rocksdb::DB>(raw);
}

}  // namespace

MapStore::MapStore(std::unique_ptr<rocksdb::DB> db) : db_(std::move(db)) {}
MapStore::~MapStore() = default;

Status MapStore::create(const std::string& path, const std::string& fsid) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (std::filesystem::exists(path + "/CURRENT")) {
    return make_error(ErrorCode::kAlreadyExists, "a monitor store already exists at " + path);
  }
  auto db = DFS_TRY(open_db(path, true));
  proto::ClusterMap empty;
  empty.set_fsid(fsid);
  empty.set_next_pool_id(1);
  rocksdb::WriteOptions sync;
  sync.sync = true;
  auto s = db->Put(sync, kLatestKey, empty.SerializeAsString());
  if (!s.ok()) return unexpected(from_rocks(s, "writing the initial map"));
  return ok_status();
}

Result<std::unique_ptr<MapStore>> MapStore::open(const std::string& path) {
  auto db = DFS_TRY(open_db(path, false));
  std::unique_ptr<MapStore> store(new MapStore(std::move(db)));
  DFS_TRY_STATUS(store->load());
  return store;
}

Status MapStore::load() {
  std::string value;
  auto s = db_->Get(rocksdb::ReadOptions(), kLatestKey, &value);
  if (!s.ok()) return unexpected(from_rocks(s, "reading the latest map"));
  if (!latest_.ParseFromString(value)) {
    return make_error(ErrorCode::kCorruption, "the stored cluster map does not decode");
  }
  return ok_status();
}

}  // namespace dfs::mon
