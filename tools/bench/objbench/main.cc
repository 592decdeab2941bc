// objbench: the object-tier benchmark. Measures 4 MiB write and read bandwidth and
// 4 KiB durable-write latency through libdfs against the same operations on local
// files, interleaved in one run, and prints a table with the targets.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <random>

#include "tools/bench/objbench/cluster_bench.h"
#include "tools/bench/objbench/local_bench.h"
#include "tools/bench/objbench/runner.h"

namespace dfs::bench {
namespace {

// Random bytes, so that nothing on the way can compress or deduplicate them.
std::string make_payload() {
  std::mt19937_64 random(0x0b1b3c4);
  std::string payload(kLargeBytes, '\0');
  for (size_t i = 0; i + 8 <= payload.size(); i += 8) {
    uint64_t word = random();
    std::memcpy(payload.data() + i, &word, 8);
  }
  return payload;
}

void add_options(CLI::App& app, BenchOptions& o) {
  app.add_option(
      "-c,--conf", o.conf,
      "cluster config to read mon_addrs from (default $DFS_CONF, then /etc/dfs/dfs.conf)");
  app.add_option("--pool", o.pool, "pool to write the benchmark objects to (must exist)")
      ->capture_default_str();
  app.add_option("--local-dir", o.local_dir,
                 "directory for the local baseline's files; put it on the file system that holds "
                 "the OSDs' data")
      ->capture_default_str();
  app.add_option("--large-count", o.large_count,
                 "4 MiB objects to write and read back, and as many local files")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--small-count", o.small_count,
                 "sequential 4 KiB durable writes per side (latency samples)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  app.add_option("--depth", o.depth,
                 "4 MiB operations in flight (coroutines for dfs, threads locally)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--rounds", o.rounds,
                 "rounds the counts are split over; sides alternate going first each round")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--timeout", o.timeout_s, "seconds to wait for the cluster before giving up")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_flag("--markdown", o.markdown, "print the results table as Markdown");
}

void print_notes(const BenchOptions& o, const RunResults& run, const LocalBench& local) {
  fmt::print("\n{} x 4 MiB and {} x 4 KiB per side, depth {}, {} rounds; pool '{}', local dir {}\n",
             o.large_count, o.small_count, o.depth, o.rounds, o.pool, local.dir());
  if (run.cache_drop_misses == 0) {
    fmt::print(
        "page cache: dropped before each of the {} 4 MiB write and read phases (both sides)\n",
        run.cache_drops);
  } else {
    fmt::print(
        "page cache: NOT dropped before {} of {} 4 MiB phases ({}); reads may come from memory\n",
        run.cache_drop_misses, run.cache_drops + run.cache_drop_misses, run.cache_why_not);
  }
  fmt::print(
      "MB = 10^6 bytes. Ratios are dfs / local. On a dev cluster all replicas share one disk.\n");
}

int run(const BenchOptions& options) {
  std::string payload = make_payload();
  fmt::print(stderr, "objbench: connecting to the cluster\n");
  auto cluster = ClusterBench::connect(options, payload);
  if (!cluster) {
    fmt::print(stderr, "objbench: {}\n", cluster.error().to_string());
    return 1;
  }
  auto local = LocalBench::create(options, payload);
  if (!local) {
    fmt::print(stderr, "objbench: {}\n", local.error().to_string());
    return 1;
  }
  auto warmed = (*cluster)->warm_up();
  RunPlan plan{options.large_count, options.small_count, options.depth, options.rounds};
  auto results = warmed ? run_interleaved(**cluster, **local, plan)
                        : Result<RunResults>(warmed.error().with_context("warming up"));
  fmt::print(stderr, "objbench: cleaning up\n");
  auto cleaned = (*cluster)->cleanup();
  if (!cleaned) fmt::print(stderr, "objbench: warning: {}\n", cleaned.error().to_string());
  cleaned = (*local)->cleanup();
  if (!cleaned) fmt::print(stderr, "objbench: warning: {}\n", cleaned.error().to_string());
  if (!results) {
    fmt::print(stderr, "objbench: {}\n", results.error().to_string());
    return 1;
  }
  auto rows = make_rows(results->dfs, results->local);
  print_table(stdout, rows, options.markdown);
  print_notes(options, *results, **local);
  for (const auto& line : verdict(rows)) fmt::print("{}\n", line);
  return 0;  // a measurement, not a test: a missed target is reported, not an error
}

}  // namespace
}  // namespace dfs::bench

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  CLI::App app{
      "objbench: the object-tier benchmark. Writes and reads 4 MiB objects (several in "
      "flight) and times sequential durable 4 KiB writes through libdfs, does the same "
      "with files and fsync on the local disk, interleaved in one run, and prints each "
      "figure with its dfs/local ratio against the object tier's targets. Run as root so "
      "that the page cache can be dropped before each 4 MiB write and read phase."};
  dfs::bench::BenchOptions options;
  dfs::bench::add_options(app, options);
  CLI11_PARSE(app, argc, argv);
  if (options.rounds > options.large_count) options.rounds = options.large_count;
  return dfs::bench::run(options);
}
