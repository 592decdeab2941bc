// What the cluster and local sides of objbench have in common: the three measured
// phases, each returning either its timing or the error that stopped it.
#pragma once

#include <vector>

#include "common/status/status.h"
#include "tools/bench/objbench/stats.h"

namespace dfs::bench {

// One side of the comparison (the cluster, or files on the local disk). Objects and
// files are numbered; each side names and cleans up its own.
class BenchSide {
 public:
  virtual ~BenchSide() = default;
  // Writes 4 MiB items [first, first + count), `depth` at a time, each durable before it
  // counts as done. Returns the bytes and the wall time from the first start to the last
  // completion.
  virtual Result<Throughput> write_large(int first, int count) = 0;
  // Reads back items [first, first + count) written by write_large, `depth` at a time.
  // Errors: kCorruption when an item comes back with the wrong size.
  virtual Result<Throughput> read_large(int first, int count) = 0;
  // `count` 4 KiB writes, one at a time, each appended to item `small` and durable
  // before the next starts. Returns each write's latency in microseconds.
  virtual Result<std::vector<double>> write_small(int small, int count) = 0;
  // Removes everything this side wrote; errors are reported, never fatal.
  virtual Status cleanup() = 0;
};

}  // namespace dfs::bench
