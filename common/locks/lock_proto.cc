#include "common/locks/lock_proto.h"

namespace dfs::locks {

OwnerKind owner_kind_of(uint32_t wire_kind) {
  return wire_kind == kWireFlockKind ? OwnerKind::kFlock : OwnerKind::kPosix;
}

Result<LockType> lock_type_of(uint32_t wire_type) {
  switch (wire_type) {
    case 0: return LockType::kRead;
    case 1: return LockType::kWrite;
    case 2: return LockType::kUnlock;
    default: return make_error(ErrorCode::kInvalidArgument, "lock type " + std::to_string(wire_type));
  }
}

Result<HeldLock> from_proto(SessionId s, const proto::FileLock& lock) {
  HeldLock held;
  held.ino = lock.ino();
  held.owner = Owner{s, lock.owner(), owner_kind_of(lock.kind())};
  held.range = held.owner.kind == OwnerKind::kFlock ? Range::whole() : Range{lock.start(), lock.end()};
  held.type = DFS_TRY(lock_type_of(lock.type()));
  held.pid = lock.pid();
  return held;
}

proto::FileLock to_proto(const HeldLock& held) {
  proto::FileLock out;
  out.set_ino(held.ino);
  out.set_kind(held.owner.kind == OwnerKind::kFlock ? kWireFlockKind : kWireRecordKind);
  out.set_owner(held.owner.id);
  out.set_type(held.type == LockType::kWrite ? 1 : held.type == LockType::kRead ? 0 : 2);
  out.set_start(held.range.start);
  out.set_end(held.range.end);
  out.set_pid(held.pid);
  return out;
}

}  // namespace dfs::locks
