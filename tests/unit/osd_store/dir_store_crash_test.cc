// Crash test with real kill -9: a child process (osd_store_crash_child) applies
// generation after generation and acknowledges each through a pipe; the parent kills it
// at a random moment, reopens the store and checks that it holds exactly one whole
// generation, no older than the last acknowledged one.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <random>

#include "tests/unit/osd_store/crash_workload.h"
#include "tests/support/kill_child.h"
#include "tests/unit/osd_store/store_fixtures.h"

namespace dfs::osd::testing {
namespace {

struct ChildRun {
  uint64_t last_ack = 0;
  bool acked = false;
  bool child_failed = false;
};

// Starts the child, kills it after `delay`, and collects its acknowledgements (the
// generation of each transaction it saw committed; UINT64_MAX reports a failure).
ChildRun run_child_and_kill(const std::string& path, std::chrono::milliseconds delay) {
  auto killed = test::run_and_kill({DFS_OSD_STORE_CRASH_CHILD, path, "3"}, delay);
  ChildRun run;
  run.child_failed = !killed.died_of_kill;
  for (size_t at = 0; at + sizeof(uint64_t) <= killed.reports.size(); at += sizeof(uint64_t)) {
    uint64_t gen = 0;
    std::memcpy(&gen, killed.reports.data() + at, sizeof gen);
    if (gen == UINT64_MAX) run.child_failed = true;
    run.last_ack = gen;
    run.acked = true;
  }
  return run;
}

TEST_CASE("osd/store/dir: kill -9 never exposes a torn or lost transaction") {
  TempDir dir;
  {
    DirStoreOptions o = crashtest::crash_store_options(dir.path());
    o.create = true;
    REQUIRE(open_dir_store(o).has_value());
  }
  uint64_t seed = test::test_seed();
  INFO("DFS_SEED=", seed);
  std::mt19937_64 rng(seed);
  crashtest::Model model;  // the last verified generation
  uint64_t total_generations = 0;
  for (int round = 0; round < 15; ++round) {
    INFO("round ", round);
    auto delay = std::chrono::milliseconds(30 + rng() % 200);
    ChildRun run = run_child_and_kill(dir.path(), delay);
    REQUIRE_MESSAGE(!run.child_failed, "the child failed; see its stderr");

    auto opened = open_dir_store(crashtest::crash_store_options(dir.path()));
    REQUIRE_MESSAGE(opened.has_value(), why(opened));
    ObjectStore& store = **opened;
    auto gen_meta = store.get_meta("gen");
    REQUIRE(gen_meta.has_value());
    uint64_t gen = gen_meta->has_value() ? std::stoull(**gen_meta) : 0;
    uint64_t floor = run.acked ? run.last_ack : model.gen;
    // At most the one generation in flight when the kill came may be extra.
    REQUIRE(gen >= floor);
    REQUIRE(gen <= floor + 1);
    total_generations += gen - model.gen;
    while (model.gen < gen) (void)crashtest::next_generation(model);
    std::string diff = crashtest::diff_store(store, model);
    CHECK_MESSAGE(diff.empty(), "generation ", gen, ": ", diff);
  }
  MESSAGE("crash test: ", total_generations, " generations over 15 kills, seed ", seed);
  CHECK(total_generations > 0);  // the kills landed after the child got going
}

}  // namespace
}  // namespace dfs::osd::testing
