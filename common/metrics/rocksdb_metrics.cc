#include "common/metrics/rocksdb_metrics.h"

namespace dfs::metrics {

void write_rocksdb_metrics(SampleWriter& w, const std::string& name, rocksdb::DB& db) {
  struct Property {
    const std::string& key;
    const char* metric;
    const char* help;
  };
  const Property properties[] = {
      {rocksdb::DB::Properties::kEstimateNumKeys, "dfs_rocksdb_estimated_keys", "estimated live keys"},
      {rocksdb::DB::Properties::kCurSizeAllMemTables, "dfs_rocksdb_memtable_bytes",
       "bytes in active and unflushed memtables"},
      {rocksdb::DB::Properties::kTotalSstFilesSize, "dfs_rocksdb_sst_bytes", "bytes of all SST files"},
      {rocksdb::DB::Properties::kLiveSstFilesSize, "dfs_rocksdb_live_sst_bytes",
       "bytes of the SST files of the current version"},
      {rocksdb::DB::Properties::kEstimatePendingCompactionBytes,
       "dfs_rocksdb_pending_compaction_bytes", "bytes compaction still has to rewrite (estimate)"},
      {rocksdb::DB::Properties::kNumRunningCompactions, "dfs_rocksdb_running_compactions",
       "compactions running now"},
      {rocksdb::DB::Properties::kNumImmutableMemTable, "dfs_rocksdb_immutable_memtables",
       "memtables waiting to be flushed"},
  };
  for (const auto& p : properties) {
    uint64_t value = 0;
    if (db.GetIntProperty(p.key, &value)) w.gauge(p.metric, p.help, {{"db", name}}, static_cast<double>(value));
  }
}

}  // namespace dfs::metrics
