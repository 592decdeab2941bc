// The randomized checker of LockTable: one seeded run of random lock operations by several sessions
// and owners of every kind on a few inodes (locks, unlocks, probes, cancels, releases, evictions,
// failovers with re-assertion), held after every operation to LockModel and to the queue rules
// written out again here:
//   - no two owners hold conflicting locks on any byte;
//   - the table's locks are the model's, as disjoint maximal ranges;
//   - test() reports a conflict exactly when the model has one, and a real one;
//   - each reply fits the model (granted only if free, refused or queued only if not, EDEADLK
//     exactly when a POSIX wait closes a cycle);
//   - the queues are the requests queued, in FIFO order, and each still waits on a real conflict: a
//     held lock or, when its owner yields, an earlier queued request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/locks/lock_table.h"

namespace dfs::locks::test {

struct CheckerOptions {
  uint64_t seed = 1;
  size_t ops = 300;
  LockTableOptions table{.max_waiters_per_inode = 5, .reassert_grace_ms = 100};
  bool trace = false;  // keep every event (else the last ones only)
};

struct CheckerStats {
  size_t granted = 0;  // at once
  size_t queued = 0;
  size_t woken = 0;  // queued, then granted
  size_t refused = 0;
  size_t deadlocks = 0;
  size_t no_locks = 0;
  size_t cancels = 0;
  size_t evictions = 0;
  size_t failovers = 0;
  size_t probes_conflicting = 0;

  void add(const CheckerStats& o);
  std::string to_string() const;
};

struct CheckerResult {
  std::vector<std::string> violations;
  std::vector<std::string> events;
  CheckerStats stats;
};

CheckerResult run_checker(const CheckerOptions& options);

}  // namespace dfs::locks::test
