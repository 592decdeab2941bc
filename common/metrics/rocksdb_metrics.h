// A RocksDB database's own figures (keys, memtables, SST files, pending compaction) as
// Prometheus gauges, read from its properties at scrape time.
#pragma once

#include <rocksdb/db.h>

#include "common/metrics/registry.h"

namespace dfs::metrics {

// dfs_rocksdb_*{db="<name>"}: a property RocksDB cannot answer is left out.
void write_rocksdb_metrics(SampleWriter& w, const std::string& name, rocksdb::DB& db);

}  // namespace dfs::metrics
