// `dfs pg scrub|deep-scrub POOL [PG...]`: compare each PG's replicas now (deep: their
// data too, through the block checksums) and repair what differs; see osd/pg/scrub.cc.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <tuple>

#include "tools/dfs/cli_context.h"

namespace dfs::cli {
namespace {

struct ScrubArgs {
  std::string pool;
  std::vector<uint32_t> pgs;  // empty: every PG of the pool
};

int scrub(const GlobalOptions& global, const ScrubArgs& args, bool deep) {
  const std::string verb = deep ? "deep-scrub" : "scrub";
  auto client = connect_client(global);
  if (!client) return report("pg " + verb, client.error());
  auto& c = **client;
  std::vector<uint32_t> pgs = args.pgs;
  if (pgs.empty()) {
    ClusterMap map = c.map_snapshot();
    const auto* pool = map.pool_by_name(args.pool);
    if (!pool) return report("pg " + verb, Error(ErrorCode::kNoSuchPool, "pool '" + args.pool + "' does not exist"));
    for (uint32_t pg = 0; pg < pool->pg_num(); ++pg) pgs.push_back(pg);
  }
  uint64_t objects = 0, inconsistent = 0, repaired = 0;
  size_t failed = 0;
  for (size_t i = 0; i < pgs.size(); ++i) {
    if (isatty(STDERR_FILENO)) {
      fmt::print(stderr, "\r{}: pg {} of {}...", verb, i + 1, pgs.size());
      std::fflush(stderr);
    }
    auto result = c.run(c.scrub_pg(args.pool, pgs[i], deep));
    if (isatty(STDERR_FILENO)) fmt::print(stderr, "\r\033[K");
    if (!result) {
      ++failed;
      report(fmt::format("pg {} {}", verb, pgs[i]), result.error());
      continue;
    }
    objects += result->objects();
    inconsistent += result->inconsistent();
    repaired += result->repaired();
    if (result->inconsistent() > 0) {
      fmt::print("pg {}: {} objects, {} inconsistent, {} repaired\n", pgs[i], result->objects(),
                 result->inconsistent(), result->repaired());
      for (const auto& finding : result->findings()) fmt::print("  {}\n", finding);
    }
  }
  fmt::print("pool {}: {} PGs {}bed, {} objects: {} inconsistent, {} repaired{}\n", args.pool,
             pgs.size() - failed, verb, objects, inconsistent, repaired,
             failed ? fmt::format("; {} PGs could not be scrubbed", failed) : "");
  return failed > 0 || repaired < inconsistent ? 1 : 0;
}

}  // namespace

void add_pg_commands(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto* pg = app.add_subcommand("pg", "placement groups: scrub and repair");
  pg->require_subcommand(1);
  static ScrubArgs args;
  for (auto [verb, help, deep] :
       {std::tuple{"scrub", "compare each PG's replicas (objects, versions, sizes) and repair what differs", false},
        std::tuple{"deep-scrub", "also read every replica's data through its checksums and compare it; repair what differs", true}}) {
    auto* cmd = pg->add_subcommand(verb, help);
    cmd->add_option("pool", args.pool, "pool name")->required();
    cmd->add_option("pg", args.pgs, "PG numbers (default: every PG of the pool)");
    cmd->callback([&global, &exit_code, deep = deep] { exit_code = scrub(global, args, deep); });
  }
}

}  // namespace dfs::cli
