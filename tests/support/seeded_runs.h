// How a seeded randomized test learns what to run, from its environment (read once per
// test case): DFS_SEED=n replays seed n alone (with its trace), and a per-test variable
// (DFS_SIM_SEEDS, DFS_LOCK_SEEDS) sets how many seeds a full run covers.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>

namespace dfs::test {

// The seed named by DFS_SEED, if it is set and not empty.
inline std::optional<uint64_t> replay_seed() {
  const char* v = std::getenv("DFS_SEED");
  if (!v || !*v) return std::nullopt;
  return std::strtoull(v, nullptr, 10);
}

// The number of seeds in `variable`, or `fallback` when it is unset or empty.
inline uint64_t seed_count(const char* variable, uint64_t fallback) {
  const char* v = std::getenv(variable);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

}  // namespace dfs::test
