// Locks on the wire: proto::FileLock (mds.proto) to and from the lock table's HeldLock,
// for the MDS (LockService) and the client (which keeps its own table of what it holds,
// to re-assert after a failover). FileLock.kind 0 is a record lock (fcntl: POSIX and OFD
// alike, FUSE does not tell them apart), 2 a flock lock; type 0 read, 1 write, 2 unlock.
#pragma once

#include "common/locks/types.h"
#include "common/proto/mds.pb.h"

namespace dfs::locks {

inline constexpr uint32_t kWireRecordKind = 0;
inline constexpr uint32_t kWireFlockKind = 2;

OwnerKind owner_kind_of(uint32_t wire_kind);
// Errors: kInvalidArgument (a type other than 0, 1, 2).
Result<LockType> lock_type_of(uint32_t wire_type);
// The lock of session `s` that `lock` names (a flock lock covers the whole file).
// Errors: kInvalidArgument.
Result<HeldLock> from_proto(SessionId s, const proto::FileLock& lock);
proto::FileLock to_proto(const HeldLock& held);

}  // namespace dfs::locks
