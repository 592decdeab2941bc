// Drives one objbench run: splits the counts into rounds and, in each round, runs each
// phase on both sides back to back, alternating which side goes first, so that noise
// from other work on the machine lands on both alike. Before every 4 MiB phase of either
// side the page cache is dropped (when root; runner.cc says why). Progress goes to stderr.
#pragma once

#include <string>

#include "tools/bench/objbench/phase.h"
#include "tools/bench/objbench/report.h"

namespace dfs::bench {

struct RunResults {
  SideResults dfs;
  SideResults local;
  int cache_drops = 0;        // 4 MiB phases preceded by a page-cache drop
  int cache_drop_misses = 0;  // 4 MiB phases that could not drop it
  std::string cache_why_not;  // why not, when it could not
};

struct RunPlan {
  int large_count;
  int small_count;
  int depth;
  int rounds;
};

// Errors: the first failure of either side, with the phase and round as context.
Result<RunResults> run_interleaved(BenchSide& dfs, BenchSide& local, const RunPlan& plan);

}  // namespace dfs::bench
