#include "mds/ops/xattr_names.h"

#include "mds/ops/inode_rules.h"

namespace dfs::mds {

// Xattrs live in a proto3 map<string, bytes>, whose keys must be UTF-8 (protobuf's
// check: well-formed sequences; overlongs and surrogates are not policed here).
bool is_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t extra = 0;
    if (c >= 0x80) {
      if ((c >> 5) == 0x6) {
        extra = 1;
      } else if ((c >> 4) == 0xe) {
        extra = 2;
      } else if ((c >> 3) == 0x1e) {
        extra = 3;
      } else {
        return false;
      }
    }
    if (i + extra >= s.size() && extra > 0) return false;
    for (size_t k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    }
    i += extra + 1;
  }
  return true;
}

Status check_xattr_name(std::string_view name) {
  if (name.size() > 255) return make_error(ErrorCode::kRange, "xattr names are at most 255 bytes");
  if (name == kAclAccessXattr || name == kAclDefaultXattr || name == kLayoutXattr) {
    return ok_status();
  }
  for (std::string_view prefix : {"user.", "trusted.", "security."}) {
    if (name.substr(0, prefix.size()) == prefix) {
      if (name.size() == prefix.size()) {
        return make_error(ErrorCode::kInvalidArgument, "xattr name without a suffix");
      }
      return ok_status();
    }
  }
  return make_error(ErrorCode::kNotSupported, "unsupported xattr namespace: " + std::string(name));
}

bool is_listed_xattr(std::string_view name) { return name.substr(0, 4) != "dfs."; }

}  // namespace dfs::mds
