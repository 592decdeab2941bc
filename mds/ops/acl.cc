#include "mds/ops/acl.h"

#include <sys/stat.h>

namespace dfs::mds {
namespace {

constexpr uint32_t kAclXattrVersion = 2;
constexpr uint32_t kRwx = S_IRWXO;  // 07

uint32_t get_le(std::string_view in, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(in[at + i]);
  return v;
}

void put_le(std::string& out, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

Unexpected invalid(const char* why) {
  return make_error(ErrorCode::kInvalidArgument, std::string("invalid POSIX ACL: ") + why);
}

Status validate(const std::vector<AclEntry>& acl) {
  int user_obj = 0, group_obj = 0, other = 0, mask = 0, named = 0;
  uint16_t last_tag = 0;
  uint32_t last_id = 0;
  for (const auto& e : acl) {
    if (e.perm & ~kRwx) return invalid("permission bits beyond rwx");
    if (e.tag < last_tag) return invalid("entries out of order");
    switch (e.tag) {
      case kAclUserObj:
        ++user_obj;
        break;
      case kAclGroupObj:
        ++group_obj;
        break;
      case kAclOther:
        ++other;
        break;
      case kAclMask:
        ++mask;
        break;
      case kAclUser:
      case kAclGroup:
        if (e.tag == last_tag && e.id <= last_id) return invalid("duplicate or unsorted ids");
        ++named;
        break;
      default:
        return invalid("unknown tag");
    }
    last_tag = e.tag;
    last_id = e.id;
  }
  if (user_obj != 1 || group_obj != 1 || other != 1 || mask > 1) {
    return invalid("needs exactly one owner, group and other entry");
  }
  if (named > 0 && mask == 0) return invalid("named entries need a mask");
  return ok_status();
}

}  // namespace

Result<std::vector<AclEntry>> parse_acl(std::string_view xattr) {
  if (xattr.size() < 4 || (xattr.size() - 4) % 8 != 0) return invalid("bad length");
  if (get_le(xattr, 0, 4) != kAclXattrVersion) return invalid("unknown version");
  std::vector<AclEntry> acl;
  for (size_t at = 4; at < xattr.size(); at += 8) {
    acl.push_back(AclEntry{static_cast<uint16_t>(get_le(xattr, at, 2)),
                           static_cast<uint16_t>(get_le(xattr, at + 2, 2)),
                           get_le(xattr, at + 4, 4)});
  }
  DFS_TRY_STATUS(validate(acl));
  return acl;
}

std::string encode_acl(const std::vector<AclEntry>& acl) {
  std::string out;
  put_le(out, kAclXattrVersion, 4);
  for (const auto& e : acl) {
    put_le(out, e.tag, 2);
    put_le(out, e.perm, 2);
    put_le(out, e.id, 4);
  }
  return out;
}

bool acl_equiv_mode(const std::vector<AclEntry>& acl, uint32_t& mode) {
  uint32_t bits = 0;
  bool not_equiv = false;
  for (const auto& e : acl) {
    switch (e.tag) {
      case kAclUserObj:
        bits |= (e.perm & kRwx) << 6;
        break;
      case kAclGroupObj:
        bits |= (e.perm & kRwx) << 3;
        break;
      case kAclOther:
        bits |= e.perm & kRwx;
        break;
      case kAclMask:
        bits = (bits & ~uint32_t(S_IRWXG)) | ((e.perm & kRwx) << 3);
        not_equiv = true;
        break;
      default:
        not_equiv = true;
        break;
    }
  }
  mode = (mode & ~uint32_t(0777)) | bits;
  return not_equiv;
}

uint32_t mode_after_access_acl(const std::vector<AclEntry>& acl, uint32_t mode,
                               bool caller_in_group, bool& store) {
  store = acl_equiv_mode(acl, mode);
  if (!caller_in_group) mode &= ~uint32_t(S_ISGID);
  return mode;
}

bool acl_create_masq(std::vector<AclEntry>& acl, uint32_t& mode_io) {
  uint32_t mode = mode_io;
  AclEntry* group_obj = nullptr;
  AclEntry* mask_obj = nullptr;
  bool not_equiv = false;
  for (auto& e : acl) {
    switch (e.tag) {
      case kAclUserObj:
        e.perm &= (mode >> 6) | ~kRwx;
        mode &= (uint32_t(e.perm) << 6) | ~uint32_t(S_IRWXU);
        break;
      case kAclUser:
      case kAclGroup:
        not_equiv = true;
        break;
      case kAclGroupObj:
        group_obj = &e;
        break;
      case kAclOther:
        e.perm &= mode | ~kRwx;
        mode &= e.perm | ~kRwx;
        break;
      case kAclMask:
        mask_obj = &e;
        not_equiv = true;
        break;
      default:
        break;
    }
  }
  AclEntry* g = mask_obj ? mask_obj : group_obj;
  if (g) {
    g->perm &= (mode >> 3) | ~kRwx;
    mode &= (uint32_t(g->perm) << 3) | ~uint32_t(S_IRWXG);
  }
  mode_io = (mode_io & ~uint32_t(0777)) | (mode & 0777);
  return not_equiv;
}

void acl_chmod(std::vector<AclEntry>& acl, uint32_t mode) {
  AclEntry* group_obj = nullptr;
  AclEntry* mask_obj = nullptr;
  for (auto& e : acl) {
    switch (e.tag) {
      case kAclUserObj:
        e.perm = (mode & S_IRWXU) >> 6;
        break;
      case kAclGroupObj:
        group_obj = &e;
        break;
      case kAclMask:
        mask_obj = &e;
        break;
      case kAclOther:
        e.perm = mode & S_IRWXO;
        break;
      default:
        break;
    }
  }
  AclEntry* g = mask_obj ? mask_obj : group_obj;
  if (g) g->perm = (mode & S_IRWXG) >> 3;
}

}  // namespace dfs::mds
