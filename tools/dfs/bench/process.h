// Running the programs a benchmark drives (fio, rsync, tar, python3) and timing them.
#pragma once

#include <string>
#include <vector>

namespace dfs::bench {

struct ProcessResult {
  int exit_status = -1;  // -1: did not start; 128+N: killed by signal N
  std::string out;       // its stdout
  std::string err;       // its stderr (the last 4 KiB)
  double seconds = 0;    // wall time
  bool ok() const { return exit_status == 0; }
  // "exit status 2: <last line of stderr>" for a report.
  std::string failure() const;
};

// Runs argv[0] (found on PATH) in `cwd` (empty: here) and waits for it.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd = "");

}  // namespace dfs::bench
