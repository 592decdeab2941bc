#include "common/caps/inode_caps.h"

namespace dfs::caps {

Rights held_by_others(const InodeCaps& node, SessionId s) {
  Rights out;
  for (const auto& [id, cap] : node.caps) {
    if (id != s) out |= cap.held();
  }
  return out;
}

bool others_want(const InodeCaps& node, SessionId s) {
  for (const auto& [id, cap] : node.caps) {
    if (id != s && !cap.wanted.empty()) return true;
  }
  return false;
}

Rights mutation_bits_of_others(const InodeCaps& node, SessionId s) {
  Rights out;
  for (const MutationWait& m : node.mutations) {
    if (m.session != s) out |= m.bits;
  }
  return out;
}

Rights effective_want(const InodeCaps& node, SessionId s) {
  auto it = node.caps.find(s);
  if (it == node.caps.end()) return kNoRights;
  Rights wanted = it->second.wanted;
  return others_want(node, s) ? wanted - kExclusiveRights : wanted;
}

Rights recall_for_want(const InodeCaps& node, SessionId s, SessionId other) {
  auto mine = node.caps.find(s);
  auto theirs = node.caps.find(other);
  if (mine == node.caps.end() || theirs == node.caps.end() || mine->second.wanted.empty()) {
    return kNoRights;
  }
  Rights take = conflicting_with(effective_want(node, s)) | kExclusiveRights;
  return theirs->second.issued & take;
}

Rights leftovers_blocking(const InodeCaps& node, SessionId s, SessionId other) {
  auto mine = node.caps.find(s);
  auto theirs = node.caps.find(other);
  if (mine == node.caps.end() || theirs == node.caps.end()) return kNoRights;
  Rights missing = effective_want(node, s) - mine->second.issued;
  Rights leftovers = theirs->second.issued - theirs->second.wanted;
  return leftovers & conflicting_with(missing);
}

Rights grantable(const InodeCaps& node, SessionId s, Rights reserved) {
  auto it = node.caps.find(s);
  if (it == node.caps.end()) return kNoRights;
  const CapRecord& cap = it->second;
  Rights blocked =
      conflicting_with(held_by_others(node, s) | reserved) | mutation_bits_of_others(node, s);
  if (others_want(node, s)) blocked |= kExclusiveRights;
  return (cap.wanted - cap.issued) - blocked;
}

bool want_waits(const InodeCaps& node, SessionId s) {
  auto it = node.caps.find(s);
  if (it == node.caps.end()) return false;
  Rights wanted = effective_want(node, s);
  Rights others_revoking;
  for (const auto& [id, cap] : node.caps) {
    if (id != s) others_revoking |= cap.revoking;
  }
  return conflicting_with(others_revoking).intersects(wanted) ||
         mutation_bits_of_others(node, s).intersects(wanted);
}

}  // namespace dfs::caps
