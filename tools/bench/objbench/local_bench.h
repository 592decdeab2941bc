// The local baseline of objbench: the same three phases on plain files in one
// directory of the local disk, with POSIX calls and fsync/fdatasync for durability.
// Deliberately outside Env: the point is to measure the raw file system the cluster's
// OSDs sit on. Large phases run `depth` std::threads; the rest runs on the caller.
#pragma once

#include <memory>
#include <string>

#include "tools/bench/objbench/options.h"
#include "tools/bench/objbench/phase.h"

namespace dfs::bench {

class LocalBench : public BenchSide {
 public:
  // Creates a fresh directory "objbench.<pid>" under `options.local_dir`.
  // Errors: kNotFound / kPermissionDenied / kIoError when it cannot be created.
  static Result<std::unique_ptr<LocalBench>> create(const BenchOptions& options,
                                                    std::string payload);

  // Each file: open(O_CREAT|O_TRUNC), write 4 MiB, fsync, close.
  Result<Throughput> write_large(int first, int count) override;
  // Each file: open, read to the end, close.
  Result<Throughput> read_large(int first, int count) override;
  // Each write: pwrite 4 KiB at the end of the file, then fdatasync.
  Result<std::vector<double>> write_small(int small, int count) override;
  // Unlinks every file and the directory.
  Status cleanup() override;

  const std::string& dir() const { return dir_; }

 private:
  LocalBench(std::string dir, int depth, std::string payload)
      : dir_(std::move(dir)), depth_(depth), payload_(std::move(payload)) {}
  std::string large_path(int index) const;
  std::string small_path(int small) const;
  Result<Throughput> run_parallel(int first, int count, bool write);
  Status write_file(const std::string& path) const;
  Status read_file(const std::string& path) const;

  std::string dir_;
  int depth_;
  std::string payload_;
  int large_written_ = 0;
  int small_written_ = 0;
};

}  // namespace dfs::bench
