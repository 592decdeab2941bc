// Deadlock detection over the owner-level wait-for graph: an owner waits for every owner its queued
// requests wait for. The graph is not stored; LockTable hands in a function that computes an
// owner's out-edges from the current locks and queues.
#pragma once

#include <functional>
#include <set>

#include "common/locks/types.h"

namespace dfs::locks {

using WaitsFor = std::function<std::set<Owner>(const Owner&)>;

// Whether `target` is reachable from any owner in `from` by following `waits_for`: if `target` now
// starts waiting for `from`, the wait would close a cycle. Each owner is visited once, so the cost
// is linear in the waiting owners and their edges.
bool reaches(const std::set<Owner>& from, const Owner& target, const WaitsFor& waits_for);

}  // namespace dfs::locks
