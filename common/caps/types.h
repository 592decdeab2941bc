// The vocabulary of the capability protocol: who holds (a session), on what (an inode
// and its kind), and when (milliseconds passed in by the owner). Shared by the MDS side
// (CapTable) and the client side (ClientCaps); free of I/O, clocks and threads.
#pragma once

#include <cstdint>

namespace dfs::caps {

// One mount's session with the MDS. A client that restarts opens a new session: rights
// never pass from one session to another.
using SessionId = uint64_t;
using Ino = uint64_t;

// Milliseconds on the owner's monotonic clock. The protocol never reads a clock: every
// call that depends on time takes `now`. Only differences matter, so the MDS and a
// client may use clocks with different origins (not different rates).
using TimeMs = int64_t;

// Orders every Grant and Revoke of one session. The high 32 bits are the MDS
// incarnation (see CapTableOptions::incarnation), so anything a later instance sends
// orders after all that an earlier one sent, even when the network delivers it late.
using CapSeq = uint64_t;
inline constexpr CapSeq seq_base(uint32_t incarnation) {
  return static_cast<CapSeq>(incarnation) << 32;
}

enum class InodeKind : uint8_t { kFile, kDir };
const char* kind_name(InodeKind kind);

}  // namespace dfs::caps
