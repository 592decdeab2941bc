// The invariants of the capability protocol, checked by the simulation after every
// event (safety) and once everything has healed (liveness). Each appends a readable
// violation to `out`; an empty `out` means the state is sound.
#pragma once

#include <string>
#include <vector>

#include "common/caps/cap_table.h"
#include "tests/sim/caps/sim_client.h"

namespace dfs::caps::sim {

struct CheckScope {
  const CapTable* table = nullptr;
  const std::vector<SimClient>* clients = nullptr;
  const SimStorage* storage = nullptr;
  const std::vector<InodeInfo>* inodes = nullptr;
  TimeMs now = 0;
  TimeMs tick_ms = 0;
};

// 1. No two non-fenced sessions may use conflicting rights on an inode (clients' view).
// 2. The MDS counts (issued | revoking) everything a non-fenced client may use.
// 3. No recall stays unacknowledged past session_timeout + one tick without eviction.
// 4. No session has rights on more than max_caps_per_session inodes (recalls aside).
// 5. A fenced session may use nothing: its lease ended before the fence, so it serves
//    no cached state (its writes are refused by the storage, counted by the clients).
void check_safety(const CheckScope& scope, std::vector<std::string>& out);

// After the faults stopped and the system had time to heal: every want answered, every
// mutation applied, no recall or reconnect in progress, and a session alone in wanting
// rights on an inode holds all it wants (the fast path is back).
void check_settled(const CheckScope& scope, std::vector<std::string>& out);

}  // namespace dfs::caps::sim
