// The fio suite of `dfs bench`: the matrix of jobs (the one public Ceph-versus-Longhorn
// comparisons use), fio's command line for each, and the figures read from fio's JSON.
#pragma once

#include <string>
#include <vector>

#include "common/status/status.h"

namespace dfs::bench {

struct FioJob {
  std::string rw;  // read, write, randread, randwrite
  uint64_t block_bytes = 4096;
  int numjobs = 1;
  int iodepth = 8;
};

// Block sizes 4k, 8k, 16k, 64k, 1m, 4m, 32m x rw read, write, randread, randwrite x
// numjobs 1 and 8, iodepth 8. `quick`: 4k, 64k and 1m, numjobs 1, for a run of minutes.
std::vector<FioJob> fio_matrix(bool quick);

// "4k", "1m", "32m".
std::string block_label(uint64_t bytes);

struct FioRun {
  std::string directory;
  uint64_t size_bytes = 64ull << 20;  // per job
  int runtime_s = 10;
  bool direct = true;  // O_DIRECT; off where the target refuses it
};

// fio's arguments (after "fio"), JSON output on stdout.
std::vector<std::string> fio_arguments(const FioJob& job, const FioRun& run);

struct FioResult {
  double bytes_per_s = 0;
  double iops = 0;
  double p50_us = 0;  // completion latency percentiles
  double p99_us = 0;
  double p999_us = 0;
};

// Reads the figures of `rw`'s direction ("read" for read/randread, else "write") from
// fio's --output-format=json, the jobs summed (group_reporting gives one).
// Errors: kInvalidArgument (not JSON, cut short, no jobs: fio failed before running),
// kIoError (a job reports an error: fio ran and the I/O failed).
Result<FioResult> parse_fio_json(const std::string& json, const std::string& rw);

}  // namespace dfs::bench
