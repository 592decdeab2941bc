// The cluster side of objbench: 4 MiB write_full / read and sequential 4 KiB writes
// through libdfs's ObjectClient. The awaitable calls run on the client's own I/O
// thread; the phases block the calling thread (the benchmark's main thread) until done.
#pragma once

#include <memory>
#include <string>

#include "client-fuse/libdfs/object_client.h"
#include "tools/bench/objbench/options.h"
#include "tools/bench/objbench/phase.h"

namespace dfs::bench {

class ClusterBench : public BenchSide {
 public:
  // Finds the cluster config (-c, $DFS_CONF, /etc/dfs/dfs.conf), connects and checks
  // that the pool exists. Errors: kNotFound (no config), kInvalidArgument (no
  // mon_addrs), kUnavailable (no monitor answered), kNoSuchPool.
  static Result<std::unique_ptr<ClusterBench>> connect(const BenchOptions& options,
                                                       std::string payload);

  // Untimed: writes and removes a few small objects so that connections to the OSDs
  // exist before the first measurement. Errors: as write_small.
  Status warm_up();

  Result<Throughput> write_large(int first, int count) override;
  Result<Throughput> read_large(int first, int count) override;
  Result<std::vector<double>> write_small(int small, int count) override;
  // Removes every object written so far (removing a missing one succeeds).
  Status cleanup() override;

 private:
  ClusterBench(std::unique_ptr<client::ObjectClient> client, const BenchOptions& options,
               std::string payload);
  std::string large_name(int index) const;
  std::string small_name(int small) const;
  // Runs op(index) for index in [first, first + count) with depth_ in flight, on the
  // client's executor, stopping at the first error.
  Result<Throughput> run_parallel(int first, int count, bool write);

  std::unique_ptr<client::ObjectClient> client_;
  std::string pool_;
  int depth_;
  std::string payload_;    // 4 MiB of random bytes; each 4 KiB write sends its prefix
  std::string prefix_;     // "objbench.<pid>." so concurrent runs never collide
  int large_written_ = 0;  // objects [0, large_written_) may exist
  int small_written_ = 0;  // objects small.[0, small_written_) may exist
};

}  // namespace dfs::bench
