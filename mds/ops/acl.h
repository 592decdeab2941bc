// POSIX ACLs in the kernel's xattr form (system.posix_acl_access/default): a
// little-endian version word (2) then entries {le16 tag, le16 perm, le32 id}. With
// FUSE's POSIX ACL support the kernel enforces ACLs, and the file system keeps the
// mode in sync with the access ACL and inherits default ACLs on create; these are the
// kernel's algorithms (fs/posix_acl.c) for that. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status/status.h"

namespace dfs::mds {

struct AclEntry {
  uint16_t tag = 0;
  uint16_t perm = 0;
  uint32_t id = 0;
};

inline constexpr uint16_t kAclUserObj = 0x01;
inline constexpr uint16_t kAclUser = 0x02;
inline constexpr uint16_t kAclGroupObj = 0x04;
inline constexpr uint16_t kAclGroup = 0x08;
inline constexpr uint16_t kAclMask = 0x10;
inline constexpr uint16_t kAclOther = 0x20;

// Parses and validates (sorted tags, the three base entries, a mask when named
// entries exist). Errors: kInvalidArgument.
Result<std::vector<AclEntry>> parse_acl(std::string_view xattr);
std::string encode_acl(const std::vector<AclEntry>& acl);

// posix_acl_equiv_mode: sets the permission bits of `mode` from the ACL; returns
// whether the ACL holds more than the mode can say (named entries or a mask).
bool acl_equiv_mode(const std::vector<AclEntry>& acl, uint32_t& mode);

// posix_acl_update_mode: the mode after the access ACL `acl` is set on an inode of
// `mode` by a caller in the inode's group or not: the permission bits follow the ACL,
// and set-group-ID goes for a caller outside the group. `store`: whether the ACL says
// more than the mode and is kept (else it is not stored).
uint32_t mode_after_access_acl(const std::vector<AclEntry>& acl, uint32_t mode,
                               bool caller_in_group, bool& store);

// posix_acl_create_masq: masks a new inode's ACL (inherited from the parent's default
// ACL) with the requested mode and the mode with the ACL. Returns whether the ACL must
// be kept (it says more than the mode).
bool acl_create_masq(std::vector<AclEntry>& acl, uint32_t& mode);

// posix_acl_chmod: the access ACL after a chmod to `mode`.
void acl_chmod(std::vector<AclEntry>& acl, uint32_t mode);

}  // namespace dfs::mds
