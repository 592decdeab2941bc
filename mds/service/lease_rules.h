// The timing rules of caching rights (docs/capabilities.md, "Sessions, leases and
// eviction" and "Failover"): the lease a session open or renewal grants, and how long a
// new active MDS's reconnect phase waits. MdsService applies them, and the rights
// simulation (tests/sim/rights) runs the same definitions, so that what it checks is
// what the daemon does.
#pragma once

#include <algorithm>
#include <optional>

#include "common/rpc/asio.h"

namespace dfs::mds::lease_rules {

// The earlier of two deadlines (either may be absent).
inline std::optional<Clock::time_point> earliest(std::optional<Clock::time_point> a,
                                                 std::optional<Clock::time_point> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// The lease granted at `now`: the session timeout, cut so that it ends by `recall_due`,
// the deadline of the session's oldest unanswered recall, when there is one. A mount
// whose connection broke under a recall and renewed on a new one before the resent
// recall reached it must have stopped using its rights when the deadline evicts it. The
// client counts three quarters of the lease from before it asked, hence 4/3 of the time
// left. At least 1 ms.
inline Duration granted(Duration session_timeout, std::optional<Clock::time_point> recall_due,
                        Clock::time_point now) {
  if (!recall_due) return session_timeout;
  auto left = std::chrono::duration_cast<Duration>(*recall_due - now);
  return std::min(session_timeout, std::max(Duration(1), left * 4 / 3));
}

// How long a new active MDS waits for the sessions of the previous instance before it
// serves anyone else: the grace, or, if longer, the longest lease granted before (a
// mount stopped across the takeover may go on using its rights that long).
inline Duration reconnect_wait(Duration reconnect_grace, Duration session_timeout) {
  return std::max(reconnect_grace, session_timeout * 3 / 4);
}

}  // namespace dfs::mds::lease_rules
