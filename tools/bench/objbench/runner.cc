#include "tools/bench/objbench/runner.h"

#include <fmt/format.h>

#include <array>

#include "tools/bench/objbench/page_cache.h"

namespace dfs::bench {
namespace {

struct Side {
  const char* name;
  BenchSide* bench;
  SideResults* results;
};

// [first, first + count) of `total` items for `round` of `rounds`: as even as possible.
std::pair<int, int> share(int total, int round, int rounds) {
  int first = total * round / rounds;
  return {first, total * (round + 1) / rounds - first};
}

// Before every 4 MiB phase of either side. Before reads, so they come from the disk;
// before writes, so both sides start from the same memory state: without it, the side
// that writes second must first reclaim the page cache the other side just filled (3x
// more of it for dfs, whose three replicas share this machine), which measurably slowed
// the baseline far more than dfs.
void drop_cache(RunResults& run) {
  std::string why_not;
  if (drop_page_cache(&why_not)) {
    ++run.cache_drops;
  } else {
    ++run.cache_drop_misses;
    run.cache_why_not = why_not;
  }
}

Status run_round(std::array<Side, 2> sides, RunResults& run, const RunPlan& plan, int round) {
  auto [first, count] = share(plan.large_count, round, plan.rounds);
  int small_count = share(plan.small_count, round, plan.rounds).second;
  auto where = [&](const Side& s, const char* phase) {
    return fmt::format("{} {} in round {}", s.name, phase, round + 1);
  };
  auto progress = [&](const Side& s, std::string what) {
    fmt::print(stderr, "objbench: round {}/{}: {:<5} {}\n", round + 1, plan.rounds, s.name, what);
  };
  for (const auto& s : sides) {
    if (count == 0) break;
    drop_cache(run);
    auto t = s.bench->write_large(first, count);
    if (!t) return unexpected(t.error().with_context(where(s, "4 MiB writes")));
    s.results->write.add(*t);
    progress(s, fmt::format("{} x 4 MiB writes  {:8.1f} MB/s", count, t->mb_per_s()));
  }
  for (const auto& s : sides) {
    if (count == 0) break;
    drop_cache(run);
    auto t = s.bench->read_large(first, count);
    if (!t) return unexpected(t.error().with_context(where(s, "4 MiB reads")));
    s.results->read.add(*t);
    progress(s, fmt::format("{} x 4 MiB reads   {:8.1f} MB/s", count, t->mb_per_s()));
  }
  for (const auto& s : sides) {
    if (small_count == 0) break;
    auto lat = s.bench->write_small(round, small_count);
    if (!lat) return unexpected(lat.error().with_context(where(s, "4 KiB writes")));
    s.results->small_us.insert(s.results->small_us.end(), lat->begin(), lat->end());
    auto sum = summarize(*lat);
    progress(s, fmt::format("{} x 4 KiB writes  p50 {:.0f} µs, p99 {:.0f} µs", small_count,
                            sum.p50_us, sum.p99_us));
  }
  return ok_status();
}

}  // namespace

Result<RunResults> run_interleaved(BenchSide& dfs, BenchSide& local, const RunPlan& plan) {
  RunResults run;
  Side d{"dfs", &dfs, &run.dfs};
  Side l{"local", &local, &run.local};
  for (int round = 0; round < plan.rounds; ++round) {
    // Alternate who goes first: whatever the first side leaves behind (dirty pages,
    // background journal trimming) then weighs on both equally often.
    auto sides = round % 2 == 0 ? std::array<Side, 2>{d, l} : std::array<Side, 2>{l, d};
    DFS_TRY_STATUS(run_round(sides, run, plan, round));
  }
  return run;
}

}  // namespace dfs::bench
